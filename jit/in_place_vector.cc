// InPlaceVector: when a vector pipeline may run in device memory, its plan, and its run.
#include "jit/in_place_vector.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "dsl/layout.h"
#include "dsl/status_macros.h"
#include "jit/element_op.h"
#include "jit/fused_contraction.h"
#include "jit/in_place.h"
#include "jit/op_memo.h"
#include "jit/parallel.h"
#include "jit/vector_stage.h"
#include "runtime/device.h"

namespace visa::jit {
namespace {

// An end as a kept plan knows it: the placement object (weakly: a freed one never matches again),
// its Element and window (as ready_moves.h); else, for a tensor placed anew (an intermediate VRF
// operand of each run), everything the plan reads of it: tier, address, type and full mapping.
struct End {
  std::weak_ptr<const Placement> placement;
  const Placement* object = nullptr;
  Mapping element;
  int64_t window_offset = 0;
  bool view = false;
  Tier tier = Tier::kDm;
  int64_t address = 0;
  DType dtype = DType::kI32;
  Mapping full;

  static End Of(const DeviceTensor& tensor) {
    return End{tensor.shared_placement(), &tensor.placement(), tensor.element(), tensor.window_offset(),
               tensor.is_view(), tensor.tier(), tensor.placement().address, tensor.dtype(), tensor.full_mapping()};
  }
  bool Matches(const DeviceTensor& tensor) const {
    if (view != tensor.is_view() || window_offset != tensor.window_offset() || !(element == tensor.element())) {
      return false;
    }
    if (!placement.expired() && object == &tensor.placement()) return true;
    return tier == tensor.tier() && address == tensor.placement().address && dtype == tensor.dtype() &&
           full == tensor.full_mapping();
  }
};

// The pieces of a move `to` <- `from` that each written run of `to` reads, split at the runs'
// ends: run r reads pieces [first_piece[r], first_piece[r + 1]).
struct OperandReads {
  std::vector<MoveRun> pieces;
  std::vector<int64_t> first_piece;
  bool contiguous = true;  // every run reads one piece of consecutive positions
};

// A VRF operand placed in the output's layout by a compiled move from where it lies.
struct VrfImage {
  int vrf = 0;
  ReadyNest nest;
  Tier tier = Tier::kVrf;
  int64_t src_offset = 0;  // bytes from the VRF memory's first unit to the operand's first element
  Mapping layout;          // the operand's positions, as the nest reads them
  int64_t positions = 0;
  // When every written run of the output reads a contiguous run of the operand: each run's first
  // operand position. The kernels then read the VRF in place and the image is never built.
  // How each written run of the output reads the operand, when every position of it reads one
  // (OperandReads): then no image is built. `contiguous`: each run reads one contiguous run of
  // the operand, so the kernels read the VRF in place; else each run's values are gathered into
  // a run-sized buffer right before its kernels (a row's value broadcast over a packet).
  std::optional<OperandReads> reads;
};

struct Plan {
  Tier dst_tier = Tier::kDm, src_tier = Tier::kDm;
  int64_t dst_offset = 0, src_offset = 0;  // bytes from each memory's first unit to the end's base
  ReadyNest move;                           // the input into the output, each position by index
  std::vector<std::pair<int64_t, int64_t>> runs;  // the output's written positions [begin, end)
  // When the move is a plain copy of long contiguous runs: each run's source position, so a run is
  // copied and computed while it is in the cache (one pass over the bytes instead of two).
  std::vector<int64_t> run_sources;
  int64_t written = 0;
  struct Segment {
    VectorFn fn = nullptr;
    std::vector<int> images;  // indices into `images`, or kStashImage
    bool stash_before = false;  // the run's values are copied into its stash before this segment
  };
  std::vector<Segment> segments;
  std::vector<VrfImage> images;
  bool compare = false;     // the first kernel computes the execution ids (else all are 0)
  // BranchMode::Vrf: the VRF operand whose values are the ids (an index into `images`, read as the
  // operands are), the VRF's text for the range error, and where run r's ids start in the buffer of
  // every written position's id (filled and checked before anything is written; per calling
  // thread, so a plan for new placements faults no new page).
  int ids_image = -1;
  std::string ids_text;
  std::vector<int64_t> run_ids;
  int64_t ids_size = 0;
  Mapping to;  // the output's in-place layout (names a position's index in the range error)
  // An interleaved pair: each tensor's move into the staged pair (Shape::pair), from its memory.
  struct PairMove {
    ReadyNest nest;
    Tier tier = Tier::kDm;
    int64_t offset = 0;
  };
  std::vector<PairMove> pair;
  int64_t pair_positions = 0;  // per tensor
  int64_t longest_run = 0;
  // With a Cast stage (Shape::cast_op): the 32-bit values laid out as the output, where the move
  // and the kernels write (only the written runs' pages are touched), and the cast from it into
  // the output, each position by its index.
  std::shared_ptr<uint32_t[]> values;
  std::optional<ReadyNest> cast;
  // The operand images, laid out as the output (only the written runs' pages are ever touched, so
  // they are left uninitialized). Ops of one backend run one at a time.
  std::vector<std::shared_ptr<uint32_t[]>> image_data;
};

using Planned = std::variant<Plan, std::string>;

// A segment's operand that is the stash: the run's values where the stage's last stash step stood,
// copied into a run-sized buffer (every position keeps its index, so the stash relaid into any
// later layout is that position's own stashed value).
constexpr int kStashImage = -1;


// nullopt when a position of some run reads nothing, or reads past `from_positions`.
std::optional<OperandReads> ReadsOf(const Mapping& to, const Mapping& from, int64_t from_positions,
                                    const std::vector<std::pair<int64_t, int64_t>>& runs) {
  std::vector<MoveRun> reads;
  const std::optional<int64_t> unheld = ForEachRun(to, from, MatchRule::kByDigit, [&](absl::Span<const MoveRun> chunk) {
    for (MoveRun run : chunk) {
      if (run.length == 1) run.src_stride = 1;
      if (!reads.empty() && run.src_stride == 1 && reads.back().src_stride == 1 &&
          reads.back().dst + reads.back().length == run.dst && reads.back().src + reads.back().length == run.src) {
        reads.back().length += run.length;
      } else {
        reads.push_back(run);
      }
    }
  });
  if (unheld) return std::nullopt;
  for (const MoveRun& read : reads) {
    const int64_t last = read.src + (read.length - 1) * read.src_stride;
    if (read.src < 0 || read.src_stride < 0 || last >= from_positions) return std::nullopt;
  }
  OperandReads out;
  size_t at = 0;  // both lists ascend by destination
  for (const auto& [first, last] : runs) {
    out.first_piece.push_back(static_cast<int64_t>(out.pieces.size()));
    for (int64_t position = first; position < last;) {
      while (at < reads.size() && reads[at].dst + reads[at].length <= position) ++at;
      if (at == reads.size() || reads[at].dst > position) return std::nullopt;
      const MoveRun& read = reads[at];
      const int64_t length = std::min(read.dst + read.length, last) - position;
      out.pieces.push_back(MoveRun{position, read.src + (position - read.dst) * read.src_stride, length,
                                   length == 1 ? 1 : read.src_stride});
      position += length;
    }
    const int64_t count = static_cast<int64_t>(out.pieces.size()) - out.first_piece.back();
    out.contiguous = out.contiguous && count == 1 && out.pieces.back().src_stride == 1;
  }
  out.first_piece.push_back(static_cast<int64_t>(out.pieces.size()));
  return out;
}

// Run r's values of an operand read by `reads`, from the VRF at `vrf`, into `buffer`.
void GatherRun(const OperandReads& reads, int64_t r, int64_t first, const uint32_t* vrf, uint32_t* buffer) {
  for (int64_t p = reads.first_piece[r]; p < reads.first_piece[r + 1]; ++p) {
    const MoveRun& piece = reads.pieces[p];
    uint32_t* to = buffer + (piece.dst - first);
    const uint32_t* from = vrf + piece.src;
    if (piece.src_stride == 1) {
      std::memcpy(to, from, static_cast<size_t>(4 * piece.length));
    } else {
      for (int64_t j = 0; j < piece.length; ++j) to[j] = from[j * piece.src_stride];
    }
  }
}

// Copying run by run pays per run; below this mean length the move kernel copies instead.
constexpr int64_t kMinCopyRunLength = 64;

// The op's kept answer for the ends it was made for.
struct Slot {
  std::string stages;  // the op's PipelineKey when it has no serial
  std::optional<End> input, output;
  std::optional<End> second;  // an interleaved pair's
  std::vector<End> vrfs;
  int threads = 0;
  std::shared_ptr<const Planned> planned;

