// The JIT's memset: the pattern image and the compiled move into DM.
#include "jit/fill_kernel.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "jit/element_op.h"
#include "jit/in_place.h"
#include "runtime/packed_storage.h"

namespace visa::jit {
namespace {

// Every position of `layout` holding the pattern: the ITOS word's bytes repeated (an element's
// bytes divide the word; a 4-bit pattern fills both nibbles). One buffer per thread, kept: the
// image of a view's full mapping is often hundreds of KiB, and a fresh allocation of that size
// is fresh pages, whose faults cost more than the fill (171 us for a 256-byte memset).
const std::vector<uint8_t>& PatternImage(const MemsetFill& fill, const Mapping& layout) {
  thread_local std::vector<uint8_t> bytes;
  bytes.resize(static_cast<size_t>(StorageBytes(fill.dtype, layout.size())));
  const size_t words = bytes.size() / 4;
  const uint32_t word = static_cast<uint32_t>(fill.word);
  for (size_t w = 0; w < words; ++w) std::memcpy(bytes.data() + 4 * w, &word, 4);
  for (size_t i = 4 * words; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(fill.word >> (8 * (i % 4)));
  return bytes;
}

absl::StatusOr<Mapping> Destination(const DeviceTensor& view) {
  std::optional<Mapping> layout = InPlaceLayout(view);
  if (!layout) {
    return absl::UnimplementedError(absl::StrCat("JIT: memset of ", view.ToString(),
                                                 ", which is not addressable in place"));
  }
  return *layout;
}

}  // namespace

absl::Status RunFill(KernelCache& kernels, const MemsetFill& fill, const DeviceTensor& view) {
  std::optional<InPlace> to = InPlaceOf(view);
  if (!to) RETURN_IF_ERROR(Destination(view).status());
  const Mapping source = view.full_mapping();
  const std::vector<uint8_t>& pattern = PatternImage(fill, source);
  return kernels.Move(to->layout, source, CopyOp(fill.dtype), to->data, to->positions, pattern.data(),
                      source.size(), /*allow_drop=*/false)
      .status();
}

absl::Status PrepareFill(KernelCache& kernels, const MemsetFill& fill, const DeviceTensor& view) {
  ASSIGN_OR_RETURN(Mapping layout, Destination(view));
  return kernels.Compile(layout, view.full_mapping(), CopyOp(fill.dtype), /*allow_drop=*/false);
}

}  // namespace visa::jit
