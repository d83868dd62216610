// StableHash: a hash of a vector's elements that is the same in every process and on every run
// (FNV-1a over the elements' bytes), for kernel keys. absl::HashOf is seeded per process, so a key
// built with it names the same kernel differently in two processes.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace visa::jit {

inline uint64_t StableHashBytes(const void* data, size_t size, uint64_t hash = 0xcbf29ce484222325ull) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// The elements' bytes and their count (so {} and {0} differ in every element type).
template <typename T>
uint64_t StableHash(const std::vector<T>& values) {
  static_assert(std::is_integral_v<T>, "integer elements have one byte representation");
  const uint64_t count = values.size();
  const uint64_t hash = StableHashBytes(&count, sizeof(count));
  return values.empty() ? hash : StableHashBytes(values.data(), values.size() * sizeof(T), hash);
}

}  // namespace visa::jit
