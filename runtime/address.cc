// Address printing and the TRF address modes' regions.
#include "runtime/address.h"

#include "absl/strings/str_format.h"
#include "runtime/tier.h"

namespace visa {

std::string Address::ToString() const {
  return any_ ? std::string("any") : absl::StrFormat("0x%x", bytes_);
}

const char* TrfAddressName(TrfAddress mode) {
  switch (mode) {
    case TrfAddress::kFull: return "Full";
    case TrfAddress::kFirstHalf: return "FirstHalf";
    case TrfAddress::kSecondHalf: return "SecondHalf";
  }
  return "?";
}

int64_t TrfAddressBase(TrfAddress mode) {
  return mode == TrfAddress::kSecondHalf ? kTrfHalfBytes : 0;
}

int64_t TrfAddressCapacity(TrfAddress mode) {
  return mode == TrfAddress::kFull ? kTrfRowBytes : kTrfHalfBytes;
}

}  // namespace visa
