// libFuzzer target: arbitrary bytes as a `.safetensors` file and as a `.npy` file. Each parse must
// end in a file or a clean Status; a file that parses must load every tensor it lists (or refuse
// it with a Status), as its own dtype and converted to bf16, and a loaded tensor must write back
// to the bytes it was read from. A crash, an abort or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/mapping_parser.h"
#include "runtime/npy.h"
#include "runtime/safetensors.h"

namespace visa {
namespace {

constexpr int64_t kMaxLoadedElements = 1 << 12;  // keeps one input in milliseconds

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "weights_files_fuzz: %s\n  %s\n", what, detail.c_str());
  std::abort();
}

// Axes D0, D1, ... of the shape's sizes and the list `D0, D1, ...`; none for a shape an axis
// cannot have (a zero dimension) or too large to load quickly.
std::optional<std::pair<MappingScope, Mapping>> AxesFor(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  std::vector<std::string> declarations, names;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 1 || shape[d] > kMaxLoadedElements) return std::nullopt;
    count *= shape[d];
    if (count > kMaxLoadedElements) return std::nullopt;
    names.push_back(absl::StrCat("D", d));
    declarations.push_back(absl::StrCat(names.back(), " = ", shape[d]));
  }
  absl::StatusOr<MappingScope> scope = MappingScope::Parse(absl::StrJoin(declarations, ", "));
  if (!scope.ok()) Fail("the axes of a parsed shape do not declare", scope.status().ToString());
  Mapping logical = names.empty() ? Mapping() : scope->m(absl::StrJoin(names, ", "));
  return std::make_pair(*std::move(scope), logical);
}

void CheckImage(const ArrayImage& image, const HostTensor& host, const Mapping& logical) {
  absl::StatusOr<OwnedArrayImage> back = HostToImage(host, logical, "fuzz");
  if (!back.ok()) Fail("a loaded tensor does not write back", back.status().ToString());
  if (!std::equal(back->bytes.begin(), back->bytes.end(), image.bytes.begin(), image.bytes.end())) {
    Fail("a loaded tensor writes back other bytes", image.what);
  }
}

void LoadEvery(const SafetensorsFile& file) {
  for (const SafetensorsEntry& entry : file.tensors()) {
    auto axes = AxesFor(entry.shape);
    if (!axes) continue;
    absl::StatusOr<ArrayImage> image = file.Image(entry.name);
    absl::StatusOr<HostTensor> host = file.ToHost(entry.name, axes->second);
    if (image.ok() != host.ok()) Fail("Image and ToHost disagree", entry.name);
    if (host.ok()) CheckImage(*image, *host, axes->second);
    (void)file.ToHost(entry.name, axes->second, {.dtype = DType::kBF16});
  }
  (void)file.Find("no such tensor");
}

void LoadEvery(const NpyFile& file) {
  auto axes = AxesFor(file.shape());
  if (!axes) return;
  absl::StatusOr<ArrayImage> image = file.Image();
  absl::StatusOr<HostTensor> host = file.ToHost(axes->second);
  if (image.ok() != host.ok()) Fail("Image and ToHost disagree", file.descr());
  if (host.ok()) CheckImage(*image, *host, axes->second);
  (void)file.ToHost(axes->second, {.dtype = DType::kBF16});
}

}  // namespace
}  // namespace visa

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  absl::StatusOr<visa::SafetensorsFile> safetensors = visa::SafetensorsFile::Parse(bytes, "fuzz.safetensors");
  if (safetensors.ok()) visa::LoadEvery(*safetensors);
  absl::StatusOr<visa::NpyFile> npy = visa::NpyFile::Parse(bytes, "fuzz.npy");
  if (npy.ok()) visa::LoadEvery(*npy);
  return 0;
}
