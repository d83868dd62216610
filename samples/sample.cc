// Running a sample: input set-up, the kernel on a backend, read-back and the host comparison.
#include "samples/sample.h"

#include <chrono>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "dsl/status_macros.h"
#include "interp/index_move.h"
#include "runtime/transfer.h"
#include "samples/models/moe_samples.h"
#include "samples/models/tiling_samples.h"

namespace visa::samples {
namespace {

constexpr uint64_t kInputSeed = 42;

// The single-input fields as one SampleInput: a one-input sample runs as a sample of inputs.
std::vector<SampleInput> InputsOf(const Sample& sample) {
  if (!sample.inputs.empty()) return sample.inputs;
  return {SampleInput{.name = "input",
                      .dtype = sample.dtype,
                      .host = "",
                      .cluster = sample.cluster,
                      .slice = sample.slice,
                      .element = sample.element,
                      .values = InputValues::Random(),
                      .seed = kInputSeed,
                      .address = 0}};
}

absl::Status Named(const SampleInput& input, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("input `", input.name, "`: ", status.message()));
}

// The host tensors the inputs are made of (the same every call: each from its own seed).
absl::StatusOr<std::vector<HostTensor>> HostInputs(const std::vector<SampleInput>& inputs, const MappingScope& s) {
  std::vector<HostTensor> hosts;
  for (const SampleInput& input : inputs) {
    // The default host layout holds the tensor that the DM slices and elements hold.
    const Mapping layout = input.host.empty() ? Pair({s.m(input.slice), s.m(input.element)}) : s.m(input.host);
    RETURN_IF_ERROR(Named(input, layout.status()));
    absl::StatusOr<HostTensor> host = MakeInput(input.dtype, layout, input.values, input.seed);
    RETURN_IF_ERROR(Named(input, host.status()));
    hosts.push_back(*std::move(host));
  }
  return hosts;
}

// Each input's DM tensor carries its name in messages when `name_tensors` (a one-input sample's
// keeps the device's own name, `dm#N`, as `visa explain` has always shown it).
absl::StatusOr<std::vector<DmTensor>> PlaceInputs(Context& ctx, const std::vector<SampleInput>& inputs,
                                                  const std::vector<HostTensor>& hosts, const MappingScope& s,
                                                  bool name_tensors) {
  std::vector<DmTensor> placed;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const SampleInput& input = inputs[i];
    absl::StatusOr<HbmTensor> hbm = hosts[i].to_hbm(ctx.pdma, Address::Any(), s.m("1"), hosts[i].mapping());
    RETURN_IF_ERROR(Named(input, hbm.status()));
    absl::StatusOr<DmTensor> dm =
        hbm->to_dm(ctx.tdma, input.address, s.m(input.cluster), s.m(input.slice), s.m(input.element));
    RETURN_IF_ERROR(Named(input, dm.status()));
    if (name_tensors) dm->SetName(input.name);
    placed.push_back(*std::move(dm));
  }
  return placed;
}

// The value the reference expects at an output index.
absl::StatusOr<double> Want(const Sample& sample, const Index& index, const std::vector<HostTensor>& hosts) {
  if (sample.inputs_reference) return sample.inputs_reference(index, hosts);
  if (sample.reference) return sample.reference(index, hosts[0]);
  return hosts[0].Get(interp::Restrict(index, hosts[0].mapping().axis_names()));
}

absl::Status Validate(const Sample& sample) {
  if (sample.name.empty()) return absl::InvalidArgumentError("a sample needs a name");
  const std::string named = absl::StrCat("sample `", sample.name, "`");
  auto refuse = [&named](absl::string_view why) { return absl::InvalidArgumentError(absl::StrCat(named, why)); };
  if (!sample.kernel && !sample.inputs_kernel && !sample.runner) {
    return refuse(" has neither a kernel nor a runner");
  }
  if (sample.kernel && sample.inputs_kernel) {
    return refuse(" has both `kernel` (one input) and `inputs_kernel` (several)");
  }
  if (sample.inputs_kernel && sample.inputs.empty()) {
    return refuse(": `inputs_kernel` needs `inputs`, one per DM tensor it takes");
  }
  if (sample.kernel && !sample.inputs.empty()) {
    return refuse(": `inputs` go with `inputs_kernel`, not `kernel`");
  }
  if (sample.reference && sample.inputs_kernel) {
    return refuse(": a sample of `inputs` checks with `inputs_reference`, not `reference`");
  }
  return absl::OkStatus();
}

}  // namespace

int64_t StreamPositions(const Program& program) {
  int64_t total = 0;
  for (const Op& op : program.ops) {
    const auto* pipe = std::get_if<PipelineOp>(&op.body);
    if (pipe == nullptr) continue;
    for (const Stage& stage : pipe->stages) {
      if (const auto* fetch = std::get_if<FetchStage>(&stage)) total += fetch->out.Full().size();
    }
  }
  return total;
}

