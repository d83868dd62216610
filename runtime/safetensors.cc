// Safetensors: the header parser with every rule of the format, the loaders and the writer.
#include "runtime/safetensors.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/status_macros.h"
#include "nlohmann/json.hpp"
#include "runtime/closest_names.h"

namespace visa {
namespace {

using Json = nlohmann::ordered_json;

constexpr absl::string_view kMetadataKey = "__metadata__";

struct FormatDType {
  absl::string_view name;
  int bits;
  std::optional<DType> dtype;
};

// Every dtype name of the format, with its width; visa holds eight of them.
constexpr std::array<FormatDType, 19> kFormatDTypes = {{
    {"BOOL", 8, std::nullopt},
    {"U8", 8, std::nullopt},
    {"I8", 8, DType::kI8},
    {"U16", 16, std::nullopt},
    {"I16", 16, DType::kI16},
    {"F16", 16, DType::kF16},
    {"BF16", 16, DType::kBF16},
    {"U32", 32, std::nullopt},
    {"I32", 32, DType::kI32},
    {"F32", 32, DType::kF32},
    {"U64", 64, std::nullopt},
    {"I64", 64, std::nullopt},
    {"F64", 64, std::nullopt},
    {"F8_E4M3", 8, DType::kF8E4M3},
    {"F8_E5M2", 8, DType::kF8E5M2},
    {"F8_E8M0", 8, std::nullopt},
    {"F4", 4, std::nullopt},
    {"F6_E2M3", 6, std::nullopt},
    {"F6_E3M2", 6, std::nullopt},
}};

const FormatDType* FindFormatDType(absl::string_view name) {
  for (const FormatDType& d : kFormatDTypes) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::string KnownDTypeNames() {
  std::vector<absl::string_view> names;
  for (const FormatDType& d : kFormatDTypes) names.push_back(d.name);
  return absl::StrJoin(names, ", ");
}

// Every error of a file: "safetensors: file `m.safetensors`: RULE: details".
absl::Status FileError(absl::string_view label, absl::string_view rule, absl::string_view details) {
  return absl::InvalidArgumentError(absl::StrCat("safetensors: file `", label, "`: ", rule, ": ", details));
}

// A non-negative integer of the header (JSON numbers beyond int64 or with a fraction are refused).
std::optional<int64_t> NonNegativeInteger(const Json& value) {
  if (value.is_number_unsigned()) {
    uint64_t v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(v);
  }
  if (value.is_number_integer()) {
    int64_t v = value.get<int64_t>();
    if (v < 0) return std::nullopt;
    return v;
  }
  return std::nullopt;
}

// What the parse callback saw that the DOM no longer shows: duplicate keys (the DOM keeps one) and
// nesting deeper than the format's (discarded, so a hostile header builds no deep tree).
struct HeaderShape {
  std::set<std::string> names;
  std::set<std::string> fields;  // of the current top-level value
  std::string current;           // the current top-level key
  std::optional<std::string> duplicate;
  bool too_deep = false;
};

absl::StatusOr<Json> ParseHeaderJson(absl::string_view label, std::span<const uint8_t> header) {
  if (header.empty() || header[0] != '{') {
    return FileError(label, "header JSON", "the header must begin with `{` (a JSON object)");
  }
  HeaderShape shape;
  Json::parser_callback_t callback = [&shape](int depth, nlohmann::detail::parse_event_t event, Json& parsed) {
    using Event = nlohmann::detail::parse_event_t;
    if ((event == Event::object_start || event == Event::array_start) && depth >= 3) {
      shape.too_deep = true;
      return false;
    }
    if (event == Event::object_start && depth == 1) shape.fields.clear();
    if (event == Event::key && parsed.is_string()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (depth == 1) {
        shape.current = key;
        shape.fields.clear();
        if (!shape.names.insert(key).second && !shape.duplicate) {
          shape.duplicate = absl::StrCat("the name `", key, "` appears twice");
        }
      } else if (depth == 2 && !shape.fields.insert(key).second && !shape.duplicate) {
        shape.duplicate = absl::StrCat("the field `", key, "` appears twice in `", shape.current, "`");
      }
    }
    return true;
  };
  Json json;
  try {
    json = Json::parse(header.begin(), header.end(), callback);
  } catch (const Json::exception& e) {
    return FileError(label, "header JSON", e.what());
  }
  if (shape.duplicate) return FileError(label, "duplicate name", *shape.duplicate);
  if (shape.too_deep) {
    return FileError(label, "header JSON", "values nest deeper than the format's (tensor -> shape -> integer)");
  }
  if (!json.is_object()) return FileError(label, "header JSON", "the header is not a JSON object");
  return json;
}

absl::Status ParseMetadata(absl::string_view label, const Json& value,
                           std::vector<std::pair<std::string, std::string>>& metadata) {
  if (!value.is_object()) {
    return FileError(label, "metadata", "`__metadata__` must be an object of strings");
  }
  for (const auto& [key, text] : value.items()) {
    if (!text.is_string()) {
      return FileError(label, "metadata", absl::StrCat("`__metadata__` entry `", key, "` is not a string"));
    }
    metadata.emplace_back(key, text.get<std::string>());
  }
  return absl::OkStatus();
}

// The integers of `value` (an array), or an error naming the field.
absl::StatusOr<std::vector<int64_t>> IntegerList(absl::string_view label, const std::string& name,
                                                 absl::string_view field, const Json& value) {
  std::string where = absl::StrCat("tensor `", name, "` field `", field, "`");
  if (!value.is_array()) return FileError(label, field, absl::StrCat(where, " is not an array"));
  std::vector<int64_t> list;
  for (const Json& item : value) {
    std::optional<int64_t> v = NonNegativeInteger(item);
    if (!v) {
      return FileError(label, field, absl::StrCat(where, " holds `", item.dump(), "`, not an integer in [0, 2^63)"));
    }
    list.push_back(*v);
  }
  return list;
}

absl::StatusOr<SafetensorsEntry> ParseEntry(absl::string_view label, const std::string& name, const Json& value,
                                            int64_t data_size) {
  if (!value.is_object()) {
    return FileError(label, "tensor entry", absl::StrCat("`", name, "` is not an object"));
  }
  for (const auto& [field, ignored] : value.items()) {
    if (field != "dtype" && field != "shape" && field != "data_offsets") {
      return FileError(label, "tensor entry",
                       absl::StrCat("tensor `", name, "` has the unknown field `", field,
                                    "` (fields: dtype, shape, data_offsets)"));
    }
  }
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    if (!value.contains(field)) {
      return FileError(label, "tensor entry", absl::StrCat("tensor `", name, "` has no field `", field, "`"));
    }
  }
  SafetensorsEntry entry;
  entry.name = name;
  const Json& dtype = value["dtype"];
  if (!dtype.is_string()) return FileError(label, "dtype", absl::StrCat("tensor `", name, "` dtype is not a string"));
  entry.dtype_name = dtype.get<std::string>();
  const FormatDType* format = FindFormatDType(entry.dtype_name);
  if (format == nullptr) {
    return FileError(label, "dtype", absl::StrCat("tensor `", name, "` has the unknown dtype `", entry.dtype_name,
                                                  "` (the format's: ", KnownDTypeNames(), ")"));
  }
  entry.dtype = format->dtype;
  ASSIGN_OR_RETURN(entry.shape, IntegerList(label, name, "shape", value["shape"]));
  ASSIGN_OR_RETURN(std::vector<int64_t> offsets, IntegerList(label, name, "data_offsets", value["data_offsets"]));
  if (offsets.size() != 2 || offsets[0] > offsets[1]) {
    return FileError(label, "data_offsets", absl::StrCat("tensor `", name, "` data_offsets `",
                                                         value["data_offsets"].dump(), "` are not [BEGIN, END] with BEGIN <= END"));
  }
  entry.begin = offsets[0];
  entry.end = offsets[1];
  if (entry.end > data_size) {
    return FileError(label, "data_offsets out of range",
                     absl::StrCat("tensor `", name, "` data_offsets [", entry.begin, ", ", entry.end,
                                  "] pass the end of the ", data_size, "-byte data section"));
  }
  std::string what = absl::StrCat("tensor `", name, "`");
  absl::StatusOr<int64_t> count = ElementCount(entry.shape, what);
  if (!count.ok()) return FileError(label, "shape", count.status().message());
  int64_t bits = *count * format->bits;  // count <= 2^52, bits <= 64: no overflow
  if (bits % 8 != 0 || bits / 8 != entry.end - entry.begin) {
    return FileError(label, "shape and data_offsets",
                     absl::StrCat("tensor `", name, "` of shape ", ShapeString(entry.shape), " and dtype ",
                                  entry.dtype_name, " holds ", *count, " elements of ", format->bits,
                                  " bits, but its data_offsets [", entry.begin, ", ", entry.end, "] cover ",
                                  entry.end - entry.begin, " bytes"));
  }
  return entry;
}

// The tensors must tile the data section: sorted by offset, each begins where the last ended.
absl::Status CheckCoverage(absl::string_view label, const std::vector<SafetensorsEntry>& tensors, int64_t data_size) {
  std::vector<const SafetensorsEntry*> order;
  for (const SafetensorsEntry& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const SafetensorsEntry* a, const SafetensorsEntry* b) {
    return std::pair(a->begin, a->end) < std::pair(b->begin, b->end);
  });
  int64_t covered = 0;
  const SafetensorsEntry* previous = nullptr;
  for (const SafetensorsEntry* t : order) {
    if (t->begin < covered) {
      return FileError(label, "data_offsets overlap",
                       absl::StrCat("tensor `", t->name, "` [", t->begin, ", ", t->end, "] overlaps tensor `",
                                    previous->name, "` [", previous->begin, ", ", previous->end, "]"));
    }
    if (t->begin > covered) {
      return FileError(label, "data_offsets leave a gap",
                       absl::StrCat("bytes [", covered, ", ", t->begin, ") of the data section before tensor `",
                                    t->name, "` belong to no tensor"));
    }
    covered = t->end;
    previous = t;
  }
  if (covered != data_size) {
    return FileError(label, "data_offsets do not cover the data",
                     absl::StrCat("the tensors cover ", covered, " bytes of the ", data_size, "-byte data section"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> SafetensorsDTypeName(DType dtype) {
  for (const FormatDType& d : kFormatDTypes) {
    if (d.dtype == dtype) return std::string(d.name);
  }
  return absl::InvalidArgumentError(absl::StrCat("safetensors dtype: the format has no name for ", Name(dtype),
                                                 " (visa writes bf16, f16, f32, f8e4m3, f8e5m2, i8, i16, i32)"));
}

absl::StatusOr<SafetensorsFile> SafetensorsFile::Parse(std::span<const uint8_t> bytes, std::string label) {
  if (bytes.size() < 8) {
    return FileError(label, "truncated header",
                     absl::StrCat("the file has ", bytes.size(), " bytes, fewer than the 8 of the header length"));
  }
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | bytes[i];
  if (header_size > bytes.size() - 8) {
    return FileError(label, "header length beyond file",
                     absl::StrCat("the header length is ", header_size, " bytes but only ", bytes.size() - 8,
                                  " follow it"));
  }
  ASSIGN_OR_RETURN(Json json, ParseHeaderJson(label, bytes.subspan(8, header_size)));
  SafetensorsFile file;
  file.label_ = std::move(label);
  file.data_start_ = static_cast<int64_t>(8 + header_size);
  file.data_ = bytes.subspan(8 + header_size);
  int64_t data_size = static_cast<int64_t>(file.data_.size());
  for (const auto& [key, value] : json.items()) {
    if (key == kMetadataKey) {
      RETURN_IF_ERROR(ParseMetadata(file.label_, value, file.metadata_));
      continue;
    }
    ASSIGN_OR_RETURN(SafetensorsEntry entry, ParseEntry(file.label_, key, value, data_size));
    file.tensors_.push_back(std::move(entry));
  }
  RETURN_IF_ERROR(CheckCoverage(file.label_, file.tensors_, data_size));
  return file;
}

absl::StatusOr<SafetensorsFile> SafetensorsFile::Open(const std::string& path) {
  ASSIGN_OR_RETURN(MappedFile mapped, MappedFile::Open(path));
  ASSIGN_OR_RETURN(SafetensorsFile file, Parse(mapped.bytes(), path));
  file.file_ = std::move(mapped);
  return file;
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> names;
  for (const SafetensorsEntry& t : tensors_) names.push_back(t.name);
  return names;
}

absl::StatusOr<const SafetensorsEntry*> SafetensorsFile::Find(absl::string_view name) const {
  for (const SafetensorsEntry& t : tensors_) {
    if (t.name == name) return &t;
  }
  return absl::NotFoundError(absl::StrCat("safetensors: file `", label_, "`: no tensor named `", name, "` (",
                                          tensors_.size(), " tensors)", ClosestNamesHint(name, names())));
}

absl::StatusOr<ArrayImage> SafetensorsFile::Image(absl::string_view name) const {
  ASSIGN_OR_RETURN(const SafetensorsEntry* entry, Find(name));
  if (!entry->dtype) {
    return FileError(label_, "unsupported dtype",
                     absl::StrCat("tensor `", name, "` is ", entry->dtype_name,
                                  ", which visa does not hold (BF16, F16, F32, F8_E4M3, F8_E5M2, I8, I16, I32)"));
  }
  return ArrayImage{*entry->dtype, entry->shape,
                    data_.subspan(static_cast<size_t>(entry->begin), static_cast<size_t>(entry->end - entry->begin)),
                    absl::StrCat("tensor `", name, "` in file `", label_, "`")};
}

absl::StatusOr<HostTensor> SafetensorsFile::ToHost(absl::string_view name, const Mapping& logical,
                                                   const LoadOptions& options) const {
  ASSIGN_OR_RETURN(ArrayImage image, Image(name));
  return ImageToHost(image, logical, options.dtype.value_or(image.dtype));
}

absl::StatusOr<HbmTensor> SafetensorsFile::ToHbm(Dma& pdma, absl::string_view name, const Mapping& logical,
                                                 Address address, HbmLayout layout,
                                                 const LoadOptions& options) const {
  ASSIGN_OR_RETURN(ArrayImage image, Image(name));
  return ImageToHbm(pdma, image, logical, address, std::move(layout), options);
}

absl::Status SafetensorsFile::LoadInto(Dma& pdma, absl::string_view name, const Mapping& logical,
                                       const HbmTensor& dst, const LoadOptions& options) const {
  ASSIGN_OR_RETURN(ArrayImage image, Image(name));
  return ImageInto(pdma, image, logical, dst, options);
}

// ---- Writer ------------------------------------------------------------------------------------

namespace {

// JSON strings are UTF-8: a name or metadata text that is not would not read back as written.
absl::Status CheckUtf8(absl::string_view what, const std::string& text) {
  try {
    (void)Json(text).dump();
  } catch (const Json::exception&) {
    return absl::InvalidArgumentError(absl::StrCat("safetensors write: the ", what, " is not valid UTF-8"));
  }
  return absl::OkStatus();
}

absl::Status CheckNewName(const std::vector<std::pair<std::string, OwnedArrayImage>>& tensors,
                          const std::string& name) {
  RETURN_IF_ERROR(CheckUtf8(absl::StrCat("tensor name `", name, "`"), name));
  if (name == kMetadataKey) {
    return absl::InvalidArgumentError("safetensors write: `__metadata__` is the format's metadata key, not a tensor name");
  }
  for (const auto& [added, image] : tensors) {
    if (added == name) {
      return absl::InvalidArgumentError(absl::StrCat("safetensors write: duplicate name: `", name, "` was added before"));
    }
  }
  return absl::OkStatus();
}

std::string WriteWhat(const std::string& name) { return absl::StrCat("safetensors tensor `", name, "`"); }

}  // namespace

absl::Status SafetensorsWriter::AddImage(std::string name, absl::StatusOr<OwnedArrayImage> image) {
  RETURN_IF_ERROR(image.status());
  RETURN_IF_ERROR(SafetensorsDTypeName(image->dtype).status());
  tensors_.emplace_back(std::move(name), *std::move(image));
  return absl::OkStatus();
}

absl::Status SafetensorsWriter::Add(std::string name, const HostTensor& tensor, const Mapping& logical) {
  RETURN_IF_ERROR(CheckNewName(tensors_, name));
  RETURN_IF_ERROR(SafetensorsDTypeName(tensor.dtype()).status());
  return AddImage(name, HostToImage(tensor, logical, WriteWhat(name)));
}

absl::Status SafetensorsWriter::Add(std::string name, HostTensor&& tensor, const Mapping& logical) {
  RETURN_IF_ERROR(CheckNewName(tensors_, name));
  RETURN_IF_ERROR(SafetensorsDTypeName(tensor.dtype()).status());
  return AddImage(name, HostToImage(std::move(tensor), logical, WriteWhat(name)));
}

absl::Status SafetensorsWriter::Add(Dma& pdma, std::string name, const HbmTensor& tensor, const Mapping& logical) {
  RETURN_IF_ERROR(CheckNewName(tensors_, name));
  RETURN_IF_ERROR(SafetensorsDTypeName(tensor.dtype()).status());
  return AddImage(name, HbmToImage(pdma, tensor, logical, WriteWhat(name)));
}

absl::Status SafetensorsWriter::SetMetadata(std::string key, std::string value) {
  RETURN_IF_ERROR(CheckUtf8("metadata key", key));
  RETURN_IF_ERROR(CheckUtf8(absl::StrCat("metadata value of `", key, "`"), value));
  for (auto& [k, v] : metadata_) {
    if (k == key) {
      v = std::move(value);
      return absl::OkStatus();
    }
  }
  metadata_.emplace_back(std::move(key), std::move(value));
  return absl::OkStatus();
}

std::string SafetensorsWriter::Header() const {
  Json header = Json::object();
  if (!metadata_.empty()) {
    Json metadata = Json::object();
    for (const auto& [key, value] : metadata_) metadata[key] = value;
    header[std::string(kMetadataKey)] = std::move(metadata);
  }
  int64_t offset = 0;
  for (const auto& [name, image] : tensors_) {
    int64_t size = static_cast<int64_t>(image.bytes.size());
    header[name] = {{"dtype", *SafetensorsDTypeName(image.dtype)},
                    {"shape", image.shape},
                    {"data_offsets", {offset, offset + size}}};
    offset += size;
  }
  // Add and SetMetadata refused invalid UTF-8; `replace` only keeps dump from ever throwing.
  std::string text = header.dump(-1, ' ', false, Json::error_handler_t::replace);
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

void SafetensorsWriter::WriteTo(std::ostream& out) const {
  std::string header = Header();
  uint64_t size = header.size();
  char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<char>((size >> (8 * i)) & 0xff);
  out.write(length, 8);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (const auto& [name, image] : tensors_) {
    out.write(reinterpret_cast<const char*>(image.bytes.data()), static_cast<std::streamsize>(image.bytes.size()));
  }
}

absl::Status SafetensorsWriter::Write(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::PermissionDeniedError(absl::StrCat("safetensors write: cannot open `", path, "` for writing"));
  WriteTo(out);
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("safetensors write: writing `", path, "` failed"));
  return absl::OkStatus();
}

std::vector<uint8_t> SafetensorsWriter::Bytes() const {
  std::ostringstream out(std::ios::binary);
  WriteTo(out);
  std::string s = std::move(out).str();
  return std::vector<uint8_t>(s.begin(), s.end());
}

}  // namespace visa
