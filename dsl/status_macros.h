// Early-return helpers for absl::Status / absl::StatusOr, the error currency of the whole project.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define VISA_CONCAT_INNER(a, b) a##b
#define VISA_CONCAT(a, b) VISA_CONCAT_INNER(a, b)

// Returns the status from the enclosing function if `expr` is not OK.
#define RETURN_IF_ERROR(expr)                     \
  do {                                            \
    ::absl::Status visa_status_ = (expr);         \
    if (!visa_status_.ok()) return visa_status_;  \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, MakeX());` unwraps a StatusOr or returns its error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(VISA_CONCAT(visa_statusor_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

// Internal invariant: a failure is a bug in visa, never a user mistake, so it stops loudly.
#define VISA_CHECK(cond, msg)                                                         \
  do {                                                                                \
    if (!(cond)) ::visa::internal::CheckFailed(__FILE__, __LINE__, #cond, (msg));    \
  } while (0)

namespace visa::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond, const char* msg);
}  // namespace visa::internal
