// The memset fill's rules and patterns (Commit Engine > Sub-Context Operations, Generate Mode).
#include "dsl/memset_fill.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "dsl/engine_errors.h"
#include "dsl/scalar_convert.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

constexpr char kRule[] = " (manual, Commit Engine > Sub-Context Operations, \"Generate Mode\")";

bool Fillable(DType dtype) { return dtype != DType::kI5 && dtype != DType::kI9; }

// The element pattern repeated over one 32-bit word (4-bit patterns fill both nibbles of a byte).
uint32_t WordOf(DType dtype, uint32_t bits) {
  const int width = Bits(dtype);
  uint32_t word = 0;
  for (int shift = 0; shift < 32; shift += width) word |= bits << shift;
  return word;
}

}  // namespace

std::string MemsetFill::Describe() const {
  return absl::StrFormat("memset %s = %s (pattern 0x%0*x, ITOS word 0x%08x): %d words per slice x %d slices",
                         std::string(Name(dtype)), absl::StrCat(value), std::max(1, Bits(dtype) / 4), bits, word,
                         words_per_slice, slices);
}

absl::StatusOr<MemsetFill> PlanMemsetFill(ContextKind context, DType dtype, double value) {
  if (context != ContextKind::kSub) {
    return EngineError("memset", "Generate Mode runs on the sub context only (the main context's Commit Engine "
                       "has no ITOS commands); call ctx.sub.memset", kRule);
  }
  if (!Fillable(dtype)) {
    return EngineError("memset", "cannot fill ", Name(dtype), " cells: ", Name(dtype),
                       " is a staging type of zero-point subtraction that never sits in memory", kRule);
  }
  absl::StatusOr<uint32_t> bits = DoubleToBits(dtype, value);
  const bool exact = bits.ok() && (std::isnan(value) ? std::isnan(BitsToDouble(dtype, *bits))
                                                     : BitsToDouble(dtype, *bits) == value);
  if (!exact) {
    return EngineError("memset", "the value ", value, " is not a ", Name(dtype),
                       " value; memset writes its value as it is (never rounded or wrapped)", kRule);
  }
  MemsetFill fill;
  fill.dtype = dtype;
  fill.value = value;
  fill.bits = *bits;
  fill.word = WordOf(dtype, *bits);
  return fill;
}

}  // namespace visa
