// Progress lines: done / total, elapsed and an estimate from the mean time per item so far.
#include "tools/progress.h"

#include <unistd.h>

#include "absl/strings/str_format.h"
#include "runtime/program.h"
#include "tools/progress_backend.h"

namespace visa::cli {

Progress::Progress(std::string label, int64_t total, std::ostream& err, bool enabled, double quiet_seconds)
    : label_(std::move(label)), total_(total), err_(err), enabled_(enabled && total > 0),
      quiet_seconds_(quiet_seconds) {}

int64_t ProgressBackend::DeviceOps(const Program& program) {
  int64_t ops = 0;
  for (const Op& op : program.ops) {
    const auto* dma = std::get_if<DmaOp>(&op.body);
    if (dma == nullptr || (dma->src.handle && dma->dst.handle)) ++ops;
  }
  return ops;
}

bool Progress::StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

void Progress::Step(absl::string_view item) {
  ++done_;
  if (!enabled_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (elapsed < quiet_seconds_) return;
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
