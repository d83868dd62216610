// The Vector Engine's element ops compiled: one loop over a run of consecutive element steps of a
// vector stage (those between two relayouts or stash writes), every position through every step.
//
// Each op calls its scalar function from dsl/vector_ops.h (the interpreter's very functions,
// linked into the JIT as absolute symbols), so results agree bit for bit; the ops whose result
// IR defines exactly (integer arithmetic, bit operations, IEEE add / sub / mul / div / fma / sqrt,
// |x| comparisons) are emitted inline instead, which lets LLVM vectorize a loop without calls. A slot's operand is a
// constant in the code or an image in the stream's current layout (VRF tensors and the stash,
// placed there by compiled moves); the execution id picks the first slot whose guard admits it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dsl/vector_engine.h"

namespace llvm {
class Module;
}

namespace visa::jit {

struct VectorKernelSpec {
  struct Slot {
    uint16_t admits = 0;             // bit id: the guard admits execution id `id`
    std::optional<uint32_t> constant;  // else image `image`
    int image = -1;
    uint32_t o1 = 0;
  };
  struct Op {
    VeFn fn = VeFn::kAddFxp;
    std::string symbol;    // the scalar function
    int arity = 1;
    std::array<int8_t, 3> from{0, 1, 2};
    bool conversion = false;  // b is `param`
    int32_t param = 0;
    std::optional<uint16_t> guard;  // a guarded unary op
    std::vector<Slot> slots;
  };
  // Branch Comparison: the ids are computed from the values first (and stored).
  std::optional<std::array<InputCmp, 4>> compare;
  std::vector<Op> ops;

  std::string Key() const;
};

// fn(data, tags, images, begin, end): positions [begin, end) of the u32 stream `data` with their
// u8 execution ids `tags`; images[k] are u32 operand images in the same layout.
using VectorFn = void (*)(uint32_t* data, uint8_t* tags, const uint32_t* const* images, int64_t begin, int64_t end);

// Two-group mode's zip: out[p] = fn(args of in[from[2p]] (group 0), in[from[2p + 1]] (group 1));
// from[2p] < 0 marks a padding position (left as it is, zero).
struct ZipKernelSpec {
  std::string symbol;
  std::array<int8_t, 2> from{0, 1};
  std::string Key() const;
};
using ZipFn = void (*)(uint32_t* out, const uint32_t* in, const int64_t* from, int64_t begin, int64_t end);

uint16_t AdmitMask(const TagGuard& guard);

void BuildVectorFunction(llvm::Module& module, const std::string& name, const VectorKernelSpec& spec);
void BuildZipFunction(llvm::Module& module, const std::string& name, const ZipKernelSpec& spec);

}  // namespace visa::jit
