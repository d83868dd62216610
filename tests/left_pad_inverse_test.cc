// The inverse of a left-padded mapping (`# n + R + # m` inside a pair, "Masking Configuration"):
// answered digit by digit through its hidden axis, equal to a search over every position, and a
// host tensor written to a left-padded DM element and read back element for element. Before the
// twin (dsl/mapping.cc, UnshiftedTwin) each inverse searched position by position, so the write
// below took minutes (quadratic in the element's size).
#include <gtest/gtest.h>

#include <chrono>
#include <optional>

#include "absl/strings/str_cat.h"
#include "dsl/mapping_parser.h"
#include "runtime/device.h"
#include "runtime/host_tensor.h"
#include "runtime/tensor.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

// The smallest position holding `index`, found by walking every position (the definition).
std::optional<int64_t> SearchInverse(const Mapping& m, const Index& index) {
  for (int64_t p = 0; p < m.size(); ++p) {
    const Cell cell = m.map(p);
    if (cell.live() && cell.index == index) return p;
  }
  return std::nullopt;
}

void ExpectInverseIsTheSearch(const std::string& axes, const std::string& text) {
  MappingScope s(*Axes::Parse(axes));
  const Mapping m = s.m(text);
  ASSERT_TRUE(m.ok()) << text << ": " << m.status();
  int64_t live = 0;
  for (int64_t p = 0; p < m.size(); ++p) {
    const Cell cell = m.map(p);
    if (!cell.live()) continue;
    ++live;
    EXPECT_EQ(m.inverse(cell.index), SearchInverse(m, cell.index)) << text << " at " << p << " " << cell.index.ToString();
  }
  EXPECT_GT(live, 0) << text;
}

TEST(LeftPadInverse, EqualsTheSearchOverPositions) {
  ExpectInverseIsTheSearch("A = 4, R = 6", "A % 2, # 3 + R + # 5");
  ExpectInverseIsTheSearch("A = 4, R = 6", "# 3 + R + # 5, A");
  ExpectInverseIsTheSearch("B = 5", "[# 2 + B + # 1] / 4, [# 2 + B + # 1] % 4");
  ExpectInverseIsTheSearch("B = 5, C = 3", "[# 2 + B + # 1] % 4, C, [# 2 + B + # 1] / 4");
  ExpectInverseIsTheSearch("B = 5", "[#{0} 1 + B] # 16");
  ExpectInverseIsTheSearch("A = 3, B = 4, C = 2", "# 1 + A, C, # 2 + B + # 2");
}

// Every small shape of the forms a masked stream takes: the padded row split into two digits
// around another axis, in both orders, with and without a right pad.
TEST(LeftPadInverse, EqualsTheSearchOnEverySmallSplitRow) {
  int checked = 0;
  for (int left = 1; left <= 3; ++left) {
    for (int size = 1; size <= 6; ++size) {
      for (int right = 0; right <= 3; ++right) {
        for (int k : {2, 3, 4}) {
          const std::string row = absl::StrCat("[# ", left, " + B", right > 0 ? absl::StrCat(" + # ", right) : "", "]");
          const std::string axes = absl::StrCat("B = ", size, ", C = 2");
          MappingScope s(*Axes::Parse(axes));
          for (const std::string& text : {absl::StrCat(row, " / ", k, ", C, ", row, " % ", k),
                                           absl::StrCat(row, " % ", k, ", C, ", row, " / ", k)}) {
            if (!s.m(text).ok()) continue;  // a stride that does not divide the row
            ExpectInverseIsTheSearch(axes, text);
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(LeftPadInverse, IndicesOutsideTheAxisOrNotHeldHaveNone) {
  MappingScope s(*Axes::Parse("A = 4, R = 6"));
  const Mapping m = s.m("A % 2, # 3 + R + # 5");
  Index r6;
  r6.Set("R", 6);  // past R's end
  EXPECT_EQ(m.inverse(r6), std::nullopt);
  Index a3;
  a3.Set("A", 3);  // A % 2 holds A = 0 and 1 only
  EXPECT_EQ(m.inverse(a3), std::nullopt);
  EXPECT_EQ(m.inverse(a3), SearchInverse(m, a3));
  Index first;  // R = 0 sits right after the 3 pad positions of A = 0's row
  EXPECT_EQ(m.inverse(first), std::optional<int64_t>(3));
}

// A host tensor written to a DM element that is itself left-padded, then read back: every live
// element where a host loop over the same mapping puts it.
TEST(LeftPadInverse, WriteToALeftPaddedDmElementAndReadBack) {
  MappingScope s(*Axes::Parse("A = 8, R = 2000, X = 4"));
  const Mapping slice = s.m("X # 256");
  const Mapping element = s.m("A % 2, # 3 + R + # 5");
  const Mapping whole = Pair({slice, element});
  const Mapping plain = s.m("X, A % 2, R");
  std::vector<double> values(static_cast<size_t>(plain.size()));
  for (size_t p = 0; p < values.size(); ++p) values[p] = static_cast<double>((p * 37 + 11) % 1001);
  absl::StatusOr<HostTensor> host = HostTensor::FromValues(DType::kI32, plain, values);
  ASSERT_TRUE(host.ok()) << host.status();
  Device device(1);
  absl::StatusOr<Placement> placement = Place(device, DType::kI32, Tier::kDm, {s.m("1"), s.m("1 # 2"), slice, element}, 0);
  ASSERT_TRUE(placement.ok()) << placement.status();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<DeviceTensor> written = WriteAs(*host, device, *placement);
  ASSERT_TRUE(written.ok()) << written.status();
  absl::StatusOr<HostTensor> back = ReadAs(*written, plain);
  ASSERT_TRUE(back.ok()) << back.status();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("seconds", std::to_string(seconds));
  EXPECT_EQ(back->ToValues(), values);
  // The device layout too: read as the padded element itself, each live position holds the value
  // of the element the host loop finds there.
  absl::StatusOr<HostTensor> padded = ReadAs(*written, whole);
  ASSERT_TRUE(padded.ok()) << padded.status();
  const std::vector<double> got = padded->ToValues();
  int64_t live = 0;
  for (int64_t p = 0; p < whole.size(); ++p) {
    const Cell cell = whole.map(p);
    if (!cell.live()) continue;
    ++live;
    const int64_t x = cell.index["X"], a = cell.index["A"], r = cell.index["R"];
    ASSERT_EQ(got[p], values[(x * 2 + a) * 2000 + r]) << "position " << p;
  }
  EXPECT_EQ(live, 4 * 2 * 2000);
}

}  // namespace
}  // namespace visa
