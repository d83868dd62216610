// Loud stop for internal invariant failures (bugs in visa, never user errors).
#include <cstdio>
#include <cstdlib>

#include "dsl/status_macros.h"

namespace visa::internal {
void CheckFailed(const char* file, int line, const char* cond, const char* msg) {
  std::fprintf(stderr, "visa internal error at %s:%d: check `%s` failed: %s\n", file, line, cond, msg);
  std::abort();
}
}  // namespace visa::internal
