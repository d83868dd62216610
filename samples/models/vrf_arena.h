// The VRF addresses of one Vector Engine step's operands, handed out in order instead of picked
// by hand: each operand (a norm's weights, a tile of partial sums, a per-row scalar) takes the
// next free bytes of the slice's 8 KB VRF, aligned to 32 bytes (one VRF row of 8 f32); asking for
// more than is left is an error naming the operand and the VRF's size.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace visa::models {

class VrfArena {
 public:
  // The address of `bytes` more bytes for `what`.
  absl::StatusOr<int64_t> Take(int64_t bytes, const std::string& what);
  int64_t used() const { return next_; }

 private:
  int64_t next_ = 0;
};

}  // namespace visa::models
