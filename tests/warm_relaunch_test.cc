// The warm relaunch of `visa bench` (tools/warm_relaunch_backend.h): a relaunch replays the run's
// device ops on the same device, and every op must read what it read in the run, inputs included,
// even when the run placed later tensors where its inputs were.
#include <cstdint>
#include <memory>
#include <vector>

#include "dsl/mapping_parser.h"
#include "gtest/gtest.h"
#include "runtime/dma.h"
#include "runtime/tensor_unit.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/device.h"
#include "runtime/host_tensor.h"
#include "runtime/launch.h"
#include "runtime/tensor.h"
#include "runtime/transfer.h"
#include "tools/warm_relaunch_backend.h"

namespace visa {
namespace {

// Keeps the bytes every DMA move read, in the order the moves ran.
class SourceProbe : public Backend {
 public:
  explicit SourceProbe(Backend& inner) : inner_(inner) {}
  const char* name() const override { return inner_.name(); }
  absl::Status Run(const PipelineOp& op, const PipelineTensors& tensors) override { return inner_.Run(op, tensors); }
  absl::Status Run(const DmaOp& op, const DmaTensors& tensors) override {
    absl::StatusOr<HostTensor> read = ReadImage(tensors.src, tensors.src.full_mapping());
    if (!read.ok()) return read.status();
    sources.push_back(read->bytes());
    return inner_.Run(op, tensors);
  }
  std::vector<std::vector<uint8_t>> sources;

 private:
  Backend& inner_;
};

// Two uploads in turn at one HBM address, each moved into DM: the second input takes the range
// the first one was released from, so after the run that range holds the second input's bytes.
void RunTwoInputsAtOneAddress(Backend& backend) {
  const MappingScope s = *MappingScope::Parse("A = 64");
  Device device{1};
  Context ctx{device, backend};
  HbmTensor first = *HostTensor::Iota(DType::kI32, s.m("A"))->to_hbm(ctx.pdma, 0x4000, {.element = s.m("A")});
  ASSERT_TRUE(first.to_dm(ctx.tdma, 0x100, {.element = s.m("A")}).ok());
  first.Release();
  std::vector<double> descending;
  for (int i = 0; i < 64; ++i) descending.push_back(1000 - i);
  HbmTensor second = *HostTensor::FromValues(DType::kI32, s.m("A"), descending)
                          ->to_hbm(ctx.pdma, 0x4000, {.element = s.m("A")});
  ASSERT_TRUE(second.to_dm(ctx.tdma, 0x200, {.element = s.m("A")}).ok());
}

void ExpectRelaunchReadsTheRunsInputs(Backend& inner) {
  SourceProbe probe(inner);
  cli::WarmRelaunchBackend warm(probe, /*ops_in_run=*/2, /*relaunches=*/2);
  RunTwoInputsAtOneAddress(warm);
  ASSERT_TRUE(warm.relaunch_status().ok()) << warm.relaunch_status();
  ASSERT_EQ(warm.relaunches().size(), 2u);
  ASSERT_EQ(probe.sources.size(), 6u);  // 2 moves in the run, 2 in each relaunch
  ASSERT_NE(probe.sources[0], probe.sources[1]);
  for (size_t relaunch = 1; relaunch <= 2; ++relaunch) {
    EXPECT_EQ(probe.sources[2 * relaunch], probe.sources[0]) << "relaunch " << relaunch << " read the first input";
    EXPECT_EQ(probe.sources[2 * relaunch + 1], probe.sources[1]) << "relaunch " << relaunch << " read the second";
  }
}

TEST(WarmRelaunch, AnInputWhoseRangeALaterInputTookIsReadAsTheRunReadItOnTheInterpreter) {
  interp::Interpreter interpreter;
  ExpectRelaunchReadsTheRunsInputs(interpreter);
}

TEST(WarmRelaunch, AnInputWhoseRangeALaterInputTookIsReadAsTheRunReadItOnTheJit) {
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create();
  ExpectRelaunchReadsTheRunsInputs(*jit);
}

}  // namespace
}  // namespace visa