  bool Matches(const PipelineTensors& tensors, int now_threads) const {
    if (planned == nullptr || threads != now_threads || !output || !output->Matches(tensors.output)) return false;
    if (tensors.inputs.empty() || !input || !input->Matches(tensors.inputs[0])) return false;
    if (second.has_value() != (tensors.inputs.size() > 1)) return false;
    if (second && !second->Matches(tensors.inputs[1])) return false;
    if (vrfs.size() != tensors.vrf_operands.size()) return false;
    for (size_t k = 0; k < vrfs.size(); ++k) {
      if (!vrfs[k].Matches(tensors.vrf_operands[k])) return false;
    }
    return true;
  }
};

// A mutable holder the op memo keeps (its values are shared as const).
struct Kept {
  mutable Slot slot;
};

bool IsRelabel(const Stage& stage) {
  return std::holds_alternative<SwitchStage>(stage) || std::holds_alternative<CollectStage>(stage) ||
         std::holds_alternative<TransposeStage>(stage);
}
Mapping RelabelOut(const Stage& stage) {
  if (const auto* sw = std::get_if<SwitchStage>(&stage)) return sw->out.Full();
  if (const auto* collect = std::get_if<CollectStage>(&stage)) return collect->out.Full();
  return std::get<TransposeStage>(stage).out.Full();
}

// The op's one vector stage between relabelings (and at most one Cast stage after it), with the
// stream after the last stage.
struct Between {
  const VectorStage* stage = nullptr;
  const CastStage* cast = nullptr;
  Mapping last;
};
std::variant<Between, std::string> OnlyVectorBetween(const PipelineOp& op) {
  Between between;
  between.last = std::get<FetchStage>(op.stages[1]).out.Full();
  for (size_t i = 2; i + 1 < op.stages.size(); ++i) {
    const Stage& stage = op.stages[i];
    if (const auto* v = std::get_if<VectorStage>(&stage); v != nullptr && between.stage == nullptr) {
      between.stage = v;
      between.last = v->out.Full();
    } else if (const auto* cast = std::get_if<CastStage>(&stage);
               cast != nullptr && between.stage != nullptr && between.cast == nullptr) {
      between.cast = cast;
      between.last = cast->out.Full();
    } else if (IsRelabel(stage)) {
      between.last = RelabelOut(stage);
    } else {
      return absl::StrCat("a stage besides one vector stage changes values: ", DescribeStage(stage));
    }
  }
  if (between.stage == nullptr) return std::string("no vector stage");
  return between;
}

// Why the vector stage's steps may not run after the move (see the header), or empty.
std::string StageRefuses(KernelCache& kernels, const VectorStage& stage) {
  if (stage.branch.kind != BranchMode::Kind::kUnconditional && stage.branch.kind != BranchMode::Kind::kComparison &&
      stage.branch.kind != BranchMode::Kind::kVrf) {
    return "execution ids that depend on the position";
  }
  if (!stage.unzip_axis.empty()) return "two-group mode";
  if (StorageBits(stage.in.dtype) != 32 || StorageBits(stage.out.dtype) != 32) return "a stream that is not 32-bit";
  Mapping layout = stage.in.Full();
  for (const VeStep& step : stage.steps) {
    switch (step.kind) {
      case VeStep::Kind::kOp:
      case VeStep::Kind::kReinterpret: continue;
      case VeStep::Kind::kSplit:
      case VeStep::Kind::kTrim:
      case VeStep::Kind::kConcat:
      case VeStep::Kind::kPad: {
        const Mapping to = step.out.Full();
        if (!kernels.HasNest(to, layout) || !kernels.HasNest(layout, to)) return "a relayout that drops or adds indices";
        layout = to;
        continue;
      }
      case VeStep::Kind::kStash: continue;  // a copy of each position's value (kStashImage)
      default: return absl::StrCat("a step that combines positions or merges groups: ", step.call);
    }
  }
  return "";
}

// What a plan is made of that the ends' layouts decide (no device memory is touched): what
// compiling ahead needs, and the plan's start.
struct Shape {
  Mapping to, from;  // the output's and the input's in-place layouts
  int64_t to_positions = 0, from_positions = 0;
  ElementOp fetch_op;
  // A Cast stage before the commit: the kernels run on a 32-bit image laid out as the output
  // (Plan::values), which this op then stores into the output.
  std::optional<ElementOp> cast_op;
  StageSegments segments;
  struct Image {
    int vrf = 0;
    Mapping layout;
    int64_t positions = 0;
  };
  std::vector<std::vector<Image>> images;  // per segment
  std::optional<Image> ids;                 // BranchMode::Vrf: the VRF of the ids
  std::string ids_text;
  // An interleaved pair (begin_interleaved): each tensor is first moved from where it lies into a
  // buffer laid out as the walk stages the pair (Staged::ReadPair: the first tensor's full mapping,
  // then the second's), the move's source; `from` is then FetchSource's Pair({interleave, full}).
  bool pair = false;
  Mapping pair_full;
  Mapping pair_from[2];
  int64_t pair_from_positions[2] = {0, 0};
};
using Shaped = std::variant<Shape, std::string>;

absl::StatusOr<Shaped> ShapeOf(KernelCache& kernels, const PipelineOp& op, const DeviceTensor& input,
                               const DeviceTensor* second, const DeviceTensor& output,
                               const std::vector<const DeviceTensor*>& vrfs) {
  if (op.fetch_index) return Shaped(std::string("an indirect fetch"));
  if (op.stages.size() < 4) return Shaped(std::string("no vector stage"));
  const std::optional<Mapping>& interleave = std::get<BeginStage>(op.stages[0]).interleave;
  if (interleave && second == nullptr) return Shaped(std::string("an interleaved fetch without its second tensor"));
  if (const auto* commit = std::get_if<CommitStage>(&op.stages.back()); commit && !commit->slices.all()) {
    return Shaped(std::string("the commit leaves some slices as they were"));
  }
  auto between = OnlyVectorBetween(op);
  if (auto* reason = std::get_if<std::string>(&between)) return Shaped(*reason);
  const auto& [stage, cast, last] = std::get<Between>(between);
  const auto& fetch = std::get<FetchStage>(op.stages[1]);
  if (fetch.out.dtype != stage->in.dtype || StorageBits(fetch.out.dtype) != 32) {
    return Shaped(std::string("the fetch's stream is not the vector stage's 32-bit input"));
  }
  std::optional<ElementOp> cast_op;
  if (cast != nullptr) {
    if (cast->from != stage->out.dtype) return Shaped(std::string("the cast does not take the vector stage's output"));
    if (StorageBits(cast->to) == 4) return Shaped(std::string("a 4-bit output (two positions share a byte)"));
    ASSIGN_OR_RETURN(cast_op, CastOp(*cast));
  }
  if ((cast != nullptr ? cast->to : stage->out.dtype) != output.dtype()) {
    return Shaped(std::string("the store changes the element type"));
  }
  if (std::string why = StageRefuses(kernels, *stage); !why.empty()) return Shaped(why);
  std::optional<Mapping> to = InPlaceLayout(output);
  std::optional<Mapping> from = InPlaceLayout(input);
  if (!from || !to) return Shaped(std::string("an end is not in a dense memory"));
  if (MayOverlap(input, output)) return Shaped(std::string("the input and the output may share bytes"));
  Shape shape;
  shape.cast_op = cast_op;
  if (interleave) {
    // As Staged::ReadPair stages it: both tensors of the first one's type and full mapping.
    const Mapping full = input.full_mapping();
    if (second->dtype() != input.dtype() || !(second->full_mapping() == full) ||
        full.size() != input.placement().prefix_size * input.element().size()) {
      return Shaped(std::string("an interleaved pair of different tensors' layouts"));
    }
    if (MayOverlap(*second, output)) return Shaped(std::string("the input and the output may share bytes"));
    const DeviceTensor* both[2] = {&input, second};
    for (int i = 0; i < 2; ++i) {
      std::optional<Mapping> lies = InPlaceLayout(*both[i]);
      if (!lies || !kernels.HasNest(full, *lies)) return Shaped(std::string("an interleaved tensor not in place"));
      shape.pair_from[i] = *lies;
      shape.pair_from_positions[i] = InPlacePositions(*both[i]);
    }
    shape.pair = true;
    shape.pair_full = full;
    from = Pair({*interleave, full});
  }
  // As direct_pipeline.h: with these nests the output's live positions are exactly those the
  // staged stages write, each from the input element of its index.
  if (!kernels.HasNest(*to, last) || !kernels.HasNest(*to, *from) || !kernels.HasNest(last, *from)) {
    return Shaped(std::string("a move between the ends and the stream has no loop nest"));
  }
  shape.to = *to;
  shape.from = *from;
  shape.to_positions = InPlacePositions(output);
  shape.from_positions = shape.pair ? 2 * shape.pair_full.size() : InPlacePositions(input);
  ASSIGN_OR_RETURN(shape.fetch_op, FetchAdapterOp(fetch, shape.pair, shape.pair ? shape.pair_full.size()
                                                                                  : shape.from_positions));
  shape.segments = SegmentsOf(*stage);
  // A VRF read by index at the output's positions, as the staged stage places it in the stream.
  auto image_of = [&](int vrf) -> std::variant<Shape::Image, std::string> {
    if (vrf < 0) return Shape::Image{kStashImage, Mapping(), 0};
    if (vrf >= static_cast<int>(vrfs.size()) || vrfs[vrf] == nullptr) return std::string("a VRF operand unknown");
    const DeviceTensor& operand = *vrfs[vrf];
    std::optional<Mapping> layout = InPlaceLayout(operand);
    if (!layout || StorageBits(operand.dtype()) != 32) return std::string("a VRF operand not in place");
    if (MayOverlap(operand, output)) return std::string("a VRF operand may share bytes with the output");
    if (!kernels.HasNest(*to, *layout)) return std::string("a VRF operand's move has no loop nest");
    return Shape::Image{vrf, *layout, InPlacePositions(operand)};
  };
  for (const std::vector<int>& image_vrfs : shape.segments.image_vrfs) {
    std::vector<Shape::Image> images;
    for (int vrf : image_vrfs) {
      auto image = image_of(vrf);
      if (auto* reason = std::get_if<std::string>(&image)) return Shaped(*reason);
      images.push_back(std::get<Shape::Image>(std::move(image)));
    }
    shape.images.push_back(std::move(images));
  }
  if (stage->branch.kind == BranchMode::Kind::kVrf) {
    auto image = image_of(stage->branch.vrf);
    if (auto* reason = std::get_if<std::string>(&image)) return Shaped(absl::StrCat("the ids' VRF: ", *reason));
    shape.ids = std::get<Shape::Image>(std::move(image));
    shape.ids_text = stage->vrfs[static_cast<size_t>(stage->branch.vrf)].text;
  }
  return Shaped(std::move(shape));
}

absl::StatusOr<Planned> MakePlan(KernelCache& kernels, const PipelineOp& op, const PipelineTensors& tensors) {
  std::vector<const DeviceTensor*> vrfs;
  for (const DeviceTensor& vrf : tensors.vrf_operands) vrfs.push_back(&vrf);
  const DeviceTensor& input = tensors.inputs[0];
  const DeviceTensor* second = tensors.inputs.size() > 1 ? &tensors.inputs[1] : nullptr;
  const DeviceTensor& output = tensors.output;
  ASSIGN_OR_RETURN(Shaped shaped, ShapeOf(kernels, op, input, second, output, vrfs));
  if (auto* reason = std::get_if<std::string>(&shaped)) return Planned(*reason);
  const Shape& shape = std::get<Shape>(shaped);
  ASSIGN_OR_RETURN(std::optional<ReadyNest> move,
                   kernels.ReadyBetweenBuffers(shape.to, shape.from, shape.fetch_op, shape.to_positions,
                                               shape.from_positions, /*allow_drop=*/true));
  if (!move) return Planned(std::string("the move has no loop nest"));
  std::optional<InPlace> from = InPlaceOf(input);
  std::optional<InPlace> to = InPlaceOf(output);
  const uint8_t* dst_memory = output.device().UnitData(output.tier(), 0);
  const uint8_t* src_memory = input.device().UnitData(input.tier(), 0);
  if (!from || !to || dst_memory == nullptr || src_memory == nullptr) {
    return Planned(std::string("a memory without a host block"));
  }
  Plan plan;
  plan.to = shape.to;
  plan.dst_tier = output.tier();
  plan.src_tier = input.tier();
  plan.dst_offset = to->data - dst_memory;
  plan.src_offset = from->data - src_memory;
  plan.move = *std::move(move);
  if (shape.pair) {
    plan.pair_positions = shape.pair_full.size();
    for (int i = 0; i < 2; ++i) {
      const DeviceTensor& tensor = tensors.inputs[static_cast<size_t>(i)];
      ASSIGN_OR_RETURN(std::optional<ReadyNest> nest,
                       kernels.ReadyBetweenBuffers(shape.pair_full, shape.pair_from[i], CopyOp(tensor.dtype()),
                                                   shape.pair_full.size(), shape.pair_from_positions[i],
                                                   /*allow_drop=*/true));
      std::optional<InPlace> lies = InPlaceOf(tensor);
      const uint8_t* memory = tensor.device().UnitData(tensor.tier(), 0);
      if (!nest || !lies || memory == nullptr) return Planned(std::string("an interleaved tensor's move has no loop nest"));
      plan.pair.push_back(Plan::PairMove{*std::move(nest), tensor.tier(), lies->data - memory});
    }
  }
  // Each VRF image by its index in plan.images, or why it cannot be placed.
  auto add_image = [&](const Shape::Image& image) -> absl::StatusOr<std::optional<int>> {
    const DeviceTensor& operand = tensors.vrf_operands[image.vrf];
    ASSIGN_OR_RETURN(std::optional<ReadyNest> nest,
                     kernels.ReadyBetweenBuffers(shape.to, image.layout, CopyOp(DType::kI32), shape.to_positions,
                                                 image.positions, /*allow_drop=*/true));
    std::optional<InPlace> source = InPlaceOf(operand);
    const uint8_t* vrf_memory = operand.device().UnitData(operand.tier(), 0);
    if (!nest || !source || vrf_memory == nullptr) return std::nullopt;
    plan.images.push_back(VrfImage{image.vrf, *std::move(nest), operand.tier(), source->data - vrf_memory,
                                   image.layout, image.positions, std::nullopt});
    return static_cast<int>(plan.images.size()) - 1;
  };
  if (shape.ids) {
    ASSIGN_OR_RETURN(std::optional<int> k, add_image(*shape.ids));
    if (!k) return Planned(std::string("the ids' VRF move has no loop nest"));
    plan.ids_image = *k;
    plan.ids_text = shape.ids_text;
  }
  for (size_t s = 0; s < shape.segments.specs.size(); ++s) {
    Plan::Segment segment;
    segment.stash_before = shape.segments.stash_before[s];
    for (const Shape::Image& image : shape.images[s]) {
      if (image.vrf == kStashImage) {
        segment.images.push_back(kStashImage);
        continue;
      }
      ASSIGN_OR_RETURN(std::optional<int> k, add_image(image));
      if (!k) return Planned(std::string("a VRF operand's move has no loop nest"));
      segment.images.push_back(*k);
    }
    ASSIGN_OR_RETURN(segment.fn, kernels.Vector(shape.segments.specs[s]));
    plan.segments.push_back(std::move(segment));
  }
  // The move's runs, as the kernel's move visits them: when every one is a contiguous copy and
  // they are long, each is copied right before its kernels run.
  std::vector<MoveRun> copies;
  bool contiguous = shape.fetch_op.kind == ElementOp::Kind::kCopy;
  const std::optional<int64_t> unheld =
      ForEachRun(shape.to, shape.from, MatchRule::kByDigit, [&](absl::Span<const MoveRun> runs) {
        for (const MoveRun& run : runs) {
          contiguous = contiguous && (run.src_stride == 1 || run.length == 1);
          if (!copies.empty() && copies.back().dst + copies.back().length == run.dst &&
              copies.back().src + copies.back().length == run.src) {
            copies.back().length += run.length;
          } else {
            copies.push_back(run);
          }
        }
      });
  if (!unheld && contiguous && !copies.empty() &&
      plan.move.elements >= kMinCopyRunLength * static_cast<int64_t>(copies.size())) {
    for (const MoveRun& run : copies) {
      plan.runs.emplace_back(run.dst, run.dst + run.length);
      plan.run_sources.push_back(run.src);
      plan.written += run.length;
    }
  }
  // Else the written positions as runs: the identity move's runs visit exactly the live ones.
  if (plan.runs.empty()) ForEachRun(shape.to, shape.to, MatchRule::kByAxis, [&](absl::Span<const MoveRun> runs) {
    for (const MoveRun& run : runs) {
      if (!plan.runs.empty() && plan.runs.back().second == run.dst) {
        plan.runs.back().second += run.length;
      } else {
        plan.runs.emplace_back(run.dst, run.dst + run.length);
      }
      plan.written += run.length;
    }
  });
  int64_t extent = 0;
  for (const auto& [first, last] : plan.runs) extent = std::max(extent, last);
  if (extent > shape.to_positions) return Planned(std::string("written positions past the output's memory"));
  for (size_t r = 0; r < plan.run_sources.size(); ++r) {
    if (plan.run_sources[r] + plan.runs[r].second - plan.runs[r].first > shape.from_positions) {
      return Planned(std::string("read positions past the input's memory"));
    }
  }
  for (const auto& [first, last] : plan.runs) plan.longest_run = std::max(plan.longest_run, last - first);
  if (shape.cast_op) {
    ASSIGN_OR_RETURN(plan.cast, kernels.ReadyBetweenBuffers(shape.to, shape.to, *shape.cast_op, shape.to_positions,
                                                            shape.to_positions, /*allow_drop=*/false));
    if (!plan.cast) return Planned(std::string("the cast's move has no loop nest"));
    plan.values.reset(new uint32_t[static_cast<size_t>(extent)]);
  }
  plan.compare = !shape.segments.specs.empty() && shape.segments.specs.front().compare.has_value();
  if (plan.ids_image >= 0) {
    int64_t at = 0;
    for (const auto& [first, last] : plan.runs) {
      plan.run_ids.push_back(at);
      at += last - first;
    }
    plan.ids_size = at;
  }
  for (VrfImage& image : plan.images) {
    image.reads = ReadsOf(shape.to, image.layout, image.positions, plan.runs);
    // Only an operand no run can read directly gets an image as large as the output's memory.
    plan.image_data.emplace_back(image.reads ? nullptr : new uint32_t[static_cast<size_t>(extent)]);
  }
  return Planned(std::move(plan));
}

absl::StatusOr<std::shared_ptr<const Planned>> PlanFor(KernelCache& kernels, const PipelineOp& op,
                                                       const PipelineTensors& tensors) {
  if (tensors.inputs.empty()) return std::make_shared<const Planned>(std::string("no input"));
  // An op without a serial (recorded eagerly, or replayed) is known by its stages instead: a key
  // string per run is far cheaper than planning again.
  std::string stages;
  uint64_t serial = op.serial;
  if (serial == 0) {
    stages = PipelineKey(op);
    serial = absl::HashOf(stages) | (uint64_t{1} << 63);
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const Kept> kept,
                   kernels.memo().Get<Kept>(serial, MemoPart(0xffff, 0, 0xa1), [] { return Kept{}; }));
  Slot& slot = kept->slot;
  if (slot.stages == stages && slot.Matches(tensors, kernels.threads())) return slot.planned;
  slot.stages = stages;
  ASSIGN_OR_RETURN(Planned planned, MakePlan(kernels, op, tensors));
  if (std::getenv("VISA_JIT_DEBUG") != nullptr) {
    const auto* reason = std::get_if<std::string>(&planned);
    std::fprintf(stderr, "vector pipeline: %s\n",
                 reason ? absl::StrCat("staged: ", *reason).c_str() : "in place in device memory");
  }
  slot.input = End::Of(tensors.inputs[0]);
  slot.second.reset();
  if (tensors.inputs.size() > 1) slot.second = End::Of(tensors.inputs[1]);
  slot.output = End::Of(tensors.output);
  slot.vrfs.clear();
  for (const DeviceTensor& vrf : tensors.vrf_operands) slot.vrfs.push_back(End::Of(vrf));
  slot.threads = kernels.threads();
  slot.planned = std::make_shared<const Planned>(std::move(planned));
  return slot.planned;
}

// BranchMode::Vrf: every written position's id, the ids VRF's value at its index (read from
// `vrf` as the operand images are), each checked to be an ExecutionId before anything is written,
// with the staged stage's message (dsl/vector_branch_ids.h).
absl::Status FillIds(const Plan& plan, const uint32_t* vrf, uint8_t* all_ids) {
  const VrfImage& image = plan.images[static_cast<size_t>(plan.ids_image)];
  std::vector<uint32_t> gathered;
  for (size_t r = 0; r < plan.runs.size(); ++r) {
    const auto [first, last] = plan.runs[r];
    const uint32_t* values = vrf + first;  // an image laid out as the output
    if (image.reads && image.reads->contiguous) {
      values = vrf + image.reads->pieces[r].src;
    } else if (image.reads) {
      gathered.resize(static_cast<size_t>(last - first));
      GatherRun(*image.reads, static_cast<int64_t>(r), first, vrf, gathered.data());
      values = gathered.data();
    }
    uint8_t* ids = all_ids + plan.run_ids[r];
    uint32_t largest = 0;
    for (int64_t j = 0; j < last - first; ++j) {
      largest = std::max(largest, values[j]);
      ids[j] = static_cast<uint8_t>(values[j]);
    }
    if (largest <= 15) continue;
    for (int64_t j = 0; j < last - first; ++j) {
      if (values[j] <= 15) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "Branch: BranchMode::Vrf loads 4-bit ExecutionIds (0-15, \"ExecutionId range\"), but the VRF tensor ",
          plan.ids_text, " holds ", static_cast<int32_t>(values[j]), " at ", plan.to.map(first + j).index.ToString()));
    }
  }
  return absl::OkStatus();
}

