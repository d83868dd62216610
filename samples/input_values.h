// The values a sample's input holds: the type's default random values, a uniform range, a normal
// distribution, a count or a constant, made the same on every host from a seed.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "runtime/host_tensor.h"

namespace visa::samples {

struct InputValues {
  enum class Kind { kRandom, kUniform, kNormal, kIota, kConstant };
  Kind kind = Kind::kRandom;
  double a = 0, b = 0;  // kUniform: [a, b]; kNormal: mean a, deviation b; kConstant: a

  // HostTensor::Random: integers over the type's whole range, floats uniform in [-1, 1).
  static InputValues Random() { return {}; }
  // Floats uniform in [lo, hi) rounded to the type; integers uniform over the integers in [lo, hi].
  static InputValues Uniform(double lo, double hi) { return {Kind::kUniform, lo, hi}; }
  // Normal(mean, deviation) rounded to the type (integers to the nearest, clamped to the type's range).
  static InputValues Normal(double mean, double deviation) { return {Kind::kNormal, mean, deviation}; }
  // HostTensor::Iota: the k-th live position holds k (wrapped into the type).
  static InputValues Iota() { return {Kind::kIota}; }
  static InputValues Constant(double value) { return {Kind::kConstant, value}; }

  std::string ToString() const;  // "uniform [-4, 4]"
};

// A host tensor of `dtype` laid out by `mapping` holding `values` at its live positions (padding
// zero). A range outside the type, an empty range or a negative deviation is an error naming it.
absl::StatusOr<HostTensor> MakeInput(DType dtype, const Mapping& mapping, const InputValues& values, uint64_t seed);

}  // namespace visa::samples
