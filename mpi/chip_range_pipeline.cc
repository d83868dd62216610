// ChipRangePipeline: one pipeline per chip of a range, each relabelled to its chip's views.
#include "mpi/chip_range_pipeline.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "dsl/axes.h"
#include "dsl/status_macros.h"
#include "runtime/chip_view.h"
#include "runtime/device.h"

namespace visa::mpi {
namespace {

constexpr char kOneChip[] = "Chip";  // the one-value axis of chip views (runtime/chip_view.cc)

absl::Status NotByChip(const PipelineOp& op, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "chip range pipeline", op.operation.empty() ? "" : absl::StrCat(" (", op.operation, ")"),
      ": a pipeline runs by chip only when every tensor and stream shape it touches has the same single axis over "
      "every chip as its Chip level, and that axis nowhere else; ",
      what));
}

// What a pipeline's relabelling to one chip replaces: its Chip axis over the device's chips.
class Relabelling {
 public:
  Relabelling(const PipelineOp& op, std::string axis, int64_t chips, Mapping stream_chip)
      : op_(op), axis_(std::move(axis)), chips_(chips), stream_chip_(std::move(stream_chip)) {}

  // A Chip level that is the pipeline's axis over every chip.
  absl::Status CheckChipLevel(const Mapping& chip, const std::string& where) const {
    if (chip.kind() == Mapping::Kind::kSymbol && chip.axis().name == axis_ && chip.size() == chips_) {
      return absl::OkStatus();
    }
    return NotByChip(op_, absl::StrCat(where, " has `", chip.ToString(), "` as its Chip level, not `", axis_,
                                       "` over the ", chips_, " chips"));
  }

