// The interpreter and the JIT made the same way for every differential test.
#include "tests/common/backends.h"

#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/device.h"

namespace visa::test {

std::unique_ptr<Backend> MakeBackend(int index, int jit_threads) {
  if (index == 0) return std::make_unique<interp::Interpreter>();
  absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({.threads = jit_threads});
  if (!jit.ok()) {
    ADD_FAILURE() << "the JIT backend: " << jit.status();
    return nullptr;
  }
  return *std::move(jit);
}

void OnBothBackends(const std::function<void(int b, Context& ctx)>& body, int jit_threads) {
  for (int b = 0; b < kBackendCount; ++b) {
    Device device(1);
    std::unique_ptr<Backend> backend = MakeBackend(b, jit_threads);
    if (backend == nullptr) return;
    Context ctx(device, *backend);
    body(b, ctx);
  }
}

}  // namespace visa::test
