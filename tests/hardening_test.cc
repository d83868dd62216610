// Hostile inputs to the library: sizes, addresses and thread counts at the ends of their ranges are
// refused with a Status naming the rule, never accepted through an overflow and never aborting.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <limits>

#include "dsl/checked_math.h"
#include "dsl/layout.h"
#include "dsl/mapping_parser.h"
#include "dsl/register_file_load.h"
#include "dsl/tile.h"
#include "jit/jit_backend.h"
#include "jit/move_nest.h"
#include "jit/parallel.h"
#include "runtime/device.h"
#include "interp/interpreter.h"
#include "runtime/dma.h"
#include "runtime/launch.h"
#include "runtime/transfer.h"
#include "runtime/tensor.h"

namespace visa {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(CheckedMathTest, RangeWithinNeverWraps) {
  EXPECT_TRUE(RangeWithin(0, 8, 8));
  EXPECT_TRUE(RangeWithin(8, 0, 8));
  EXPECT_FALSE(RangeWithin(1, 8, 8));
  EXPECT_FALSE(RangeWithin(-1, 1, 8));
  EXPECT_FALSE(RangeWithin(0, -1, 8));
  EXPECT_FALSE(RangeWithin(kMax, 1, 8));  // kMax + 1 wraps to a negative end
  EXPECT_FALSE(RangeWithin(kMax - 3, 8, 8));
  EXPECT_FALSE(RangeWithin(4, kMax, 8));
  EXPECT_EQ(CheckedAdd(kMax, 1), std::nullopt);
  EXPECT_EQ(CheckedAdd(kMax - 1, 1), kMax);
  EXPECT_EQ(CheckedMul(int64_t{1} << 32, int64_t{1} << 31), std::nullopt);
  EXPECT_EQ(CheckedMul(-3, 4), -12);
  EXPECT_EQ(SaturatingAdd(kMax, 5), kMax);
  EXPECT_EQ(SaturatingAdd(std::numeric_limits<int64_t>::min(), -5), std::numeric_limits<int64_t>::min());
}

class TileBoundsTest : public ::testing::Test {
 protected:
  MappingScope s_{*Axes::Parse("A = 8, B = 4")};
};

// `start + len` used to overflow: tile(A, INT64_MAX, 1) reached the normal form with a live count
// past the digit and aborted; tile(A, 1, INT64_MAX) was accepted with a negative offset.
TEST_F(TileBoundsTest, HugeLengthsAndStartsAreRefused) {
  const Mapping buffer = s_.m("A, B");
  const Mapping dim = s_.m("A");
  for (auto [len, start] : {std::pair<int64_t, int64_t>{kMax, 1}, {1, kMax}, {kMax, kMax}, {9, 0},
                            {1, 8}, {kMax, 0}, {2, kMax - 1}}) {
    absl::StatusOr<TileView> view = Tile(buffer, dim, len, start);
    ASSERT_FALSE(view.ok()) << "len " << len << " start " << start << " gave " << view->mapping.ToString()
                            << " at offset " << view->offset;
    EXPECT_THAT(view.status().message(), AllOf(HasSubstr("tile: a tile of "), HasSubstr("does not fit in its 8 values")))
        << "len " << len << " start " << start;
  }
  // The last value still fits.
  absl::StatusOr<TileView> last = Tile(buffer, dim, 1, 7);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->offset, 7 * 4);
}

TEST_F(TileBoundsTest, DeviceTensorTilesRefuseHugeLengths) {
  Device device(1);
  Dma pdma = Dma::Pcie(device);
  HostTensor host = *HostTensor::Zeros(DType::kI8, s_.m("A, B"));
  absl::StatusOr<HbmTensor> hbm = host.to_hbm(pdma, 0, s_.m("1"), s_.m("A, B"));
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  EXPECT_THAT(hbm->view().tile(s_.m("A"), kMax, 1).status().message(), HasSubstr("tile: a tile of"));
  EXPECT_THAT(hbm->view().tile(s_.m("A"), 1, kMax).status().message(), HasSubstr("tile: a tile of"));
}

