// ArrayImage: dimension axes, loading a row-major image into a HostTensor and writing one back.
#include "runtime/array_image.h"

#include <algorithm>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/status_macros.h"
#include "runtime/packed_storage.h"
#include "runtime/relayout.h"
#include "runtime/scalar_convert.h"

namespace visa {
namespace {

// The leaves of a pair tree, major first (pairing is associative in position order).
void FlattenPairs(const Mapping& m, std::vector<Mapping>& leaves) {
  if (m.kind() == Mapping::Kind::kPair) {
    FlattenPairs(m.major(), leaves);
    FlattenPairs(m.minor(), leaves);
    return;
  }
  leaves.push_back(m);
}

uint32_t LoadLittleEndian(const uint8_t* p, int bytes) {
  uint32_t v = 0;
  for (int b = bytes - 1; b >= 0; --b) v = (v << 8) | p[b];
  return v;
}

void StoreLittleEndian(uint8_t* p, int bytes, uint32_t v) {
  for (int b = 0; b < bytes; ++b) p[b] = static_cast<uint8_t>(v >> (8 * b));
}

// The converted pattern of `bits`, or -1 when `to` cannot hold its value (DoubleToBits's rules).
int64_t ConvertBits(DType from, DType to, uint32_t bits) {
  absl::StatusOr<uint32_t> converted = DoubleToBits(to, BitsToDouble(from, bits));
  return converted.ok() ? int64_t{*converted} : -1;
}

// Every pattern of a source of at most 16 bits converted once (a weight matrix has millions of
// elements and at most 65536 distinct patterns); empty for wider sources, converted one by one.
absl::StatusOr<std::vector<int64_t>> ConversionTable(DType from, DType to) {
  if (Bits(from) > 16) return std::vector<int64_t>{};
  std::vector<int64_t> table(size_t{1} << Bits(from));
  for (uint32_t bits = 0; bits < table.size(); ++bits) table[bits] = ConvertBits(from, to, bits);
  return table;
}

absl::Status AxesError(absl::string_view what, const Mapping& logical, std::span<const int64_t> shape,
                       absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(
      "dimension axes: ", what, " has shape ", ShapeString(shape), "; the axes `", logical.ToString(),
      "` ", problem, " (name one plain axis per dimension, major first, each of the dimension's "
      "size, e.g. `D, F` for [D, F]; `1` for rank 0)"));
}

}  // namespace

std::string ShapeString(std::span<const int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

absl::StatusOr<int64_t> ElementCount(std::span<const int64_t> shape, absl::string_view what) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " has a negative dimension in ", ShapeString(shape)));
    }
    if (dim != 0 && count > kMaxStorageElements / dim) {
      return absl::InvalidArgumentError(absl::StrCat(what, " has shape ", ShapeString(shape),
                                                     ", more than ", kMaxStorageElements, " elements"));
    }
    count *= dim;
  }
  return count;
}

absl::StatusOr<std::vector<Axis>> DimensionAxes(const Mapping& logical, std::span<const int64_t> shape,
                                                absl::string_view what) {
  RETURN_IF_ERROR(logical.status());
  if (shape.empty()) {
    if (logical.is_identity()) return std::vector<Axis>{};
    return AxesError(what, logical, shape, "are not `1`, the list of no axes");
  }
  std::vector<Mapping> leaves;
  FlattenPairs(logical, leaves);
  if (leaves.size() != shape.size()) {
    return AxesError(what, logical, shape,
                     absl::StrCat("list ", leaves.size(), " mappings for ", shape.size(), " dimensions"));
  }
  std::vector<Axis> axes;
  for (size_t d = 0; d < leaves.size(); ++d) {
    const Mapping& leaf = leaves[d];
    if (leaf.kind() != Mapping::Kind::kSymbol || leaf.axis().skew || leaf.axis().shift) {
      return AxesError(what, logical, shape,
                       absl::StrCat("have `", leaf.ToString(), "` for dimension ", d, ", not a plain axis"));
    }
    if (leaf.axis().size != shape[d]) {
      return AxesError(what, logical, shape,
                       absl::StrCat("have axis `", leaf.axis().name, "` of size ", leaf.axis().size,
                                    " for dimension ", d, " of size ", shape[d]));
    }
    for (const Axis& seen : axes) {
      if (seen.name == leaf.axis().name) {
        return AxesError(what, logical, shape, absl::StrCat("name axis `", seen.name, "` twice"));
      }
    }
    axes.push_back(leaf.axis());
  }
  return axes;
}

