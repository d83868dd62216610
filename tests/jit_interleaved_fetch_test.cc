// Interleaved fetches (`begin_interleaved`) walk their recorded Fetch Sequencer on the JIT: the
// entries walk one tensor and the interleave term selects the tensor (jit/sequencer_nest.h,
// InterleavedReadNestOf), with the bytes the interpreter writes.
#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "jit/sequencer_nest.h"
#include "runtime/recording_backend.h"
#include "samples/sample.h"

namespace visa::jit {
namespace {

bool HasInterleavedFetch(const Program& program) {
  for (const Op& op : program.ops) {
    const auto* pipe = std::get_if<PipelineOp>(&op.body);
    if (pipe == nullptr || pipe->stages.empty()) continue;
    const auto* begin = std::get_if<BeginStage>(&pipe->stages.front());
    if (begin != nullptr && begin->interleave) return true;
  }
  return false;
}

// The manual's two-group samples, the ones whose pipelines begin interleaved.
TEST(JitInterleavedFetch, WalksTheRecordedSequencer) {
  for (const char* name : {"vector_pair_add", "vector_pair_scale_add"}) {
    const samples::Sample* sample = samples::FindSample(name);
    ASSERT_NE(sample, nullptr) << name;
    interp::Interpreter interpreter;
    RecordingBackend with_interp(interpreter);
    absl::StatusOr<samples::SampleRun> reference = sample->Run(with_interp);
    ASSERT_TRUE(reference.ok()) << name << ": " << reference.status();
    ASSERT_TRUE(HasInterleavedFetch(reference->program)) << name;
    absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = 2, .direct_pipelines = false});
    ASSERT_TRUE(jit.ok()) << jit.status();
    RecordingBackend with_jit(**jit);
    absl::StatusOr<samples::SampleRun> run = sample->Run(with_jit);
    ASSERT_TRUE(run.ok()) << name << ": " << run.status();
    EXPECT_FALSE(run->mismatch) << name << ": " << *run->mismatch;
    EXPECT_EQ(FirstDifference(run->program, with_interp.records(), "interp", with_jit.records(), "jit"), std::nullopt)
        << name;
    EXPECT_EQ((*jit)->stats().derived_fetches, 0) << name;
    EXPECT_GT((*jit)->stats().sequencer_moves, 0) << name;
  }
}

// The interleave level sits where the entries' stream positions reach the interleave term: Time
// [A, I] with Packet [B] (A = 3, I = 2, B = 4) reads tensor 1 four positions into each packet pair.
TEST(JitInterleavedFetch, TheInterleaveLevelSitsAtItsTerm) {
  SequencerConfig config;
  config.entries = {{3, 4, "A"}, {4, 1, "B"}};
  config.packet_entries = 1;
  config.packet_size = 4;
  std::optional<MoveNest> nest = InterleavedReadNestOf(config, /*inner_positions=*/4, /*tensor_positions=*/12,
                                                       /*units=*/1, /*stream_unit=*/24, /*buffer_unit=*/12);
  ASSERT_TRUE(nest.has_value());
  // Innermost first: B, then I (stream 4, tensor 12), then A (stream 8), then the unit.
  ASSERT_EQ(nest->levels.size(), 4u);
  EXPECT_EQ(nest->levels[0], (NestLevel{4, 1, 1}));
  EXPECT_EQ(nest->levels[1], (NestLevel{2, 4, 12}));
  EXPECT_EQ(nest->levels[2], (NestLevel{3, 8, 4}));
  // No entry boundary at 3 stream positions: no nest.
  EXPECT_FALSE(InterleavedReadNestOf(config, 3, 12, 1, 24, 12).has_value());
}

}  // namespace
}  // namespace visa::jit
