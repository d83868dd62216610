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
#pragma once

#include <optional>
#include <string>

namespace llvm {
class Module;
}

namespace visa::jit {

// The name a body has while its shape is hashed (the caller renames it by that hash).
inline constexpr const char* kBodyPlaceholder = "visa_body";

// Splits the kernel function `name` of `module` into a wrapper (keeping `name`, its arguments and
// attributes) that tail-calls a body named kBodyPlaceholder with the module's tables appended to
// its arguments. Returns false, the module unchanged, when the kernel has no table or a table it
// cannot take as an argument.
bool SplitOffTables(llvm::Module& module, const std::string& name);

// The bitcode of `module` with every table's contents zeroed: equal for two split kernels whose
// bodies are equal and whose tables have the same types (the module is restored).
std::string ShapeBitcode(llvm::Module& module);

}  // namespace visa::jit