absl::StatusOr<HostTensor> ImageToHost(const ArrayImage& image, const Mapping& logical, DType dtype) {
  RETURN_IF_ERROR(DimensionAxes(logical, image.shape, image.what).status());
  ASSIGN_OR_RETURN(int64_t count, ElementCount(image.shape, image.what));
  if (static_cast<uint64_t>(StorageBytes(image.dtype, count)) != image.bytes.size()) {
    return absl::InternalError(absl::StrCat("ImageToHost: ", image.what, " holds ", image.bytes.size(),
                                            " bytes for ", count, " elements of ", Name(image.dtype)));
  }
  if (dtype == image.dtype) {
    return HostTensor::FromBytes(dtype, logical, std::vector<uint8_t>(image.bytes.begin(), image.bytes.end()));
  }
  if (!IsMaterializable(dtype)) {
    return absl::InvalidArgumentError(absl::StrCat("dtype conversion: ", image.what, " cannot be converted to ",
                                                   Name(dtype), ", a staging type that host memory does not hold"));
  }
  if (StorageBits(image.dtype) % 8 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("dtype conversion: ", image.what, " is ", Name(image.dtype),
                                                   ", which no weights file stores; only whole-byte dtypes convert"));
  }
  ASSIGN_OR_RETURN(PackedStorage storage, PackedStorage::Create(dtype, count));
  ASSIGN_OR_RETURN(std::vector<int64_t> table, ConversionTable(image.dtype, dtype));
  const int src_bytes = StorageBits(image.dtype) / 8;  // file dtypes are whole bytes
  const int dst_bits = StorageBits(dtype);
  std::vector<uint8_t> out = storage.TakeBytes();
  for (int64_t i = 0; i < count; ++i) {
    uint32_t bits = LoadLittleEndian(image.bytes.data() + i * src_bytes, src_bytes);
    int64_t converted = table.empty() ? ConvertBits(image.dtype, dtype, bits) : table[bits];
    if (converted < 0) {
      double value = BitsToDouble(image.dtype, bits);
      return absl::InvalidArgumentError(absl::StrCat(
          "dtype conversion: element ", i, " (row-major) of ", image.what, " is ", value, " in ", Name(image.dtype),
          ", not representable in ", Name(dtype), ": ", DoubleToBits(dtype, value).status().message()));
    }
    if (dst_bits % 8 == 0) {
      StoreLittleEndian(out.data() + i * (dst_bits / 8), dst_bits / 8, static_cast<uint32_t>(converted));
    } else {
      RETURN_IF_ERROR(StoreElementBits(dtype, out, i, static_cast<uint32_t>(converted)));
    }
  }
  return HostTensor::FromBytes(dtype, logical, std::move(out));
}

namespace {

absl::StatusOr<OwnedArrayImage> Relaid(const HostTensor& tensor, const Mapping& logical, std::vector<int64_t> shape,
                                       absl::string_view what) {
  ASSIGN_OR_RETURN(RelayoutPlan plan, RelayoutPlan::Make(logical, tensor.mapping()));
  ASSIGN_OR_RETURN(PackedStorage out, PackedStorage::Create(tensor.dtype(), logical.size()));
  const std::vector<uint8_t>& src = tensor.bytes();
  absl::Status copied = absl::OkStatus();
  absl::Status planned = plan.Run([&](absl::Span<const RelayoutRun> runs) {
    for (const RelayoutRun& run : runs) {
      for (int64_t i = 0; i < run.length && copied.ok(); ++i) {
        absl::StatusOr<uint32_t> bits = LoadElementBits(tensor.dtype(), src, run.src + i * run.src_stride);
        copied = bits.ok() ? out.SetBits(run.dst + i, *bits) : bits.status();
      }
    }
  });
  if (!planned.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("write: ", what, ": the tensor laid out by `",
                                                   tensor.mapping().ToString(), "` is not a layout of the axes `",
                                                   logical.ToString(), "`: ", planned.message()));
  }
  RETURN_IF_ERROR(copied);
  return OwnedArrayImage{tensor.dtype(), std::move(shape), out.TakeBytes()};
}

absl::StatusOr<std::vector<int64_t>> ShapeOfAxes(const Mapping& logical, absl::string_view what) {
  RETURN_IF_ERROR(logical.status());
  std::vector<int64_t> shape;
  if (logical.is_identity()) return shape;
  std::vector<Mapping> leaves;
  FlattenPairs(logical, leaves);
  for (const Mapping& leaf : leaves) {
    shape.push_back(leaf.kind() == Mapping::Kind::kSymbol ? leaf.axis().size : -1);
  }
  // DimensionAxes names what is wrong (a non-axis leaf has the impossible size -1).
  RETURN_IF_ERROR(DimensionAxes(logical, shape, what).status());
  return shape;
}

}  // namespace

