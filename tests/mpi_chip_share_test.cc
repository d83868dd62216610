// The chips each MPI rank owns (mpi/mpi_session.h): contiguous shares covering every chip once.
#include <vector>

#include "dsl/mapping_parser.h"
#include "gtest/gtest.h"
#include "interp/interpreter.h"
#include "mpi/chip_parts.h"
#include "mpi/mpi_session.h"
#include "runtime/chip_view.h"
#include "runtime/device.h"
#include "runtime/host_tensor.h"
#include "runtime/tensor_unit.h"

namespace visa::mpi {
namespace {

TEST(ChipShare, FourChipsOnTwoRanksAreTwoEach) {
  EXPECT_EQ(ShareOf(0, 2, 4).first, 0);
  EXPECT_EQ(ShareOf(0, 2, 4).count, 2);
  EXPECT_EQ(ShareOf(1, 2, 4).first, 2);
  EXPECT_EQ(ShareOf(1, 2, 4).count, 2);
}

TEST(ChipShare, EveryChipHasExactlyOneOwner) {
  for (int chips : {1, 3, 4, 8}) {
    for (int ranks : {1, 2, 3, 4, 8}) {
      std::vector<int> owners(chips, 0);
      for (int rank = 0; rank < ranks; ++rank) {
        const ChipShare share = ShareOf(rank, ranks, chips);
        for (int c = share.first; c < share.first + share.count; ++c) ++owners[c];
      }
      for (int c = 0; c < chips; ++c) {
        EXPECT_EQ(owners[c], 1) << chips << " chips on " << ranks << " ranks, chip " << c;
        EXPECT_TRUE(ShareOf(OwnerOf(c, ranks, chips), ranks, chips).Owns(c));
      }
    }
  }
}

TEST(ChipShare, MoreRanksThanChipsLeavesSomeRanksWithout) {
  int empty = 0;
  for (int rank = 0; rank < 4; ++rank) empty += ShareOf(rank, 4, 2).count == 0 ? 1 : 0;
  EXPECT_EQ(empty, 2);
}

TEST(TextHash, IsFnv1a) {
  EXPECT_EQ(TextHash(""), 0xcbf29ce484222325ull);  // the offset basis
  EXPECT_EQ(TextHash("a"), 0xaf63dc4c8601ec8cull);  // FNV-1a 64 of "a" (published test vector)
  EXPECT_NE(TextHash("op 1"), TextHash("op 2"));
}

TEST(ChipParts, ATensorOnEveryChipAndOneChipsView) {
  Device device(4);
  interp::Interpreter interp;
  Context ctx(device, interp);
  MappingScope m = *MappingScope::Parse("A = 4, B = 8");
  absl::StatusOr<HbmTensor> hbm = HostTensor::Iota(DType::kI8, m.m("A, B"))->to_hbm(ctx.pdma, 0, m.m("A"), m.m("B"));
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  EXPECT_EQ(ChipsOf(*hbm), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(*ChipBlockBytes(*hbm), 8);  // the full image is chip-major: 8 i8 per chip
  absl::StatusOr<DeviceTensor> chip2 = ChipView(*hbm, 2);
  ASSERT_TRUE(chip2.ok()) << chip2.status();
  EXPECT_EQ(ChipsOf(*chip2), (std::vector<int>{2}));
  EXPECT_EQ(*ChipBlockBytes(*chip2), 8);
}

TEST(ChipParts, HalfTheChipsOfTheDevice) {
  Device device(4);
  interp::Interpreter interp;
  Context ctx(device, interp);
  MappingScope m = *MappingScope::Parse("A = 2, B = 8");
  absl::StatusOr<HbmTensor> hbm =
      HostTensor::Iota(DType::kI8, m.m("A, B"))->to_hbm(ctx.pdma, 0, m.m("A # 4"), m.m("B"));
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  EXPECT_EQ(ChipsOf(*hbm), (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace visa::mpi
