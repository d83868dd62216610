// Safetensors: reading and writing the `.safetensors` weights format, and loading its tensors
// into host and HBM tensors.
//
// The format (as the safetensors project specifies it): an 8-byte little-endian unsigned N, N
// bytes of UTF-8 JSON, then the data section. The JSON is one object: every key but
// `__metadata__` names a tensor, `{"dtype": "F32", "shape": [2, 3], "data_offsets": [BEGIN, END]}`
// with offsets relative to the data section; `__metadata__`, optional, maps strings to strings.
// A valid file's tensors cover the data section exactly: no gap, no overlap, no byte past the end.
// Tensor data is row-major (C order) and little-endian.
//
// The dtypes visa holds (the rest are listed but cannot be loaded):
//   BF16 -> bf16   F16 -> f16   F32 -> f32   F8_E4M3 -> f8e4m3   F8_E5M2 -> f8e5m2
//   I8 -> i8       I16 -> i16   I32 -> i32
// docs/weights-files.md shows how a model loads its weights.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include "absl/strings/string_view.h"
#include <utility>
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

// One tensor of the header.
struct SafetensorsEntry {
  std::string name;
  std::string dtype_name;      // as the file spells it, e.g. "BF16"
  std::optional<DType> dtype;  // visa's dtype for it; none for e.g. "F64" (listed, not loadable)
  std::vector<int64_t> shape;
  int64_t begin = 0;  // data_offsets, relative to the data section
  int64_t end = 0;
};

// The file's dtype name of a visa dtype ("BF16"); an error for i4 and the staging types, which the
// format has no name for.
absl::StatusOr<std::string> SafetensorsDTypeName(DType dtype);

class SafetensorsFile {
 public:
  // Maps the file (MappedFile) and parses its header; tensor data is read only when loaded.
  static absl::StatusOr<SafetensorsFile> Open(const std::string& path);
  // Parses an image in memory, named `label` in messages; `bytes` must outlive the result.
  static absl::StatusOr<SafetensorsFile> Parse(std::span<const uint8_t> bytes, std::string label);

  const std::string& label() const { return label_; }
  // In the header's order.
  const std::vector<SafetensorsEntry>& tensors() const { return tensors_; }
  std::vector<std::string> names() const;
  // `__metadata__`, in the header's order.
  const std::vector<std::pair<std::string, std::string>>& metadata() const { return metadata_; }
  // The offset of the data section in the file (8 + N).
  int64_t data_start() const { return data_start_; }

  // NotFound naming the file and the closest names when `name` is not a tensor of the file.
  absl::StatusOr<const SafetensorsEntry*> Find(absl::string_view name) const;
  // The tensor's bytes in place (no copy); an error when visa has no dtype for it.
  absl::StatusOr<ArrayImage> Image(absl::string_view name) const;

  // The tensor as a host tensor laid out by `logical`, the axes of its dimensions major first
  // (array_image.h: `s.m("D, F")` for a [D, F] tensor).
  absl::StatusOr<HostTensor> ToHost(absl::string_view name, const Mapping& logical,
                                    const LoadOptions& options = {}) const;
  // The tensor as a new HBM tensor at `address` laid out by `layout` (ImageToHbm).
  absl::StatusOr<HbmTensor> ToHbm(Dma& pdma, absl::string_view name, const Mapping& logical, Address address,
                                  HbmLayout layout = {}, const LoadOptions& options = {}) const;
  // The tensor written into an existing HBM tensor or view (ImageInto).
  absl::Status LoadInto(Dma& pdma, absl::string_view name, const Mapping& logical, const HbmTensor& dst,
                        const LoadOptions& options = {}) const;

 private:
  SafetensorsFile() = default;

  std::optional<MappedFile> file_;  // keeps an opened file's bytes mapped
  std::string label_;
  std::span<const uint8_t> data_;  // the data section
  int64_t data_start_ = 0;
  std::vector<SafetensorsEntry> tensors_;
  std::vector<std::pair<std::string, std::string>> metadata_;
};

// Collects tensors, then writes them as one `.safetensors` file: the header (keys in the order
// added, `__metadata__` first when there is any, padded with spaces to a multiple of 8 bytes so
// the data section starts aligned) and the tensors back to back in the same order. The header
// needs every tensor's size before the first data byte, so the writer holds each added tensor's
// row-major bytes until Write (a host tensor added as an rvalue in row-major order gives its bytes
// away instead of being copied).
class SafetensorsWriter {
 public:
  // `tensor` under the axes `logical` (array_image.h); its dimensions are the axes' sizes. A
  // tensor laid out otherwise over the same axes is relaid out to row-major. Errors: a name
  // added before, `__metadata__` or not UTF-8, a dtype the format has no name for, axes that do not cover
  // the tensor.
  absl::Status Add(std::string name, const HostTensor& tensor, const Mapping& logical);
  absl::Status Add(std::string name, HostTensor&& tensor, const Mapping& logical);
  // An HBM tensor, read back over `pdma` (ctx.pdma or a Dma of its own).
  absl::Status Add(Dma& pdma, std::string name, const HbmTensor& tensor, const Mapping& logical);
  // A `__metadata__` entry; a key set again replaces its value. Key and value must be UTF-8.
  absl::Status SetMetadata(std::string key, std::string value);

  // Writes the file; an error naming the path when it cannot be written.
  absl::Status Write(const std::string& path) const;
  // The file's bytes.
  std::vector<uint8_t> Bytes() const;

 private:
  absl::Status AddImage(std::string name, absl::StatusOr<OwnedArrayImage> image);
  std::string Header() const;
  void WriteTo(std::ostream& out) const;

  std::vector<std::pair<std::string, OwnedArrayImage>> tensors_;
  std::vector<std::pair<std::string, std::string>> metadata_;
};

}  // namespace visa
