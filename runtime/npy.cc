// Npy: the header parser (a small reader of the Python dict literal NumPy writes), the loaders and
// the writer.
#include "runtime/npy.h"

#include <array>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

// Every error of a file: "npy: file `a.npy`: RULE: details".
absl::Status FileError(absl::string_view label, absl::string_view rule, absl::string_view details) {
  return absl::InvalidArgumentError(absl::StrCat("npy: file `", label, "`: ", rule, ": ", details));
}

struct NpyDType {
  absl::string_view descr;
  int bytes;
  std::optional<DType> dtype;  // none: raw 16 bits, bf16 only on request
};

constexpr std::array<NpyDType, 8> kNpyDTypes = {{
    {"<f4", 4, DType::kF32},
    {"<f2", 2, DType::kF16},
    {"|i1", 1, DType::kI8},
    {"<i1", 1, DType::kI8},
    {"<i2", 2, DType::kI16},
    {"<i4", 4, DType::kI32},
    {"<u2", 2, std::nullopt},
    {"|V2", 2, std::nullopt},
}};

const NpyDType* FindNpyDType(absl::string_view descr) {
  for (const NpyDType& d : kNpyDTypes) {
    if (d.descr == descr) return &d;
  }
  return nullptr;
}

// The header's Python literal: a dict of strings to strings, booleans and tuples of integers.
struct HeaderValue {
  enum class Kind { kString, kBool, kTuple } kind = Kind::kString;
  std::string text;
  bool flag = false;
  std::vector<int64_t> numbers;
};

class HeaderReader {
 public:
  explicit HeaderReader(absl::string_view text) : text_(text) {}

  // The dict's entries in order, or the rule the text breaks and where.
  absl::StatusOr<std::vector<std::pair<std::string, HeaderValue>>> ReadDict() {
    std::vector<std::pair<std::string, HeaderValue>> entries;
    SkipSpace();
    RETURN_IF_ERROR(Expect('{', "the header must be a dict literal starting with `{`"));
    SkipSpace();
    while (!Peek('}')) {
      ASSIGN_OR_RETURN(std::string key, ReadString());
      SkipSpace();
      RETURN_IF_ERROR(Expect(':', "a `:` after the key"));
      SkipSpace();
      ASSIGN_OR_RETURN(HeaderValue value, ReadValue());
      entries.emplace_back(std::move(key), std::move(value));
      SkipSpace();
      if (Peek(',')) {
        ++pos_;
        SkipSpace();
      } else if (!Peek('}')) {
        return Error("a `,` or `}` after a value");
      }
    }
    ++pos_;
    SkipSpace();
    if (pos_ != text_.size()) return Error("nothing but spaces and a newline after the dict");
    return entries;
  }

 private:
  bool Peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  absl::Status Error(absl::string_view expected) const {
    return absl::InvalidArgumentError(absl::StrCat("expected ", expected, " at byte ", pos_, " of the header"));
  }
  absl::Status Expect(char c, absl::string_view expected) {
    if (!Peek(c)) return Error(expected);
    ++pos_;
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> ReadString() {
    if (!Peek('\'') && !Peek('"')) return Error("a quoted string");
    char quote = text_[pos_++];
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') return Error("a string without escapes");
      ++pos_;
    }
    if (pos_ == text_.size()) return Error("the string's closing quote");
    return std::string(text_.substr(start, pos_++ - start));
  }

  bool ReadWord(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  absl::StatusOr<int64_t> ReadInteger() {
    size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      int digit = text_[pos_] - '0';
      if (value > (INT64_MAX - digit) / 10) return Error("an integer below 2^63");
      value = value * 10 + digit;
      ++pos_;
    }
    if (pos_ == start) return Error("a non-negative integer");
    if (Peek('L')) ++pos_;  // Python 2 long literals, as old NumPy wrote them
    return value;
  }

