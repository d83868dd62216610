// The two backends a differential test compares, and the loop that runs a test body on each: the
// interpreter first (index 0, the reference), then the JIT (index 1), each on a fresh one-chip
// Device with a Context over them.
#pragma once

#include <functional>
#include <memory>

#include "runtime/backend.h"
#include "runtime/tensor_unit.h"

namespace visa::test {

inline constexpr int kBackendCount = 2;  // 0: the interpreter, 1: the JIT

// A fresh backend: the interpreter for 0, a JIT with `jit_threads` workers for 1.
std::unique_ptr<Backend> MakeBackend(int index, int jit_threads = 2);

// `body(b, ctx)` for b = 0 (interpreter) and 1 (JIT), each on a fresh Device(1). A fatal gtest
// failure in the body ends that call only, as an ASSERT does in a test's own loop.
void OnBothBackends(const std::function<void(int b, Context& ctx)>& body, int jit_threads = 2);

}  // namespace visa::test
