// Progress lines: done / total, elapsed and an estimate from the mean time per item so far.
#include "tools/progress.h"

#include <unistd.h>

#include "absl/strings/str_format.h"

namespace visa::cli {

Progress::Progress(std::string label, int64_t total, std::ostream& err, bool enabled)
    : label_(std::move(label)), total_(total), err_(err), enabled_(enabled && total > 0) {}

bool Progress::StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

void Progress::Step(absl::string_view item) {
  ++done_;
  if (!enabled_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double left = elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_);
  // \r and the erase-line sequence rewrite the line; the item name is cut so that it fits.
  err_ << absl::StrFormat("\r\x1b[K%s: %d/%d %.40s, %.1f s elapsed, about %.1f s left", label_, done_, total_, item,
                          elapsed, left)
       << std::flush;
  open_ = true;
}

void Progress::Finish() {
  if (!open_) return;
  err_ << "\n" << std::flush;
  open_ = false;
}

}  // namespace visa::cli
