// Samples: the manual's kernels as runnable programs, each checked against a host reference.
//
// A sample declares its axes, its input (dtype and DM layout), a kernel written with the Context
// API, how to read the result back, and the reference value of every output element (by default
// the input element with the same index: most data-path kernels are the identity on the tensor).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/mapping_parser.h"
#include "runtime/backend.h"
#include "runtime/program.h"
#include "runtime/tensor_unit.h"
#include "samples/host_math.h"
#include "samples/input_values.h"

namespace visa::samples {

struct SampleRun {
  Program program;
  int64_t elements = 0;  // output elements compared
  double max_error = 0;
  std::optional<std::string> mismatch;  // "<index>: got <v>, want <w>"
  std::string note;                     // how the tolerance was derived, when it is not exact
  double kernel_seconds = 0;            // the kernel on the backend, without set-up and checks
  int64_t device_resident_bytes = 0;    // device memory touched (pages), after the kernel
  int64_t stream_elements = 0;          // stream positions the pipelines moved (throughput)
  std::string Summary(const std::string& name) const;  // the `visa run` line
};

// One input of a sample of several inputs: a host tensor made from `values`, moved to HBM and then
// to DM at `address` with the given DM layout.
struct SampleInput {
  std::string name;  // how messages name it, e.g. "a"
  DType dtype = DType::kI8;
  std::string host;  // the host tensor's layout, e.g. "I, K" (default: the slice and element axes)
  std::string cluster = "1 # 2", slice = "1 # 256", element;  // its DM layout
  InputValues values;                                         // default: InputValues::Random()
  uint64_t seed = 42;
  Address address = Address::Any();  // its DM address (Any: the lowest free range)
};

struct Sample {
  std::string name;
  std::string description;
  std::string axes;
  DType dtype = DType::kI8;
  std::string cluster = "1 # 2", slice = "1 # 256", element;  // the DM input
  // Builds the output from the DM input; the scope resolves mapping text.
  std::function<absl::StatusOr<DeviceTensor>(Context&, const DmTensor&, const MappingScope&)> kernel;
  std::string readback;  // host layout the output is read into, e.g. "A, B, C"
  // Expected value at an output index (default: the input at the same index).
  std::function<double(const Index&, const HostTensor& input)> reference;
  double tolerance = 0;
  // A kernel of several inputs: set `inputs` and `inputs_kernel` instead of the single-input
  // fields above (dtype, cluster, slice, element, kernel, reference). The kernel gets the DM
  // tensors in the order of `inputs`; `inputs_reference` gets the host tensors they were made of
  // (default: input 0's element of the same index). `readback` and `tolerance` apply as above.
  std::vector<SampleInput> inputs;
  std::function<absl::StatusOr<DeviceTensor>(Context&, const std::vector<DmTensor>&, const MappingScope&)>
      inputs_kernel;
  std::function<double(const Index&, const std::vector<HostTensor>& inputs)> inputs_reference;
  // Samples with their own set-up (several inputs, HBM round trips, per-element error bounds)
  // run through this instead of the single-DM-input path above, on a device made with the options.
  std::function<absl::StatusOr<SampleRun>(Backend&, const DeviceOptions&)> runner;
  // Run on the manual's full sizes only by `visa run` (too slow for the test suite).
  bool slow = false;
  // Times the host reference of a runner sample once over its inputs (the math its check does,
  // e.g. a contraction sample's Eigen product), in seconds, the inputs made before the clock
  // starts; `visa bench` reports it. Absent for a kernel sample (bench evaluates `reference` at
  // every output element itself) and for runners whose reference is not separable from the run.
  std::function<absl::StatusOr<double>()> time_reference;
  // A kernel sample's math alone as a host loop (samples/host_math.h), made ready from its host
  // inputs: what `visa bench` times as the host reference when set, instead of evaluating
  // `reference` at every output element (a checker, several times slower than the math).
  std::function<HostMath(const std::vector<HostTensor>&)> host_math;

  // On a fresh one-chip device made with `device_options` (e.g. how reads of unwritten memory
  // are reported).
  absl::StatusOr<SampleRun> Run(Backend& backend, const DeviceOptions& device_options = {}) const;
  // Seconds the host reference takes once over the inputs (`visa bench`'s reference figure):
  // `time_reference` when given, else the reference (or the identity) evaluated at every output
  // element; NotFound for a runner sample without `time_reference`.
  absl::StatusOr<double> TimeHostReference() const;
};

// Stream positions the fetch stages of `program` produce (the throughput figure of `visa run --time`).
int64_t StreamPositions(const Program& program);

const std::vector<Sample>& AllSamples();
const Sample* FindSample(absl::string_view name);

// Adds a program's own kernels to AllSamples and FindSample, so the commands (`visa::cli::Main`)
// run, check, bench and explain them. `keep_builtin` false leaves only `samples`. Call it before
// any command runs (it invalidates pointers FindSample gave); a name already taken, an empty
// name, or a sample with neither a kernel nor a runner is an error naming it.
absl::Status RegisterSamples(std::vector<Sample> samples, bool keep_builtin = true);

// Registration helpers for the sample files.
std::vector<Sample> FetchCommitSamples();
std::vector<Sample> PrimitiveSamples();  // masking, indirect access, sub-context copies, shuffles
std::vector<Sample> SwitchSamples();
std::vector<Sample> EngineSamples();
std::vector<Sample> ContractionSamples();
std::vector<Sample> VectorSamples();
std::vector<Sample> CollectiveSamples();  // the manual's 4-chip ReduceScatter and AllReduce
std::vector<Sample> VectorReduceSamples();  // samples/vector_reduce_samples.cc
std::vector<Sample> IndirectFetchSamples();  // the Fetch Sequencer's IndirectLoop (embedding lookups)
std::vector<Sample> ModelSamples();  // samples/models/: the Llama-style model's prefill, decode and generation

}  // namespace visa::samples
