// ProgramEntry: the disk cache payload of a program's kernels compiled together (compiler.h:
// CompileProgram): which symbol each kernel key is linked under, and the objects defining them
// (one per optimization the kernels use). Parsing is strict: anything not of this form is a miss.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace visa::jit {

struct ProgramEntry {
  struct Kernel {
    std::string key;     // the kernel's ObjectKey
    std::string symbol;  // its function's content name (compiler.cc: ContentName)
  };
  std::vector<Kernel> kernels;
  std::vector<std::string> objects;
};

std::string PackProgramEntry(const ProgramEntry& entry);

// nullopt for a payload not of PackProgramEntry's form (truncated, rotted, or another kind).
std::optional<ProgramEntry> UnpackProgramEntry(absl::string_view payload);

}  // namespace visa::jit
