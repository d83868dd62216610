// Packed element positions: byte-aligned copies as memcpy, the rest nibble by nibble.
#include "jit/indirect_positions.h"

#include <cstring>

#include "dsl/status_macros.h"

namespace visa::jit {
namespace {

uint32_t Nibble(const uint8_t* data, int64_t position) {
  const uint8_t byte = data[position / 2];
  return position % 2 == 0 ? (byte & 0x0fu) : (byte >> 4);
}

}  // namespace

void CopyPositions(int bits, uint8_t* dst, int64_t to, const uint8_t* src, int64_t from, int64_t count) {
  if (count <= 0) return;
  if ((to * bits) % 8 == 0 && (from * bits) % 8 == 0 && (count * bits) % 8 == 0) {
    std::memcpy(dst + to * bits / 8, src + from * bits / 8, static_cast<size_t>(count * bits / 8));
    return;
  }
  VISA_CHECK(bits == 4, "only 4-bit elements start inside a byte");
  for (int64_t i = 0; i < count; ++i) SetPosition(4, dst, to + i, Nibble(src, from + i));
}

void SetPosition(int bits, uint8_t* data, int64_t position, uint32_t value) {
  switch (bits) {
    case 4: {
      uint8_t& byte = data[position / 2];
      byte = position % 2 == 0 ? static_cast<uint8_t>((byte & 0xf0) | (value & 0x0f))
                               : static_cast<uint8_t>((byte & 0x0f) | ((value & 0x0f) << 4));
      return;
    }
    case 8: data[position] = static_cast<uint8_t>(value); return;
    case 16: {
      const uint16_t v = static_cast<uint16_t>(value);
      std::memcpy(data + 2 * position, &v, 2);
      return;
    }
    default: std::memcpy(data + 4 * position, &value, 4); return;
  }
}

}  // namespace visa::jit
