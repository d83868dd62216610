// InPlaceReduce: a vector pipeline with reductions on kept scratch images (in_place_reduce.h).
#include "jit/in_place_reduce.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "dsl/layout.h"
#include "dsl/status_macros.h"
#include "dsl/vector_branch_ids.h"
#include "dsl/vector_tags.h"
#include "jit/element_op.h"
#include "jit/fused_contraction.h"
#include "jit/in_place.h"
#include "jit/live_units.h"
#include "jit/op_memo.h"
#include "jit/parallel.h"
#include "jit/vector_reduce_stage.h"
#include "jit/vector_stage.h"
#include "runtime/device.h"

namespace visa::jit {
namespace {

// An end as a kept plan knows it (as in_place_vector.cc's): the placement object (weakly), its
// Element and window; else everything the plan reads of a tensor placed anew.
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

// One step of the stage as it runs on the scratch images.
struct Action {
  enum class Kind { kSegment, kRelayout, kReduce };
  Kind kind = Kind::kSegment;
  VectorFn fn = nullptr;          // kSegment
  std::vector<int> images;        // kSegment: indices into Plan::images
  // kSegment: the execution ids of every position, when the branch mode gives them by position
  // (ValidCount, AxisToggle: moved with the data through the relayouts, as the walk moves them);
  // null: all 0.
  std::shared_ptr<const std::vector<uint8_t>> tags;
  // kSegment: the first segment of a Comparison stage, whose kernel computes the ids from the
  // values and stores them (into the scratch's own buffer) before its ops read them.
  bool compares = false;
  std::optional<ReadyNest> move;  // kRelayout: the image into the next layout, by index
  std::optional<ReadyReduce> reduce;
  int64_t blocks = 0;             // kReduce: the blocks that hold live units
  int64_t positions = 0;          // the layout's positions after the action
  int64_t live = 0;               // of those, the first ones, in the units that hold an index
};

// A VRF operand placed in a segment's layout by a compiled move from where it lies.
struct VrfImage {
  int vrf = 0;
  ReadyNest nest;
  int64_t positions = 0;  // the image's (the segment's layout)
};

// A host image whose bytes are not initialized: a grown one is a fresh mapping whose pages are
// touched only where a run writes (its live units), never zero-filled whole.
struct Image {
  std::unique_ptr<uint8_t[]> bytes;
  int64_t capacity = 0;
  uint8_t* Hold(int64_t size) {
    if (size > capacity) {
      bytes.reset(new uint8_t[static_cast<size_t>(size)]);
      capacity = size;
    }
    return bytes.get();
  }
};

// Zeroed bytes that stay zero where nothing writes them: calloc takes fresh pages from the kernel
// already zero, so only the positions a run writes are touched.
struct ZeroedImage {
  std::unique_ptr<uint8_t, decltype(&std::free)> bytes{nullptr, &std::free};
  explicit ZeroedImage(int64_t size) : bytes(static_cast<uint8_t*>(std::calloc(static_cast<size_t>(size), 1)), &std::free) {
    VISA_CHECK(bytes != nullptr, "a kept VRF image is allocated");
  }
  uint8_t* data() const { return bytes.get(); }
};

// The images a run computes in: one set per calling thread, shared by every op it runs (an op
// runs to its end before the next starts), so a relaunch, or an op of a new run on a fresh device,
// allocates and faults nothing once the largest has run. Only the live units' positions of each
// are ever written or read.
struct Scratch {
  Image current, next;
  std::vector<uint8_t> tags;  // all 0: ids after a reduction or Unconditional, never written (no Comparison kernel)
  std::vector<uint8_t> compared;  // a Comparison kernel's ids (positions it has not computed are never read)
};

struct Plan {
  ReadyNest move_in;   // the input into the first layout, each position by index
  int64_t first_positions = 0, first_live = 0;
  std::vector<Action> actions;
  ReadyNest move_out;  // the last layout into the output, by index
  std::vector<VrfImage> images;
  int64_t most_positions = 0;
  int64_t most_live = 0;  // the most live positions of any layout (what kernels index)
  bool compares = false;  // an action computes Comparison ids
  // Bound to the ends on the plan's first run.
  Tier dst_tier = Tier::kDm, src_tier = Tier::kDm;
  int64_t dst_offset = 0, src_offset = 0;
  std::vector<std::pair<Tier, int64_t>> vrf_offsets;  // per VRF operand, from its memory's first unit
  std::shared_ptr<std::vector<ZeroedImage>> vrf_images =
      std::make_shared<std::vector<ZeroedImage>>();  // per plan.images entry, laid out by its segment
};

using Planned = std::variant<Plan, std::string>;

bool IsRelabel(const Stage& stage) {
  return std::holds_alternative<SwitchStage>(stage) || std::holds_alternative<CollectStage>(stage) ||
         std::holds_alternative<TransposeStage>(stage);
}
Mapping RelabelOut(const Stage& stage) {
  if (const auto* sw = std::get_if<SwitchStage>(&stage)) return sw->out.Full();
  if (const auto* collect = std::get_if<CollectStage>(&stage)) return collect->out.Full();
  return std::get<TransposeStage>(stage).out.Full();
}
bool IsRelayout(VeStep::Kind kind) {
  return kind == VeStep::Kind::kSplit || kind == VeStep::Kind::kTrim || kind == VeStep::Kind::kConcat ||
         kind == VeStep::Kind::kPad;
}

// The units of a stream (chip x cluster x slice) and the positions of each.
int64_t Units(const StreamShape& shape) { return shape.chip.size() * shape.cluster.size() * shape.slice.size(); }

// The first units a run computes: every unit that holds an index is among them (live_units.h), so
// the others, padding, are never moved into, computed or reduced (nothing reads them). With an
// inter-slice reduce, whole clusters (its blocks).
int64_t LiveUnits(const StreamShape& shape, bool whole_clusters) {
  const int64_t units = Units(shape);
  int64_t live = LiveUnitPrefix(shape).value_or(units);
  if (whole_clusters) {
    const int64_t slices = shape.slice.size();
    live = (live + slices - 1) / slices * slices;
  }
  return std::min(live, units);
}
int64_t LivePositions(const StreamShape& shape, int64_t live_units) {
  return shape.Full().size() / Units(shape) * live_units;
}

// The stage's segments and steps in run order: a segment by its index in SegmentsOf's specs, else
// the step that ends one.
struct Item {
  int segment = -1;
  const VeStep* step = nullptr;
};
std::vector<Item> RunOrder(const VectorStage& stage) {
  std::vector<Item> order;
  bool in_segment = false;
  int segments = 0;
  for (const VeStep& step : stage.steps) {
    if (step.kind == VeStep::Kind::kReinterpret) continue;  // bits are bits
    if (step.kind == VeStep::Kind::kOp) {
      if (!in_segment) order.push_back(Item{segments++, nullptr});
      in_segment = true;
      continue;
    }
    in_segment = false;
    order.push_back(Item{-1, &step});
  }
  return order;
}

// The ids `tags` (laid out by `from`) moved by index into `to`, padding 0, as the walk's tag move.
absl::StatusOr<std::vector<uint8_t>> MovedIds(KernelCache& kernels, const Mapping& to, const Mapping& from,
                                              const std::vector<uint8_t>& tags) {
  std::vector<uint8_t> moved(static_cast<size_t>(to.size()), 0);
  if (kernels.collecting()) {  // Prepare: the move is compiled, not run (a plan made then is not kept)
    RETURN_IF_ERROR(kernels.Compile(to, from, CopyOp(DType::kI8), /*allow_drop=*/false));
    return moved;
  }
  RETURN_IF_ERROR(kernels.Move(to, from, CopyOp(DType::kI8), moved.data(), to.size(), tags.data(), from.size(),
                               /*allow_drop=*/false).status());
  return moved;
}

// The plan from the ends' layouts alone (no device memory is touched): what Prepare compiles and
// what a run binds to its tensors.
// The op's id images in the order Build computes them (they depend on its stage alone): a plan
// for new placements takes them from here instead of computing them again.
using IdImages = std::vector<std::shared_ptr<const std::vector<uint8_t>>>;

absl::StatusOr<Planned> Build(KernelCache& kernels, const PipelineOp& op, const DeviceTensor& input,
                              const DeviceTensor& output, const std::vector<const DeviceTensor*>& vrfs,
                              IdImages* kept_ids = nullptr) {
  using R = Planned;
  if (op.fetch_index) return R(std::string("an indirect fetch"));
  if (op.stages.size() < 4) return R(std::string("no vector stage"));
  if (std::get<BeginStage>(op.stages[0]).interleave) return R(std::string("an interleaved fetch"));
  const auto* commit = std::get_if<CommitStage>(&op.stages.back());
  if (commit != nullptr && !commit->slices.all()) return R(std::string("the commit leaves some slices as they were"));
  const auto* fetch = std::get_if<FetchStage>(&op.stages[1]);
  if (fetch == nullptr || fetch->indirect) return R(std::string("no plain fetch"));
  const VectorStage* stage = nullptr;
  Mapping last = fetch->out.Full();
  for (size_t i = 2; i + 1 < op.stages.size(); ++i) {
    const Stage& s = op.stages[i];
    if (const auto* v = std::get_if<VectorStage>(&s); v != nullptr && stage == nullptr) {
      stage = v;
      last = v->out.Full();
    } else if (IsRelabel(s)) {
      last = RelabelOut(s);
    } else {
      return R(absl::StrCat("a stage besides one vector stage changes values: ", DescribeStage(s)));
    }
  }
  if (stage == nullptr) return R(std::string("no vector stage"));
  const BranchMode::Kind branch = stage->branch.kind;
  if (branch == BranchMode::Kind::kVrf) return R(std::string("execution ids from a VRF"));
  const bool inter_first = !stage->steps.empty() && stage->steps.front().kind == VeStep::Kind::kInterReduce;
  if (branch != BranchMode::Kind::kUnconditional && inter_first) {
    return R(std::string("execution ids taken after an inter-slice reduce"));
  }
  if (!stage->unzip_axis.empty()) return R(std::string("two-group mode"));
  if (fetch->out.dtype != stage->in.dtype || StorageBits(fetch->out.dtype) != 32 ||
      StorageBits(stage->out.dtype) != 32) {
    return R(std::string("a stream that is not 32-bit from the fetch to the store"));
  }
  if (stage->out.dtype != output.dtype()) return R(std::string("the store changes the element type"));
  const std::optional<Mapping> to = InPlaceLayout(output);
  const std::optional<Mapping> from = InPlaceLayout(input);
  if (!from || !to) return R(std::string("an end is not in a dense memory"));
  if (MayOverlap(input, output)) return R(std::string("the input and the output may share bytes"));

  // The walk's fetch fills the stream's padding with the pad value; a relayout moves by index
  // into a zeroed image, so after one every pad is 0, as the kept image's zeroed positions.
  const std::vector<Item> order = RunOrder(*stage);
  if (fetch->adapter.pad_value && (order.empty() || order.front().segment >= 0 || !IsRelayout(order.front().step->kind))) {
    return R(std::string("the fetch pads its stream with a value that the stage reads before any relayout"));
  }
  if (branch == BranchMode::Kind::kComparison && (order.empty() || order.front().segment != 0)) {
    // The walk computes the ids in a segment of their own then (SegmentsOf's first spec), which
    // RunOrder does not number.
    return R(std::string("a Comparison branch whose stage does not start with an op"));
  }
  const StageSegments segments = SegmentsOf(*stage);
  Plan plan;
  // The ids by position, as the walk computes them on the stage's input (null: all 0).
  std::shared_ptr<const std::vector<uint8_t>> tags;
  size_t id_images = 0;  // how many Build has computed (or taken from kept_ids)
  auto keep = [&](std::vector<uint8_t> ids) {
    tags = std::make_shared<const std::vector<uint8_t>>(std::move(ids));
    if (kept_ids != nullptr && !kernels.collecting()) kept_ids->push_back(tags);
  };
  auto kept = [&] {
    if (kept_ids == nullptr || id_images >= kept_ids->size()) return false;
    tags = (*kept_ids)[id_images];
    return true;
  };
  if (branch == BranchMode::Kind::kValidCount && !kept()) {
    ASSIGN_OR_RETURN(std::vector<uint8_t> ids, ValidCountIds(stage->in, stage->branch.axis));
    keep(std::move(ids));
  } else if (branch == BranchMode::Kind::kAxisToggle && !kept()) {
    ASSIGN_OR_RETURN(std::vector<uint8_t> ids, AxisToggleTags(stage->in.Full(), stage->branch.axis));
    keep(std::move(ids));
  }
  if (tags != nullptr) ++id_images;
  Mapping layout = stage->in.Full();
  bool leading = true, reduces = false;
  // A Comparison's ids come from the first segment's values and hold until a reduction zeroes
  // them; the walk moves them through relayouts, which this plan does not: a later segment reading
  // them before a reduction sends the stage down the walk.
  const bool compares = branch == BranchMode::Kind::kComparison;
  bool compared_ids_live = false, first_segment = true;
  bool inter = false;
  for (const VeStep& step : stage->steps) inter = inter || step.kind == VeStep::Kind::kInterReduce;
  StreamShape shape = stage->in;
  int64_t live_units = LiveUnits(shape, inter);
  size_t kept_actions = 0;  // the actions before the trailing relayouts (folded into the store)
  Mapping out_layout = layout;
  for (const Item& item : order) {
    if (item.segment >= 0) {
      leading = false;
      Action action;
      action.tags = tags;
      if (compares && first_segment) {
        action.compares = true;
        compared_ids_live = true;
      } else if (compared_ids_live) {
        return R(std::string("a segment reads Comparison ids moved through a relayout"));
      }
      first_segment = false;
      for (int vrf : segments.image_vrfs[item.segment]) {
        if (vrf < 0) return R(std::string("a stash operand"));
        if (vrf >= static_cast<int>(vrfs.size()) || vrfs[vrf] == nullptr) return R(std::string("a VRF operand unknown"));
        const DeviceTensor& operand = *vrfs[vrf];
        const std::optional<Mapping> source = InPlaceLayout(operand);
        if (!source || StorageBits(operand.dtype()) != 32) return R(std::string("a VRF operand not in place"));
        if (MayOverlap(operand, output)) return R(std::string("a VRF operand may share bytes with the output"));
        ASSIGN_OR_RETURN(std::optional<ReadyNest> nest,
                         kernels.ReadyBetweenBuffers(layout, *source, CopyOp(DType::kI32), layout.size(),
                                                     InPlacePositions(operand), /*allow_drop=*/true));
        if (!nest) return R(std::string("a VRF operand's move has no loop nest"));
        action.images.push_back(static_cast<int>(plan.images.size()));
        plan.images.push_back(VrfImage{vrf, *std::move(nest), layout.size()});
      }
      ASSIGN_OR_RETURN(action.fn, kernels.Vector(segments.specs[item.segment]));
      action.positions = layout.size();
      action.live = LivePositions(shape, live_units);
      plan.actions.push_back(std::move(action));
      kept_actions = plan.actions.size();
      out_layout = layout;
      continue;
    }
    const VeStep& step = *item.step;
    const Mapping next = step.out.Full();
    if (IsRelayout(step.kind)) {
      if (!kernels.HasNest(next, layout) || !kernels.HasNest(layout, next)) {
        return R(std::string("a relayout that drops or adds indices"));
      }
      if (!leading) {
        Action action;
        action.kind = Action::Kind::kRelayout;
        ASSIGN_OR_RETURN(action.move, kernels.ReadyBetweenBuffers(next, layout, CopyOp(DType::kI32), next.size(),
                                                                  layout.size(), /*allow_drop=*/false));
        if (!action.move) return R(std::string("a relayout has no loop nest"));
        action.positions = next.size();
        action.live = LivePositions(step.out, live_units);
        plan.actions.push_back(std::move(action));
      }
      if (Units(step.out) != Units(shape)) return R(std::string("a relayout changes the units"));
      if (tags != nullptr && !kept()) {
        ASSIGN_OR_RETURN(std::vector<uint8_t> moved, MovedIds(kernels, next, layout, *tags));
        keep(std::move(moved));
      }
      if (tags != nullptr) ++id_images;
      layout = next;
      shape = step.out;
      continue;
    }
    if (step.kind == VeStep::Kind::kIntraReduce || step.kind == VeStep::Kind::kInterReduce) {
      leading = false;
      reduces = true;
      Action action;
      action.kind = Action::Kind::kReduce;
      ASSIGN_OR_RETURN(action.reduce, ReadyReduceStep(kernels, step,
                                                       step.kind == VeStep::Kind::kIntraReduce ? live_units : -1));
      if (action.reduce->in_elements != layout.size()) return R(std::string("a reduction reads another layout"));
      if (step.kind == VeStep::Kind::kIntraReduce) {
        // A block per unit, the output's units the input's.
        if (action.reduce->blocks != Units(shape) || Units(step.out) != Units(shape)) {
          return R(std::string("an intra-slice reduce whose blocks are not the units"));
        }
        action.blocks = live_units;
      } else {
        // A block per cluster: the live clusters, whole.
        const int64_t slices = shape.slice.size();
        if (action.reduce->blocks * slices != Units(shape) || live_units % slices != 0) {
          return R(std::string("an inter-slice reduce whose blocks are not the clusters"));
        }
        action.blocks = live_units / slices;
        live_units = action.blocks * step.out.slice.size();
      }
      action.positions = action.reduce->out_elements;
      action.live = LivePositions(step.out, live_units);
      plan.actions.push_back(std::move(action));
      kept_actions = plan.actions.size();
      tags = nullptr;  // reduced lanes carry id 0 (as on the interpreter)
      compared_ids_live = false;
      layout = next;
      shape = step.out;
      out_layout = layout;
      continue;
    }
    return R(absl::StrCat("a step that keeps values or merges groups: ", step.call));
  }
  if (!reduces) return R(std::string("no reduction"));
  plan.actions.resize(kept_actions);  // the trailing relayouts keep every index: the store moves by index
  // The first layout: the one the first action reads (the leading relayouts folded into the fetch).
  Mapping first = stage->in.Full();
  for (const Item& item : RunOrder(*stage)) {
    if (item.segment >= 0 || !IsRelayout(item.step->kind)) break;
    first = item.step->out.Full();
  }
  plan.first_positions = first.size();
  plan.first_live = first.size() / Units(stage->in) * LiveUnits(stage->in, inter);  // relayouts keep the units
  if (!kernels.HasNest(first, *from) || !kernels.HasNest(*to, out_layout) || !kernels.HasNest(*to, last)) {
    return R(std::string("a move between the ends and the stream has no loop nest"));
  }
  ASSIGN_OR_RETURN(ElementOp fetch_op, FetchAdapterOp(*fetch, false, InPlacePositions(input)));
  ASSIGN_OR_RETURN(std::optional<ReadyNest> move_in,
                   kernels.ReadyBetweenBuffers(first, *from, fetch_op, first.size(), InPlacePositions(input),
                                               /*allow_drop=*/true));
  ASSIGN_OR_RETURN(std::optional<ReadyNest> move_out,
                   kernels.ReadyBetweenBuffers(*to, out_layout, CopyOp(output.dtype()), InPlacePositions(output),
                                               out_layout.size(), /*allow_drop=*/true));
  if (!move_in || !move_out) return R(std::string("a move between the ends and the stream has no loop nest"));
  plan.move_in = *std::move(move_in);
  plan.move_out = *std::move(move_out);
  plan.most_positions = plan.first_positions;
  plan.most_live = plan.first_live;
  for (const Action& action : plan.actions) {
    plan.most_positions = std::max(plan.most_positions, action.positions);
    plan.most_live = std::max(plan.most_live, action.live);
    plan.compares = plan.compares || action.compares;
  }
  return R(std::move(plan));
}

absl::StatusOr<Planned> MakePlan(KernelCache& kernels, const PipelineOp& op, const PipelineTensors& tensors,
                                 IdImages& kept_ids) {
  std::vector<const DeviceTensor*> vrfs;
  for (const DeviceTensor& vrf : tensors.vrf_operands) vrfs.push_back(&vrf);
  ASSIGN_OR_RETURN(Planned planned, Build(kernels, op, tensors.inputs[0], tensors.output, vrfs, &kept_ids));
  Plan* plan = std::get_if<Plan>(&planned);
  if (plan == nullptr) return planned;
  auto offset = [](const DeviceTensor& tensor) -> std::optional<int64_t> {
    std::optional<InPlace> where = InPlaceOf(tensor);
    const uint8_t* memory = tensor.device().UnitData(tensor.tier(), 0);
    if (!where || memory == nullptr) return std::nullopt;
    return where->data - memory;
  };
  const std::optional<int64_t> dst = offset(tensors.output), src = offset(tensors.inputs[0]);
  if (!dst || !src) return Planned(std::string("a memory without a host block"));
  plan->dst_tier = tensors.output.tier();
  plan->src_tier = tensors.inputs[0].tier();
  plan->dst_offset = *dst;
  plan->src_offset = *src;
  for (const DeviceTensor& vrf : tensors.vrf_operands) {
    const std::optional<int64_t> at = offset(vrf);
    plan->vrf_offsets.emplace_back(vrf.tier(), at.value_or(-1));
  }
  for (const VrfImage& image : plan->images) {
    if (plan->vrf_offsets[image.vrf].second < 0) return Planned(std::string("a VRF memory without a host block"));
  }
  return planned;
}

// Whether the op's vector stage has ids by position (ValidCount, AxisToggle).
bool BranchGivesIds(const PipelineOp& op) {
  for (const Stage& stage : op.stages) {
    if (const auto* v = std::get_if<VectorStage>(&stage)) {
      return v->branch.kind == BranchMode::Kind::kValidCount || v->branch.kind == BranchMode::Kind::kAxisToggle;
    }
  }
  return false;
}

// Id images by the op's stages, for every op of the process: the ops of an eager run (each fresh
// run records new ones, with new serials) find them computed and their pages touched.
struct SharedIds {
  std::mutex mutex;
  absl::flat_hash_map<std::string, IdImages> by_stages;
};
SharedIds& Shared() {
  static SharedIds* shared = new SharedIds;
  return *shared;
}
IdImages SharedIdImages(const PipelineOp& op) {
  SharedIds& shared = Shared();
  const std::string key = PipelineKey(op);
  std::lock_guard<std::mutex> lock(shared.mutex);
  auto it = shared.by_stages.find(key);
  return it == shared.by_stages.end() ? IdImages{} : it->second;
}
void KeepIdImages(const PipelineOp& op, const IdImages& ids) {
  SharedIds& shared = Shared();
  const std::string key = PipelineKey(op);
  std::lock_guard<std::mutex> lock(shared.mutex);
  if (shared.by_stages.size() >= 256) shared.by_stages.clear();  // a bound, as the op memo's
  shared.by_stages[key] = ids;
}

// The op's kept plan for the ends it was made for.
struct Slot {
  std::string stages;  // the op's PipelineKey when it has no serial
  std::optional<End> input, output;
  std::vector<End> vrfs;
  int threads = 0;
  std::shared_ptr<const Planned> planned;
  IdImages ids;  // the op's id images (Build)

