// Facts about a mapping the JIT keys and plans by: a cache key that names its axes' sizes, and
// whether some position is padding.
#pragma once

#include <string>

#include "dsl/mapping.h"

namespace visa::jit {

// The mapping's text with every axis's size (and skew): the text alone names axes, not sizes.
std::string MappingKey(const Mapping& mapping);

// Whether some position of `mapping` is padding (canonical forms say so exactly; anything else is
// assumed to be).
bool HasPadding(const Mapping& mapping);

}  // namespace visa::jit
