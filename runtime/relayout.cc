// Relayout tables: the layout algebra's run list under the DMA rule, and the coverage check.
#include "runtime/relayout.h"

#include <algorithm>
#include <deque>
#include <mutex>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/index.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

std::string AxisList(const Mapping& m) {
  const std::vector<std::string> names = m.axis_names();
  return names.empty() ? std::string("no axes") : absl::StrCat("axes ", absl::StrJoin(names, ", "));
}

absl::Status UnheldTensorError(const Mapping& dst, const Mapping& src, int64_t p) {
  return absl::InvalidArgumentError(absl::StrCat(
      "Tensor Function: destination position ", p, " of `", dst.ToString(), "` holds tensor index ",
      dst.map(p).index.ToString(), ", which the source `", src.ToString(), "` (", AxisList(src),
      ") does not hold; a move is the identity on the mathematical tensor (manual, \"Tensor "
      "Functions\"), so every destination element must come from the source"));
}

absl::Status DroppedTensorError(const Mapping& src, const Mapping& dst, const Index& index, int64_t q) {
  return absl::InvalidArgumentError(absl::StrCat(
      "Tensor Function: the source `", src.ToString(), "` holds tensor index ", index.ToString(),
      " (position ", q, ") that no position of the destination `", dst.ToString(),
      "` holds; the move would drop it, so it would not be the identity on the mathematical "
      "tensor (manual, \"Tensor Functions\")"));
}

// Coverage when a source position holds several indices (linear combinations): positions no
// longer stand for indices, so compare the index sets themselves (such mappings are small).
absl::Status CheckCoversManyToOne(const Mapping& src, const Mapping& dst) {
  std::set<Index> held;
  // Every index a destination position holds counts (a combination position holds several).
  for (int64_t p = 0; p < dst.size(); ++p) {
    if (!dst.map(p).live()) continue;  // padding everywhere: skip the full evaluation
    for (const Cell& cell : dst.maps(p)) {
      if (cell.live()) held.insert(MatchByAxis(cell.index, src));
    }
  }
  for (int64_t q = 0; q < src.size(); ++q) {
    if (!src.map(q).live()) continue;
    for (const Cell& cell : src.maps(q)) {
      if (cell.live() && !held.contains(cell.index)) return DroppedTensorError(src, dst, cell.index, q);
    }
  }
  return absl::OkStatus();
}

// Runs kept per plan: 32 bytes each, so at most 32 MiB for one plan and 256 MiB for the cache.
constexpr size_t kMaxKeptRuns = size_t{1} << 20;
constexpr size_t kKeptPlans = 8;

struct KeptPlan {
  Mapping dst, src;
  std::shared_ptr<const RelayoutRuns> runs;
};

std::mutex& KeptMutex() {
  static std::mutex mutex;
  return mutex;
}

// Most recently used first.
std::deque<KeptPlan>& KeptPlans() {
  static std::deque<KeptPlan> plans;
  return plans;
}

std::shared_ptr<const RelayoutRuns> KeptRuns(const Mapping& dst, const Mapping& src) {
  std::lock_guard<std::mutex> lock(KeptMutex());
  std::deque<KeptPlan>& plans = KeptPlans();
  for (auto it = plans.begin(); it != plans.end(); ++it) {
    if (it->dst == dst && it->src == src) {
      KeptPlan found = *it;
      plans.erase(it);
      plans.push_front(found);
      return found.runs;
    }
  }
  return nullptr;
}

void Keep(const Mapping& dst, const Mapping& src, std::shared_ptr<const RelayoutRuns> runs) {
  std::lock_guard<std::mutex> lock(KeptMutex());
  std::deque<KeptPlan>& plans = KeptPlans();
  plans.push_front(KeptPlan{dst, src, std::move(runs)});
  if (plans.size() > kKeptPlans) plans.pop_back();
}

// One bit per source position: which ones a move reads. Runs of stride 1 (the usual case) mark
// and test a 64-bit word at a time, so checking a contiguous move costs O(positions / 64).
class ReadPositions {
 public:
  explicit ReadPositions(int64_t size) : bits_(static_cast<size_t>((size + 63) / 64), 0) {}

  void Mark(const RelayoutRun& run) {
    if (run.src_stride != 1) {
      for (int64_t i = 0; i < run.length; ++i) Set(run.src + i * run.src_stride);
      return;
    }
    ForEachWord(run.src, run.length, [&](int64_t word, uint64_t mask) {
      bits_[word] |= mask;
      return true;
    });
  }

  bool Read(int64_t q) const { return ((bits_[q >> 6] >> (q & 63)) & 1) != 0; }

  // Every live position of `src` read.
  bool AllLiveRead(const Mapping& src) const {
    bool all = true;
    const std::optional<int64_t> unheld =
        ForEachRun(src, src, MatchRule::kByAxis, [&](absl::Span<const RelayoutRun> runs) {
          for (const RelayoutRun& run : runs) {
            if (!all) return;
            all = ForEachWord(run.dst, run.length,
                              [&](int64_t word, uint64_t mask) { return (bits_[word] & mask) == mask; });
          }
        });
    return all && !unheld;
  }