  bool Matches(const PipelineTensors& tensors, int now_threads) const {
    if (planned == nullptr || threads != now_threads || !output || !output->Matches(tensors.output)) return false;
    if (tensors.inputs.empty() || !input || !input->Matches(tensors.inputs[0])) return false;
    if (vrfs.size() != tensors.vrf_operands.size()) return false;
    for (size_t k = 0; k < vrfs.size(); ++k) {
      if (!vrfs[k].Matches(tensors.vrf_operands[k])) return false;
    }
    return true;
  }
};
struct Kept {
  mutable Slot slot;
};

absl::StatusOr<std::shared_ptr<const Planned>> PlanFor(KernelCache& kernels, const PipelineOp& op,
                                                       const PipelineTensors& tensors) {
  if (tensors.inputs.empty()) return std::make_shared<const Planned>(std::string("no input"));
  std::string stages;
  uint64_t serial = op.serial;
  if (serial == 0) {
    stages = PipelineKey(op);
    serial = absl::HashOf(stages) | (uint64_t{1} << 63);
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const Kept> kept,
                   kernels.memo().Get<Kept>(serial, MemoPart(0xffff, 0, 0xa2), [] { return Kept{}; }));
  Slot& slot = kept->slot;
  if (slot.stages == stages && slot.Matches(tensors, kernels.threads())) return slot.planned;
  slot.stages = stages;
  if (!stages.empty()) slot.ids.clear();  // known by its stages: another op may share the slot
  if (slot.ids.empty() && BranchGivesIds(op)) slot.ids = SharedIdImages(op);
  ASSIGN_OR_RETURN(Planned planned, MakePlan(kernels, op, tensors, slot.ids));
  if (BranchGivesIds(op)) KeepIdImages(op, slot.ids);
  if (std::getenv("VISA_JIT_DEBUG") != nullptr) {
    const auto* reason = std::get_if<std::string>(&planned);
    std::fprintf(stderr, "vector reduce pipeline: %s\n",
                 reason ? absl::StrCat("staged: ", *reason).c_str() : "on kept images, device to device");
  }
  slot.input = End::Of(tensors.inputs[0]);
  slot.output = End::Of(tensors.output);
  slot.vrfs.clear();
  for (const DeviceTensor& vrf : tensors.vrf_operands) slot.vrfs.push_back(End::Of(vrf));
  slot.threads = kernels.threads();
  slot.planned = std::make_shared<const Planned>(std::move(planned));
  return slot.planned;
}

// The image's first `live` 32-bit values zeroed (what follows is padding units no one reads).
uint8_t* Zero(Image& image, int64_t live) {
  std::memset(image.bytes.get(), 0, static_cast<size_t>(4 * live));
  return image.bytes.get();
}

absl::Status RunPlan(KernelCache& kernels, const Plan& plan, const PipelineTensors& tensors) {
  // As the staged stage reads them (Staged::Read): every VRF operand must have been written.
  for (const DeviceTensor& vrf : tensors.vrf_operands) RETURN_IF_ERROR(vrf.CheckReadable());
  thread_local Scratch scratch;
  if (static_cast<int64_t>(scratch.tags.size()) < plan.most_live) scratch.tags.assign(plan.most_live, 0);
  if (plan.compares && static_cast<int64_t>(scratch.compared.size()) < plan.most_live) {
    scratch.compared.resize(static_cast<size_t>(plan.most_live));
  }
  // Both images hold the largest layout: they swap roles step by step.
  scratch.current.Hold(4 * plan.most_positions);
  scratch.next.Hold(4 * plan.most_positions);
  std::vector<ZeroedImage>& images = *plan.vrf_images;
  if (images.size() != plan.images.size()) {
    // Zero once: each run's moves write the same positions again, the others stay 0.
    for (const VrfImage& image : plan.images) images.emplace_back(4 * image.positions);
  }
  uint8_t* out = tensors.output.device().UnitData(plan.dst_tier, 0) + plan.dst_offset;
  const uint8_t* in = tensors.inputs[0].device().UnitData(plan.src_tier, 0) + plan.src_offset;
  plan.move_in.Run(Zero(scratch.current, plan.first_live), in);
  kernels.Count(plan.move_in);
  for (const Action& action : plan.actions) {
    switch (action.kind) {
      case Action::Kind::kSegment: {
        std::vector<const uint32_t*> bases;
        for (int k : action.images) {
          const VrfImage& image = plan.images[k];
          const auto& [tier, offset] = plan.vrf_offsets[image.vrf];
          const uint8_t* vrf = tensors.vrf_operands[image.vrf].device().UnitData(tier, 0) + offset;
          image.nest.Run(images[k].data(), vrf);
          kernels.Count(image.nest);
          bases.push_back(reinterpret_cast<const uint32_t*>(images[k].data()));
        }
        uint32_t* values = reinterpret_cast<uint32_t*>(scratch.current.bytes.get());
        // Kernels without a Comparison only read the ids.
        uint8_t* tags = action.compares         ? scratch.compared.data()
                        : action.tags != nullptr ? const_cast<uint8_t*>(action.tags->data())
                                                 : scratch.tags.data();
        const VectorFn fn = action.fn;
        Parallel(action.live, ThreadsFor(action.live, kernels.threads()),
                 [&](int64_t begin, int64_t end) { fn(values, tags, bases.data(), begin, end); }, 4096);
        break;
      }
      case Action::Kind::kRelayout:
        action.move->Run(Zero(scratch.next, action.live), scratch.current.bytes.get());
        kernels.Count(*action.move);
        std::swap(scratch.current, scratch.next);
        break;
      case Action::Kind::kReduce:
        RunReadyReduce(kernels, *action.reduce, scratch.current.bytes.get(),
                       Zero(scratch.next, action.live),  // as the walk's fresh output image
                       action.blocks);
        std::swap(scratch.current, scratch.next);
        break;
    }
  }
  plan.move_out.Run(out, scratch.current.bytes.get());
  kernels.Count(plan.move_out);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> RunReduceInPlace(KernelCache& kernels, const PipelineOp& op, const PipelineTensors& tensors) {
  ASSIGN_OR_RETURN(std::shared_ptr<const Planned> planned, PlanFor(kernels, op, tensors));
  const Plan* plan = std::get_if<Plan>(planned.get());
  if (plan == nullptr) return false;
  RETURN_IF_ERROR(RunPlan(kernels, *plan, tensors));
  return true;
}

absl::StatusOr<bool> PrepareReduceInPlace(KernelCache& kernels, const PipelineOp& op) {
  if (op.inputs.empty() || !op.inputs[0].handle || !op.output.handle) return false;
  std::vector<const DeviceTensor*> vrfs;
  for (const TensorRef& vrf : op.vrf_operands) vrfs.push_back(vrf.handle ? &*vrf.handle : nullptr);
  // Building the plan compiles every kernel a run uses (the same nests, for the same threads).
  ASSIGN_OR_RETURN(Planned planned, Build(kernels, op, *op.inputs[0].handle, *op.output.handle, vrfs));
  return std::holds_alternative<Plan>(planned);
}

absl::StatusOr<std::string> WhyNotReduceInPlace(KernelCache& kernels, const PipelineOp& op,
                                                const PipelineTensors& tensors) {
  ASSIGN_OR_RETURN(std::shared_ptr<const Planned> planned, PlanFor(kernels, op, tensors));
  const auto* reason = std::get_if<std::string>(planned.get());
  return reason != nullptr ? *reason : std::string();
}

}  // namespace visa::jit
