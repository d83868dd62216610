// The Vector Engine's NaN-payload rule for its binary and ternary float ops, one function both
// backends' scalar code calls (the JIT emits the same selects inline, jit/vector_kernel.cc).
//
// The rule (decided here; the manual and the reference notes are silent on payloads): when an
// operand of AddF, SubF, MulF, DivF, FmaF, MaskMulF, MaskFmaF, Clip Add, FpDiv or an f32
// reduction is a NaN, the result is the first NaN operand in argument order (a, then b, then c),
// with its quiet bit set; sign and payload are kept. An invalid operation on non-NaN operands
// (inf - inf, 0 x inf, 0 / 0) gives the host's default NaN, the same on both backends. Without
// the rule the result would depend on which operand the compiler put first: IEEE leaves the
// choice open, x86 takes its instruction's first source, and LLVM and the host compiler may both
// commute an fadd or fmul.
#pragma once

#include <bit>
#include <cstdint>
#include <initializer_list>

namespace visa {

inline constexpr uint32_t kF32QuietBit = 0x00400000u;

constexpr bool IsNanBits(uint32_t bits) { return (bits & 0x7fffffffu) > 0x7f800000u; }

// `result` of an arithmetic op over `operands` (its bits), with the rule above applied.
constexpr uint32_t WithNanPayload(uint32_t result, std::initializer_list<uint32_t> operands) {
  for (uint32_t operand : operands) {
    if (IsNanBits(operand)) return operand | kF32QuietBit;
  }
  return result;
}

inline float WithNanPayload(float result, std::initializer_list<float> operands) {
  for (float operand : operands) {
    const uint32_t bits = std::bit_cast<uint32_t>(operand);
    if (IsNanBits(bits)) return std::bit_cast<float>(bits | kF32QuietBit);
  }
  return result;
}

}  // namespace visa
