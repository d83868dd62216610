// Host <-> device transfers on every copy path (bytes in place for long contiguous runs, staged
// copies, tiled transposes, broadcasts), each checked element by element against the host tensor
// through Mapping::map and HostTensor::GetBits(Index), not the relayout's run arithmetic.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/axes.h"
#include "dsl/mapping_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/device.h"
#include "runtime/dma.h"
#include "runtime/host_tensor.h"
#include "runtime/relayout.h"
#include "runtime/tensor.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

// The raw bits of Element position `e` of unit `unit`, read straight from device memory.
uint32_t RawElement(const DeviceTensor& t, int64_t unit, int64_t e) {
  const int bits = StorageBits(t.dtype());
  std::vector<uint8_t> raw(std::max(1, bits / 8));
  EXPECT_TRUE(t.device().Read(t.tier(), unit, t.address() + e * bits / 8, absl::MakeSpan(raw)).ok());
  if (bits == 4) return (e % 2 == 0) ? (raw[0] & 0xf) : (raw[0] >> 4);
  uint32_t value = 0;
  for (size_t i = 0; i < raw.size(); ++i) value |= uint32_t{raw[i]} << (8 * i);
  return value;
}

// `index` restricted to the axes `to` names (the broadcast rule of a move).
Index Restrict(const Index& index, const Mapping& to) {
  const std::vector<std::string> names = to.axis_names();
  Index out;
  for (const auto& [axis, value] : index.coords()) {
    if (std::find(names.begin(), names.end(), axis) != names.end()) out.Set(axis, value);
  }
  return out;
}

// Every live position of the device tensor holds the reference's element of its index.
void ExpectDeviceHolds(const DeviceTensor& t, const HostTensor& reference, const std::string& what) {
  const Mapping full = t.full_mapping();
  const int64_t unit_size = t.element().size();
  int64_t checked = 0;
  for (int64_t p = 0; p < full.size(); ++p) {
    const Cell cell = full.map(p);
    if (!cell.live()) continue;
    absl::StatusOr<uint32_t> want = reference.GetBits(Restrict(cell.index, reference.mapping()));
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_EQ(RawElement(t, t.placement().UnitOf(p / unit_size), p % unit_size), *want)
        << what << ": position " << p << " index " << cell.index.ToString();
    ++checked;
  }
  EXPECT_GT(checked, 0) << what;
}

// Every position of the host image holds the reference's element of its index; padding zero.
void ExpectHostHolds(const HostTensor& out, const HostTensor& reference, const std::string& what) {
  for (int64_t p = 0; p < out.size(); ++p) {
    const Cell cell = out.mapping().map(p);
    uint32_t want = 0;
    if (cell.live()) {
      absl::StatusOr<uint32_t> bits = reference.GetBits(Restrict(cell.index, reference.mapping()));
      ASSERT_TRUE(bits.ok()) << bits.status();
      want = *bits;
    }
    ASSERT_EQ(*out.GetBits(p), want) << what << ": host position " << p;
  }
}

struct Layouts {
  std::string axes;     // the scope
  std::string host;     // the host image's layout
  std::string chip;     // HBM chip level
  std::string element;  // HBM element level
  std::string back;     // the layout read back
  int chips = 1;
};

// Same order (one contiguous copy), padding (a copy per run), transposed (tiles), broadcast on
// either side, split over chips, and shapes whose runs are odd for 4-bit types.
const std::vector<Layouts>& AllLayouts() {
  static const std::vector<Layouts> layouts = {
      {"A = 37, B = 300", "A, B", "1", "A, B", "A, B"},
      {"A = 37, B = 300", "A, B", "1", "A, B # 320", "A # 40, B"},
      {"A = 37, B = 300", "A, B", "1", "B, A", "B, A"},
      {"A = 37, B = 300", "B, A", "1", "A, B", "B # 301, A"},
      {"A = 37, B = 300, C = 3", "A, B", "1", "A, C, B", "C, A, B"},
      {"A = 37, B = 300", "A, B", "B / 150", "A, B % 150", "A, B", 2},
      {"A = 38, B = 300", "A, B", "A / 19", "B, A % 19", "B, A", 2},
      {"A = 7, B = 13", "A, B", "1", "A, B", "B, A"},
      {"A = 7, B = 13", "A, B", "1", "B # 14, A", "A # 9, B"},
      {"A = 5, B = 1024", "A, B", "1", "A, B", "A, B"},
      {"A = 64, B = 96", "A, B", "1", "B, A", "B, A"},
  };
  return layouts;
}