absl::StatusOr<OwnedArrayImage> HostToImage(const HostTensor& tensor, const Mapping& logical,
                                            absl::string_view what) {
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, ShapeOfAxes(logical, what));
  if (tensor.mapping() == logical) return OwnedArrayImage{tensor.dtype(), std::move(shape), tensor.bytes()};
  return Relaid(tensor, logical, std::move(shape), what);
}

absl::StatusOr<OwnedArrayImage> HostToImage(HostTensor&& tensor, const Mapping& logical, absl::string_view what) {
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, ShapeOfAxes(logical, what));
  if (tensor.mapping() == logical) {
    DType dtype = tensor.dtype();
    return OwnedArrayImage{dtype, std::move(shape), std::move(tensor).TakeBytes()};
  }
  return Relaid(tensor, logical, std::move(shape), what);
}

absl::StatusOr<HbmTensor> ImageToHbm(Dma& pdma, const ArrayImage& image, const Mapping& logical, Address address,
                                     HbmLayout layout, const LoadOptions& options) {
  ASSIGN_OR_RETURN(HostTensor host, ImageToHost(image, logical, options.dtype.value_or(image.dtype)));
  if (!layout.element) layout.element = logical;
  absl::StatusOr<HbmTensor> hbm = host.to_hbm(pdma, address, layout);
  if (!hbm.ok()) {
    return absl::Status(hbm.status().code(),
                        absl::StrCat("load: ", image.what, " into HBM: ", hbm.status().message()));
  }
  return hbm;
}

absl::Status ImageInto(Dma& pdma, const ArrayImage& image, const Mapping& logical, const HbmTensor& dst,
                       const LoadOptions& options) {
  ASSIGN_OR_RETURN(std::vector<Axis> axes, DimensionAxes(logical, image.shape, image.what));
  DType dtype = options.dtype.value_or(image.dtype);
  if (dst.dtype() != dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "load into: ", image.what, " is loaded as ", Name(dtype), " but the destination ", dst.ToString(), " is ",
        Name(dst.dtype()), options.dtype ? "" : absl::StrCat("; set LoadOptions::dtype = ", Name(dst.dtype()),
                                                             " to convert the file's ", Name(image.dtype))));
  }
  // The destination's shape: its Element must name exactly the file's axes, at their sizes.
  std::vector<Axis> dst_axes = dst.element().symbols();
  auto shape_error = [&](absl::string_view problem) {
    return absl::InvalidArgumentError(absl::StrCat("load into: ", image.what, " has shape ", ShapeString(image.shape),
                                                   " as `", logical.ToString(), "`, not the destination's shape: ",
                                                   dst.ToString(), " ", problem));
  };
  for (const Axis& axis : axes) {
    auto found = std::find_if(dst_axes.begin(), dst_axes.end(),
                              [&](const Axis& a) { return a.name == axis.name && !a.skew && !a.shift; });
    if (found == dst_axes.end()) return shape_error(absl::StrCat("has no axis `", axis.name, "`"));
    if (found->size != axis.size) {
      return shape_error(absl::StrCat("has `", axis.name, "` of size ", found->size, ", the file ", axis.size));
    }
  }
  for (const std::string& name : dst.element().axis_names()) {
    bool known = std::any_of(axes.begin(), axes.end(), [&](const Axis& a) { return a.name == name; });
    if (!known) return shape_error(absl::StrCat("has axis `", name, "`, which the file's dimensions do not name"));
  }
  ASSIGN_OR_RETURN(HostTensor host, ImageToHost(image, logical, dtype));
  absl::Status moved = MoveInto(pdma, host, dst);
  if (!moved.ok()) {
    return absl::Status(moved.code(), absl::StrCat("load into: ", image.what, ": ", moved.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<OwnedArrayImage> HbmToImage(Dma& pdma, const HbmTensor& tensor, const Mapping& logical,
                                           absl::string_view what) {
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, ShapeOfAxes(logical, what));
  absl::StatusOr<HostTensor> host = tensor.to_host(pdma, logical);
  if (!host.ok()) {
    return absl::Status(host.status().code(),
                        absl::StrCat("write: ", what, ": reading ", tensor.ToString(), " back: ", host.status().message()));
  }
  return HostToImage(*std::move(host), logical, what);
}

}  // namespace visa
