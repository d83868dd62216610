// The version of the JIT's IR generators, part of every disk cache key (object_cache.h): a kernel
// is looked up on disk by its spec (what its IR is generated from), never by its IR, so a changed
// generator must name new entries or a later process would load the old generator's code.
#pragma once

namespace visa::jit {

// Bump on any change to what an IR generator emits for a given spec (move, contraction, lane,
// epilogue, vector, zip and reduce kernels, element ops, the Compiler's passes and levels).
inline constexpr int kIrGeneratorVersion = 2;

// A digest of the sources the generators are built from (jit/, dsl/, runtime/, interp/), computed
// by the build (generator_digest.cmake): a change whose author forgot the bump above still names
// new entries. Within one build it is a constant.
const char* GeneratorSourceDigest();

}  // namespace visa::jit
