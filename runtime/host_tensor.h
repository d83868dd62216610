// HostTensor: a tensor in host memory, one packed buffer laid out by an Element mapping.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "dsl/index.h"
#include "dsl/mapping.h"
#include "runtime/address.h"
#include "runtime/dtype.h"
#include "runtime/layouts.h"
#include "runtime/packed_storage.h"

namespace visa {

class Dma;
class HbmTensor;

// Position i of the buffer holds the tensor element `mapping.map(i)` (or is padding). The buffer
// has exactly mapping.size() elements, padding positions included, in the byte image of
// packed_storage.h; padding holds zero unless the caller stores something else there.
class HostTensor {
 public:
  // All positions zero. The dtype must be storable (not i5 / i9) and the mapping valid.
  static absl::StatusOr<HostTensor> Zeros(DType dtype, const Mapping& mapping);
  // One value per position (padding included); values must be representable (see DoubleToBits).
  static absl::StatusOr<HostTensor> FromValues(DType dtype, const Mapping& mapping,
                                               absl::Span<const double> values);
  // One raw bit pattern per position (low Bits(dtype) bits).
  static absl::StatusOr<HostTensor> FromBits(DType dtype, const Mapping& mapping,
                                             absl::Span<const uint32_t> bits);
  // A packed byte image of exactly StorageBytes(dtype, mapping.size()) bytes.
  static absl::StatusOr<HostTensor> FromBytes(DType dtype, const Mapping& mapping,
                                              std::vector<uint8_t> bytes);
  // Deterministic values from `seed` at the live positions (padding zero): integers uniform over
  // the type's whole range, floats uniform in [-1, 1) rounded to the type (never NaN or inf).
  // The generator is std::mt19937_64 with hand-made scaling, so results match on every host.
  static absl::StatusOr<HostTensor> Random(DType dtype, const Mapping& mapping, uint64_t seed);
  // The k-th live position holds k (padding zero), wrapped into the type's exact integers:
  // integers wrap two's complement; floats count modulo 2^(mantissa bits + 1) (bf16: 256, f16:
  // 2048, f32: 2^24, f8e4m3: 16, f8e5m2: 8).
  static absl::StatusOr<HostTensor> Iota(DType dtype, const Mapping& mapping);

  DType dtype() const { return storage_.dtype(); }
  const Mapping& mapping() const { return mapping_; }
  int64_t size() const { return storage_.size(); }
  const std::vector<uint8_t>& bytes() const { return storage_.bytes(); }
  // Gives the packed image away, e.g. to relabel it with an equivalent mapping without a copy.
  std::vector<uint8_t> TakeBytes() && { return storage_.TakeBytes(); }

  // Every position (padding included), in position order.
  std::vector<double> ToValues() const;
  std::vector<uint32_t> ToBits() const;

  absl::StatusOr<double> Get(int64_t position) const;
  absl::StatusOr<uint32_t> GetBits(int64_t position) const;
  // The element at a tensor index (the smallest position holding it); an error if none does.
  absl::StatusOr<double> Get(const Index& index) const;
  absl::StatusOr<uint32_t> GetBits(const Index& index) const;
  absl::Status Set(int64_t position, double value);
  absl::Status SetBits(int64_t position, uint32_t bits);

  // "HostTensor<i32, [A]> 2048 elements: [0, 1, 2, ..., 2046, 2047]"; padding prints as `_`.
  std::string ToString() const;

  // Same dtype, structurally equal mapping and the same bytes (NaN patterns compare by bits).
  bool operator==(const HostTensor& other) const;

  // Host -> HBM over PCIe (dma.cc): the identity on the tensor, laid out by `chip` and `element`.
  absl::StatusOr<HbmTensor> to_hbm(Dma& pdma, Address address, const Mapping& chip,
                                   const Mapping& element) const;
  // The same with named levels (layouts.h); a Chip left out is `1` (one chip).
  absl::StatusOr<HbmTensor> to_hbm(Dma& pdma, Address address, const HbmLayout& layout) const;

 private:
  HostTensor(Mapping mapping, PackedStorage storage)
      : mapping_(std::move(mapping)), storage_(std::move(storage)) {}
  absl::StatusOr<int64_t> PositionOf(const Index& index) const;

  Mapping mapping_;
  PackedStorage storage_;
};

}  // namespace visa
