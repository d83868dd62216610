// ChipRangePipelines (mpi/chip_range_pipeline.h): a pipeline over 4 chips run for chips [2, 4)
// alone writes exactly those chips' part of its output, equal bit for bit to the whole pipeline's
// there, and leaves chips 0-1 as they were. Checked op by op on the tensor-parallel Llama layer
// (contractions, Vector Engine elementwise ops and reductions, to_trf / to_vrf loads) on the
// interpreter and the JIT, and on a to_vrf + Branch Vrf pipeline on both; pipelines that do not run by chip (tensors
// on another Chip axis, on one chip) and ranges outside the device are refused naming the rule.
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "mpi/chip_parts.h"
#include "mpi/chip_range_pipeline.h"
#include "runtime/device.h"
#include "runtime/dma.h"
#include "runtime/host_tensor.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "runtime/window_write.h"
#include "samples/sample.h"

namespace visa::mpi {
namespace {

using ::testing::HasSubstr;

// What kinds of stage the pipelines run by chip held.
struct Kinds {
  int split = 0, whole = 0;
  bool contraction = false, reduce = false, vector = false, branch_vrf = false, to_vrf = false, to_trf = false;
};

void Note(const PipelineOp& op, Kinds& kinds) {
  for (const Stage& stage : op.stages) {
    if (std::holds_alternative<AlignStage>(stage)) kinds.contraction = true;
    if (const auto* load = std::get_if<RegisterLoadStage>(&stage)) (load->to_trf ? kinds.to_trf : kinds.to_vrf) = true;
    if (const auto* vector = std::get_if<VectorStage>(&stage)) {
      kinds.vector = true;
      if (vector->branch.kind == BranchMode::Kind::kVrf) kinds.branch_vrf = true;
      for (const VeStep& step : vector->steps) {
        if (step.intra_reduce || step.inter_reduce) kinds.reduce = true;
      }
    }
  }
}

// Runs every pipeline that runs by chip twice on the same device: whole, then (its output put back
// as it was) for chips 2-3 alone, and checks the second run's output against the first's chip by
// chip; the whole run's output is left, so the program goes on as on one process.
class ChipsTwoAndThreeChecked : public Backend {
 public:
  explicit ChipsTwoAndThreeChecked(Backend& inner) : inner_(inner) {}
  const char* name() const override { return inner_.name(); }
  absl::Status Run(const DmaOp& op, const DmaTensors& tensors) override { return inner_.Run(op, tensors); }
  absl::Status Run(const PipelineOp& op, const PipelineTensors& tensors) override {
    if (!CheckSplitsByChip(op, tensors).ok()) {
      ++kinds.whole;
      return inner_.Run(op, tensors);
    }
    ++kinds.split;
    Note(op, kinds);
    const DeviceTensor& out = tensors.output;
    absl::StatusOr<HostTensor> before = ReadImage(out, out.full_mapping());
    if (!before.ok()) return before.status();
    const auto t0 = std::chrono::steady_clock::now();
    if (absl::Status s = inner_.Run(op, tensors); !s.ok()) return s;
    whole_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    absl::StatusOr<HostTensor> whole = ReadImage(out, out.full_mapping());
    if (!whole.ok()) return whole.status();
    if (absl::Status s = WriteIntoWindow(*before, out); !s.ok()) return s;
    if (absl::Status s = pipelines_.Run(inner_, op, tensors, 2, 2); !s.ok()) {
      ADD_FAILURE() << inner_.name() << ": chips 2-3 alone failed: " << s << "\n" << OpText(Op{op}, 0);
      return s;
    }
    absl::StatusOr<HostTensor> split = ReadImage(out, out.full_mapping());
    if (!split.ok()) return split.status();
    // Again, as a relaunch runs it: the kept parts (their serials and views) write the same.
    if (absl::Status s = WriteIntoWindow(*before, out); !s.ok()) return s;
    const auto t1 = std::chrono::steady_clock::now();
    if (absl::Status s = pipelines_.Run(inner_, op, tensors, 2, 2); !s.ok()) return s;
    kept_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    absl::StatusOr<HostTensor> again = ReadImage(out, out.full_mapping());
    if (!again.ok()) return again.status();
    EXPECT_EQ(again->bytes(), split->bytes()) << inner_.name() << ": the kept parts of " << OpText(Op{op}, 0);
    const int64_t block = *ChipBlockBytes(out);
    for (int chip = 0; chip < 4; ++chip) {
      const HostTensor& want = chip >= 2 ? *whole : *before;
      const auto part = [&](const HostTensor& t) { return absl::MakeConstSpan(t.bytes()).subspan(chip * block, block); };
      if (!std::equal(part(want).begin(), part(want).end(), part(*split).begin())) {
        ADD_FAILURE() << inner_.name() << ": chip " << chip << " of " << out.ToString() << " differs from the "
                      << (chip >= 2 ? "whole run's" : "bytes before the op") << "\n"
                      << OpText(Op{op}, 0);
      }
    }
    return WriteIntoWindow(*whole, out);
  }