class TransferPathsTest : public ::testing::TestWithParam<DType> {};

TEST_P(TransferPathsTest, HostToHbmAndBackHoldEveryElement) {
  const DType dtype = GetParam();
  for (const Layouts& c : AllLayouts()) {
    const std::string what = absl::StrCat(Name(dtype), " ", c.host, " -> [", c.chip, "] [", c.element, "] -> ", c.back);
    Device device(c.chips);
    Dma pdma = Dma::Pcie(device);
    MappingScope s(*Axes::Parse(c.axes));
    absl::StatusOr<HostTensor> host = HostTensor::Random(dtype, s.m(c.host), 7);
    ASSERT_TRUE(host.ok()) << host.status();
    absl::StatusOr<HbmTensor> hbm = host->to_hbm(pdma, Address::Any(), s.m(c.chip), s.m(c.element));
    ASSERT_TRUE(hbm.ok()) << what << ": " << hbm.status();
    ExpectDeviceHolds(*hbm, *host, what);
    absl::StatusOr<HostTensor> back = hbm->to_host(pdma, s.m(c.back));
    ASSERT_TRUE(back.ok()) << what << ": " << back.status();
    ExpectHostHolds(*back, *host, what);
    // Again, from the kept plans: the same bits.
    absl::StatusOr<HbmTensor> again = host->to_hbm(pdma, Address::Any(), s.m(c.chip), s.m(c.element));
    ASSERT_TRUE(again.ok()) << what << ": " << again.status();
    ExpectDeviceHolds(*again, *host, absl::StrCat(what, " (kept plan)"));
    absl::StatusOr<HostTensor> back_again = again->to_host(pdma, s.m(c.back));
    ASSERT_TRUE(back_again.ok());
    EXPECT_EQ(*back_again, *back) << what;
  }
}

// Padding of a destination keeps what memory held: a transfer writes live positions only.
TEST_P(TransferPathsTest, DestinationPaddingKeepsMemory) {
  const DType dtype = GetParam();
  Device device(1);
  Dma pdma = Dma::Pcie(device);
  MappingScope s(*Axes::Parse("A = 37, B = 300"));
  const int64_t unit_bytes = StorageBytes(dtype, 37 * 320);
  std::vector<uint8_t> marker(static_cast<size_t>(unit_bytes), 0xa5);
  ASSERT_TRUE(device.WriteHbm(0, 0x10000, marker).ok());
  absl::StatusOr<HostTensor> host = HostTensor::Random(dtype, s.m("A, B"), 8);
  absl::StatusOr<HbmTensor> hbm = host->to_hbm(pdma, 0x10000, s.m("1"), s.m("A, B # 320"));
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  ExpectDeviceHolds(*hbm, *host, "padded");
  const int bits = StorageBits(dtype);
  const int64_t padding_element = 305;  // row 0, a padding position of B # 320
  std::vector<uint8_t> raw(std::max(1, bits / 8));
  ASSERT_TRUE(device.ReadHbm(0, 0x10000 + padding_element * bits / 8, absl::MakeSpan(raw)).ok());
  EXPECT_EQ(raw[0], 0xa5);
}

INSTANTIATE_TEST_SUITE_P(EveryStorageSize, TransferPathsTest,
                         ::testing::Values(DType::kI4, DType::kI8, DType::kF8E4M3, DType::kBF16, DType::kI16,
                                           DType::kF32, DType::kI32),
                         [](const ::testing::TestParamInfo<DType>& info) { return std::string(Name(info.param)); });

