// Parallel ranges on persistent oneTBB arenas.
#include "jit/parallel.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"

#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/task_arena.h"

namespace visa::jit {
namespace {

// One arena per requested concurrency, created on first use and kept for the process: TBB keeps
// its workers alive between calls, which is the point of a pool.
oneapi::tbb::task_arena& ArenaFor(int threads) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<oneapi::tbb::task_arena>> arenas;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<oneapi::tbb::task_arena>& arena = arenas[threads];
  if (!arena) arena = std::make_unique<oneapi::tbb::task_arena>(threads);
  return *arena;
}

}  // namespace

absl::StatusOr<int> ResolveThreads(int requested) {
  if (requested == 0) {
    const int host = static_cast<int>(std::thread::hardware_concurrency());
    return std::clamp(host, 1, kMaxThreads);
  }
  if (requested < 0 || requested > kMaxThreads) {
    return absl::InvalidArgumentError(absl::StrCat(
        "thread count: 0 (the host's) or 1 to ", kMaxThreads, " threads, got ", requested,
        "; more threads than the host runs at once only add overhead (at most ", kMaxThreads,
        " per pool)"));
  }
  return requested;
}

void Parallel(int64_t n, int threads, const std::function<void(int64_t, int64_t)>& fn, int64_t grain) {
  if (n <= 0) return;
  if (threads <= 1 || n <= grain) {
    fn(0, n);
    return;
  }
  ArenaFor(threads).execute([&] {
    oneapi::tbb::parallel_for(oneapi::tbb::blocked_range<int64_t>(0, n, std::max<int64_t>(grain, 1)),
                              [&](const oneapi::tbb::blocked_range<int64_t>& r) { fn(r.begin(), r.end()); });
  });
}

}  // namespace visa::jit