  Kinds kinds;
  ChipRangePipelines pipelines_;
  double whole_seconds = 0, kept_seconds = 0;  // the whole ops, and their kept parts for chips 2-3

 private:
  Backend& inner_;
};

// The tensor-parallel Llama layer (prefill and a decode launch), checked op by op as above; the
// sample still checks its logits against the host reference.
void LlamaLayerByChip(Backend& backend) {
  const samples::Sample* layer = samples::FindSample("llama_tiny_layer_4chip");
  ASSERT_NE(layer, nullptr);
  ChipsTwoAndThreeChecked checked(backend);
  absl::StatusOr<samples::SampleRun> run = layer->Run(checked);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->mismatch.has_value()) << *run->mismatch;
  const Kinds& k = checked.kinds;
  EXPECT_GT(k.split, 100) << backend.name();
  EXPECT_TRUE(k.contraction && k.reduce && k.vector && k.to_vrf && k.to_trf) << backend.name();
  // Its pipelines run by chip but those on chip 0 alone (none) and the indirect fetches: counted.
  std::cout << backend.name() << ": " << k.split << " pipelines run by chip, " << k.whole << " not; "
            << checked.pipelines_.kept() << " (op, chip) parts kept; whole ops " << checked.whole_seconds
            << " s, their kept parts on chips 2-3 " << checked.kept_seconds << " s\n";
}

TEST(ChipRangePipeline, LlamaLayerPipelinesRunByChipOnTheInterpreter) {
  interp::Interpreter interpreter;
  LlamaLayerByChip(interpreter);
}

TEST(ChipRangePipeline, LlamaLayerPipelinesRunByChipOnTheJit) {
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create({.threads = 1});
  LlamaLayerByChip(*jit);
}

// A fetch that broadcasts a digit of an axis its input holds more coarsely (the Llama layer's Q
// projection reads `C / 8 % 4` from slices holding `C / 32`): on the interpreter a part on chip
// c > 0 failed, "move: position ... holds {C=...}, which the source `[# 2 + Chip + # 1], ...` does
// not hold": the engine rule's digit matching found no digits in the chip view's left-padded
// layout (dsl/index_matching.cc now peels the pad). Checked against the host: each output element
// is its input element at C / 4.
struct BroadcastFetch {
  MappingScope s = *MappingScope::Parse("P = 4, C = 16, X = 8");
  Device device{4};
  HostTensor values = *HostTensor::Random(DType::kI32, s.m("P, C / 4, X"), 7);

  absl::StatusOr<HostTensor> Run(Backend& backend) {
    Context ctx(device, backend);
    ASSIGN_OR_RETURN(HbmTensor hbm, values.to_hbm(ctx.pdma, 0, s.m("P"), s.m("C / 4, X")));
    ASSIGN_OR_RETURN(DmTensor in, hbm.to_dm(ctx.tdma, 0, s.m("P"), s.m("1 # 2"), s.m("C / 4 # 256"), s.m("X")));
    ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(in.view())
                                       .fetch(DType::kI32, s.m("C % 4"), s.m("X"))
                                       .collect(s.m("C % 4"), s.m("X"))
                                       .commit(s.m("C % 4, X"), 8192));
    return ReadAs(out, s.m("P, C, X"));
  }
};