// `address + bytes > kVrfBytes` wrapped for addresses near INT64_MAX.
TEST(VrfCapacityTest, AddressesNearTheTopOfInt64AreRefused) {
  MappingScope s(*Axes::Parse("A = 64"));
  StreamShape in;
  in.dtype = DType::kI32;
  in.chip = s.m("1");
  in.cluster = s.m("1 # 2");
  in.slice = s.m("1 # 256");
  in.time = s.m("A / 8");
  in.packet = s.m("A % 8");
  ASSERT_TRUE(PlanToVrf(in, StreamPosition::kCollect, ContextKind::kSub, s.m("A"), 0).ok());
  for (int64_t address : {kMax, kMax - 100, kVrfBytes - 255, int64_t{-1}}) {
    absl::StatusOr<RegisterLoadStage> stage =
        PlanToVrf(in, StreamPosition::kCollect, ContextKind::kSub, s.m("A"), address);
    ASSERT_FALSE(stage.ok()) << "address " << address;
    EXPECT_THAT(stage.status().message(), HasSubstr("exceeds register file capacity")) << address;
  }
}

class PlacementBoundsTest : public ::testing::Test {
 protected:
  Mapping m(const char* text) { return s_.m(text); }
  absl::StatusOr<DmTensor> Dm(Address address) {
    return DmTensor::Create(device_, DType::kI8, m("1"), m("1 # 2"), m("1 # 256"), m("A"), address);
  }
  MappingScope s_{*Axes::Parse("A = 64")};
  Device device_{1};
};

TEST_F(PlacementBoundsTest, AddressesNearTheTopOfInt64AreRefused) {
  for (int64_t address : {kMax, kMax - 7, kMax - 63, int64_t{-8}}) {
    absl::StatusOr<DmTensor> dm = Dm(address);
    ASSERT_FALSE(dm.ok()) << address;
    EXPECT_THAT(dm.status().message(), HasSubstr("Capacity: the tensor's bytes")) << address;
    EXPECT_THAT(dm.status().message(), Not(HasSubstr("0x-"))) << address;  // the end never wraps
  }
  std::vector<uint8_t> bytes(8);
  absl::Status read = device_.Read(Tier::kDm, 0, kMax - 3, absl::MakeSpan(bytes));
  EXPECT_THAT(read.message(), AllOf(HasSubstr("Capacity: DM access"), HasSubstr("0x7fffffffffffffff")));
}

// Address::Any() aligned up with `(a + alignment - 1) / alignment * alignment`: a huge alignment
// wrapped the candidate negative and placed the tensor at a negative address.
TEST_F(PlacementBoundsTest, AnyWithAHugeAlignmentFindsNoRangeInsteadOfANegativeOne) {
  const absl::StatusOr<DmTensor> occupant = Dm(0);  // occupies [0, 64) of slice 0 while it is held
  ASSERT_TRUE(occupant.ok());
  for (int64_t alignment : {kMax, kMax / 2 + 1, int64_t{1} << 62}) {
    absl::StatusOr<Placement> p = Place(device_, DType::kI8, Tier::kDm, {m("1"), m("1 # 2"), m("1 # 256"), m("A")},
                                        Address::Any(), TrfAddress::kFull, alignment);
    ASSERT_FALSE(p.ok()) << alignment << " placed at " << p->address;
    EXPECT_THAT(p.status().message(), HasSubstr("Capacity: Address::Any() found no free")) << alignment;
  }
  absl::StatusOr<Placement> p = Place(device_, DType::kI8, Tier::kDm, {m("1"), m("1 # 2"), m("1 # 256"), m("A")},
                                      Address::Any(), TrfAddress::kFull, 4096);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->address, 4096);
}

