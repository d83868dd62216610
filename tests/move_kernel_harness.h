// A harness for move kernels: runs one move nest on a fresh KernelCache into a pre-filled,
// deliberately aligned (or misaligned) destination and checks its bytes against the nest's meaning
// written out as a plain host loop. Shared by the streaming and the unrolling suites.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "jit/element_op.h"
#include "jit/kernel_cache.h"
#include "jit/move_nest.h"

namespace visa::jit::testing_moves {

// Host memory at a 64-byte boundary plus `offset` bytes.
class Buffer {
 public:
  Buffer(int64_t bytes, int64_t offset, uint8_t fill)
      : block_(static_cast<uint8_t*>(std::aligned_alloc(64, RoundUp(bytes + offset))), &std::free), offset_(offset) {
    std::memset(block_.get(), fill, RoundUp(bytes + offset));
  }
  uint8_t* data() const { return block_.get() + offset_; }

 private:
  static size_t RoundUp(int64_t bytes) { return static_cast<size_t>((bytes + 63) / 64 * 64); }
  std::unique_ptr<uint8_t, decltype(&std::free)> block_;
  int64_t offset_;
};

inline uint32_t GetElement(const uint8_t* base, int64_t pos, int bits) {
  if (bits == 4) return (base[pos / 2] >> (4 * (pos % 2))) & 15;
  uint32_t v = 0;
  std::memcpy(&v, base + pos * (bits / 8), bits / 8);  // little-endian host
  return v;
}

inline void SetElement(uint8_t* base, int64_t pos, int bits, uint32_t v) {
  if (bits == 4) {
    const int shift = 4 * static_cast<int>(pos % 2);
    base[pos / 2] = static_cast<uint8_t>((base[pos / 2] & ~(15 << shift)) | ((v & 15) << shift));
    return;
  }
  std::memcpy(base + pos * (bits / 8), &v, bits / 8);
}

// dst[d] = f(src[s]) over every iteration of `nest`, the nest's meaning written out.
inline void HostMove(const MoveNest& nest, int from_bits, int to_bits, const std::function<uint32_t(uint32_t)>& f,
              uint8_t* dst, const uint8_t* src) {
  std::vector<int64_t> index(nest.levels.size(), 0);
  for (int64_t n = 0; n < nest.elements(); ++n) {
    int64_t d = 0, s = 0;
    for (size_t k = 0; k < index.size(); ++k) {
      d += index[k] * nest.levels[k].dst_stride;
      s += index[k] * nest.levels[k].src_stride;
    }
    SetElement(dst, d, to_bits, f(GetElement(src, s, from_bits)));
    for (size_t k = 0; k < index.size() && ++index[k] == nest.levels[k].count; ++k) index[k] = 0;
  }
}

struct Case {
  MoveNest nest;
  ElementOp op;
  std::function<uint32_t(uint32_t)> host;  // what op does to one raw element
};

inline int64_t Bytes(int64_t positions, int bits) { return (positions * bits + 7) / 8; }

struct Outcome {
  std::vector<uint8_t> bytes;
  JitStats stats;
};

// Runs the case on a fresh cache of `threads` threads streaming from `min_bytes`, into a
// destination `dst_offset` bytes past a 64-byte boundary (pre-filled, so untouched bytes show).
inline Outcome RunCase(const Case& c, int threads, int64_t min_bytes, int64_t dst_offset) {
  const int from_bits = StorageBits(c.op.from), to_bits = StorageBits(c.op.to);
  const int64_t src_positions = c.nest.max_src() + 1, dst_positions = c.nest.max_dst() + 1;
  Buffer src(Bytes(src_positions, from_bits), 0, 0);
  for (int64_t i = 0; i < Bytes(src_positions, from_bits); ++i) src.data()[i] = static_cast<uint8_t>(i * 131 + i / 251);
  Buffer dst(Bytes(dst_positions, to_bits), dst_offset, 0xA5);
  absl::StatusOr<std::unique_ptr<KernelCache>> cache = KernelCache::Create(threads);
  EXPECT_TRUE(cache.ok()) << cache.status();
  (*cache)->set_streaming_min_bytes(min_bytes);
  absl::StatusOr<int64_t> moved = (*cache)->RunNest(c.nest, c.op, dst.data(), dst_positions, src.data(), src_positions);
  EXPECT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(*moved, c.nest.elements());
  Outcome out{std::vector<uint8_t>(dst.data(), dst.data() + Bytes(dst_positions, to_bits)), (*cache)->stats()};
  // The host loop over the same source, into the same pre-filled destination.
  Buffer expected(Bytes(dst_positions, to_bits), 0, 0xA5);
  HostMove(c.nest, from_bits, to_bits, c.host, expected.data(), src.data());
  EXPECT_EQ(out.bytes, std::vector<uint8_t>(expected.data(), expected.data() + out.bytes.size()))
      << c.nest.ToString() << " on " << threads << " threads";
  return out;
}

}  // namespace visa::jit::testing_moves
