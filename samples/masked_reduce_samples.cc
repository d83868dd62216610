// Masked row reductions (issue "left padding", manual "Masking Configuration" and "Padding
// Strategy"): rows of R = 24 f32 values read as `# 3 + R + # 5` (the base address moves back 3,
// the fetch adapter masks 3 elements in front and 5 behind with the op's identity), split to the
// 4-way path and reduced by the Intra-Slice Reduce. The Valid Count Generator keeps a prefix of
// each flit, so it cannot leave the left pad out: the fetch fills it with the identity, and the
// VCG, counting R' = # 3 + R = 27 positions, leaves out the right pad (ReducePadding::kLeftIdentity).
//
// The references are host loops over the input: the sum follows the manual's order of combination
// (each 4-way step's tree op(op(a, b), op(c, d)) with the identity in the pad lanes, then the steps
// in order, the first stored as is), the max is order-free.
#include "samples/masked_reduce_samples.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dsl/status_macros.h"

namespace visa::samples {
namespace {

constexpr int64_t kRow = 24;      // R
constexpr int64_t kLeftPad = 3;   // # 3 + R

float X(const HostTensor& input, int64_t a, int64_t r) {
  Index index;
  index.Set("A", a);
  index.Set("R", r);
  return static_cast<float>(*input.Get(index));
}

// The row's value at position p of `# 3 + R + # 5`, the identity in the pads.
float Padded(const HostTensor& input, int64_t a, int64_t p, float identity) {
  const int64_t r = p - kLeftPad;
  return r >= 0 && r < kRow ? X(input, a, r) : identity;
}

// The Way4 steps the VCG lets through: positions [4k, 4k + 4) with 4k < 3 + 24 (later steps have
// valid count 0); a step's lanes past 3 + 24 hold the identity.
double RowSumInTreeOrder(const HostTensor& input, int64_t a) {
  float acc = 0;
  for (int64_t k = 0; 4 * k < kLeftPad + kRow; ++k) {
    float lane[4];
    for (int l = 0; l < 4; ++l) lane[l] = Padded(input, a, 4 * k + l, 0.0f);
    const float tree = (lane[0] + lane[1]) + (lane[2] + lane[3]);
    acc = k == 0 ? tree : acc + tree;
  }
  return acc;
}

double RowMax(const HostTensor& input, int64_t a) {
  float best = -std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < kRow; ++r) best = std::max(best, X(input, a, r));
  return best;
}

// A = 32 rows, 4 per slice (Time [A % 4, R' / 8], Packet [R' % 8]); the buffer pads each row to 32
// so the shifted reads stay inside it.
Sample MaskedRowReduce(std::string name, std::string description, IntraSliceReduceOpF32 op, double identity,
                       std::function<double(const HostTensor&, int64_t)> reference) {
  Sample s;
  s.name = std::move(name);
  s.description = std::move(description);
  s.axes = "A = 32, R = 24";
  s.dtype = DType::kF32;
  s.slice = "A / 4 # 256";
  s.element = "A % 4, R # 32";
  s.kernel = [op, identity](Context& ctx, const DmTensor& in, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    const Mapping time = m.m("A % 4, [# 3 + R + # 5] / 8");
    const Mapping packet = m.m("[# 3 + R + # 5] % 8");
    return ctx.main.begin(in.view())
        .fetch_masked(DType::kF32, identity, time, packet)
        .collect(time, packet)
        .vector_init()
        .vector_intra_slice_branch(BranchMode::Unconditional())
        .vector_split(m.m("A % 4, [# 3 + R + # 5] / 8, [# 3 + R + # 5] % 8 / 4"), m.m("[# 3 + R + # 5] % 4"))
        .vector_intra_slice_reduce("R", m.m("A % 4"), m.m("1 # 4"), op, ReducePadding::kLeftIdentity)
        .vector_pad_way8(m.m("1 # 8"))
        .vector_final()
        .commit(m.m("A % 4, 1 # 2"), 1 << 16);
  };
  s.readback = "A";
  s.reference = [reference](const Index& at, const HostTensor& x) { return reference(x, at["A"]); };
  return s;
}

}  // namespace

std::vector<Sample> MaskedReduceSamples() {
  std::vector<Sample> samples;
  samples.push_back(MaskedRowReduce(
      "masked_row_sum", "Masked row reduction: rows read as `# 3 + R + # 5` (lpad 3, pad value 0), f32 Add; the "
      "fetch fills the left pad with the identity, the VCG (V_p 27) leaves out the right pad",
      IntraSliceReduceOpF32::kAdd, 0.0, RowSumInTreeOrder));
  samples.push_back(MaskedRowReduce(
      "masked_row_max", "Masked row reduction: rows read as `# 3 + R + # 5` (lpad 3, pad value -inf), f32 Max; the "
      "fetch fills the left pad with the identity, the VCG (V_p 27) leaves out the right pad",
      IntraSliceReduceOpF32::kMax, -std::numeric_limits<double>::infinity(), RowMax));
  return samples;
}

}  // namespace visa::samples