absl::Status RunPlan(KernelCache& kernels, const Plan& plan, const PipelineTensors& tensors) {
  // As the staged stage reads them (Staged::Read): every VRF operand must have been written.
  for (const DeviceTensor& vrf : tensors.vrf_operands) RETURN_IF_ERROR(vrf.CheckReadable());
  uint8_t* out = tensors.output.device().UnitData(plan.dst_tier, 0) + plan.dst_offset;
  const uint8_t* in = tensors.inputs[0].device().UnitData(plan.src_tier, 0) + plan.src_offset;
  thread_local std::vector<uint32_t> staged_pair;  // per calling thread: a relaunch faults no page
  if (!plan.pair.empty()) {
    // As Staged::ReadPair reads them: both must have been written.
    for (size_t i = 0; i < 2; ++i) RETURN_IF_ERROR(tensors.inputs[i].CheckReadable());
    if (static_cast<int64_t>(staged_pair.size()) < 2 * plan.pair_positions) {
      staged_pair.resize(static_cast<size_t>(2 * plan.pair_positions));
    }
    for (size_t i = 0; i < 2; ++i) {
      const Plan::PairMove& move = plan.pair[i];
      move.nest.Run(reinterpret_cast<uint8_t*>(staged_pair.data() + i * plan.pair_positions),
                    tensors.inputs[i].device().UnitData(move.tier, 0) + move.offset);
      kernels.Count(move.nest);
    }
    in = reinterpret_cast<const uint8_t*>(staged_pair.data());
  }
  // Each operand's base: its VRF memory when runs read it (image.reads), else its image.
  std::vector<const uint32_t*> operands;
  for (size_t k = 0; k < plan.images.size(); ++k) {
    const VrfImage& image = plan.images[k];
    const uint8_t* vrf = tensors.vrf_operands[image.vrf].device().UnitData(image.tier, 0) + image.src_offset;
    if (image.reads) {
      operands.push_back(reinterpret_cast<const uint32_t*>(vrf));
      continue;
    }
    image.nest.Run(reinterpret_cast<uint8_t*>(plan.image_data[k].get()), vrf);
    kernels.Count(image.nest);
    operands.push_back(plan.image_data[k].get());
  }
  thread_local std::vector<uint8_t> id_buffer;
  if (plan.ids_image >= 0) {
    if (static_cast<int64_t>(id_buffer.size()) < plan.ids_size) id_buffer.resize(static_cast<size_t>(plan.ids_size));
    RETURN_IF_ERROR(FillIds(plan, operands[static_cast<size_t>(plan.ids_image)], id_buffer.data()));
  }
  uint8_t* const all_ids = id_buffer.data();
  const bool copy_by_run = !plan.run_sources.empty();
  uint32_t* data = plan.values ? plan.values.get() : reinterpret_cast<uint32_t*>(out);
  if (!copy_by_run) plan.move.Run(reinterpret_cast<uint8_t*>(data), in);
  kernels.Count(plan.move);
  Parallel(static_cast<int64_t>(plan.runs.size()), ThreadsFor(plan.written, kernels.threads()),
           [&](int64_t begin, int64_t end) {
             // Each run's kernels address it from its first position: its ids in a run-sized
             // buffer (all 0 unless a Comparison kernel writes them first), its images shifted.
             thread_local std::vector<uint8_t> zeros, ids;
             std::vector<uint8_t>& tags = plan.compare ? ids : zeros;
             if (static_cast<int64_t>(tags.size()) < plan.longest_run) tags.assign(plan.longest_run, 0);
             uint8_t* run_tags = tags.data();
             thread_local std::vector<std::vector<uint32_t>> gathered;
             if (gathered.size() < plan.images.size()) gathered.resize(plan.images.size());
             thread_local std::vector<uint32_t> stash;
             if (static_cast<int64_t>(stash.size()) < plan.longest_run) stash.resize(plan.longest_run);
             std::vector<const uint32_t*> bases;
             for (int64_t r = begin; r < end; ++r) {
               const auto [first, last] = plan.runs[r];
               if (copy_by_run) std::memcpy(data + first, in + 4 * plan.run_sources[r], static_cast<size_t>(4 * (last - first)));
               if (plan.ids_image >= 0) run_tags = all_ids + plan.run_ids[r];
               for (const Plan::Segment& segment : plan.segments) {
                 if (segment.stash_before) {
                   std::memcpy(stash.data(), data + first, static_cast<size_t>(4 * (last - first)));
                 }
                 bases.clear();
                 for (int k : segment.images) {
                   if (k == kStashImage) {
                     bases.push_back(stash.data());
                     continue;
                   }
                   const VrfImage& image = plan.images[k];
                   if (!image.reads) {
                     bases.push_back(operands[k] + first);
                   } else if (image.reads->contiguous) {
                     bases.push_back(operands[k] + image.reads->pieces[r].src);
                   } else {
                     std::vector<uint32_t>& buffer = gathered[k];
                     if (static_cast<int64_t>(buffer.size()) < plan.longest_run) buffer.resize(plan.longest_run);
                     GatherRun(*image.reads, r, first, operands[k], buffer.data());
                     bases.push_back(buffer.data());
                   }
                 }
                 segment.fn(data + first, run_tags, bases.data(), 0, last - first);
               }
             }
           });
  if (plan.cast) {
    plan.cast->Run(out, reinterpret_cast<const uint8_t*>(data));
    kernels.Count(*plan.cast);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> RunVectorInPlace(KernelCache& kernels, const PipelineOp& op, const PipelineTensors& tensors) {
  ASSIGN_OR_RETURN(std::shared_ptr<const Planned> planned, PlanFor(kernels, op, tensors));
  const Plan* plan = std::get_if<Plan>(planned.get());
  if (plan == nullptr) return false;
  RETURN_IF_ERROR(RunPlan(kernels, *plan, tensors));
  return true;
}

absl::StatusOr<bool> PrepareVectorInPlace(KernelCache& kernels, const PipelineOp& op) {
  if (op.inputs.empty() || !op.inputs[0].handle || !op.output.handle) return false;
  std::vector<const DeviceTensor*> vrfs;
  for (const TensorRef& vrf : op.vrf_operands) vrfs.push_back(vrf.handle ? &*vrf.handle : nullptr);
  const DeviceTensor* second = op.inputs.size() > 1 && op.inputs[1].handle ? &*op.inputs[1].handle : nullptr;
  ASSIGN_OR_RETURN(Shaped shaped, ShapeOf(kernels, op, *op.inputs[0].handle, second, *op.output.handle, vrfs));
  const Shape* shape = std::get_if<Shape>(&shaped);
  if (shape == nullptr) return false;
  for (int i = 0; shape->pair && i < 2; ++i) {
    RETURN_IF_ERROR(kernels.ReadyBetweenBuffers(shape->pair_full, shape->pair_from[i],
                                                CopyOp(op.inputs[static_cast<size_t>(i)].handle->dtype()),
                                                shape->pair_full.size(), shape->pair_from_positions[i],
                                                /*allow_drop=*/true).status());
  }
  // The very kernels MakePlan asks for (the same nests, simplified for the same threads).
  RETURN_IF_ERROR(kernels.ReadyBetweenBuffers(shape->to, shape->from, shape->fetch_op, shape->to_positions,
                                              shape->from_positions, /*allow_drop=*/true).status());
  if (shape->cast_op) {
    RETURN_IF_ERROR(kernels.ReadyBetweenBuffers(shape->to, shape->to, *shape->cast_op, shape->to_positions,
                                                shape->to_positions, /*allow_drop=*/false).status());
  }
  if (shape->ids) {
    RETURN_IF_ERROR(kernels.ReadyBetweenBuffers(shape->to, shape->ids->layout, CopyOp(DType::kI32), shape->to_positions,
                                                shape->ids->positions, /*allow_drop=*/true).status());
  }
  for (size_t s = 0; s < shape->segments.specs.size(); ++s) {
    for (const Shape::Image& image : shape->images[s]) {
      if (image.vrf == kStashImage) continue;
      RETURN_IF_ERROR(kernels.ReadyBetweenBuffers(shape->to, image.layout, CopyOp(DType::kI32), shape->to_positions,
                                                  image.positions, /*allow_drop=*/true).status());
    }
    RETURN_IF_ERROR(kernels.Vector(shape->segments.specs[s]).status());
  }
  return true;
}

absl::StatusOr<std::string> WhyNotInPlace(KernelCache& kernels, const PipelineOp& op, const PipelineTensors& tensors) {
  ASSIGN_OR_RETURN(std::shared_ptr<const Planned> planned, PlanFor(kernels, op, tensors));
  const auto* reason = std::get_if<std::string>(planned.get());
  return reason != nullptr ? *reason : std::string();
}

}  // namespace visa::jit
