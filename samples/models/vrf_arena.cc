// VRF addresses handed out in order (vrf_arena.h).
#include "samples/models/vrf_arena.h"

#include "absl/strings/str_cat.h"
#include "runtime/tier.h"

namespace visa::models {

absl::StatusOr<int64_t> VrfArena::Take(int64_t bytes, const std::string& what) {
  constexpr int64_t kRow = 32;
  const int64_t rounded = (bytes + kRow - 1) / kRow * kRow;
  if (bytes <= 0 || next_ + rounded > kVrfBytesPerSlice) {
    return absl::ResourceExhaustedError(absl::StrCat("VRF: ", what, " needs ", bytes, " bytes at ", next_,
                                                     ", past the ", kVrfBytesPerSlice, " bytes of a slice's VRF"));
  }
  const int64_t at = next_;
  next_ += rounded;
  return at;
}

}  // namespace visa::models
