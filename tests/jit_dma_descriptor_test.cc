// The JIT's DMA moves walk the descriptors the tracer recorded (jit/dma_nest.h): every sample's
// DMA moves between device memories run as the loop nest of their descriptors, with the bytes the
// interpreter (which moves data by index) writes, so `visa check` agreement checks what `visa
// explain` prints.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/recording_backend.h"
#include "samples/sample.h"
#include "tools/check_command.h"

namespace visa::jit {
namespace {

// Device-to-device moves of a program (host transfers, gathers and fills have no descriptor) and how
// many of them recorded descriptors.
struct DeviceMoves {
  int64_t moves = 0, described = 0;
};
DeviceMoves CountDeviceMoves(const Program& program) {
  DeviceMoves count;
  for (const Op& op : program.ops) {
    const auto* dma = std::get_if<DmaOp>(&op.body);
    // A memset (fill) moves nothing: it writes a value (runtime/memset.h).
    if (dma == nullptr || dma->indirect() || dma->fill() || !dma->src.handle || !dma->dst.handle) continue;
    ++count.moves;
    if (dma->descriptors()) {
      ++count.described;
      EXPECT_TRUE(std::get<DmaMove>(dma->work).no_descriptors.empty());
    } else {
      EXPECT_FALSE(std::get<DmaMove>(dma->work).no_descriptors.empty()) << "a move without descriptors says why";
    }
  }
  return count;
}

TEST(JitDmaDescriptors, EverySampleDmaWalksItsRecordedDescriptors) {
  int64_t walked = 0, derived = 0, moves = 0, described = 0;
  std::map<std::string, int64_t> reasons;
  for (const samples::Sample& sample : samples::AllSamples()) {
    if (sample.slow) continue;
    absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = 2});
    ASSERT_TRUE(jit.ok()) << jit.status();
    interp::Interpreter interpreter;
    RecordingBackend with_jit(**jit), with_interp(interpreter);
    absl::StatusOr<samples::SampleRun> run = sample.Run(with_jit);
    ASSERT_TRUE(run.ok()) << sample.name << ": " << run.status();
    EXPECT_FALSE(run->mismatch) << sample.name << ": " << *run->mismatch;
    ASSERT_TRUE(sample.Run(with_interp).ok()) << sample.name;
    EXPECT_EQ(FirstDifference(run->program, with_interp.records(), "interp", with_jit.records(), "jit"), std::nullopt)
        << sample.name;
    const JitStats& stats = (*jit)->stats();
    const DeviceMoves count = CountDeviceMoves(run->program);
    // Each device move ran once per launch, from its descriptors or counted with its reason (the
    // model's generate samples launch their traced program once per phase and token).
    const int64_t ran = stats.descriptor_dmas + stats.derived_dmas;
    if (absl::StartsWith(sample.name, "llama_")) {
      EXPECT_TRUE(count.moves > 0 && ran >= count.moves && ran % count.moves == 0)
          << sample.name << ": " << ran << " runs of " << count.moves << " moves";
    } else {
      EXPECT_EQ(ran, count.moves) << sample.name;
    }
    for (const auto& [why, n] : stats.derived_dma_reasons) {
      reasons[why] += n;
      std::cout << sample.name << ": " << n << " DMA moves not walked: " << why << "\n";
    }
    // The collectives' moves between one-chip views (ChipShuffle, its staging) have descriptors
    // that start at their chips, and the JIT walks every one.
    if (absl::EndsWith(sample.name, "_4chip")) {
      EXPECT_EQ(count.described, count.moves) << sample.name;
      EXPECT_EQ(stats.derived_dmas, 0) << sample.name;
      EXPECT_GT(stats.descriptor_dmas, 0) << sample.name;
    }
    walked += stats.descriptor_dmas;
    derived += stats.derived_dmas;
    moves += count.moves;
    described += count.described;
  }
  std::cout << "device DMA moves " << moves << ", with descriptors " << described << ", walked " << walked
            << ", not walked " << derived << "\n";
  EXPECT_GT(walked, 0);
  // What may fall back: a move the derivation could not describe, a move into a view of HBM (the
  // shared transfer path stages exactly the window).
  for (const auto& [why, n] : reasons) {
    EXPECT_TRUE(why == "no descriptor" || why == "a staged view destination (the shared transfer path)") << why;
  }
}

}  // namespace
}  // namespace visa::jit
