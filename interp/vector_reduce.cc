// The Vector Engine's reductions on raw 32-bit lanes, in the order interp/vector_reduce.h states.
#include "interp/vector_reduce.h"

#include <bit>
#include <cmath>
#include <limits>

#include "dsl/status_macros.h"
#include "dsl/vector_nan_payload.h"

namespace visa::interp {
namespace {

float AsF32(uint32_t bits) { return std::bit_cast<float>(bits); }
int32_t AsI32(uint32_t bits) { return std::bit_cast<int32_t>(bits); }
uint32_t Bits(float v) { return std::bit_cast<uint32_t>(v); }
uint32_t Bits(int32_t v) { return std::bit_cast<uint32_t>(v); }

int32_t SaturatingAdd(int32_t a, int32_t b) {
  const int64_t sum = int64_t{a} + int64_t{b};
  if (sum > std::numeric_limits<int32_t>::max()) return std::numeric_limits<int32_t>::max();
  if (sum < std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(sum);
}

// acc = op(acc, x), the first contribution stored as is.
void Accumulate(VeReduceOp op, DType dtype, uint32_t x, uint32_t& acc, bool& have) {
  acc = have ? ReduceCombine(op, dtype, acc, x) : x;
  have = true;
}

}  // namespace

uint32_t ReduceIdentity(VeReduceOp op, DType dtype) {
  if (dtype == DType::kF32) {
    switch (op) {
      case VeReduceOp::kMax: return Bits(-std::numeric_limits<float>::infinity());
      case VeReduceOp::kMin: return Bits(std::numeric_limits<float>::infinity());
      case VeReduceOp::kMul: return Bits(1.0f);
      default: return Bits(0.0f);
    }
  }
  switch (op) {
    case VeReduceOp::kMax: return Bits(std::numeric_limits<int32_t>::min());
    case VeReduceOp::kMin: return Bits(std::numeric_limits<int32_t>::max());
    case VeReduceOp::kMul: return Bits(int32_t{1});
    default: return 0;
  }
}

uint32_t ReduceCombine(VeReduceOp op, DType dtype, uint32_t a, uint32_t b) {
  if (dtype == DType::kF32) {
    const float x = AsF32(a), y = AsF32(b);
    switch (op) {
      case VeReduceOp::kMax: return Bits(std::fmax(x, y));
      case VeReduceOp::kMin: return Bits(std::fmin(x, y));
      case VeReduceOp::kMul: return WithNanPayload(Bits(x * y), {a, b});
      default: return WithNanPayload(Bits(x + y), {a, b});
    }
  }
  const int32_t x = AsI32(a), y = AsI32(b);
  switch (op) {
    case VeReduceOp::kAdd: return a + b;  // wrapping
    case VeReduceOp::kAddSat: return Bits(SaturatingAdd(x, y));
    case VeReduceOp::kMax: return Bits(std::max(x, y));
    case VeReduceOp::kMin: return Bits(std::min(x, y));
    default: return a * b;  // wrapping
  }
}

std::vector<int> IntraSliceValidCounts(const IntraSliceReduceStage& stage, int64_t slice) {
  if (!stage.vcg) return std::vector<int>(stage.in.time.size(), kVeHalfLanes);
  return Way4ValidCounts(*stage.vcg, slice, stage.narrowing);
}

void IntraSliceReduce(const IntraSliceReduceStage& stage, absl::Span<const uint32_t> in,
                      absl::Span<const int> valid, absl::Span<uint32_t> out) {
  const int64_t steps = stage.in.time.size();
  const int64_t out_steps = stage.out.time.size();
  VISA_CHECK(static_cast<int64_t>(in.size()) == steps * kVeHalfLanes, "intra-slice reduce: input size");
  VISA_CHECK(static_cast<int64_t>(valid.size()) == steps, "intra-slice reduce: one valid count per time step");
  VISA_CHECK(static_cast<int64_t>(out.size()) == out_steps * kVeHalfLanes, "intra-slice reduce: output size");
  const DType dtype = stage.in.dtype;
  const uint32_t identity = ReduceIdentity(stage.op, dtype);
  auto op = [&](uint32_t a, uint32_t b) { return ReduceCombine(stage.op, dtype, a, b); };
  std::fill(out.begin(), out.end(), identity);
  std::vector<bool> have(out.size(), false);
  for (int64_t t = 0; t < steps; ++t) {
    const int64_t target = stage.out_time_of[t];
    if (target < 0 || valid[t] <= 0) continue;
    const uint32_t* x = &in[t * kVeHalfLanes];
    uint32_t* acc = &out[target * kVeHalfLanes];
    if (stage.packet_reduced) {
      uint32_t lane[kVeHalfLanes];
      for (int l = 0; l < kVeHalfLanes; ++l) lane[l] = l < valid[t] ? x[l] : identity;
      const uint32_t tree = op(op(lane[0], lane[1]), op(lane[2], lane[3]));
      bool slot_have = have[target * kVeHalfLanes];
      Accumulate(stage.op, dtype, tree, acc[0], slot_have);
      have[target * kVeHalfLanes] = slot_have;
    } else {
      for (int l = 0; l < kVeHalfLanes; ++l) {
        bool slot_have = have[target * kVeHalfLanes + l];
        Accumulate(stage.op, dtype, x[l], acc[l], slot_have);
        have[target * kVeHalfLanes + l] = slot_have;
      }
    }
  }
}

void IntraSliceReduceFromWay8(const IntraSliceReduceStage& stage, int64_t slice, absl::Span<const uint32_t> way8,
                              absl::Span<uint32_t> out) {
  const bool split = stage.narrowing == Narrowing::kSplit;
  const int64_t flits = split ? stage.in.time.size() / 2 : stage.in.time.size();
  VISA_CHECK(static_cast<int64_t>(way8.size()) == flits * kVeLanes, "intra-slice reduce: 8-way input size");
  std::vector<uint32_t> way4(stage.in.time.size() * kVeHalfLanes);
  for (int64_t t = 0; t < flits; ++t) {
    for (int half = 0; half < (split ? 2 : 1); ++half) {
      const int64_t step = split ? 2 * t + half : t;
      for (int l = 0; l < kVeHalfLanes; ++l) way4[step * kVeHalfLanes + l] = way8[t * kVeLanes + half * kVeHalfLanes + l];
    }
  }
  const std::vector<int> valid = IntraSliceValidCounts(stage, slice);
  IntraSliceReduce(stage, way4, valid, out);
}

void InterSliceReduce(const InterSliceReduceStage& stage, absl::Span<const uint32_t> in, absl::Span<uint32_t> out) {
  VISA_CHECK(static_cast<int64_t>(in.size()) == stage.in.slice.size() * stage.in.time.size() * kVeLanes,
             "inter-slice reduce: input size");
  VISA_CHECK(out.size() == stage.sources.size() * kVeLanes, "inter-slice reduce: output size");
  const DType dtype = stage.in.dtype;
  const uint32_t identity = ReduceIdentity(stage.op, dtype);
  for (size_t q = 0; q < stage.sources.size(); ++q) {
    for (int l = 0; l < kVeLanes; ++l) {
      uint32_t acc = identity;
      bool have = false;
      for (int64_t p : stage.sources[q]) Accumulate(stage.op, dtype, in[p * kVeLanes + l], acc, have);
      out[q * kVeLanes + l] = acc;
    }
  }
}

}  // namespace visa::interp
