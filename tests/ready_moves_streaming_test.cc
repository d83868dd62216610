// Relaunch streaming (jit/ready_moves.h, streaming_move.h: RelaunchStreamingMinBytes): a kept move
// run again on the device whose memory it last wrote streams its stores from the relaunch
// threshold on, while a first run, and the first run on another device, keep ordinary stores. With
// the relaunch threshold at 0 bytes (set before any kernel cache exists) every kept move of a
// streaming shape streams on a relaunch, and every run must still give the interpreter's bytes:
// a commit that changes the layout, a DMA back, and an HBM -> DM DMA broadcast over every slice
// (its first copy and its broadcast copies, write_order.h).
#include <gtest/gtest.h>

#include <cstdlib>

#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "jit/streaming_move.h"
#include "tests/launch_against_interpreter.h"
#include "runtime/launch.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

// Before main: the default thresholds are read once, by the first kernel cache.
const bool kRelaunchesStream = setenv("VISA_JIT_RELAUNCH_STREAMING_MIN_BYTES", "0", /*overwrite=*/1) == 0;

class RelaunchStreamingTest : public ::testing::Test {
 protected:
  static constexpr int64_t kUnit = 4 * 64;  // bytes of the DM input per slice

  RelaunchStreamingTest() {
    jit_ = *jit::JitBackend::Create({.threads = 1});
    program_ = TraceOn(*device_);
  }

  Mapping m(const char* text) const { return scope_.m(text); }
  std::vector<DeviceTensor> Inputs(Device& device, uint64_t seed) const {
    HostTensor dm = *HostTensor::Random(DType::kI8, m("S, A, B"), seed);
    HostTensor hbm = *HostTensor::Random(DType::kBF16, m("A, B"), seed + 1000);
    Placement dm_place = *Place(device, DType::kI8, Tier::kDm, {m("1"), m("1 # 2"), m("S"), m("A, B")}, Address::At(0));
    Placement hbm_place = *Place(device, DType::kBF16, Tier::kHbm, {m("1"), m("A, B")}, Address::At(0));
    return {*WriteAs(dm, device, dm_place), *WriteAs(hbm, device, hbm_place)};
  }
  Program TraceOn(Device& device) const {
    const MappingScope& s = scope_;
    KernelOf kernel = [&s](Context& ctx, const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
      DmTensor dm(in[0]);
      ASSIGN_OR_RETURN(DmTensor flits, ctx.main.begin(dm.view())
                                           .fetch(DType::kI8, s.m("A"), s.m("B"))
                                           .collect(s.m("A, B / 32"), s.m("B % 32"))
                                           .commit(s.m("B / 32, A, B % 32"), Address::At(kUnit)));
      ASSIGN_OR_RETURN(DmTensor back, flits.to_dm(ctx.tdma, Address::At(2 * kUnit), s.m("1 # 2"), s.m("S"), s.m("A, B")));
      // Every slice receives the whole HBM tensor: a broadcast level over S.
      ASSIGN_OR_RETURN(DmTensor spread,
                       HbmTensor(in[1]).to_dm(ctx.tdma, Address::At(4 * kUnit), s.m("1 # 2"), s.m("S"), s.m("A, B")));
      return std::vector<DeviceTensor>{flits, back, spread};
    };
    absl::StatusOr<Program> traced = Trace(kernel, Inputs(device, 99));
    EXPECT_TRUE(traced.ok()) << traced.status();
    return *std::move(traced);
  }
  void RunAndCompare(Device& device, uint64_t seed) {
    ExpectLaunchMatchesInterpreter(program_, device, *jit_, [&](Device& d) { return Inputs(d, seed); }, seed);
  }
  const jit::JitStats& stats() const { return jit_->stats(); }

  MappingScope scope_{*Axes::Parse("S = 256, A = 4, B = 64")};
  std::unique_ptr<Device> device_ = std::make_unique<Device>(1);
  std::unique_ptr<jit::JitBackend> jit_;
  Program program_;
};

TEST(RelaunchStreamingThreshold, TwiceTheLevelTwoCacheOrTheFirstRunsWhenLower) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  EXPECT_EQ(jit::RelaunchStreamingMinBytes(65 * kMiB, 2 * kMiB), 4 * kMiB);
  EXPECT_EQ(jit::RelaunchStreamingMinBytes(3 * kMiB, 2 * kMiB), 3 * kMiB);
  EXPECT_EQ(jit::RelaunchStreamingMinBytes(65 * kMiB, 0), 2 * kMiB);  // unknown level 2: 1 MiB assumed
  EXPECT_EQ(jit::RelaunchStreamingMinBytes(0, 2 * kMiB), 0);
  const int64_t off = *jit::ParseStreamingMinBytes("off");
  EXPECT_EQ(jit::RelaunchStreamingMinBytes(off, 2 * kMiB), off);  // off stays off
  EXPECT_GT(jit::HostLevel2CacheBytes(), 0);
}

TEST_F(RelaunchStreamingTest, TheEnvironmentSetsTheThreshold) {
  ASSERT_TRUE(kRelaunchesStream);
  EXPECT_EQ(jit::DefaultRelaunchStreamingMinBytes(), 0);
}

TEST_F(RelaunchStreamingTest, ARelaunchStreamsAndGivesTheInterpretersBytes) {
  RunAndCompare(*device_, 1);
  EXPECT_EQ(stats().relaunch_streaming_moves, 0);  // a first run: fresh pages, ordinary stores
  const int64_t streaming = stats().streaming_moves;
  for (uint64_t seed = 2; seed < 5; ++seed) RunAndCompare(*device_, seed);
  EXPECT_EQ(stats().ready_moves, 3 * 3);
  // The pipeline, the DMA back and the broadcast all have streaming shapes: each streams again.
  EXPECT_EQ(stats().relaunch_streaming_moves, 3 * 3);
  EXPECT_EQ(stats().streaming_moves, streaming + 3 * 3);
}

TEST_F(RelaunchStreamingTest, AnotherDevicesFirstRunKeepsOrdinaryStores) {
  RunAndCompare(*device_, 1);
  auto other = std::make_unique<Device>(1);
  RunAndCompare(*other, 2);
  EXPECT_EQ(stats().ready_moves, 3);
  EXPECT_EQ(stats().relaunch_streaming_moves, 0);  // its pages are fresh
  RunAndCompare(*other, 3);
  EXPECT_EQ(stats().relaunch_streaming_moves, 3);
  // Back on the first device, last written by the other: its first run there again is ordinary.
  RunAndCompare(*device_, 4);
  EXPECT_EQ(stats().relaunch_streaming_moves, 3);
}

}  // namespace
}  // namespace visa
