// Running a contraction sample: inputs to HBM, the kernel, read-back, and the bounded comparison.
#include "samples/contraction_sample.h"

#include <chrono>
#include <cmath>
#include <memory>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "dsl/status_macros.h"
#include "runtime/transfer.h"

namespace visa::samples {
namespace {

// The inputs of `spec`, each a random host tensor from its operand's seed (the same every call).
absl::StatusOr<std::vector<HostTensor>> Inputs(const ContractionSpec& spec, const MappingScope& s) {
  std::vector<HostTensor> hosts;
  for (const Operand& operand : spec.operands) {
    ASSIGN_OR_RETURN(HostTensor host, HostTensor::Random(operand.dtype, s.m(operand.host), operand.seed));
    hosts.push_back(std::move(host));
  }
  return hosts;
}

// What the kernel left: the output read back into `readback`, with the run's figures.
struct DeviceResult {
  SampleRun run;
  HostTensor got;
};

// The kernel on a device of its own, which is gone when this returns.
absl::StatusOr<DeviceResult> RunOnDevice(const ContractionSpec& spec, Backend& backend,
                                         const DeviceOptions& device_options, const MappingScope& s,
                                         const Mapping& readback) {
  ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(1, device_options));
  if (!spec.relaxes_dma_packet_rule.empty()) device->set_dma_packet_rule(false);
  Context ctx(*device, backend);
  std::vector<HbmTensor> inputs;
  {
    ASSIGN_OR_RETURN(std::vector<HostTensor> hosts, Inputs(spec, s));
    for (size_t i = 0; i < hosts.size(); ++i) {
      const Operand& operand = spec.operands[i];
      const Mapping staged = operand.hbm.empty() ? hosts[i].mapping() : s.m(operand.hbm);
      ASSIGN_OR_RETURN(HbmTensor hbm, hosts[i].to_hbm(ctx.pdma, operand.hbm_address, s.m("1"), staged));
      inputs.push_back(std::move(hbm));
    }
  }
  auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(DeviceTensor out, spec.kernel(ctx, inputs, s));
  SampleRun run;
  run.kernel_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.device_resident_bytes = device->resident_bytes();
  run.program = ctx.program();
  run.stream_elements = StreamPositions(run.program);
  ASSIGN_OR_RETURN(HostTensor got, ReadAs(out, readback));
  return DeviceResult{std::move(run), std::move(got)};
}

absl::StatusOr<SampleRun> RunContraction(const ContractionSpec& spec, Backend& backend,
                                         const DeviceOptions& device_options) {
  ASSIGN_OR_RETURN(Axes axes, Axes::Parse(spec.axes));
  MappingScope s(axes);
  Mapping layout = s.m(spec.readback);
  RETURN_IF_ERROR(layout.status());
  ASSIGN_OR_RETURN(DeviceResult result, RunOnDevice(spec, backend, device_options, s, layout));
  SampleRun run = std::move(result.run);
  // A traced run (its Program, to explain or prepare) computed nothing: nothing to check.
  if (std::string_view(backend.name()) == "trace") return run;
  const HostTensor& got = result.got;
  // The reference comes from the inputs alone, made again from their seeds once the device's
  // memory is released: neither the host images nor the reference's matrices (the GEMM's two
  // 1 MiB float products) add to the memory the kernel touches at its peak.
  Expected expected;
  {
    ASSIGN_OR_RETURN(std::vector<HostTensor> hosts, Inputs(spec, s));
    ASSIGN_OR_RETURN(expected, spec.expected(hosts, s));
  }
  double worst_ratio = 0;
  for (int64_t p = 0; p < layout.size(); ++p) {
    Cell cell = layout.map(p);
    if (!cell.live()) continue;
    ASSIGN_OR_RETURN(double value, got.Get(p));
    const double want = expected.value(cell.index);
    const double bound = expected.bound(cell.index);
    const double error = std::fabs(value - want);
    ++run.elements;
    if (!(error <= bound)) {
      run.mismatch = absl::StrCat(cell.index.ToString(), ": got ", value, ", want ", want, " (bound ", bound, ")");
      return run;
    }
    run.max_error = std::max(run.max_error, error);
    if (bound > 0) worst_ratio = std::max(worst_ratio, error / bound);
  }
  run.note = expected.note.empty() ? "exact"
                                   : absl::StrFormat("%s; worst error / bound %.3f", expected.note, worst_ratio);
  if (!spec.relaxes_dma_packet_rule.empty()) {
    absl::StrAppend(&run.note, "; DMA 8-byte packet rule relaxed: ", spec.relaxes_dma_packet_rule);
  }
  return run;
}

// The host reference's math alone, the inputs made before the clock starts: the sample's host
// math when it has one, else its checking reference (values and bounds).
absl::StatusOr<double> TimeExpected(const ContractionSpec& spec) {
  ASSIGN_OR_RETURN(Axes axes, Axes::Parse(spec.axes));
  MappingScope s(axes);
  ASSIGN_OR_RETURN(std::vector<HostTensor> hosts, Inputs(spec, s));
  if (spec.host_math) return TimeHostMath(spec.host_math(hosts));
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(Expected expected, spec.expected(hosts, s));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!expected.value) return absl::InternalError(absl::StrCat(spec.name, ": the reference has no values"));
  return seconds;
}

}  // namespace

double SumBound(int levels, double sum_of_magnitudes, double value, bool rounded_to_bf16) {
  const double u = std::ldexp(1.0, -24);
  const double gamma = levels * u / (1 - levels * u);
  const double accumulated = gamma * sum_of_magnitudes;
  if (!rounded_to_bf16) return accumulated;
  return accumulated + std::ldexp(1.0, -8) * (std::fabs(value) + accumulated);
}

Sample MakeContractionSample(ContractionSpec spec) {
  Sample sample;
  sample.name = spec.name;
  sample.description = spec.description;
  sample.axes = spec.axes;
  sample.slow = spec.slow;
  auto shared = std::make_shared<const ContractionSpec>(std::move(spec));
  sample.runner = [shared](Backend& backend, const DeviceOptions& device_options) {
    return RunContraction(*shared, backend, device_options);
  };
  sample.time_reference = [shared]() -> absl::StatusOr<double> { return TimeExpected(*shared); };
  return sample;
}

}  // namespace visa::samples
