// The host reference for the bf16 lane-contraction tests: bf16 / f32 bit conversions, a bf16 host
// tensor from raw bits, and the contraction in the manual's order for finite normal inputs (each
// packet's 32 products summed pairwise level by level, the packets' sums accumulated in time
// order, the first stored as is), for x [A, K] and w [R, K] held in that order; out is [A, R].
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/host_tensor.h"

namespace visa::bf16_reference {

inline constexpr int kPacket = 32;

inline float Bf16Value(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, 4);
  return value;
}

inline uint32_t F32Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

inline std::vector<uint32_t> HostContraction(const std::vector<uint16_t>& x, const std::vector<uint16_t>& w,
                                             int a_count, int rows, int k) {
  std::vector<uint32_t> out;
  for (int a = 0; a < a_count; ++a) {
    for (int r = 0; r < rows; ++r) {
      float acc = 0;
      for (int c = 0; c < k / kPacket; ++c) {
        float level[kPacket];
        for (int p = 0; p < kPacket; ++p) {
          level[p] = Bf16Value(x[a * k + c * kPacket + p]) * Bf16Value(w[r * k + c * kPacket + p]);
        }
        for (int width = kPacket / 2; width >= 1; width /= 2) {
          for (int m = 0; m < width; ++m) level[m] = level[2 * m] + level[2 * m + 1];
        }
        acc = c == 0 ? level[0] : acc + level[0];
      }
      out.push_back(F32Bits(acc));
    }
  }
  return out;
}

inline HostTensor Bf16Tensor(const Mapping& mapping, const std::vector<uint16_t>& bits) {
  std::vector<uint8_t> bytes(bits.size() * 2);
  std::memcpy(bytes.data(), bits.data(), bytes.size());
  absl::StatusOr<HostTensor> tensor = HostTensor::FromBytes(DType::kBF16, mapping, std::move(bytes));
  EXPECT_TRUE(tensor.ok()) << tensor.status();
  return *tensor;
}

}  // namespace visa::bf16_reference
