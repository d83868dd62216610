// Element positions in packed host buffers, for the IndirectLoop's host-side steps (row copies,
// a stream chunk that starts inside a byte, masked positions): 4-bit elements pack two to a byte,
// element 2k in the low nibble of byte k, so a copy that starts inside a byte moves nibbles.
#pragma once

#include <cstdint>

namespace visa::jit {

// Copies `count` elements of `bits` bits from position `from` of `src` to position `to` of `dst`:
// one memcpy when both start on a byte boundary, else nibble by nibble (4-bit elements only).
void CopyPositions(int bits, uint8_t* dst, int64_t to, const uint8_t* src, int64_t from, int64_t count);

// Stores the low `bits` bits of `value` at `position`.
void SetPosition(int bits, uint8_t* data, int64_t position, uint32_t value);

}  // namespace visa::jit
