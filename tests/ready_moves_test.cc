// ReadyMoves (jit/ready_moves.h): a data-movement op run again reuses the move its first run kept,
// keyed by the op's serial and its ends' placements. Every run is checked against the interpreter
// on fresh input data (a kept move reads the memory of this run, not the first one's), and the
// keys are checked to miss where they must: another thread count, another placement object,
// another device, and an op built by hand (serial 0).
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "tests/launch_against_interpreter.h"
#include "runtime/launch.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

class ReadyMovesTest : public ::testing::Test {
 protected:
  static constexpr int64_t kUnit = 4 * 64;  // bytes of the input per slice

  ReadyMovesTest() {
    jit_ = *jit::JitBackend::Create({.threads = 1});
    program_ = TraceOn(*device_);
  }

  Mapping m(const char* text) const { return scope_.m(text); }
  Placement InputPlacement(const Device& device) const {
    return *Place(device, DType::kI8, Tier::kDm, {m("1"), m("1 # 2"), m("S"), m("A, B")}, Address::At(0));
  }
  DeviceTensor Input(Device& device, uint64_t seed) const {
    HostTensor host = *HostTensor::Random(DType::kI8, m("S, A, B"), seed);
    return *WriteAs(host, device, InputPlacement(device));
  }
  // A commit that changes the layout, then a DMA back into the input's layout (as jit_bench's).
  Program TraceOn(Device& device) const {
    const MappingScope& s = scope_;
    KernelOf kernel = [&s](Context& ctx, const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
      DmTensor dm(in[0]);
      ASSIGN_OR_RETURN(DmTensor flits, ctx.main.begin(dm.view())
                                           .fetch(DType::kI8, s.m("A"), s.m("B"))
                                           .collect(s.m("A, B / 32"), s.m("B % 32"))
                                           .commit(s.m("B / 32, A, B % 32"), Address::At(kUnit)));
      ASSIGN_OR_RETURN(DmTensor back, flits.to_dm(ctx.tdma, Address::At(2 * kUnit), s.m("1 # 2"), s.m("S"), s.m("A, B")));
      return std::vector<DeviceTensor>{flits, back};
    };
    absl::StatusOr<Program> traced = Trace(kernel, {Input(device, 99)});
    EXPECT_TRUE(traced.ok()) << traced.status();
    return *std::move(traced);
  }
  // Runs `program` on the JIT and on the interpreter (a device of its own) over input `seed`, and
  // expects the same outputs.
  void RunAndCompare(const Program& program, Device& device, uint64_t seed) {
    ExpectLaunchMatchesInterpreter(program, device, *jit_, [&](Device& d) { return std::vector<DeviceTensor>{Input(d, seed)}; },
                                   seed);
  }
  const jit::JitStats& stats() const { return jit_->stats(); }

  MappingScope scope_{*Axes::Parse("S = 256, A = 4, B = 64")};
  std::unique_ptr<Device> device_ = std::make_unique<Device>(1);
  std::unique_ptr<jit::JitBackend> jit_;
  Program program_;
};

TEST_F(ReadyMovesTest, ARelaunchRunsBothMovesFromWhatTheFirstRunKept) {
  RunAndCompare(program_, *device_, 1);
  EXPECT_EQ(stats().ready_moves, 0);
  const int64_t direct = stats().direct_pipelines, descriptor = stats().descriptor_dmas;
  for (uint64_t seed = 2; seed < 5; ++seed) RunAndCompare(program_, *device_, seed);
  EXPECT_EQ(stats().ready_moves, 2 * 3);  // the pipeline and the DMA, on each of the three runs
  // The same counters as a first run: a kept move is still a direct pipeline, a descriptor DMA.
  EXPECT_EQ(stats().direct_pipelines, direct + 3);
  EXPECT_EQ(stats().descriptor_dmas, descriptor + 3);
}

TEST_F(ReadyMovesTest, AnotherThreadCountMissesAndKeepsItsOwn) {
  RunAndCompare(program_, *device_, 1);
  ASSERT_TRUE(jit_->set_threads(2).ok());
  RunAndCompare(program_, *device_, 2);
  EXPECT_EQ(stats().ready_moves, 0);
  RunAndCompare(program_, *device_, 3);
  EXPECT_EQ(stats().ready_moves, 2);
}

TEST_F(ReadyMovesTest, AProgramTracedAgainHasOpsOfItsOwn) {
  RunAndCompare(program_, *device_, 1);
  Program again = TraceOn(*device_);  // the same ops (but for tensor names), new serials and placements
  ASSERT_EQ(again.ops.size(), program_.ops.size());
  EXPECT_NE(std::get<PipelineOp>(again.ops[0].body).serial, std::get<PipelineOp>(program_.ops[0].body).serial);
  RunAndCompare(again, *device_, 2);
  EXPECT_EQ(stats().ready_moves, 0);
  program_ = Program();  // the first program's placements go; its entries can never match again
  RunAndCompare(again, *device_, 3);
  EXPECT_EQ(stats().ready_moves, 2);
}

TEST_F(ReadyMovesTest, AnotherDeviceRunsTheKeptMoveOnItsOwnMemory) {
  RunAndCompare(program_, *device_, 1);
  auto other = std::make_unique<Device>(1);
  RunAndCompare(program_, *other, 2);
  EXPECT_EQ(stats().ready_moves, 2);  // offsets are the device's, not the first device's addresses
  // The first device still holds the first run's outputs' bytes (nothing wrote them since).
  RunAndCompare(program_, *device_, 3);
}

TEST_F(ReadyMovesTest, AnOpBuiltByHandIsNeverKept) {
  Program copy = program_;
  for (Op& op : copy.ops) std::visit([](auto& body) { body.serial = 0; }, op.body);
  for (uint64_t seed = 1; seed < 4; ++seed) RunAndCompare(copy, *device_, seed);
  EXPECT_EQ(stats().ready_moves, 0);
  EXPECT_GT(stats().direct_pipelines, 0);
}

}  // namespace
}  // namespace visa