// Launch(program, ...) writes its outputs at the traced placements: a live user tensor there makes
// it refuse before writing, naming both tensors (issue 30 item 4; launch_live_tensor_test covers
// outputs kept across launches), and the user's tensor still reads back.
TEST(LaunchCollisionTest, OutputsOverALiveTensorAreRefused) {
  MappingScope s(*Axes::Parse("A = 4, B = 16"));
  KernelOf kernel = [&](Context& ctx, const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
    absl::StatusOr<DmTensor> dm = HbmTensor(in[0]).to_dm(ctx.tdma, 0, s.m("1 # 2"), s.m("1 # 256"), s.m("A, B"));
    if (!dm.ok()) return dm.status();
    absl::StatusOr<HbmTensor> back = dm->to_hbm(ctx.tdma, 0x10000, s.m("A, B"));
    if (!back.ok()) return back.status();
    return std::vector<DeviceTensor>{*back};
  };
  Device device(1);
  Dma pdma = Dma::Pcie(device);
  HbmTensor in = *HostTensor::Random(DType::kI8, s.m("A, B"), 1)->to_hbm(pdma, 0, s.m("1"), s.m("A, B"));
  absl::StatusOr<Program> program = Trace(kernel, {in});
  ASSERT_TRUE(program.ok()) << program.status();
  HbmTensor user = *HostTensor::Random(DType::kI8, s.m("A, B"), 2)->to_hbm(pdma, 0x10000, s.m("1"), s.m("A, B"));
  user.SetName("user");
  interp::Interpreter interpreter;
  absl::StatusOr<std::vector<DeviceTensor>> first = Launch(*program, device, interpreter, {in});
  EXPECT_THAT(first.status().message(), AllOf(HasSubstr("Address Collision"), HasSubstr("`user`")));
  EXPECT_TRUE(ReadAs(user, s.m("A, B")).ok());
}

// SplitOuter computed `16 * threads` in int: a large thread count overflowed it.
TEST(SplitOuterTest, LargeThreadCountsDoNotOverflow) {
  const std::vector<MoveLevel> levels = {{1 << 20, 1, 1}};
  for (int threads : {INT_MAX, INT_MAX / 16 + 1, 1 << 28}) {
    const std::vector<MoveLevel> split = SplitOuter(levels, threads);
    int64_t elements = 1;
    for (const MoveLevel& l : split) elements *= l.count;
    EXPECT_EQ(elements, 1 << 20) << threads;
  }
  const jit::MoveNest nest = jit::Simplify(jit::MoveNest{{{1 << 20, 1, 1}}}, INT_MAX);
  EXPECT_EQ(nest.elements(), 1 << 20);
}

// --threads 100000 ended in an uncaught std::system_error: the count is checked where it enters.
TEST(ThreadCountTest, JitOptionsRefuseCountsPastTheLimit) {
  for (int threads : {jit::kMaxThreads + 1, 100000, INT_MAX, -1, INT_MIN}) {
    absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({.threads = threads});
    ASSERT_FALSE(jit.ok()) << threads;
    EXPECT_EQ(jit.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(jit.status().message(),
                AllOf(HasSubstr("thread count"), HasSubstr(absl::StrCat(threads)),
                      HasSubstr(absl::StrCat("at most ", jit::kMaxThreads))));
  }
  absl::StatusOr<std::unique_ptr<jit::JitBackend>> top = jit::JitBackend::Create({.threads = jit::kMaxThreads});
  ASSERT_TRUE(top.ok()) << top.status();
  EXPECT_EQ((*top)->threads(), jit::kMaxThreads);
  absl::StatusOr<std::unique_ptr<jit::JitBackend>> host = jit::JitBackend::Create({.threads = 0});
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_GE((*host)->threads(), 1);
  EXPECT_LE((*host)->threads(), jit::kMaxThreads);
  EXPECT_THAT((*host)->set_threads(100000).message(), HasSubstr("thread count"));
  EXPECT_TRUE((*host)->set_threads(3).ok());
  EXPECT_EQ((*host)->threads(), 3);
}

TEST(ThreadCountTest, ResolveThreadsNamesTheRule) {
  EXPECT_EQ(*jit::ResolveThreads(5), 5);
  EXPECT_GE(*jit::ResolveThreads(0), 1);
  EXPECT_THAT(jit::ResolveThreads(jit::kMaxThreads + 1).status().message(),
              HasSubstr("thread count: 0 (the host's) or 1 to"));
}

}  // namespace
}  // namespace visa
