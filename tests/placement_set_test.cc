// PlacementSet (placements by identity, safe against address reuse) and its use by MarkWritten:
// a whole tensor is marked once per placement, and marks that cover less (some slices, a view's
// window) are never taken for a whole tensor's.
#include <gtest/gtest.h>

#include "dsl/mapping_parser.h"
#include "runtime/device.h"
#include "runtime/placement_set.h"
#include "runtime/tensor_unit.h"
#include "runtime/uninitialized_reads.h"

namespace visa {
namespace {

TEST(PlacementSetTest, RemembersAPlacementByIdentityNotValue) {
  PlacementSet set;
  auto a = std::make_shared<const Placement>();
  auto twin = std::make_shared<const Placement>(*a);  // equal value, another object
  EXPECT_FALSE(set.Contains(a));
  set.Insert(a);
  EXPECT_TRUE(set.Contains(a));
  EXPECT_FALSE(set.Contains(twin));
  EXPECT_FALSE(set.Contains(nullptr));
}

TEST(PlacementSetTest, AFreedPlacementIsForgottenEvenWhenItsAddressIsReused) {
  PlacementSet set;
  const Placement* old_address = nullptr;
  {
    auto gone = std::make_shared<const Placement>();
    old_address = gone.get();
    set.Insert(gone);
  }
  // Allocate until one lands where the freed one was (the allocator usually gives it back at once).
  std::vector<std::shared_ptr<const Placement>> fresh;
  for (int i = 0; i < 64 && (fresh.empty() || fresh.back().get() != old_address); ++i) {
    fresh.push_back(std::make_shared<const Placement>());
  }
  for (const auto& p : fresh) EXPECT_FALSE(set.Contains(p));
}

TEST(PlacementSetTest, ExpiredEntriesAreSweptAsTheSetGrows) {
  PlacementSet set;
  auto kept = std::make_shared<const Placement>();
  set.Insert(kept);
  for (int i = 0; i < 1000; ++i) set.Insert(std::make_shared<const Placement>());
  EXPECT_TRUE(set.Contains(kept));
  EXPECT_LT(set.size(), 200u);  // not one entry per placement ever inserted
}

class WholeMarkTest : public ::testing::Test {
 protected:
  Mapping m(const char* text) { return scope_.m(text); }
  DmTensor Dm(int64_t address) {
    return *DmTensor::Create(device_, DType::kI8, m("1"), m("1 # 2"), m("S"), m("A"), Address::At(address));
  }
  // The first unwritten byte of `t` on slice `slice`, or nullopt.
  std::optional<int64_t> Unwritten(const DmTensor& t, int slice) {
    return device_.FirstUnwritten(Tier::kDm, slice, t.address(), 64);
  }

  MappingScope scope_{*Axes::Parse("S = 256, A = 64")};
  Device device_{1};
};

TEST_F(WholeMarkTest, AWholeTensorIsMarkedOncePerPlacement) {
  DmTensor t = Dm(0);
  EXPECT_EQ(Unwritten(t, 255), 0);
  EXPECT_FALSE(device_.wholly_marked().Contains(t.shared_placement()));
  MarkWritten(t);
  EXPECT_EQ(Unwritten(t, 0), std::nullopt);
  EXPECT_EQ(Unwritten(t, 255), std::nullopt);
  EXPECT_TRUE(device_.wholly_marked().Contains(t.shared_placement()));
  EXPECT_EQ(device_.wholly_marked().size(), 1u);
  MarkWritten(t);  // again: a lookup, no new entry
  EXPECT_EQ(device_.wholly_marked().size(), 1u);
}

TEST_F(WholeMarkTest, MarksOfSomeSlicesOrOfAViewAreNotAWholeTensorsMark) {
  DmTensor t = Dm(256);
  MarkWritten(t, SliceBitmap::Only({0}));
  EXPECT_EQ(Unwritten(t, 0), std::nullopt);
  EXPECT_EQ(Unwritten(t, 1), 256);
  EXPECT_FALSE(device_.wholly_marked().Contains(t.shared_placement()));
  absl::StatusOr<DmTensor> window = t.tile(m("A"), 16, 0);
  ASSERT_TRUE(window.ok()) << window.status();
  MarkWritten(*window);
  EXPECT_FALSE(device_.wholly_marked().Contains(t.shared_placement()));
  EXPECT_EQ(Unwritten(t, 1), 256 + 16);
  MarkWritten(t);  // the whole tensor after all: every slice, every byte
  EXPECT_EQ(Unwritten(t, 1), std::nullopt);
  EXPECT_EQ(Unwritten(t, 255), std::nullopt);
}

}  // namespace
}  // namespace visa
