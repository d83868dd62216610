// A sample input's values (samples/input_values.h): each distribution within its range, the same
// from the same seed, and every range the type cannot hold refused with a message naming it.
#include <cmath>
#include <set>
#include <vector>

#include "dsl/mapping_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "samples/input_values.h"

namespace visa::samples {
namespace {

using ::testing::HasSubstr;

Mapping Layout() {
  static const MappingScope s(*Axes::Parse("A = 64, B = 64"));
  return s.m("A, B # 128");  // padding positions stay zero
}

std::vector<double> Live(const HostTensor& tensor) {
  std::vector<double> live;
  for (int64_t p = 0; p < tensor.size(); ++p) {
    if (Layout().map(p).live()) live.push_back(*tensor.Get(p));
  }
  return live;
}

TEST(InputValuesTest, UniformIntegersCoverTheRangeAndStayInIt) {
  absl::StatusOr<HostTensor> t = MakeInput(DType::kI8, Layout(), InputValues::Uniform(-3, 3), 1);
  ASSERT_TRUE(t.ok()) << t.status();
  std::set<double> seen;
  for (double v : Live(*t)) seen.insert(v);
  EXPECT_EQ(seen, (std::set<double>{-3, -2, -1, 0, 1, 2, 3}));
  for (int64_t p = 0; p < t->size(); ++p) {
    if (!Layout().map(p).live()) {
      EXPECT_EQ(*t->Get(p), 0);
    }
  }
}

TEST(InputValuesTest, UniformFloatsStayInTheRange) {
  absl::StatusOr<HostTensor> t = MakeInput(DType::kF32, Layout(), InputValues::Uniform(-4, 4), 1);
  ASSERT_TRUE(t.ok()) << t.status();
  double lo = 0, hi = 0;
  for (double v : Live(*t)) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, -4);
  EXPECT_LE(hi, 4);
  EXPECT_LT(lo, -3.9);  // 4096 draws reach near both ends
  EXPECT_GT(hi, 3.9);
}

TEST(InputValuesTest, NormalHasItsMeanAndDeviation) {
  absl::StatusOr<HostTensor> t = MakeInput(DType::kF32, Layout(), InputValues::Normal(2, 0.5), 3);
  ASSERT_TRUE(t.ok()) << t.status();
  const std::vector<double> values = Live(*t);
  double sum = 0, squares = 0;
  for (double v : values) sum += v;
  const double mean = sum / values.size();
  for (double v : values) squares += (v - mean) * (v - mean);
  // 4096 draws: the mean within 4 standard errors (0.5 / 64), the deviation within 5 %.
  EXPECT_NEAR(mean, 2, 4 * 0.5 / 64);
  EXPECT_NEAR(std::sqrt(squares / values.size()), 0.5, 0.025);
}

TEST(InputValuesTest, ConstantIotaAndRandomAndTheSameFromTheSameSeed) {
  for (double v : Live(*MakeInput(DType::kBF16, Layout(), InputValues::Constant(1.5), 1))) EXPECT_EQ(v, 1.5);
  EXPECT_EQ(*MakeInput(DType::kI32, Layout(), InputValues::Iota(), 1), *HostTensor::Iota(DType::kI32, Layout()));
  EXPECT_EQ(*MakeInput(DType::kI8, Layout(), InputValues::Random(), 9), *HostTensor::Random(DType::kI8, Layout(), 9));
  EXPECT_EQ(*MakeInput(DType::kF32, Layout(), InputValues::Normal(0, 1), 4),
            *MakeInput(DType::kF32, Layout(), InputValues::Normal(0, 1), 4));
  EXPECT_NE(*MakeInput(DType::kF32, Layout(), InputValues::Normal(0, 1), 4),
            *MakeInput(DType::kF32, Layout(), InputValues::Normal(0, 1), 5));
}

TEST(InputValuesTest, RangesTheTypeCannotHoldAreRefused) {
  EXPECT_THAT(MakeInput(DType::kI8, Layout(), InputValues::Uniform(200, 300), 1).status().message(),
              HasSubstr("input values uniform [200, 300] for i8: no integer of the range fits the type [-128, 127]"));
  EXPECT_THAT(MakeInput(DType::kI8, Layout(), InputValues::Uniform(0.2, 0.8), 1).status().message(),
              HasSubstr("no integer of the range"));
  EXPECT_THAT(MakeInput(DType::kF32, Layout(), InputValues::Uniform(1, -1), 1).status().message(),
              HasSubstr("the range is empty"));
  EXPECT_THAT(MakeInput(DType::kF32, Layout(), InputValues::Normal(0, -1), 1).status().message(),
              HasSubstr("the deviation is negative"));
  EXPECT_THAT(MakeInput(DType::kI8, Layout(), InputValues::Constant(1000), 1).status().message(),
              HasSubstr("constant 1000 for i8"));
}

}  // namespace
}  // namespace visa::samples
