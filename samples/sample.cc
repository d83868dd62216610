// Running a sample: input set-up, the kernel on a backend, read-back and the host comparison.
#include "samples/sample.h"

#include <chrono>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "dsl/status_macros.h"
#include "interp/index_move.h"
#include "runtime/transfer.h"

namespace visa::samples {
namespace {

constexpr uint64_t kInputSeed = 42;

absl::StatusOr<DmTensor> PlaceInput(Context& ctx, const Sample& sample, const MappingScope& s,
                                    const HostTensor& host) {
  ASSIGN_OR_RETURN(HbmTensor hbm, host.to_hbm(ctx.pdma, 0, s.m("1"), host.mapping()));
  return hbm.to_dm(ctx.tdma, 0, s.m(sample.cluster), s.m(sample.slice), s.m(sample.element));
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
  if (runner) return runner(backend, device_options);
  ASSIGN_OR_RETURN(Axes parsed, Axes::Parse(axes));
  MappingScope s(parsed);
  ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(1, device_options));
  Context ctx(*device, backend);
  // The input on the host holds the tensor that the DM slices and elements hold.
  ASSIGN_OR_RETURN(HostTensor compact,
                   HostTensor::Random(dtype, Pair({s.m(slice), s.m(element)}), kInputSeed));
  ASSIGN_OR_RETURN(DmTensor dm, PlaceInput(ctx, *this, s, compact));

  auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(DeviceTensor out, kernel(ctx, dm, s));
  SampleRun run;
  run.kernel_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.device_resident_bytes = device->resident_bytes();
  run.program = ctx.program();
  run.stream_elements = StreamPositions(run.program);

  Mapping layout = s.m(readback);
  RETURN_IF_ERROR(layout.status());
  ASSIGN_OR_RETURN(HostTensor got, ReadAs(out, layout));
  const std::vector<std::string> input_axes = compact.mapping().axis_names();
  for (int64_t p = 0; p < layout.size(); ++p) {
    Cell cell = layout.map(p);
    if (!cell.live()) continue;
    ASSIGN_OR_RETURN(double value, got.Get(p));
    double want = 0;
    if (reference) {
      want = reference(cell.index, compact);
    } else {
      ASSIGN_OR_RETURN(want, compact.Get(interp::Restrict(cell.index, input_axes)));
    }
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

namespace {

std::vector<Sample>& Registry() {
  static std::vector<Sample> samples = [] {
    std::vector<Sample> all;
    for (auto group : {FetchCommitSamples(), SwitchSamples(), EngineSamples(), ContractionSamples(), VectorSamples(),
                       PrimitiveSamples(), CollectiveSamples(), VectorReduceSamples(), IndirectFetchSamples(),
                       ModelSamples()}) {
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
    if (sample.name.empty()) return absl::InvalidArgumentError("RegisterSamples: a sample needs a name");
    if (!sample.kernel && !sample.runner) {
      return absl::InvalidArgumentError(
          absl::StrCat("RegisterSamples: sample `", sample.name, "` has neither a kernel nor a runner"));
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
