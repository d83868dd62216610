// SharedBody: kernels of a program whose code differs only in the contents of their constant
// tables (a Llama layer's lane contraction kernels differ in which slices are live and in their
// step tables; each takes ~150 ms to generate code for) compile that code once. A kernel's
// function becomes a body taking its tables as arguments and a wrapper passing its own: equal
// bodies are one function, each kernel keeps its own small wrapper and tables.
//
// The body sees each table as a `noalias readonly nonnull dereferenceable` argument, so the
// optimizer knows what it knew of a private constant global except its values: loads at run-time
// indices (all that is left) compile the same. Only tables read at computed indices become
// arguments; a table read at a constant index (which the optimizer folds to its value) keeps the
// kernel as it is.
//
// A kernel may also name some of its constants as parameters (ParameterTable: a move's outer loop
// counts and strides): alone with its shape it keeps them as constants (the optimizer folds their
// loads, so its code is what constants give); sharing a body with other kernels, they become one
// more table argument read once on entry, so moves differing only in them compile one body.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llvm/IR/IRBuilder.h"

namespace llvm {
class Module;
}

namespace visa::jit {

// The name a body has while its shape is hashed (the caller renames it by that hash).
inline constexpr const char* kBodyPlaceholder = "visa_body";

// Adds to `module` the kernel's parameter table holding `values` and returns their loads, emitted
// at `b`'s insertion point (the function's entry: a shared body reads them once). Empty `values`
// add nothing.
std::vector<llvm::Value*> LoadParameters(llvm::IRBuilder<>& b, llvm::Module& module, const std::vector<int64_t>& values);

// Splits the kernel function `name` of `module` into a wrapper (keeping `name`, its arguments and
// attributes) that tail-calls a body named kBodyPlaceholder with the module's tables appended to
// its arguments. Returns false, the module unchanged, when the kernel has no table or a table it
// cannot take as an argument (one read at a constant index that is no parameter table).
bool SplitOffTables(llvm::Module& module, const std::string& name);

// The bitcode of `module` with every table's contents zeroed: equal for two split kernels whose
// bodies are equal and whose tables have the same types (the module is restored).
std::string ShapeBitcode(llvm::Module& module);

}  // namespace visa::jit
