// Address: where a move places its destination (an explicit byte address or "anywhere free").
#pragma once

#include <cstdint>
#include <string>

namespace visa {

// The manual passes explicit addresses (`to_dm(&mut ctx.tdma, 1 << 16)`); an integer converts
// implicitly so C++ calls read the same. Address::Any() asks the device for the lowest free range
// that is aligned and fits in every unit the tensor occupies.
class Address {
 public:
  Address(int64_t bytes) : bytes_(bytes), any_(false) {}  // NOLINT: implicit by design
  static Address At(int64_t bytes) { return Address(bytes); }
  static Address Any() { return Address(); }

  bool is_any() const { return any_; }
  int64_t bytes() const { return bytes_; }  // meaningful unless is_any()
  std::string ToString() const;             // "0x10000" or "any"

 private:
  Address() : bytes_(0), any_(true) {}
  int64_t bytes_;
  bool any_;
};

// The manual's TRF address modes ("TRF Sequencer", "TRF Address Modes"): a tensor takes the whole
// TRF or one half of every row (FirstHalf: bytes [0, 4 KB), SecondHalf: [4 KB, 8 KB) of each row).
enum class TrfAddress { kFull, kFirstHalf, kSecondHalf };

const char* TrfAddressName(TrfAddress mode);  // "Full", "FirstHalf", "SecondHalf"
int64_t TrfAddressBase(TrfAddress mode);      // byte offset inside each row
int64_t TrfAddressCapacity(TrfAddress mode);  // bytes per row

}  // namespace visa
