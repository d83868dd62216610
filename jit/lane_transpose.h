// LaneTranspose: a 16 x 16 transpose of 32-bit units in LLVM IR, for packing an operand whose
// lanes are contiguous along the packet into the lane kernels' [packet][16 lanes] layout with
// shuffles instead of a scatter per element.
#pragma once

#include <vector>

#include "llvm/IR/IRBuilder.h"

namespace visa::jit {

// `rows[i]` are 16 vectors of 16 32-bit units (row i of a tile); on return `rows[j]` holds
// column j. Four stages of two-source shuffles: stage h swaps the off-diagonal h x h blocks of
// every 2h x 2h block.
void EmitTranspose16(llvm::IRBuilder<>& b, std::vector<llvm::Value*>& rows);

}  // namespace visa::jit
