// Progress of long commands on stderr: "check: 12/40 gemm, 3.2 s elapsed, about 7.5 s left",
// rewritten in place. Commands enable it only when stderr is a terminal, so logs and pipes stay
// quiet (StderrIsTerminal).
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

#include "absl/strings/string_view.h"

namespace visa::cli {

class Progress {
 public:
  // Nothing is printed before `quiet_seconds` passed, so short work stays silent.
  Progress(std::string label, int64_t total, std::ostream& err, bool enabled, double quiet_seconds = 0);
  ~Progress() { Finish(); }

  static bool StderrIsTerminal();

  // One more item done (`item` names it on the line).
  void Step(absl::string_view item);
  // Ends the line (once; later calls do nothing).
  void Finish();

  int64_t done() const { return done_; }

 private:
  std::string label_;
  int64_t total_;
  std::ostream& err_;
  bool enabled_;
  bool open_ = false;
  double quiet_seconds_;
  int64_t done_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace visa::cli