// Device -> device without a context (TransferInto): in the same order and transposed.
TEST(TransferIntoTest, HbmToHbmHoldsEveryElement) {
  Device device(1);
  Dma pdma = Dma::Pcie(device);
  MappingScope s(*Axes::Parse("A = 37, B = 300"));
  absl::StatusOr<HostTensor> host = HostTensor::Random(DType::kBF16, s.m("A, B"), 9);
  absl::StatusOr<HbmTensor> hbm = host->to_hbm(pdma, 0, s.m("1"), s.m("A, B"));
  ASSERT_TRUE(hbm.ok());
  for (const char* element : {"A, B", "B, A", "A, B # 304"}) {
    absl::StatusOr<HbmTensor> copy = hbm->to_hbm(pdma, Address::Any(), s.m("1"), s.m(element));
    ASSERT_TRUE(copy.ok()) << copy.status();
    ExpectDeviceHolds(*copy, *host, element);
    absl::StatusOr<HbmTensor> from_host = host->to_hbm(pdma, Address::Any(), s.m("1"), s.m(element));
    ASSERT_TRUE(from_host.ok());
    ASSERT_TRUE(MoveInto(pdma, *hbm, *from_host).ok());
    ExpectDeviceHolds(*from_host, *host, absl::StrCat(element, " (MoveInto)"));
  }
}

// A plan is kept per pair of mappings: the second request is the same table.
TEST(RelayoutKeptTest, SecondPlanIsTheKeptOne) {
  MappingScope s(*Axes::Parse("A = 64, B = 96"));
  absl::StatusOr<RelayoutPlan> plan = RelayoutPlan::Make(s.m("B, A"), s.m("A, B"));
  ASSERT_TRUE(plan.ok());
  absl::StatusOr<std::shared_ptr<const RelayoutRuns>> first = plan->Runs();
  absl::StatusOr<std::shared_ptr<const RelayoutRuns>> second = RelayoutPlan::Make(s.m("B, A"), s.m("A, B"))->Runs();
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_NE(*first, nullptr);
  EXPECT_EQ(first->get(), second->get());
  EXPECT_EQ((*first)->elements, 64 * 96);
  EXPECT_FALSE((*first)->contiguous);
  // The runs give the table the reference gives.
  absl::StatusOr<std::pair<std::vector<int64_t>, std::vector<int64_t>>> table = plan->Table();
  ASSERT_TRUE(table.ok());
  for (size_t i = 0; i < table->first.size(); ++i) {
    const Cell cell = s.m("B, A").map(table->first[i]);
    EXPECT_EQ(s.m("A, B").map(table->second[i]).index, cell.index);
  }
}

// A move that would drop source indices fails every time (failures are not kept) and writes
// nothing; the message names the rule.
TEST(RelayoutKeptTest, DroppingMoveFailsEveryTime) {
  MappingScope s(*Axes::Parse("A = 8, B = 4"));
  for (int attempt = 0; attempt < 2; ++attempt) {
    absl::StatusOr<RelayoutPlan> plan = RelayoutPlan::Make(s.m("A"), s.m("A, B"));
    ASSERT_TRUE(plan.ok());
    absl::StatusOr<std::shared_ptr<const RelayoutRuns>> runs = plan->Runs();
    EXPECT_THAT(std::string(runs.status().message()), HasSubstr("Tensor Function"));
    EXPECT_THAT(std::string(runs.status().message()), HasSubstr("drop"));
  }
  Device device(1);
  Dma pdma = Dma::Pcie(device);
  absl::StatusOr<HostTensor> host = HostTensor::Random(DType::kI8, s.m("A, B"), 3);
  EXPECT_FALSE(host->to_hbm(pdma, 0, s.m("1"), s.m("A")).ok());
  EXPECT_EQ(device.resident_bytes(), 0);
}

}  // namespace
}  // namespace visa
