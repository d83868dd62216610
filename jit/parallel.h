// Parallel: a range of independent work (slices, outer loop iterations) split over the threads of
// a persistent oneTBB arena (one per thread count), so no thread is started per move.
#pragma once

#include <cstdint>
#include <functional>

namespace visa::jit {

// Below this many elements a second thread costs more than it saves.
inline constexpr int64_t kParallelMinElements = int64_t{1} << 16;

// The threads worth using for `elements` of work.
inline int ThreadsFor(int64_t elements, int threads) { return elements >= kParallelMinElements ? threads : 1; }

// Runs fn(begin, end) over disjoint parts covering [0, n) on at most `threads` threads (the
// calling thread among them); returns when every part is done. `grain`: the smallest part.
void Parallel(int64_t n, int threads, const std::function<void(int64_t, int64_t)>& fn, int64_t grain = 1);

}  // namespace visa::jit