std::string SampleRun::Summary(const std::string& name) const {
  if (mismatch) return absl::StrCat(name, ": MISMATCH at ", *mismatch);
  std::string line = absl::StrFormat("%s: ok (%d elements, max error %g)", name, elements, max_error);
  if (!note.empty()) absl::StrAppend(&line, "; ", note);
  return line;
}

absl::StatusOr<SampleRun> Sample::Run(Backend& backend, const DeviceOptions& device_options) const {
  if (runner) {
    ASSIGN_OR_RETURN(SampleRun run, runner(backend, device_options));
    // A hand-written runner need not count the positions its pipelines moved.
    if (run.stream_elements == 0) run.stream_elements = StreamPositions(run.program);
    return run;
  }
  RETURN_IF_ERROR(Validate(*this));
  ASSIGN_OR_RETURN(Axes parsed, Axes::Parse(axes));
  MappingScope s(parsed);
  const std::vector<SampleInput> sample_inputs = InputsOf(*this);
  ASSIGN_OR_RETURN(std::vector<HostTensor> hosts, HostInputs(sample_inputs, s));
  ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(1, device_options));
  Context ctx(*device, backend);
  ASSIGN_OR_RETURN(std::vector<DmTensor> placed, PlaceInputs(ctx, sample_inputs, hosts, s, !inputs.empty()));

  auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(DeviceTensor out, kernel ? kernel(ctx, placed[0], s) : inputs_kernel(ctx, placed, s));
  SampleRun run;
  run.kernel_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.device_resident_bytes = device->resident_bytes();
  run.program = ctx.program();
  run.stream_elements = StreamPositions(run.program);

  Mapping layout = s.m(readback);
  RETURN_IF_ERROR(layout.status());
  ASSIGN_OR_RETURN(HostTensor got, ReadAs(out, layout));
  for (int64_t p = 0; p < layout.size(); ++p) {
    Cell cell = layout.map(p);
    if (!cell.live()) continue;
    ASSIGN_OR_RETURN(double value, got.Get(p));
    ASSIGN_OR_RETURN(double want, Want(*this, cell.index, hosts));
    double error = std::isnan(want) && std::isnan(value) ? 0 : std::fabs(value - want);
    ++run.elements;
    if (!(error <= tolerance)) {
      run.mismatch = absl::StrCat(cell.index.ToString(), ": got ", value, ", want ", want);
      return run;
    }
    run.max_error = std::max(run.max_error, error);
  }
  return run;
}

absl::StatusOr<double> Sample::TimeHostReference() const {
  if (time_reference) return time_reference();
  if (runner) {
    return absl::NotFoundError("the sample's runner checks its result in the run; no host reference to time apart");
  }
  RETURN_IF_ERROR(Validate(*this));
  ASSIGN_OR_RETURN(Axes parsed, Axes::Parse(axes));
  MappingScope s(parsed);
  ASSIGN_OR_RETURN(std::vector<HostTensor> hosts, HostInputs(InputsOf(*this), s));
  if (host_math) return TimeHostMath(host_math(hosts));
  Mapping layout = s.m(readback);
  RETURN_IF_ERROR(layout.status());
  double sink = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t p = 0; p < layout.size(); ++p) {
    Cell cell = layout.map(p);
    if (!cell.live()) continue;
    ASSIGN_OR_RETURN(double want, Want(*this, cell.index, hosts));
    sink += want;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  volatile double keep = sink;  // the loop's result is used, so the compiler keeps the loop
  (void)keep;
  return seconds;
}

namespace {

std::vector<Sample>& Registry() {
  static std::vector<Sample> samples = [] {
    std::vector<Sample> all;
    for (auto group : {FetchCommitSamples(), SwitchSamples(), EngineSamples(), ContractionSamples(), VectorSamples(),
                       PrimitiveSamples(), CollectiveSamples(), VectorReduceSamples(), IndirectFetchSamples(),
                       ModelSamples(), TilingSamples(), MoeSamples()}) {
      all.insert(all.end(), group.begin(), group.end());
    }
    return all;
  }();
  return samples;
}

}  // namespace

const std::vector<Sample>& AllSamples() { return Registry(); }

absl::Status RegisterSamples(std::vector<Sample> samples, bool keep_builtin) {
  std::vector<Sample> all = keep_builtin ? Registry() : std::vector<Sample>{};
  for (Sample& sample : samples) {
    if (absl::Status valid = Validate(sample); !valid.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("RegisterSamples: ", valid.message()));
    }
    for (const Sample& other : all) {
      if (other.name == sample.name) {
        return absl::InvalidArgumentError(absl::StrCat("RegisterSamples: a sample named `", sample.name,
                                                       "` is already registered; names must be unique"));
      }
    }
    all.push_back(std::move(sample));
  }
  Registry() = std::move(all);
  return absl::OkStatus();
}

const Sample* FindSample(absl::string_view name) {
  for (const Sample& sample : AllSamples()) {
    if (sample.name == name) return &sample;
  }
  return nullptr;
}

}  // namespace visa::samples
