// Streaming moves on real programs: with the streaming threshold at 0 bytes
// (VISA_JIT_STREAMING_MIN_BYTES, set before any kernel cache exists), every compiled move nest of
// a streaming shape streams, so random programs run their moves through the streaming kernels
// (and, where a base is not vector-aligned, through the fallback) and must still agree with the
// interpreter bit for bit through the loop of `visa fuzz-diff`.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "jit/jit_backend.h"
#include "jit/streaming_move.h"
#include "tools/fuzz_diff_command.h"

namespace visa {
namespace {

// Before main: the default threshold is read once, by the first kernel cache.
const bool kStreamEverything = setenv("VISA_JIT_STREAMING_MIN_BYTES", "0", /*overwrite=*/1) == 0;

TEST(JitStreamingDifferential, RandomProgramsStreamingEveryMoveAgreeWithTheInterpreter) {
  ASSERT_TRUE(kStreamEverything);
  ASSERT_EQ(jit::DefaultStreamingMinBytes(), 0);
  for (int threads : {1, 2}) {
    absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({.threads = threads});
    ASSERT_TRUE(jit.ok()) << jit.status();
    absl::StatusOr<cli::FuzzSummary> summary = cli::FuzzPrograms({.programs = 60, .seed = 1}, **jit);
    ASSERT_TRUE(summary.ok()) << summary.status();
    for (const cli::FuzzFinding& f : summary->differences) {
      ADD_FAILURE() << "seed " << f.seed << ": the streaming JIT differs from the interpreter at " << f.message
                    << "\n  reproduce: VISA_JIT_STREAMING_MIN_BYTES=0 " << f.reproducer << "\n" << f.description;
    }
    for (const cli::FuzzFinding& f : summary->errors) {
      ADD_FAILURE() << "seed " << f.seed << ": " << f.message << "\n  reproduce: VISA_JIT_STREAMING_MIN_BYTES=0 "
                    << f.reproducer;
    }
    EXPECT_EQ(summary->identical, summary->programs);
    EXPECT_GT((*jit)->stats().streaming_moves, 0) << threads << " threads";
    EXPECT_GT((*jit)->stats().streaming_misaligned, 0) << threads << " threads";
  }
}

}  // namespace
}  // namespace visa
