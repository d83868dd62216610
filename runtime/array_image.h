// ArrayImage: a tensor as weight files store it (row-major / C order, little-endian, no padding)
// and its exchange with HostTensor, under the axes the user names for the file's dimensions.
//
// A file knows shapes, visa knows axes: the user says which axis each dimension is with a list
// mapping, major first, e.g. `s.m("D, F")` for a [D, F] matrix (a rank-0 array's list is `1`).
// Under that list the file's bytes are exactly a HostTensor's packed image, so loading without a
// dtype conversion is one copy.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/axes.h"
#include "dsl/mapping.h"
#include "runtime/dtype.h"
#include "runtime/address.h"
#include "runtime/dma.h"
#include "runtime/host_tensor.h"
#include "runtime/layouts.h"
#include "runtime/tensor.h"

namespace visa {

// A view of a file's tensor: product(shape) elements of `dtype`, row-major.
struct ArrayImage {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::span<const uint8_t> bytes;
  std::string what;  // names the tensor and its file in messages: "tensor `w` in file `m.safetensors`"
};

// The same with its own bytes, as the writers collect them.
struct OwnedArrayImage {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

// How a file's tensor is loaded.
struct LoadOptions {
  // The dtype the loaded tensor gets. Unset: the file's, with its bits copied unchanged. Set to
  // another dtype: every value is converted (ImageToHost); a conversion happens only when asked.
  std::optional<DType> dtype;
};

// The axes `logical` lists, major first, checked against `shape`: a list of plain declared axes
// (no padding, stride, skew, ...), one per dimension with that dimension's size, none twice; `1`
// for rank 0. Errors name the rule, `what`, the mapping and the shape.
absl::StatusOr<std::vector<Axis>> DimensionAxes(const Mapping& logical, std::span<const int64_t> shape,
                                                absl::string_view what);

// A host tensor laid out by `logical` holding the image's elements in `dtype`. When `dtype`
// differs from the image's, every value goes through DoubleToBits (floats rounded to nearest
// even, NaN becomes the canonical NaN; integers must be representable exactly, else an error
// naming the element).
absl::StatusOr<HostTensor> ImageToHost(const ArrayImage& image, const Mapping& logical, DType dtype);

// The row-major image of `tensor` under `logical` (relaid out when the tensor's own mapping is
// another layout of the same axes). The rvalue form gives the tensor's bytes away when no relayout
// is needed, so writing a file does not copy them.
absl::StatusOr<OwnedArrayImage> HostToImage(const HostTensor& tensor, const Mapping& logical,
                                            absl::string_view what);
absl::StatusOr<OwnedArrayImage> HostToImage(HostTensor&& tensor, const Mapping& logical,
                                            absl::string_view what);

// The image in HBM: a new tensor at `address` laid out by `layout` (its element left out: `logical`,
// the file's row-major order), moved by `pdma`: `ctx.pdma` records the move in the context's
// program and runs it on the context's backend; a Dma of its own (`Dma::Pcie(device)`) moves at
// once. The host copy in between is freed on return.
absl::StatusOr<HbmTensor> ImageToHbm(Dma& pdma, const ArrayImage& image, const Mapping& logical, Address address,
                                     HbmLayout layout, const LoadOptions& options);
// The image written into an existing HBM tensor or view `dst` (weights placed once, reloaded): its
// element must name the axes of `logical` with the same sizes, its dtype must be the loaded one
// (options.dtype, else the file's).
absl::Status ImageInto(Dma& pdma, const ArrayImage& image, const Mapping& logical, const HbmTensor& dst,
                       const LoadOptions& options);
// The row-major image of an HBM tensor read back over `pdma`.
absl::StatusOr<OwnedArrayImage> HbmToImage(Dma& pdma, const HbmTensor& tensor, const Mapping& logical,
                                           absl::string_view what);

// product(shape), or an error naming `what` when a dimension is negative or the product passes
// kMaxStorageElements.
absl::StatusOr<int64_t> ElementCount(std::span<const int64_t> shape, absl::string_view what);

// "[2, 3]".
std::string ShapeString(std::span<const int64_t> shape);

}  // namespace visa