void BroadcastFetchByChip(Backend& backend) {
  BroadcastFetch whole_run;
  absl::StatusOr<HostTensor> whole = whole_run.Run(backend);
  ASSERT_TRUE(whole.ok()) << whole.status();
  BroadcastFetch checked_run;
  ChipsTwoAndThreeChecked checked(backend);
  absl::StatusOr<HostTensor> split = checked_run.Run(checked);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(checked.kinds.split, 1) << backend.name();
  EXPECT_EQ(whole->bytes(), split->bytes()) << backend.name();
  for (int64_t p = 0; p < 4; ++p) {
    for (int64_t c = 0; c < 16; ++c) {
      for (int64_t x = 0; x < 8; ++x) {
        ASSERT_EQ(*whole->Get((p * 16 + c) * 8 + x), *whole_run.values.Get((p * 4 + c / 4) * 8 + x))
            << backend.name() << " P=" << p << " C=" << c << " X=" << x;
      }
    }
  }
}

TEST(ChipRangePipeline, BroadcastFetchRunsByChipOnTheInterpreter) {
  interp::Interpreter interpreter;
  BroadcastFetchByChip(interpreter);
}

TEST(ChipRangePipeline, BroadcastFetchRunsByChipOnTheJit) {
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create({.threads = 1});
  BroadcastFetchByChip(*jit);
}

// to_vrf of execution ids on every chip, then a pipeline whose Branch Vrf picks each element's
// addend by them (ids differ per chip).
struct BranchVrf {
  MappingScope s = *MappingScope::Parse("P = 4, T = 2, X = 8, Q = 4");
  Device device{4};
  HostTensor values = *HostTensor::Random(DType::kI32, s.m("P, T, X"), 5);
  HostTensor ids = *HostTensor::FromBits(DType::kI32, s.m("P, T, X"), IdBits());

  static std::vector<uint32_t> IdBits() {
    std::vector<uint32_t> bits;
    for (int i = 0; i < 64; ++i) bits.push_back(static_cast<uint32_t>((i * 7 + i / 16) % 16));
    return bits;
  }

  DmTensor ToDm(Context& ctx, const HostTensor& host, int64_t address) {
    HbmTensor hbm = *host.to_hbm(ctx.pdma, address, s.m("P"), s.m("T, X"));
    return *hbm.to_dm(ctx.tdma, address, s.m("P"), s.m("1 # 2"), s.m("1 # 256"), s.m("T, X"));
  }

  absl::StatusOr<HostTensor> Run(Backend& backend) {
    Context ctx(device, backend);
    DmTensor in = ToDm(ctx, values, 0);
    DmTensor id_source = ToDm(ctx, ids, 4096);
    ASSIGN_OR_RETURN(VrfTensor vrf, ctx.sub.begin(id_source.view())
                                        .fetch(DType::kI32, s.m("T"), s.m("X"))
                                        .collect(s.m("T"), s.m("X"))
                                        .to_vrf(s.m("T, X"), 0));
    constexpr BitReq kOne = BitReq::kOne, kAny = BitReq::kIgnore;
    ASSIGN_OR_RETURN(DmTensor out,
                     ctx.main.begin(in.view())
                         .fetch(DType::kI32, s.m("T"), s.m("X"))
                         .collect(s.m("T"), s.m("X"))
                         .vector_init()
                         .vector_intra_slice_branch(vrf)
                         .vector_fxp(FxpBinaryOp::kAddFxp,
                                     VeBranchOperand()
                                         .imm(TagGuard::Matches({kOne, kAny, kAny, kAny}), VeRhs(100))
                                         .imm(TagGuard::Matches({kAny, kOne, kAny, kAny}), VeRhs(1000)))
                         .vector_final()
                         .commit(s.m("T, X"), 8192));
    return ReadAs(out, s.m("P, T, X"));
  }
};