  absl::StatusOr<HeaderValue> ReadTuple() {
    HeaderValue value;
    value.kind = HeaderValue::Kind::kTuple;
    ++pos_;  // '('
    SkipSpace();
    bool trailing_comma = false;
    while (!Peek(')')) {
      ASSIGN_OR_RETURN(int64_t n, ReadInteger());
      value.numbers.push_back(n);
      SkipSpace();
      trailing_comma = Peek(',');
      if (trailing_comma) {
        ++pos_;
        SkipSpace();
      } else if (!Peek(')')) {
        return Error("a `,` or `)` in the tuple");
      }
    }
    if (value.numbers.size() == 1 && !trailing_comma) {
      return Error("`(n,)`: a one-element tuple has a trailing comma (`(n)` is an integer in Python)");
    }
    ++pos_;
    return value;
  }

  absl::StatusOr<HeaderValue> ReadValue() {
    HeaderValue value;
    if (Peek('\'') || Peek('"')) {
      ASSIGN_OR_RETURN(value.text, ReadString());
      return value;
    }
    if (Peek('(')) return ReadTuple();
    value.kind = HeaderValue::Kind::kBool;
    if (ReadWord("True")) {
      value.flag = true;
      return value;
    }
    if (ReadWord("False")) return value;
    return Error("a string, True, False or a tuple of integers");
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

uint64_t LittleEndian(std::span<const uint8_t> bytes) {
  uint64_t value = 0;
  for (size_t i = bytes.size(); i > 0; --i) value = (value << 8) | bytes[i - 1];
  return value;
}

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

absl::StatusOr<Header> ReadHeader(absl::string_view label, absl::string_view text) {
  absl::StatusOr<std::vector<std::pair<std::string, HeaderValue>>> entries = HeaderReader(text).ReadDict();
  if (!entries.ok()) return FileError(label, "header dict", entries.status().message());
  Header header;
  bool seen[3] = {false, false, false};
  for (const auto& [key, value] : *entries) {
    int index = key == "descr" ? 0 : key == "fortran_order" ? 1 : key == "shape" ? 2 : -1;
    if (index < 0) {
      return FileError(label, "header dict",
                       absl::StrCat("unknown key `", key, "` (the keys are descr, fortran_order, shape)"));
    }
    if (seen[index]) return FileError(label, "header dict", absl::StrCat("the key `", key, "` appears twice"));
    seen[index] = true;
    HeaderValue::Kind expected = index == 0 ? HeaderValue::Kind::kString
                                 : index == 1 ? HeaderValue::Kind::kBool
                                              : HeaderValue::Kind::kTuple;
    if (value.kind != expected) {
      return FileError(label, key, absl::StrCat("`", key, "` must be ",
                                                index == 0 ? "a string" : index == 1 ? "True or False" : "a tuple of integers"));
    }
    if (index == 0) header.descr = value.text;
    if (index == 1) header.fortran_order = value.flag;
    if (index == 2) header.shape = value.numbers;
  }
  for (int i = 0; i < 3; ++i) {
    if (!seen[i]) {
      return FileError(label, "header dict",
                       absl::StrCat("the key `", i == 0 ? "descr" : i == 1 ? "fortran_order" : "shape", "` is missing"));
    }
  }
  return header;
}

absl::Status CheckDescr(absl::string_view label, absl::string_view descr) {
  if (FindNpyDType(descr) != nullptr) return absl::OkStatus();
  if (!descr.empty() && descr[0] == '>') {
    return FileError(label, "dtype", absl::StrCat("descr `", descr, "` is big-endian; visa reads little-endian ('<')"));
  }
  return FileError(label, "dtype",
                   absl::StrCat("unknown descr `", descr,
                                "` (visa reads '<f4', '<f2', '|i1', '<i1', '<i2', '<i4', and bf16 as '<u2' or '|V2')"));
}

}  // namespace

absl::StatusOr<NpyFile> NpyFile::Parse(std::span<const uint8_t> bytes, std::string label) {
  if (bytes.size() < kMagicSize || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0) {
    return FileError(label, "magic", "the file does not begin with `\\x93NUMPY`");
  }
  if (bytes.size() < kMagicSize + 2) {
    return FileError(label, "truncated header", absl::StrCat("the file ends at byte ", bytes.size(), " in the version"));
  }
  int major = bytes[6];
  int minor = bytes[7];
  if ((major != 1 && major != 2) || minor != 0) {
    return FileError(label, "version", absl::StrCat("version ", major, ".", minor, " is not supported (1.0 and 2.0 are)"));
  }
  size_t length_size = major == 1 ? 2 : 4;
  size_t prefix = kMagicSize + 2 + length_size;
  if (bytes.size() < prefix) {
    return FileError(label, "truncated header",
                     absl::StrCat("the file has ", bytes.size(), " bytes, fewer than the ", prefix,
                                  " of magic, version and header length"));
  }
  uint64_t header_size = LittleEndian(bytes.subspan(kMagicSize + 2, length_size));
  if (header_size > bytes.size() - prefix) {
    return FileError(label, "header length beyond file",
                     absl::StrCat("the header length is ", header_size, " bytes but only ", bytes.size() - prefix,
                                  " follow it"));
  }
  absl::string_view text(reinterpret_cast<const char*>(bytes.data() + prefix), header_size);
  ASSIGN_OR_RETURN(Header header, ReadHeader(label, text));
  if (header.fortran_order) {
    return FileError(label, "fortran_order",
                     "fortran_order is True (column-major data); visa reads C order only (save "
                     "np.ascontiguousarray(a))");
  }
  RETURN_IF_ERROR(CheckDescr(label, header.descr));
  absl::StatusOr<int64_t> count = ElementCount(header.shape, "the array");
  if (!count.ok()) return FileError(label, "shape", count.status().message());
  NpyFile file;
  file.data_start_ = static_cast<int64_t>(prefix + header_size);
  file.data_ = bytes.subspan(prefix + header_size);
  int64_t needed = *count * FindNpyDType(header.descr)->bytes;
  if (needed != static_cast<int64_t>(file.data_.size())) {
    return FileError(label, "shape and data size",
                     absl::StrCat("shape ", ShapeString(header.shape), " of `", header.descr, "` needs ", needed,
                                  " bytes of data, the file holds ", file.data_.size()));
  }
  file.label_ = std::move(label);
  file.major_version_ = major;
  file.descr_ = std::move(header.descr);
  file.shape_ = std::move(header.shape);
  return file;
}

absl::StatusOr<NpyFile> NpyFile::Open(const std::string& path) {
  ASSIGN_OR_RETURN(MappedFile mapped, MappedFile::Open(path));
  ASSIGN_OR_RETURN(NpyFile file, Parse(mapped.bytes(), path));
  file.file_ = std::move(mapped);
  return file;
}

absl::StatusOr<ArrayImage> NpyFile::Image(const LoadOptions& options) const {
  const NpyDType* format = FindNpyDType(descr_);
  std::string what = absl::StrCat("the array in file `", label_, "`");
  if (format->dtype) return ArrayImage{*format->dtype, shape_, data_, what};
  if (options.dtype == DType::kBF16) return ArrayImage{DType::kBF16, shape_, data_, what};
  return FileError(label_, "dtype",
                   absl::StrCat("descr `", descr_, "` holds raw 16-bit patterns, which visa reads only as bf16: "
                                "set LoadOptions::dtype = bf16 (visa has no unsigned 16-bit type)"));
}

absl::StatusOr<HostTensor> NpyFile::ToHost(const Mapping& logical, const LoadOptions& options) const {
  ASSIGN_OR_RETURN(ArrayImage image, Image(options));
  return ImageToHost(image, logical, options.dtype.value_or(image.dtype));
}

absl::StatusOr<HbmTensor> NpyFile::ToHbm(Dma& pdma, const Mapping& logical, Address address, HbmLayout layout,
                                         const LoadOptions& options) const {
  ASSIGN_OR_RETURN(ArrayImage image, Image(options));
  return ImageToHbm(pdma, image, logical, address, std::move(layout), options);
}

absl::Status NpyFile::LoadInto(Dma& pdma, const Mapping& logical, const HbmTensor& dst,
                               const LoadOptions& options) const {
  ASSIGN_OR_RETURN(ArrayImage image, Image(options));
  return ImageInto(pdma, image, logical, dst, options);
}

// ---- Writer ------------------------------------------------------------------------------------

absl::StatusOr<std::string> NpyDescr(DType dtype) {
  switch (dtype) {
    case DType::kF32: return std::string("<f4");
    case DType::kF16: return std::string("<f2");
    case DType::kI8: return std::string("|i1");
    case DType::kI16: return std::string("<i2");
    case DType::kI32: return std::string("<i4");
    case DType::kBF16: return std::string("<u2");
    default:
      return absl::InvalidArgumentError(absl::StrCat("npy write: no descr for ", Name(dtype),
                                                     " (visa writes f32, f16, i8, i16, i32, and bf16 as '<u2')"));
  }
}

namespace {

std::string ShapeTuple(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return absl::StrCat("(", shape[0], ",)");
  return absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
}

// Magic, version, length and the padded header, so that the data starts at a multiple of 64.
std::string Preamble(const std::string& descr, const std::vector<int64_t>& shape) {
  std::string dict = absl::StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': ", ShapeTuple(shape), ", }");
  for (int major : {1, 2}) {
    size_t length_size = major == 1 ? 2 : 4;
    size_t prefix = kMagicSize + 2 + length_size;
    size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
    size_t header_size = total - prefix;
    if (major == 1 && header_size > 0xffff) continue;
    std::string out(kMagic, kMagicSize);
    out.push_back(static_cast<char>(major));
    out.push_back(0);
    for (size_t i = 0; i < length_size; ++i) out.push_back(static_cast<char>((header_size >> (8 * i)) & 0xff));
    out += dict;
    out.append(header_size - dict.size() - 1, ' ');
    out.push_back('\n');
    return out;
  }
  return "";  // unreachable: a version 2.0 length holds any header
}

absl::Status WriteImage(std::ostream& out, const OwnedArrayImage& image) {
  ASSIGN_OR_RETURN(std::string descr, NpyDescr(image.dtype));
  std::string preamble = Preamble(descr, image.shape);
  out.write(preamble.data(), static_cast<std::streamsize>(preamble.size()));
  out.write(reinterpret_cast<const char*>(image.bytes.data()), static_cast<std::streamsize>(image.bytes.size()));
  return absl::OkStatus();
}

absl::Status WriteImageTo(const std::string& path, const OwnedArrayImage& image) {
  RETURN_IF_ERROR(NpyDescr(image.dtype).status());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::PermissionDeniedError(absl::StrCat("npy write: cannot open `", path, "` for writing"));
  RETURN_IF_ERROR(WriteImage(out, image));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("npy write: writing `", path, "` failed"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<uint8_t>> NpyBytes(const HostTensor& tensor, const Mapping& logical) {
  RETURN_IF_ERROR(NpyDescr(tensor.dtype()).status());
  ASSIGN_OR_RETURN(OwnedArrayImage image, HostToImage(tensor, logical, "the npy array"));
  std::ostringstream out(std::ios::binary);
  RETURN_IF_ERROR(WriteImage(out, image));
  std::string s = std::move(out).str();
  return std::vector<uint8_t>(s.begin(), s.end());
}

absl::Status WriteNpy(const std::string& path, const HostTensor& tensor, const Mapping& logical) {
  RETURN_IF_ERROR(NpyDescr(tensor.dtype()).status());
  ASSIGN_OR_RETURN(OwnedArrayImage image, HostToImage(tensor, logical, absl::StrCat("npy array `", path, "`")));
  return WriteImageTo(path, image);
}

absl::Status WriteNpy(Dma& pdma, const std::string& path, const HbmTensor& tensor, const Mapping& logical) {
  RETURN_IF_ERROR(NpyDescr(tensor.dtype()).status());
  ASSIGN_OR_RETURN(OwnedArrayImage image, HbmToImage(pdma, tensor, logical, absl::StrCat("npy array `", path, "`")));
  return WriteImageTo(path, image);
}

}  // namespace visa
