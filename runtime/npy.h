// Npy: reading and writing NumPy's `.npy` array files, and loading them into host and HBM tensors.
//
// The format (NumPy's "NPY format" description): the magic `\x93NUMPY`, a version byte pair (1.0:
// a 2-byte little-endian header length follows; 2.0: a 4-byte one), then the header, a Python dict
// literal `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }` padded with spaces and
// ending in a newline, then the data. visa reads and writes C order only (fortran_order True is an
// error naming it) and little-endian only.
//
// dtypes (descr -> visa):
//   '<f4' -> f32   '<f2' -> f16   '|i1' or '<i1' -> i8   '<i2' -> i16   '<i4' -> i32
//   '<u2' or '|V2' -> bf16 bit patterns, only when the load asks for bf16 (LoadOptions::dtype):
//     NumPy has no bfloat16, so bf16 arrays travel as their raw 16 bits (ml_dtypes' bfloat16
//     saves as '|V2'; `.view(np.uint16)` gives '<u2'). Without the request a '<u2' array is an
//     error, since it may hold genuine unsigned integers, which visa has no type for.
// Writing: f32, f16, i8 ('|i1', as NumPy writes it), i16, i32, and bf16 as '<u2' (np.load gives
// uint16; `.view(ml_dtypes.bfloat16)` recovers the values). The header is version 1.0 unless it
// needs more than 65535 bytes, and the data starts at a multiple of 64 bytes as NumPy's does.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dsl/mapping.h"
#include "runtime/address.h"
#include "runtime/array_image.h"
#include "runtime/dma.h"
#include "runtime/dtype.h"
#include "runtime/host_tensor.h"
#include "runtime/layouts.h"
#include "runtime/mapped_file.h"
#include "runtime/tensor.h"

namespace visa {

class NpyFile {
 public:
  // Maps the file (MappedFile) and parses its header.
  static absl::StatusOr<NpyFile> Open(const std::string& path);
  // Parses an image in memory, named `label` in messages; `bytes` must outlive the result.
  static absl::StatusOr<NpyFile> Parse(std::span<const uint8_t> bytes, std::string label);

  const std::string& label() const { return label_; }
  int major_version() const { return major_version_; }
  const std::string& descr() const { return descr_; }  // as the header spells it: "<f4"
  const std::vector<int64_t>& shape() const { return shape_; }
  // The offset of the data in the file.
  int64_t data_start() const { return data_start_; }

  // The array's bytes in place, as `options.dtype` asks for bf16 or else as the descr's dtype; an
  // error when visa has no dtype for the descr.
  absl::StatusOr<ArrayImage> Image(const LoadOptions& options = {}) const;

  // As SafetensorsFile's loaders (array_image.h): `logical` names the axes of the dimensions.
  absl::StatusOr<HostTensor> ToHost(const Mapping& logical, const LoadOptions& options = {}) const;
  absl::StatusOr<HbmTensor> ToHbm(Dma& pdma, const Mapping& logical, Address address, HbmLayout layout = {},
                                  const LoadOptions& options = {}) const;
  absl::Status LoadInto(Dma& pdma, const Mapping& logical, const HbmTensor& dst,
                        const LoadOptions& options = {}) const;

 private:
  NpyFile() = default;

  std::optional<MappedFile> file_;
  std::string label_;
  int major_version_ = 1;
  std::string descr_;
  std::vector<int64_t> shape_;
  int64_t data_start_ = 0;
  std::span<const uint8_t> data_;
};

// The descr visa writes for `dtype` ("<f4"); an error for i4, the f8 types and the staging types.
absl::StatusOr<std::string> NpyDescr(DType dtype);

// The `.npy` bytes of `tensor` under the axes `logical` (array_image.h).
absl::StatusOr<std::vector<uint8_t>> NpyBytes(const HostTensor& tensor, const Mapping& logical);
// Writes them to `path`.
absl::Status WriteNpy(const std::string& path, const HostTensor& tensor, const Mapping& logical);
// An HBM tensor, read back over `pdma`, written to `path`.
absl::Status WriteNpy(Dma& pdma, const std::string& path, const HbmTensor& tensor, const Mapping& logical);

}  // namespace visa
