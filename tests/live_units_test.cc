// Trimming a pipeline's padded units to their live box (jit/live_units.h): which pipelines are
// trimmed, to what box, which are refused, that the JIT's results on such pipelines stay those of
// the interpreter, and that its staged walks then span the live units alone (JitStats).
#include "jit/live_units.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "jit/jit_backend.h"
#include "mpi/chip_parts.h"
#include "mpi/chip_range_pipeline.h"
#include "runtime/trace_backend.h"
#include "runtime/transfer.h"
#include "runtime/window_write.h"
#include "samples/sample.h"
#include "runtime/trace_options.h"
#include "tools/check_command.h"

namespace visa::jit {
namespace {

// The pipelines of a sample's program, as `visa run` records them.
std::vector<PipelineOp> Pipelines(const std::string& sample_name) {
  const samples::Sample* sample = samples::FindSample(sample_name);
  EXPECT_NE(sample, nullptr) << sample_name;
  if (sample == nullptr) return {};
  TraceBackend trace;
  absl::StatusOr<samples::SampleRun> traced = sample->Run(trace, TracingOptions());
  EXPECT_TRUE(traced.ok()) << traced.status();
  std::vector<PipelineOp> pipelines;
  if (!traced.ok()) return pipelines;
  for (const Op& op : traced->program.ops) {
    if (const auto* pipe = std::get_if<PipelineOp>(&op.body)) pipelines.push_back(*pipe);
  }
  return pipelines;
}

const StreamShape& Units(const PipelineOp& op) { return std::get<BeginStage>(op.stages.front()).shape; }

// batched_matmul_k runs on cluster `1 # 2`, slice `1 # 256`: one live unit of 512.
TEST(LiveUnits, OneLiveSliceOfFiveHundredTwelveIsTrimmedToIt) {
  std::vector<PipelineOp> pipelines = Pipelines("batched_matmul_k");
  ASSERT_EQ(pipelines.size(), 2u);  // the TRF load, the contraction
  for (const PipelineOp& op : pipelines) {
    ASSERT_EQ(Units(op).cluster.size() * Units(op).slice.size(), 512);
    std::optional<LivePipeline> trimmed = TrimToLiveUnits(op);
    ASSERT_TRUE(trimmed.has_value());
    ASSERT_EQ(trimmed->op.stages.size(), op.stages.size());
    EXPECT_EQ(Units(trimmed->op).cluster.size() * Units(trimmed->op).slice.size(), 1);
    EXPECT_TRUE(trimmed->box.IsPrefix());
    // Every stage's stream keeps its positions per unit: 1 / 512 of the padded ones.
    for (size_t i = 0; i < op.stages.size(); ++i) {
      const auto* fetch = std::get_if<FetchStage>(&op.stages[i]);
      if (fetch == nullptr) continue;
      const auto& kept = std::get<FetchStage>(trimmed->op.stages[i]);
      EXPECT_EQ(kept.out.Full().size() * 512, fetch->out.Full().size());
    }
  }
}

// The Switch Engine moves data between slices: its pipelines keep every unit.
TEST(LiveUnits, SwitchPipelinesAreNotTrimmed) {
  std::vector<PipelineOp> pipelines = Pipelines("switch_broadcast1");
  ASSERT_FALSE(pipelines.empty());
  int switching = 0;
  for (const PipelineOp& op : pipelines) {
    const bool switches = std::any_of(op.stages.begin(), op.stages.end(),
                                      [](const Stage& s) { return std::holds_alternative<SwitchStage>(s); });
    if (!switches) continue;
    ++switching;
    EXPECT_FALSE(TrimToLiveUnits(op).has_value());
  }
  EXPECT_GT(switching, 0);
}

// Units without padding (the GEMM's 256 slices on both clusters would be; its clusters are
// `1 # 2`, so only the cluster level is trimmed): the live units stay all of the slices.
TEST(LiveUnits, TrimsOnlyThePaddedLevel) {
  std::vector<PipelineOp> pipelines = Pipelines("gemm_k64");
  ASSERT_FALSE(pipelines.empty());
  std::optional<LivePipeline> trimmed = TrimToLiveUnits(pipelines.front());
  ASSERT_TRUE(trimmed.has_value());
  EXPECT_EQ(Units(trimmed->op).cluster.size(), 1);
  EXPECT_EQ(Units(trimmed->op).slice.size(), Units(pipelines.front()).slice.size());
}

// A pipeline whose units are not padded at all is left as it is.
TEST(LiveUnits, NoPaddingNoTrim) {
  PipelineOp op;
  BeginStage begin;
  begin.shape.chip = *ParseMapping("1", Axes());
  begin.shape.cluster = *ParseMapping("1", Axes());
  begin.shape.slice = *ParseMapping("1", Axes());
  op.stages.push_back(begin);
  EXPECT_FALSE(TrimToLiveUnits(op).has_value());
}

// embedding_fetch gathers rows on slice `1 # 256` of cluster `1 # 2`: the indirect fetch walks the
// one live unit, not 512 (a fresh device paid a page fault per padded slice it read).
TEST(LiveUnits, AnIndirectFetchIsTrimmedToItsLiveUnit) {
  std::vector<PipelineOp> pipelines = Pipelines("embedding_fetch");
  int indirect = 0;
  for (const PipelineOp& op : pipelines) {
    if (!op.fetch_index) continue;
    ++indirect;
    ASSERT_EQ(Units(op).cluster.size() * Units(op).slice.size(), 512);
    std::optional<LivePipeline> trimmed = TrimToLiveUnits(op);
    ASSERT_TRUE(trimmed.has_value());
    EXPECT_EQ(Units(trimmed->op).cluster.size() * Units(trimmed->op).slice.size(), 1);
    for (const Stage& stage : trimmed->op.stages) {
      if (const auto* fetch = std::get_if<FetchStage>(&stage)) {
        EXPECT_TRUE(fetch->indirect.has_value());
        EXPECT_EQ(fetch->out.cluster.size() * fetch->out.slice.size(), 1);
      }
    }
  }
  EXPECT_EQ(indirect, 1);
}

// The trimmed walk writes the interpreter's bits, op by op (`visa check`), on samples with padded
// units: contractions on one slice, a convolution, an f8 matmul, indirect fetches.
TEST(LiveUnits, JitEqualsInterpreterOnPaddedUnitSamples) {
  for (const std::string name : {"batched_matmul_k", "batched_matmul_nm", "dot", "conv2d_stride2", "matmul_f8",
                                 "embedding_fetch", "embedding_fetch_strided", "gathered_matmul"}) {
    std::ostringstream out, err;
    EXPECT_EQ(cli::CheckSampleCommand({.sample = name}, out, err), 0) << name << ": " << out.str() << err.str();
    EXPECT_NE(out.str().find("identical"), std::string::npos) << out.str();
  }
}


// ---- Live boxes: units that are no prefix of chip x cluster x slice -------------------------------

// Every stream shape of an op (begin, each stage's in and out, a vector stage's steps and their
// intra-slice reduces), for relabelling a level by hand.
template <typename F>
void ForEachStream(PipelineOp& op, F&& f) {
  for (Stage& stage : op.stages) {
    std::visit(
        [&](auto& s) {
          if constexpr (requires { s.shape.chip; }) f(s.shape);
          if constexpr (requires { s.in.chip; }) f(s.in);
          if constexpr (requires { s.out.chip; }) f(s.out);
          if constexpr (requires { s.steps; }) {
            for (VeStep& step : s.steps) {
              f(step.out);
              if (step.intra_reduce) {
                auto reduce = std::make_shared<IntraSliceReduceStage>(*step.intra_reduce);
                f(reduce->in);
                f(reduce->out);
                step.intra_reduce = std::move(reduce);
              }
            }
          }
        },
        stage);
  }
}

bool HasIntraReduce(const PipelineOp& op) {
  for (const Stage& stage : op.stages) {
    if (const auto* vector = std::get_if<VectorStage>(&stage)) {
      for (const VeStep& step : vector->steps) {
        if (step.intra_reduce) return true;
      }
    }
  }
  return false;
}
bool HasVector(const PipelineOp& op) {
  return std::any_of(op.stages.begin(), op.stages.end(),
                     [](const Stage& s) { return std::holds_alternative<VectorStage>(s); });
}

TEST(LiveBox, PrefixesAndBoxes) {
  // One slice of 256 on one cluster of 2, one chip: unit 0.
  EXPECT_TRUE((LiveBox{{0, 0, 0}, {1, 1, 1}, {1, 2, 256}}.IsPrefix()));
  // Every slice of cluster 0: units 0 .. 255.
  EXPECT_TRUE((LiveBox{{0, 0, 0}, {1, 1, 256}, {1, 2, 256}}.IsPrefix()));
  // 4 chips, cluster 0, 2 slices each: units 0, 1, 512, 513, ...: no prefix.
  const LiveBox chips_first{{0, 0, 0}, {4, 1, 2}, {4, 2, 256}};
  EXPECT_FALSE(chips_first.IsPrefix());
  EXPECT_EQ(chips_first.units(), 8);
  EXPECT_EQ(chips_first.first_unit(), 0);
  // Chip 2 of 4 alone (a rank's part, `# 2 + Chip + # 1`): starts at unit 2 x 512.
  const LiveBox chip_two{{2, 0, 0}, {1, 2, 256}, {4, 2, 256}};
  EXPECT_FALSE(chip_two.IsPrefix());
  EXPECT_EQ(chip_two.first_unit(), 1024);
  // The nest's unit levels, innermost first: stream units dense, buffer units by the padded sizes.
  const std::vector<NestLevel> levels = BoxLevels(chips_first, /*stream_unit=*/16, /*buffer_unit=*/100, true);
  ASSERT_EQ(levels.size(), 3u);
  EXPECT_EQ(levels[0], (NestLevel{2, 16, 100}));
  EXPECT_EQ(levels[1], (NestLevel{1, 32, 25600}));
  EXPECT_EQ(levels[2], (NestLevel{4, 32, 51200}));
  // Read the other way (a commit: the buffer is the destination).
  EXPECT_EQ(BoxLevels(chips_first, 16, 100, false)[2], (NestLevel{4, 51200, 32}));
}

// llama_tiny_layer_4chip places its tensors `[P] chip, [1 # 2] cluster, [X / 32 # 256] slice`: per
// chip the live units are a prefix, over the stream they are not. Its staged pipelines, those with
// Vector Engine stages (element ops with VRF operands, intra-slice reduces) among them, are trimmed
// to a box of 4 chips x 1 cluster x the live slices.
TEST(LiveUnits, ChipsBeforePaddedClustersAndSlicesAreTrimmedToABox) {
  std::vector<PipelineOp> pipelines = Pipelines("llama_tiny_layer_4chip");
  int boxes = 0, vector_boxes = 0, reduce_boxes = 0;
  for (const PipelineOp& op : pipelines) {
    std::optional<LivePipeline> trimmed = TrimToLiveUnits(op);
    if (!trimmed) continue;
    if (trimmed->box.IsPrefix()) continue;
    ++boxes;
    vector_boxes += HasVector(op);
    reduce_boxes += HasIntraReduce(op);
    EXPECT_EQ(trimmed->box.count[0], 4);
    EXPECT_EQ(trimmed->box.count[1], 1);
    EXPECT_EQ(Units(trimmed->op).chip.size() * Units(trimmed->op).cluster.size() * Units(trimmed->op).slice.size(),
              trimmed->box.units());
    EXPECT_NE(trimmed->op.serial, op.serial);  // a vector stage's kept plan is the trimmed walk's own
  }
  EXPECT_GT(boxes, 20);
  EXPECT_GT(vector_boxes, 10);
  EXPECT_GT(reduce_boxes, 2);
}

// A rank's part on chip c > 0 (`# c + Chip + # n`, mpi/chip_range_pipeline.h) is a box starting at
// chip c; over slices that do not start at 0 an intra-slice reduce is refused (its valid counts are
// by slice number), and so is an indirect fetch off a prefix (its walk reads the table's first units).
TEST(LiveUnits, ChipOffsetsAreBoxesAndWhatCannotMoveIsRefused) {
  std::vector<PipelineOp> pipelines = Pipelines("llama_tiny_layer_4chip");
  const absl::StatusOr<Axes> axes = Axes::Parse("C = 1");  // a one-value Chip axis, as a part's
  ASSERT_TRUE(axes.ok()) << axes.status();
  const Mapping chip_two = (*axes)["C"].left_pad(2).pad(4);
  ASSERT_TRUE(chip_two.ok()) << chip_two.status();
  int reduces = 0;
  for (const PipelineOp& op : pipelines) {
    if (!HasIntraReduce(op) || !TrimToLiveUnits(op)) continue;
    ++reduces;
    PipelineOp on_chip_two = op;
    ForEachStream(on_chip_two, [&](StreamShape& shape) { shape.chip = chip_two; });
    std::optional<LivePipeline> trimmed = TrimToLiveUnits(on_chip_two);
    ASSERT_TRUE(trimmed.has_value());
    EXPECT_EQ(trimmed->box.lo[0], 2);
    EXPECT_EQ(trimmed->box.count[0], 1);
    EXPECT_EQ(trimmed->box.size[0], 4);
    EXPECT_FALSE(trimmed->box.IsPrefix());
    // The same slices shifted by one: the reduce's slices would not keep their numbers.
    const int64_t live_slices = trimmed->box.count[2], slices = trimmed->box.size[2];
    const absl::StatusOr<Axes> slice_axes = Axes::Parse(absl::StrCat("Z = ", live_slices));
    ASSERT_TRUE(slice_axes.ok()) << slice_axes.status();
    const Mapping shifted_slices = (*slice_axes)["Z"].left_pad(1).pad(slices);
    ASSERT_TRUE(shifted_slices.ok()) << shifted_slices.status();
    PipelineOp shifted = on_chip_two;
    ForEachStream(shifted, [&](StreamShape& shape) { shape.slice = shifted_slices; });
    std::optional<LivePipeline> without_reduce_rule = TrimToLiveUnits(shifted);
    EXPECT_FALSE(without_reduce_rule.has_value());
  }
  EXPECT_GT(reduces, 0);

  int indirect = 0;
  for (const PipelineOp& op : Pipelines("embedding_fetch")) {
    if (!op.fetch_index) continue;
    ++indirect;
    PipelineOp padded_chips = op, chip_one = op;
    ForEachStream(padded_chips, [&](StreamShape& shape) { shape.chip = (*axes)["C"].pad(4); });
    ForEachStream(chip_one, [&](StreamShape& shape) { shape.chip = (*axes)["C"].left_pad(1).pad(4); });
    EXPECT_TRUE(TrimToLiveUnits(padded_chips).has_value());  // chip 0 of 4: a prefix
    EXPECT_FALSE(TrimToLiveUnits(chip_one).has_value());
  }
  EXPECT_EQ(indirect, 1);
}

// An inter-slice reduce's source table numbers the padded slices and its output's Slice is not the
// units': its pipelines keep every unit.
TEST(LiveUnits, InterSliceReducePipelinesAreNotTrimmed) {
  int inter = 0;
  for (const PipelineOp& op : Pipelines("vector_inter_reduce_dummy")) {
    bool reduces = false;
    for (const Stage& stage : op.stages) {
      if (const auto* vector = std::get_if<VectorStage>(&stage)) {
        for (const VeStep& step : vector->steps) reduces = reduces || step.inter_reduce != nullptr;
      }
    }
    if (!reduces) continue;
    ++inter;
    std::optional<LiveBox> box = LiveBoxOf(Units(op));
    ASSERT_TRUE(box.has_value());
    ASSERT_LT(box->units(), box->size[0] * box->size[1] * box->size[2]) << "the sample's units have no padding";
    EXPECT_FALSE(TrimToLiveUnits(op).has_value());
  }
  EXPECT_GT(inter, 0);
}

// The box walks write the interpreter's bits, op by op: the 4-chip Llama layer (contractions through
// the TRF by device unit, vector stages with VRF operands and reductions, commits by the sequencer
// over the box) and the decode model.
TEST(LiveUnits, JitEqualsInterpreterOnBoxSamples) {
  for (const std::string name : {"llama_tiny_layer_4chip", "llama_tiny_decode", "vector_inter_reduce_dummy"}) {
    std::ostringstream out, err;
    EXPECT_EQ(cli::CheckSampleCommand({.sample = name}, out, err), 0) << name << ": " << out.str() << err.str();
    EXPECT_NE(out.str().find("identical"), std::string::npos) << out.str();
  }
}

// The count: every staged walk of the 4-chip layer spans its live box (4 chips x 1 cluster x at
// most 8 slices), where it spanned all 4 x 2 x 256 units before boxes.
TEST(LiveUnits, StagedWalksOfTheFourChipLayerSpanTheirLiveUnitsAlone) {
  // With direct pipelines off, every pipeline that is not a fused contraction walks stage by stage
  // (by default the layer's pipelines all run fused, in place or as one move: none is walked).
  std::unique_ptr<JitBackend> jit = *JitBackend::Create({.threads = 1, .direct_pipelines = false});
  absl::StatusOr<samples::SampleRun> run = samples::FindSample("llama_tiny_layer_4chip")->Run(*jit, {});
  ASSERT_TRUE(run.ok()) << run.status();
  const JitStats& stats = jit->stats();
  ASSERT_GT(stats.staged_pipelines, 20);
  EXPECT_EQ(stats.live_unit_walks, stats.staged_pipelines);
  EXPECT_LE(stats.units_walked, 32 * stats.staged_pipelines);
}

// By default every pipeline of the 4-chip layer runs fused (the lane or packet contraction kernel),
// in place (Vector Engine stages, stash and Cast included) or as one move (chip views included):
// none is walked stage by stage.
TEST(LiveUnits, TheFourChipLayerWalksNoPipelineStageByStageByDefault) {
  std::unique_ptr<JitBackend> jit = *JitBackend::Create({.threads = 1});
  absl::StatusOr<samples::SampleRun> run = samples::FindSample("llama_tiny_layer_4chip")->Run(*jit, {});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->mismatch) << *run->mismatch;
  EXPECT_GT(jit->stats().fused_pipelines, 0);
  EXPECT_EQ(jit->stats().staged_pipelines, 0);
}

// A rank's part on chip 1 (mpi/chip_range_pipeline.h) of every pipeline of the 4-chip layer that
// runs by chip: the part writes chip 1's bytes of the whole op's output bit for bit, and its staged
// walks span chip 1's live units alone (before boxes, `# 1 + Chip + # 2` was no prefix and every
// part walked all 4 chips' 2048 units).
class ChipOneParts : public Backend {
 public:
  explicit ChipOneParts(JitBackend& jit) : jit_(jit) {}
  const char* name() const override { return jit_.name(); }
  absl::Status Run(const DmaOp& op, const DmaTensors& tensors) override { return jit_.Run(op, tensors); }
  absl::Status Run(const PipelineOp& op, const PipelineTensors& tensors) override {
    if (!mpi::CheckSplitsByChip(op, tensors).ok()) return jit_.Run(op, tensors);
    const DeviceTensor& out = tensors.output;
    ASSIGN_OR_RETURN(HostTensor before, ReadImage(out, out.full_mapping()));
    RETURN_IF_ERROR(jit_.Run(op, tensors));
    ASSIGN_OR_RETURN(HostTensor whole, ReadImage(out, out.full_mapping()));
    RETURN_IF_ERROR(WriteIntoWindow(before, out));
    const int64_t staged = jit_.stats().staged_pipelines, walked = jit_.stats().units_walked;
    RETURN_IF_ERROR(parts_.Run(jit_, op, tensors, 1, 1));
    part_staged += jit_.stats().staged_pipelines - staged;
    part_units += jit_.stats().units_walked - walked;
    ++parts;
    ASSIGN_OR_RETURN(HostTensor part, ReadImage(out, out.full_mapping()));
    ASSIGN_OR_RETURN(int64_t block, mpi::ChipBlockBytes(out));
    const auto chip_one = [&](const HostTensor& t) { return absl::MakeConstSpan(t.bytes()).subspan(block, block); };
    EXPECT_TRUE(std::equal(chip_one(whole).begin(), chip_one(whole).end(), chip_one(part).begin()))
        << "chip 1 of " << out.ToString();
    return WriteIntoWindow(whole, out);
  }
  int64_t parts = 0, part_staged = 0, part_units = 0;

 private:
  JitBackend& jit_;
  mpi::ChipRangePipelines parts_;
};

TEST(LiveUnits, AChipPartWalksItsChipsLiveUnitsAlone) {
  std::unique_ptr<JitBackend> jit = *JitBackend::Create({.threads = 1});
  ChipOneParts checked(*jit);
  absl::StatusOr<samples::SampleRun> run = samples::FindSample("llama_tiny_layer_4chip")->Run(checked, {});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->mismatch.has_value()) << *run->mismatch;
  EXPECT_GT(checked.parts, 100);
  ASSERT_GT(checked.part_staged, 20);
  EXPECT_LE(checked.part_units, 8 * checked.part_staged);  // one chip's cluster of at most 8 live slices
}

}  // namespace
}  // namespace visa::jit