void BranchVrfByChip(Backend& backend) {
  BranchVrf whole_run;
  absl::StatusOr<HostTensor> whole = whole_run.Run(backend);
  ASSERT_TRUE(whole.ok()) << whole.status();
  BranchVrf checked_run;
  ChipsTwoAndThreeChecked checked(backend);
  absl::StatusOr<HostTensor> split = checked_run.Run(checked);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(checked.kinds.split, 2) << backend.name();  // the to_vrf and the branch
  EXPECT_TRUE(checked.kinds.branch_vrf && checked.kinds.to_vrf) << backend.name();
  EXPECT_EQ(whole->bytes(), split->bytes()) << backend.name();
  // Against the ids, on the host: the first matching slot's addend.
  for (int64_t i = 0; i < 64; ++i) {
    const uint32_t id = static_cast<uint32_t>(*whole_run.ids.Get(i));
    const int64_t add = (id & 1) ? 100 : (id & 2) ? 1000 : 0;
    ASSERT_EQ(*whole->Get(i), *whole_run.values.Get(i) + add) << backend.name() << " element " << i;
  }
}

TEST(ChipRangePipeline, BranchVrfRunsByChipOnTheInterpreter) {
  interp::Interpreter interpreter;
  BranchVrfByChip(interpreter);
}

TEST(ChipRangePipeline, BranchVrfRunsByChipOnTheJit) {
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create({.threads = 1});
  BranchVrfByChip(*jit);
}

// Keeps the last pipeline a backend ran, and its tensors.
class LastPipeline : public Backend {
 public:
  explicit LastPipeline(Backend& inner) : inner_(inner) {}
  const char* name() const override { return inner_.name(); }
  absl::Status Run(const PipelineOp& op, const PipelineTensors& tensors) override {
    last = op;
    last_tensors = std::make_unique<PipelineTensors>(tensors);
    return inner_.Run(op, tensors);
  }
  PipelineOp last;
  std::unique_ptr<PipelineTensors> last_tensors;

 private:
  Backend& inner_;
};

TEST(ChipRangePipeline, RefusesPipelinesOffTheirChipAxisAndRangesOutsideTheDevice) {
  interp::Interpreter interpreter;
  LastPipeline recorder(interpreter);
  BranchVrf branch;
  ASSERT_TRUE(branch.Run(recorder).ok());
  const PipelineOp& op = recorder.last;
  const PipelineTensors& tensors = *recorder.last_tensors;
  ASSERT_TRUE(CheckSplitsByChip(op, tensors).ok()) << CheckSplitsByChip(op, tensors);
  ChipRangePipelines pipelines;
  // Chips past the device's.
  const absl::Status outside = pipelines.Run(interpreter, op, tensors, 3, 2);
  EXPECT_EQ(outside.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(outside.message()), HasSubstr("the chips [3, 5) leave the device's chips [0, 4)"));
  // The output on another Chip axis (Q): its chips' parts are not the stream's.
  const MappingScope& s = branch.s;
  PipelineTensors other_axis = tensors;
  other_axis.output = *DmTensor::Create(branch.device, DType::kI32, s.m("Q"), s.m("1 # 2"), s.m("1 # 256"),
                                        s.m("T, X"), Address::At(0x10000));
  const absl::Status differ = CheckSplitsByChip(op, other_axis);
  EXPECT_EQ(differ.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(differ.message()), HasSubstr("has `Q` as its Chip level, not `P` over the 4 chips"));
  EXPECT_THAT(std::string(differ.message()), HasSubstr("the same single axis over every chip as its Chip level"));
  EXPECT_THAT(pipelines.Run(interpreter, op, other_axis, 2, 2).message(), HasSubstr("has `Q` as its Chip level"));
  // A VRF operand on chip 0 alone.
  PipelineTensors one_chip = tensors;
  one_chip.vrf_operands[0] = *VrfTensor::Create(branch.device, DType::kI32, s.m("1 # 4"), s.m("1 # 2"),
                                                s.m("1 # 256"), s.m("T, X"), Address::At(0x400));
  EXPECT_THAT(CheckSplitsByChip(op, one_chip).message(), HasSubstr("has `1 # 4` as its Chip level"));
}

}  // namespace
}  // namespace visa::mpi
