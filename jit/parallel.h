// Parallel: a range of independent work (slices, outer loop iterations) split over the threads of
// a persistent oneTBB arena (one per thread count), so no thread is started per move.
#pragma once

#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"

namespace visa::jit {

// The most threads one pool may have. Work is split over a chip's slices (512) at most, and a
// thread per hardware thread is all a host can run; far beyond that, creating the workers fails
// (std::system_error) instead of helping. Every thread count a user gives (JitOptions::threads,
// JitBackend::set_threads, `--threads`) is checked against it by ResolveThreads.
inline constexpr int kMaxThreads = 256;

// The thread count to use for `requested`: 0 means the host's hardware threads (capped at
// kMaxThreads); 1 to kMaxThreads as given; anything else is InvalidArgument naming the range.
absl::StatusOr<int> ResolveThreads(int requested);

// Below this many elements a second thread costs more than it saves.
inline constexpr int64_t kParallelMinElements = int64_t{1} << 16;

// The threads worth using for `elements` of work.
inline int ThreadsFor(int64_t elements, int threads) { return elements >= kParallelMinElements ? threads : 1; }

// Runs fn(begin, end) over disjoint parts covering [0, n) on at most `threads` threads (the
// calling thread among them); returns when every part is done. `grain`: the smallest part.
void Parallel(int64_t n, int threads, const std::function<void(int64_t, int64_t)>& fn, int64_t grain = 1);

}  // namespace visa::jit
