// Indirect access (manual, "Indirect Access", "Indirect Sequencing"): a DMA gather whose
// IndirectLoop reads its row offsets from an index tensor at run time, on both backends against a
// host computation, and every rule that rejects a gather (an index out of range included).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/indirect_dma.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

class IndirectAccessTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) {
      absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({.threads = 2});
      ASSERT_TRUE(jit.ok()) << jit.status();
      jit_ = *std::move(jit);
    }
    ctx_ = std::make_unique<Context>(*device_, GetParam() ? static_cast<Backend&>(*jit_) : interp_);
  }
  Mapping m(const std::string& text) { return s_.m(text); }
  DmTensor Table(const HostTensor& host) {
    absl::StatusOr<HbmTensor> hbm = host.to_hbm(ctx_->pdma, 0, m("1"), m("W, V"));
    EXPECT_TRUE(hbm.ok()) << hbm.status();
    absl::StatusOr<DmTensor> dm = hbm->to_dm(ctx_->tdma, 0, m("1 # 2"), m("1 # 256"), m("W, V"));
    EXPECT_TRUE(dm.ok()) << dm.status();
    return *dm;
  }
  HbmTensor Index(DType dtype, std::vector<double> rows) {
    HostTensor host = *HostTensor::FromValues(dtype, m("K"), rows);
    absl::StatusOr<HbmTensor> hbm = host.to_hbm(ctx_->pdma, 1 << 20, m("1"), m("K"));
    EXPECT_TRUE(hbm.ok()) << hbm.status();
    return *hbm;
  }
  Destination Out(const std::string& element = "K, V") {
    return Destination{Tier::kDm, Address(1 << 16), {m("1"), m("1 # 2"), m("1 # 256"), m(element)}};
  }

  MappingScope s_{*Axes::Parse("W = 6, V = 16, K = 5, X = 2")};
  std::unique_ptr<Device> device_ = std::make_unique<Device>(1);
  interp::Interpreter interp_;
  std::unique_ptr<jit::JitBackend> jit_;
  std::unique_ptr<Context> ctx_;
};

TEST_P(IndirectAccessTest, GatherMovesTheRowsTheIndexSelects) {
  HostTensor table = *HostTensor::Random(DType::kBF16, m("W, V"), 3);
  DmTensor dm = Table(table);
  const std::vector<double> rows = {4, 0, 4, 5, 2};
  absl::StatusOr<DeviceTensor> out = Gather(ctx_->tdma, dm, Index(DType::kI32, rows), "W", Out());
  ASSERT_TRUE(out.ok()) << out.status();
  HostTensor got = *ReadAs(*out, m("K, V"));
  // Host computation: out[k][v] = table[rows[k]][v], from the table's own values.
  const std::vector<double> values = table.ToValues();
  const std::vector<double> result = got.ToValues();
  for (int64_t k = 0; k < 5; ++k) {
    for (int64_t v = 0; v < 16; ++v) {
      EXPECT_EQ(result[k * 16 + v], values[static_cast<int64_t>(rows[k]) * 16 + v]) << k << "," << v;
    }
  }
  const std::string text = ctx_->program().ToText();
  EXPECT_THAT(text, HasSubstr("indirect IndirectLoop (limit 5, [offset0, offset1, ...] = index[K] x 16 elements)"));
  EXPECT_THAT(text, HasSubstr("index HbmTensor<i32"));
}

TEST_P(IndirectAccessTest, AnIndexOutOfRangeFailsTheOp) {
  DmTensor dm = Table(*HostTensor::Random(DType::kI8, m("W, V"), 3));
  absl::StatusOr<DeviceTensor> past = Gather(ctx_->tdma, dm, Index(DType::kI32, {0, 1, 6, 2, 3}), "W", Out());
  ASSERT_FALSE(past.ok());
  EXPECT_THAT(past.status().message(), HasSubstr("Indirect Access: index[K = 2] = 6 is outside the rows 0..5 of W"));
  absl::StatusOr<DeviceTensor> negative = Gather(ctx_->tdma, dm, Index(DType::kI32, {0, -1, 1, 2, 3}), "W", Out());
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(negative.status().message(), HasSubstr("index[K = 1] = -1"));
}

