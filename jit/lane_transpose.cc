// LaneTranspose: the block-swapping transpose as shufflevector pairs.
#include "jit/lane_transpose.h"

#include "dsl/status_macros.h"

namespace visa::jit {

void EmitTranspose16(llvm::IRBuilder<>& b, std::vector<llvm::Value*>& rows) {
  constexpr int kSize = 16;
  VISA_CHECK(rows.size() == kSize, "a transpose tile has 16 rows");
  for (int h = kSize / 2; h >= 1; h /= 2) {
    // Rows r and r + h (bit h of r clear): units c with bit h set trade places with the units
    // h columns to the left in the other row. Indices 16.. select from the second vector.
    llvm::SmallVector<int, kSize> upper_mask, lower_mask;
    for (int c = 0; c < kSize; ++c) {
      upper_mask.push_back((c & h) != 0 ? kSize + c - h : c);
      lower_mask.push_back((c & h) != 0 ? kSize + c : c + h);
    }
    for (int r = 0; r < kSize; ++r) {
      if ((r & h) != 0) continue;
      llvm::Value* upper = rows[r];
      llvm::Value* lower = rows[r + h];
      rows[r] = b.CreateShuffleVector(upper, lower, upper_mask);
      rows[r + h] = b.CreateShuffleVector(upper, lower, lower_mask);
    }
  }
}

}  // namespace visa::jit
