// Memset on the sub context (manual, Commit Engine > Sub-Context Operations, "Generate Mode": the
// sub context writes 32-bit values to DM addresses through ITOS, immediate-to-SRAM, commands,
// bypassing the Tensor Unit pipeline; notes, engine-semantics 5.2: `DmTensorViewMut::memset(value,
// &mut sub)` fills the live cells of a DM view with `value`, whole view only, sub context only).
//
// This module holds the fill as the IR records it and the rules that need no device: the context,
// the element type (every byte-sized type and i4; not the i5 / i9 staging types, which never sit in
// memory) and the value (written as it is: it must be exactly representable, never rounded or
// wrapped). The placement rules (DM view, 32-bit word alignment) are checked in runtime/memset.cc.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "dsl/dtype.h"
#include "dsl/stream.h"

namespace visa {

// One ITOS command writes this many bytes.
inline constexpr int64_t kItosWordBytes = 4;

struct MemsetFill {
  DType dtype = DType::kI8;
  double value = 0;
  uint32_t bits = 0;        // the element's raw pattern
  uint32_t word = 0;        // the 32-bit ITOS value: the pattern repeated over the word
  int64_t words_per_slice = 0;  // ITOS commands per slice: the view's bytes in one unit / 4
  int64_t slices = 0;           // units (slices) the view covers; they run in parallel

  // "memset i8 = 7 (pattern 0x07, ITOS word 0x07070707): 16 words per slice x 512 slices"
  std::string Describe() const;
  bool operator==(const MemsetFill&) const = default;
};

// Checks a memset of `value` into `dtype` cells from `context` and derives its patterns (the word
// counts are filled in by the caller, which knows the view). Errors name rule "Generate Mode".
absl::StatusOr<MemsetFill> PlanMemsetFill(ContextKind context, DType dtype, double value);

}  // namespace visa