TEST_P(IndirectAccessTest, RulesThatReject) {
  DmTensor dm = Table(*HostTensor::Random(DType::kI8, m("W, V"), 3));
  absl::StatusOr<DeviceTensor> not_i32 = Gather(ctx_->tdma, dm, Index(DType::kI16, {0, 1, 2, 3, 4}), "W", Out());
  ASSERT_FALSE(not_i32.ok());
  EXPECT_THAT(not_i32.status().message(), HasSubstr("Indirect Access: "));
  EXPECT_THAT(not_i32.status().message(), HasSubstr("i32 row numbers"));
  absl::StatusOr<DeviceTensor> no_axis = Gather(ctx_->tdma, dm, Index(DType::kI32, {0, 1, 2, 3, 4}), "X", Out());
  ASSERT_FALSE(no_axis.ok());
  EXPECT_THAT(no_axis.status().message(), HasSubstr("has no axis `X`"));
  absl::StatusOr<DeviceTensor> keeps_w =
      Gather(ctx_->tdma, dm, Index(DType::kI32, {0, 1, 2, 3, 4}), "W", Out("W, V"));
  ASSERT_FALSE(keeps_w.ok());
  EXPECT_THAT(keeps_w.status().message(), HasSubstr("must name the axes K, V"));
  absl::StatusOr<DeviceTensor> pcie = Gather(ctx_->pdma, dm, Index(DType::kI32, {0, 1, 2, 3, 4}), "W", Out());
  ASSERT_FALSE(pcie.ok());
  EXPECT_THAT(pcie.status().message(), HasSubstr("DMA Context"));
}

TEST_P(IndirectAccessTest, ScatterWritesTheRowsTheIndexNamesAndKeepsTheOthers) {
  HostTensor cache = *HostTensor::Random(DType::kI8, m("W, V"), 5);
  DmTensor dm = Table(cache);
  HostTensor fresh = *HostTensor::Random(DType::kI8, m("K, V"), 9);
  HbmTensor fresh_hbm = *fresh.to_hbm(ctx_->pdma, 1 << 21, m("1"), m("K, V"));
  const std::vector<double> rows = {5, 1, 3, 0, 2};
  absl::StatusOr<DeviceTensor> out =
      Scatter(ctx_->tdma, fresh_hbm, Index(DType::kI32, rows), dm, "W", Out("W, V"));
  ASSERT_TRUE(out.ok()) << out.status();
  // Host computation: row rows[k] holds fresh row k; row 4 (named by no index) keeps the cache's.
  const std::vector<double> before = cache.ToValues(), written = fresh.ToValues();
  const std::vector<double> result = ReadAs(*out, m("W, V"))->ToValues();
  for (int64_t w = 0; w < 6; ++w) {
    const auto k = std::find(rows.begin(), rows.end(), static_cast<double>(w)) - rows.begin();
    for (int64_t v = 0; v < 16; ++v) {
      const double want = k < 5 ? written[k * 16 + v] : before[w * 16 + v];
      EXPECT_EQ(result[w * 16 + v], want) << w << "," << v;
    }
  }
  EXPECT_THAT(ctx_->program().ToText(), HasSubstr("scatters rows of K into W = 6"));
}

TEST_P(IndirectAccessTest, AScatterNamingOneRowTwiceFails) {
  DmTensor dm = Table(*HostTensor::Random(DType::kI8, m("W, V"), 5));
  HbmTensor fresh = *HostTensor::Random(DType::kI8, m("K, V"), 9)->to_hbm(ctx_->pdma, 1 << 21, m("1"), m("K, V"));
  absl::StatusOr<DeviceTensor> twice =
      Scatter(ctx_->tdma, fresh, Index(DType::kI32, {5, 1, 3, 1, 2}), dm, "W", Out("W, V"));
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.status().message(),
              HasSubstr("Indirect Access: index[K = 1] and index[K = 3] both name row 1 of W"));
  absl::StatusOr<DeviceTensor> past =
      Scatter(ctx_->tdma, fresh, Index(DType::kI32, {5, 1, 6, 0, 2}), dm, "W", Out("W, V"));
  ASSERT_FALSE(past.ok());
  EXPECT_THAT(past.status().message(), HasSubstr("index[K = 2] = 6 is outside the rows 0..5 of W; the scatter"));
  absl::StatusOr<DeviceTensor> wrong_rows =
      Scatter(ctx_->tdma, dm, Index(DType::kI32, {5, 1, 3, 0, 2}), dm, "W", Out("W, V"));
  ASSERT_FALSE(wrong_rows.ok());
  EXPECT_THAT(wrong_rows.status().message(), HasSubstr("with `K` in `W`'s place"));
}

INSTANTIATE_TEST_SUITE_P(Backends, IndirectAccessTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "Jit" : "Interpreter"; });

}  // namespace
}  // namespace visa
