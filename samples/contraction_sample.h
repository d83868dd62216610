// Contraction samples: kernels over several HBM inputs, checked against an Eigen reference with a
// per-element error bound derived from the Reducer's summation order.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "samples/host_math.h"
#include "samples/sample.h"

namespace visa::samples {

// One kernel input: a random host tensor (laid out by `host`) copied to HBM at `hbm_address`.
struct Operand {
  DType dtype = DType::kBF16;
  std::string host;  // e.g. "I, K"
  uint64_t seed = 42;
  int64_t hbm_address = 0;
  // The layout it is staged in HBM (default: the host layout). A kernel whose DM layout reorders
  // the host's axes stages it in HBM already reordered (host -> HBM may reorder at any byte), so
  // the HBM -> DM move keeps the 8-byte packets the DMA rule asks for.
  std::string hbm = {};
};

// The expected output: its value and how far the device result may be from it at each index.
struct Expected {
  std::function<double(const Index&)> value;
  std::function<double(const Index&)> bound;  // 0 for exact (integer) samples
  std::string note;                           // how the bound was derived (the output line)
};

struct ContractionSpec {
  std::string name, description, axes;
  std::vector<Operand> operands;
  std::function<absl::StatusOr<DeviceTensor>(Context&, const std::vector<HbmTensor>&, const MappingScope&)>
      kernel;
  std::string readback;  // host layout of the output
  std::function<absl::StatusOr<Expected>(const std::vector<HostTensor>&, const MappingScope&)> expected;
  // The math alone as host code would compute it (samples/host_math.h), made ready from the
  // inputs: the speed reference `visa bench` times. Absent: bench times `expected` instead.
  std::function<HostMath(const std::vector<HostTensor>&)> host_math;
  bool slow = false;
  // Why the kernel, as the manual writes it, moves DMA packets its own 8-byte rule forbids (the
  // run relaxes the rule and says so on its output line); empty for every other sample.
  std::string relaxes_dma_packet_rule;
};

Sample MakeContractionSample(ContractionSpec spec);

// Floating-point bound for a sum of products computed with `levels` rounded f32 additions on
// any path (tree depth plus accumulation steps), optionally rounded to bf16 at the end:
// |error| <= gamma(levels) * sum|x * w| (Higham's gamma_n = n u / (1 - n u), u = 2^-24), plus
// 2^-8 * |value| (bf16's round-to-nearest) when the output is bf16.
double SumBound(int levels, double sum_of_magnitudes, double value, bool rounded_to_bf16);

}  // namespace visa::samples

namespace visa::samples {
// The sample groups (one file each).
std::vector<Sample> HelloContractionSamples();
std::vector<Sample> BatchedContractionSamples();
std::vector<Sample> ConvolutionSamples();
std::vector<Sample> ScheduleSamples();
}  // namespace visa::samples
