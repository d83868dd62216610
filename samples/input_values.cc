// Input values of a sample from a seed: std::mt19937_64 with scaling by hand (the standard
// distributions differ across libraries, and a sample's input must be the same on every host).
#include "samples/input_values.h"

#include <cmath>
#include <numbers>
#include <random>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/relayout.h"
#include "runtime/scalar_convert.h"

namespace visa::samples {
namespace {

// 53 random bits as a double in [0, 1).
double Unit(std::mt19937_64& engine) { return static_cast<double>(engine() >> 11) * 0x1p-53; }

// Box-Muller over two uniforms (the first kept away from 0 so that its log is finite).
double StandardNormal(std::mt19937_64& engine) {
  const double u = 1.0 - Unit(engine), v = Unit(engine);
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * v);
}

absl::Status CheckValues(DType dtype, const InputValues& values) {
  const std::string what = absl::StrCat("input values ", values.ToString(), " for ", Name(dtype));
  switch (values.kind) {
    case InputValues::Kind::kUniform:
      if (!(values.a <= values.b)) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": the range is empty (lo > hi)"));
      }
      break;
    case InputValues::Kind::kNormal:
      if (!(values.b >= 0)) return absl::InvalidArgumentError(absl::StrCat(what, ": the deviation is negative"));
      break;
    default:
      break;
  }
  if (IsFloat(dtype) || values.kind == InputValues::Kind::kNormal || values.kind == InputValues::Kind::kRandom ||
      values.kind == InputValues::Kind::kIota) {
    return absl::OkStatus();
  }
  const double hi = values.kind == InputValues::Kind::kUniform ? values.b : values.a;
  if (std::ceil(values.a) < IntMin(dtype) || std::floor(hi) > IntMax(dtype) || std::ceil(values.a) > std::floor(hi)) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": no integer of the range fits the type [", IntMin(dtype),
                                                   ", ", IntMax(dtype), "]"));
  }
  return absl::OkStatus();
}

// One value of the distribution, as the type holds it.
double Draw(DType dtype, const InputValues& values, std::mt19937_64& engine) {
  if (IsFloat(dtype)) {
    if (values.kind == InputValues::Kind::kUniform) return values.a + (values.b - values.a) * Unit(engine);
    if (values.kind == InputValues::Kind::kNormal) return values.a + values.b * StandardNormal(engine);
    return values.a;
  }
  const double lo = static_cast<double>(IntMin(dtype)), hi = static_cast<double>(IntMax(dtype));
  if (values.kind == InputValues::Kind::kUniform) {
    const int64_t first = static_cast<int64_t>(std::max(std::ceil(values.a), lo));
    const int64_t last = static_cast<int64_t>(std::min(std::floor(values.b), hi));
    return static_cast<double>(first + static_cast<int64_t>(engine() % static_cast<uint64_t>(last - first + 1)));
  }
  if (values.kind == InputValues::Kind::kNormal) {
    return std::clamp(std::nearbyint(values.a + values.b * StandardNormal(engine)), lo, hi);
  }
  return std::nearbyint(values.a);
}

}  // namespace

std::string InputValues::ToString() const {
  switch (kind) {
    case Kind::kRandom: return "random";
    case Kind::kUniform: return absl::StrCat("uniform [", a, ", ", b, "]");
    case Kind::kNormal: return absl::StrCat("normal (mean ", a, ", deviation ", b, ")");
    case Kind::kIota: return "iota";
    case Kind::kConstant: return absl::StrCat("constant ", a);
  }
  return "?";
}

absl::StatusOr<HostTensor> MakeInput(DType dtype, const Mapping& mapping, const InputValues& values, uint64_t seed) {
  if (values.kind == InputValues::Kind::kRandom) return HostTensor::Random(dtype, mapping, seed);
  if (values.kind == InputValues::Kind::kIota) return HostTensor::Iota(dtype, mapping);
  RETURN_IF_ERROR(CheckValues(dtype, values));
  ASSIGN_OR_RETURN(HostTensor tensor, HostTensor::Zeros(dtype, mapping));
  ASSIGN_OR_RETURN(std::vector<int64_t> live, LivePositions(mapping));
  std::mt19937_64 engine(seed);
  for (int64_t p : live) {
    ASSIGN_OR_RETURN(uint32_t bits, DoubleToBits(dtype, Draw(dtype, values, engine)));
    RETURN_IF_ERROR(tensor.SetBits(p, bits));
  }
  return tensor;
}

}  // namespace visa::samples
