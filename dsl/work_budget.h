// WorkBudget: a bound on the steps one mapping operation may take (evaluating a linear
// combination, enumerating, deciding equivalence), so a few bytes of mapping text cannot keep the
// process busy for hours or exhaust its memory. A step is one cell combined or compared, one
// choice or node visited; steps add up over the whole operation. Values held at once while one
// position is evaluated (remainders, cell codes of 8 bytes) are bounded by a sixteenth of the
// limit. Running out of either is a user-facing error that names the limit and how to raise it.
#pragma once

#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace visa {

class WorkBudget {
 public:
  // Enough for every mapping in the manual and its examples many times over: a second or two of
  // work and about 100 MB at most; `visa map --max-work N` or WorkBudget(N) raises it.
  static constexpr int64_t kDefaultSteps = 100'000'000;

  explicit WorkBudget(int64_t limit = kDefaultSteps) : limit_(limit) {}
  static WorkBudget Unlimited() { return WorkBudget(std::numeric_limits<int64_t>::max()); }

  // Counts `steps`; false once the total passes the limit (it stays false).
  bool Spend(int64_t steps) {
    spent_ = steps > limit_ - spent_ ? limit_ + 1 : spent_ + steps;
    return spent_ <= limit_;
  }
  bool exhausted() const { return spent_ > limit_; }
  // Values one evaluation may hold at once: 6.25 M (about 100 MB) at the default limit.
  int64_t max_held() const { return limit_ / 16; }
  int64_t spent() const { return spent_; }
  int64_t limit() const { return limit_; }

  // The error for an operation that ran out: "work limit: <operation> needs more than N steps ...".
  absl::Status Exhausted(absl::string_view operation) const;
  // The error for an operation that needed to hold more than max_held() values at once.
  absl::Status OutOfRoom(absl::string_view operation) const;

 private:
  int64_t limit_;
  int64_t spent_ = 0;
};

}  // namespace visa