  // A mapping of a level other than Chip: it must name neither the Chip axis nor `Chip`.
  absl::Status CheckElsewhere(const Mapping& mapping, const std::string& where) const {
    for (const std::string& name : mapping.axis_names()) {
      if (name == axis_ || name == kOneChip) {
        return NotByChip(op_, absl::StrCat(where, " holds the Chip axis ", name, " outside the Chip level: `",
                                           mapping.ToString(), "`"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckAxisName(const std::string& name, const std::string& where) const {
    if (name == axis_ || name == kOneChip) {
      return NotByChip(op_, absl::StrCat(where, " is the Chip axis ", name));
    }
    return absl::OkStatus();
  }

  // The stream on one chip: its Chip level becomes the one-value axis.
  absl::Status Relabel(StreamShape& shape, const std::string& where) const {
    RETURN_IF_ERROR(CheckChipLevel(shape.chip, where));
    for (const Mapping* level : {&shape.cluster, &shape.slice, &shape.time, &shape.packet}) {
      RETURN_IF_ERROR(CheckElsewhere(*level, where));
    }
    if (shape.row) RETURN_IF_ERROR(CheckElsewhere(*shape.row, where));
    shape.chip = stream_chip_;
    return absl::OkStatus();
  }

  absl::Status Relabel(VectorStage& vector) const {
    RETURN_IF_ERROR(Relabel(vector.in, "a vector stage's input"));
    RETURN_IF_ERROR(Relabel(vector.out, "a vector stage's output"));
    RETURN_IF_ERROR(CheckAxisName(vector.branch.axis, "the vector branch's axis"));
    RETURN_IF_ERROR(CheckAxisName(vector.unzip_axis, "the vector unzip axis"));
    for (VeStep& step : vector.steps) {
      RETURN_IF_ERROR(Relabel(step.out, absl::StrCat("vector step ", step.call)));
      if (step.intra_reduce) {
        auto reduce = std::make_shared<IntraSliceReduceStage>(*step.intra_reduce);
        RETURN_IF_ERROR(Relabel(reduce->in, "an intra-slice reduce's input"));
        RETURN_IF_ERROR(Relabel(reduce->out, "an intra-slice reduce's output"));
        RETURN_IF_ERROR(CheckAxisName(reduce->axis, "an intra-slice reduce's axis"));
        if (reduce->vcg) RETURN_IF_ERROR(Relabel(reduce->vcg->in, "a valid count's stream"));
        step.intra_reduce = std::move(reduce);
      }
      if (step.inter_reduce) {
        auto reduce = std::make_shared<InterSliceReduceStage>(*step.inter_reduce);
        RETURN_IF_ERROR(Relabel(reduce->in, "an inter-slice reduce's input"));
        RETURN_IF_ERROR(Relabel(reduce->out, "an inter-slice reduce's output"));
        step.inter_reduce = std::move(reduce);
      }
    }
    for (VrfOperandInfo& vrf : vector.vrfs) {
      RETURN_IF_ERROR(CheckChipLevel(vrf.chip, absl::StrCat("the VRF operand ", vrf.text)));
    }
    return absl::OkStatus();
  }

  // Every stream shape of the op relabelled; the operands' descriptions (TRF, VRF) are checked here
  // and take their views' Chip level in Bind.
  absl::StatusOr<PipelineOp> Streams() const {
    PipelineOp relabelled = op_;
    for (Stage& stage : relabelled.stages) {
      absl::Status status = std::visit(
          [&](auto& s) -> absl::Status {
            using S = std::decay_t<decltype(s)>;
            if constexpr (std::is_same_v<S, BeginStage>) {
              if (s.interleave) RETURN_IF_ERROR(CheckElsewhere(*s.interleave, "the interleave axis"));
              return Relabel(s.shape, "the begin stream");
            } else if constexpr (std::is_same_v<S, AlignStage>) {
              RETURN_IF_ERROR(Relabel(s.in, "align's input"));
              RETURN_IF_ERROR(CheckChipLevel(s.trf.chip, absl::StrCat("the TRF operand ", s.trf.text)));
              return Relabel(s.out, "align's output");
            } else if constexpr (std::is_same_v<S, AccumulateStage>) {
              RETURN_IF_ERROR(CheckElsewhere(s.retained_time, "accumulate's retained time"));
              RETURN_IF_ERROR(Relabel(s.in, "accumulate's input"));
              return Relabel(s.out, "accumulate's output");
            } else if constexpr (std::is_same_v<S, VectorStage>) {
              return Relabel(s);
            } else if constexpr (std::is_same_v<S, FetchStage> || std::is_same_v<S, SwitchStage> ||
                                 std::is_same_v<S, CollectStage> || std::is_same_v<S, CastStage> ||
                                 std::is_same_v<S, TransposeStage> || std::is_same_v<S, ContractStage>) {
              return Relabel(s.out, DescribeStage(Stage{s}).substr(0, 40));
            } else if constexpr (std::is_same_v<S, CommitStage>) {
              return CheckElsewhere(s.element, "the commit element");
            } else {
              static_assert(std::is_same_v<S, RegisterLoadStage>);
              RETURN_IF_ERROR(CheckElsewhere(s.row, "the register load's rows"));
              return CheckElsewhere(s.element, "the register load's element");
            }
          },
          stage);
      RETURN_IF_ERROR(status);
    }
    return relabelled;
  }

 private:
  const PipelineOp& op_;
  std::string axis_;
  int64_t chips_;
  Mapping stream_chip_;
};

// Every tensor of the op, in a fixed order: inputs, weights, output, VRF operands, fetch index.
std::vector<const DeviceTensor*> TensorsOf(const PipelineTensors& tensors) {
  std::vector<const DeviceTensor*> all;
  for (const DmTensor& input : tensors.inputs) all.push_back(&input);
  if (tensors.weights) all.push_back(&*tensors.weights);
  all.push_back(&tensors.output);
  for (const DeviceTensor& vrf : tensors.vrf_operands) all.push_back(&vrf);
  if (tensors.fetch_index) all.push_back(&*tensors.fetch_index);
  return all;
}

// A stream's Chip level on chip `chip` alone. The JIT addresses a stream's units as the device's
// (its staged walk trims to live units and stores by unit), so it gets the views' own `# c + Chip
// + # n`, as a pipeline traced on chip views has it; the interpreter moves by index alone and gets
// the one-value `Chip` (its stream images then span one chip's units; its index moves match the
// views' left-padded sources by digit with the pad peeled, dsl/outer_padding.h). Both give the
// whole op's bits.
absl::StatusOr<Mapping> OneChipLevel(const Backend& backend, int chip, int64_t chips) {
  ASSIGN_OR_RETURN(Axes axes, Axes::Parse(absl::StrCat(kOneChip, " = 1")));
  if (std::string_view(backend.name()) == "interp") return axes[kOneChip];
  Mapping level = axes[kOneChip].left_pad(chip).pad(chips);
  RETURN_IF_ERROR(level.status());
  return level;
}

// The op's Chip axis (its begin stream's) and the relabelling of its streams; checks the tensors.
absl::StatusOr<PipelineOp> RelabelledStreams(const Backend& backend, const PipelineOp& op, const PipelineTensors& tensors,
                                             int chip_of) {
  if (op.stages.empty() || !std::holds_alternative<BeginStage>(op.stages.front())) {
    return NotByChip(op, "it has no begin stage");
  }
  const Mapping& chip = std::get<BeginStage>(op.stages.front()).shape.chip;
  if (chip.kind() != Mapping::Kind::kSymbol) {
    return NotByChip(op, absl::StrCat("the begin stream's Chip level is `", chip.ToString(), "`, not a single axis"));
  }
  const int64_t chips = tensors.output.device().chips();
  ASSIGN_OR_RETURN(Mapping one_chip, OneChipLevel(backend, chip_of, chips));
  const Relabelling relabelling(op, chip.axis().name, chips, one_chip);
  for (const DeviceTensor* tensor : TensorsOf(tensors)) {
    if (&tensor->device() != &tensors.output.device()) return NotByChip(op, tensor->ToString() + " is on another device");
    RETURN_IF_ERROR(relabelling.CheckChipLevel(tensor->levels().front(), tensor->ToString()));
    const std::vector<Mapping> levels = tensor->levels();
    for (size_t i = 1; i < levels.size(); ++i) RETURN_IF_ERROR(relabelling.CheckElsewhere(levels[i], tensor->ToString()));
    if (StorageBits(tensor->dtype()) == 4 && tensor->window_offset() % 2 != 0) {
      return NotByChip(op, absl::StrCat(tensor->ToString(), " is a window starting inside a byte"));
    }
  }
  return relabelling.Streams();
}

// Chip `chip`'s view of a tensor of the op (a window's view keeps its window).
absl::StatusOr<DeviceTensor> ViewOn(const DeviceTensor& tensor, int chip) {
  return ChipView(tensor, chip, tensor.element(), tensor.window_offset() * StorageBits(tensor.dtype()) / 8);
}

// A serial no recorded op has (AssignSerial counts from 1), one per relabelled part.
uint64_t PartSerial() {
  static std::atomic<uint64_t> last{uint64_t{1} << 62};
  return ++last;
}

// The op's TensorRefs and operand descriptions pointed at the views (the JIT reads the handles).
void Bind(PipelineOp& op, const std::vector<DeviceTensor>& views, const PipelineTensors& tensors) {
  size_t next = 0;
  const auto bind = [&](TensorRef& ref) {
    const DeviceTensor& view = views[next++];
    ref.text = view.ToString();
    ref.handle = view;
  };
  for (size_t i = 0; i < tensors.inputs.size(); ++i) {
    if (i < op.inputs.size()) {
      bind(op.inputs[i]);
    } else {
      ++next;
    }
  }
  if (tensors.weights) {
    if (op.weights) {
      bind(*op.weights);
    } else {
      ++next;
    }
  }
  const DeviceTensor* weights_view = tensors.weights ? &views[tensors.inputs.size()] : nullptr;
  bind(op.output);
  const size_t first_vrf = next;
  for (size_t i = 0; i < tensors.vrf_operands.size(); ++i) {
    if (i < op.vrf_operands.size()) {
      bind(op.vrf_operands[i]);
    } else {
      ++next;
    }
  }
  if (tensors.fetch_index && op.fetch_index) bind(*op.fetch_index);
  for (Stage& stage : op.stages) {
    if (auto* align = std::get_if<AlignStage>(&stage); align != nullptr && weights_view != nullptr) {
      align->trf.chip = weights_view->levels().front();
      align->trf.text = weights_view->ToString();
    }
    if (auto* vector = std::get_if<VectorStage>(&stage)) {
      for (size_t k = 0; k < vector->vrfs.size() && first_vrf + k < views.size(); ++k) {
        if (k >= tensors.vrf_operands.size()) break;
        vector->vrfs[k].chip = views[first_vrf + k].levels().front();
        vector->vrfs[k].text = views[first_vrf + k].ToString();
      }
    }
  }
}

// The views in TensorsOf order as the backend's tensors.
PipelineTensors Unflatten(const PipelineTensors& like, const std::vector<DeviceTensor>& views) {
  size_t next = 0;
  std::vector<DmTensor> inputs;
  for (size_t i = 0; i < like.inputs.size(); ++i) inputs.emplace_back(views[next++]);
  std::optional<TrfTensor> weights;
  if (like.weights) weights.emplace(views[next++]);
  const DeviceTensor& output = views[next++];
  std::vector<DeviceTensor> vrfs;
  for (size_t i = 0; i < like.vrf_operands.size(); ++i) vrfs.push_back(views[next++]);
  std::optional<DeviceTensor> index;
  if (like.fetch_index) index = views[next++];
  return PipelineTensors{.inputs = std::move(inputs),
                         .weights = std::move(weights),
                         .output = output,
                         .vrf_operands = std::move(vrfs),
                         .fetch_index = std::move(index)};
}

}  // namespace

absl::Status CheckSplitsByChip(const PipelineOp& op, const PipelineTensors& tensors) {
  class Checking : public Backend {
   public:
    const char* name() const override { return "check"; }
    absl::Status Run(const PipelineOp&, const PipelineTensors&) override { return absl::OkStatus(); }
  } checking;
  return RelabelledStreams(checking, op, tensors, 0).status();
}

absl::Status ChipRangePipelines::Run(Backend& backend, const PipelineOp& op, const PipelineTensors& tensors, int first,
                                     int count) {
  const int chips = tensors.output.device().chips();
  if (first < 0 || count < 1 || first + count > chips) {
    return NotByChip(op, absl::StrCat("(and) the chips [", first, ", ", first + count,
                                      ") leave the device's chips [0, ", chips, ")"));
  }
  RETURN_IF_ERROR(CheckSplitsByChip(op, tensors));
  for (int chip = first; chip < first + count; ++chip) RETURN_IF_ERROR(RunChip(backend, op, tensors, chip));
  return absl::OkStatus();
}

absl::Status ChipRangePipelines::RunChip(Backend& backend, const PipelineOp& op, const PipelineTensors& tensors,
                                         int chip) {
  const std::vector<const DeviceTensor*> all = TensorsOf(tensors);
  // A relabelling (a chip or cluster view) has a placement of its own, which a relaunch does not
  // share: such an op's parts are made afresh each time, without an identity.
  const bool keepable = op.serial != 0 && std::all_of(all.begin(), all.end(), [](const DeviceTensor* t) {
                          return &t->owner_placement() == &t->placement();
                        });
  const auto key = std::make_pair(op.serial, chip);
  auto kept = keepable ? parts_.find(key) : parts_.end();
  if (kept != parts_.end()) {
    const Part& part = kept->second;
    bool same = part.sources.size() == all.size();
    for (size_t i = 0; same && i < all.size(); ++i) same = part.sources[i] == all[i]->shared_placement();
    if (same) {
      // The kept views over this launch's tensors (their ids and leases; the views' placements).
      std::vector<DeviceTensor> views;
      views.reserve(all.size());
      for (size_t i = 0; i < all.size(); ++i) views.push_back(all[i]->WindowLike(part.views[i]));
      ++reused_;
      return backend.Run(part.op, Unflatten(tensors, views));
    }
  }
  Part part;
  ++made_;
  ASSIGN_OR_RETURN(part.op, RelabelledStreams(backend, op, tensors, chip));
  std::vector<DeviceTensor> views;
  for (const DeviceTensor* tensor : all) {
    ASSIGN_OR_RETURN(DeviceTensor view, ViewOn(*tensor, chip));
    views.push_back(std::move(view));
    part.sources.push_back(tensor->shared_placement());
  }
  Bind(part.op, views, tensors);
  part.op.serial = keepable ? PartSerial() : 0;
  const absl::Status status = backend.Run(part.op, Unflatten(tensors, views));
  if (!keepable) return status;
  // Kept detached, the op's handles too: the views hold their tensors' leases.
  for (const DeviceTensor& view : views) {
    ASSIGN_OR_RETURN(DeviceTensor detached, Detached(view));
    part.views.push_back(std::move(detached));
  }
  Bind(part.op, part.views, tensors);
  parts_.insert_or_assign(key, std::move(part));
  return status;
}

absl::StatusOr<DeviceTensor> ChipRangePipelines::Detached(const DeviceTensor& view) {
  if (!anchor_) {
    anchor_device_ = std::make_unique<Device>(1);
    ASSIGN_OR_RETURN(Axes axes, Axes::Parse("Anchor = 1"));
    ASSIGN_OR_RETURN(anchor_, HbmTensor::Create(*anchor_device_, DType::kI8, axes["Anchor"], axes["Anchor"],
                                                Address::At(0)));
  }
  return anchor_->WindowLike(view);  // the view's placement, the anchor's lease
}

}  // namespace visa::mpi