 private:
  void Set(int64_t q) { bits_[q >> 6] |= uint64_t{1} << (q & 63); }

  // fn(word, mask) over the words of bits [from, from + n); stops (false) when fn does.
  template <typename Fn>
  static bool ForEachWord(int64_t from, int64_t n, Fn&& fn) {
    for (int64_t bit = from, end = from + n; bit < end;) {
      const int64_t word = bit >> 6, low = bit & 63;
      const int64_t high = std::min<int64_t>(64, end - (word << 6));
      const uint64_t upper = high == 64 ? ~uint64_t{0} : (uint64_t{1} << high) - 1;
      if (!fn(word, upper & ~((uint64_t{1} << low) - 1))) return false;
      bit = (word << 6) + high;
    }
    return true;
  }

  std::vector<uint64_t> bits_;
};

}  // namespace

absl::StatusOr<RelayoutPlan> RelayoutPlan::Make(const Mapping& dst, const Mapping& src) {
  RETURN_IF_ERROR(dst.status());
  RETURN_IF_ERROR(src.status());
  return RelayoutPlan(dst, src);
}

bool RelayoutPlan::fast() const { return Layout::Of(dst_).affine() && Layout::Of(src_).invertible(); }

absl::Status RelayoutPlan::Run(ChunkFn apply) const {
  if (std::shared_ptr<const RelayoutRuns> kept = KeptRuns(dst_, src_)) {
    apply(kept->runs);
    return absl::OkStatus();
  }
  ReadPositions seen(src_.size());
  auto kept = std::make_shared<RelayoutRuns>();
  bool keep = true;
  const std::optional<int64_t> unheld =
      ForEachRun(dst_, src_, MatchRule::kByAxis, [&](absl::Span<const RelayoutRun> runs) {
        for (const RelayoutRun& run : runs) {
          seen.Mark(run);
          kept->elements += run.length;
          kept->contiguous = kept->contiguous && (run.src_stride == 1 || run.length == 1);
        }
        keep = keep && kept->runs.size() + runs.size() <= kMaxKeptRuns;
        if (keep) {
          kept->runs.insert(kept->runs.end(), runs.begin(), runs.end());
        } else {
          std::vector<RelayoutRun>().swap(kept->runs);
        }
        apply(runs);
      });
  if (unheld) return UnheldTensorError(dst_, src_, *unheld);
  if (!src_.is_one_to_one()) {
    RETURN_IF_ERROR(CheckCoversManyToOne(src_, dst_));
  } else if (!seen.AllLiveRead(src_)) {
    // Some live source position was not read: the exact (per-position) rule names the first
    // index no destination holds; a broadcast source digit is the only way to pass it.
    const std::optional<int64_t> dropped = FirstDropped(src_, [&seen](int64_t q) { return seen.Read(q); });
    if (dropped) return DroppedTensorError(src_, dst_, src_.map(*dropped).index, *dropped);
  }
  if (keep) Keep(dst_, src_, std::move(kept));
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const RelayoutRuns>> RelayoutPlan::Runs() const {
  if (std::shared_ptr<const RelayoutRuns> kept = KeptRuns(dst_, src_)) return kept;
  RETURN_IF_ERROR(Run([](absl::Span<const RelayoutRun>) {}));
  return KeptRuns(dst_, src_);  // nullptr when the table was too long to keep
}

absl::StatusOr<std::pair<std::vector<int64_t>, std::vector<int64_t>>> RelayoutPlan::Table() const {
  std::pair<std::vector<int64_t>, std::vector<int64_t>> table;
  RETURN_IF_ERROR(Run([&](absl::Span<const RelayoutRun> runs) {
    for (const RelayoutRun& run : runs) {
      for (int64_t i = 0; i < run.length; ++i) {
        table.first.push_back(run.dst + i);
        table.second.push_back(run.src + i * run.src_stride);
      }
    }
  }));
  return table;
}

absl::StatusOr<std::vector<int64_t>> LivePositions(const Mapping& mapping) {
  RETURN_IF_ERROR(mapping.status());
  std::vector<int64_t> positions;
  // The identity move's runs visit exactly the live positions, a run (not a position) at a time.
  const std::optional<int64_t> unheld =
      ForEachRun(mapping, mapping, MatchRule::kByAxis, [&](absl::Span<const RelayoutRun> runs) {
        for (const RelayoutRun& run : runs) {
          for (int64_t i = 0; i < run.length; ++i) positions.push_back(run.dst + i);
        }
      });
  VISA_CHECK(!unheld.has_value(), "a mapping does not hold its own indices");
  return positions;
}

absl::StatusOr<int64_t> LiveExtent(const Mapping& mapping) {
  RETURN_IF_ERROR(mapping.status());
  const Layout layout = Layout::Of(mapping);
  if (layout.affine()) {
    int64_t last = 0;
    for (const LayoutMode& m : layout.modes()) last += (m.live - 1) * m.weight;
    return last + 1;
  }
  for (int64_t p = mapping.size(); p-- > 0;) {
    if (mapping.map(p).live()) return p + 1;
  }
  return 0;
}

}  // namespace visa
