// Index-driven relayout of host tensor images (the interpreter's data movement).
//
// MoveByIndexReference is the definition: one `map`, one `inverse` per destination position, the
// engine rule in between. MoveByIndex derives the same computation from the layout algebra
// (dsl/layout.h) once per move: a loop nest of (count, destination stride, source stride) levels
// when the destination projects onto the source by digit (threads share its outermost level), or
// else the run list of the destination's digit odometer against the source's per-axis inverse.
// Errors are reported at the position the reference stops at, with the reference's message.
#include "interp/index_move.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>
#include <utility>

#include "dsl/dtype.h"
#include "dsl/layout.h"
#include "dsl/outer_padding.h"
#include "dsl/status_macros.h"
#include "runtime/packed_storage.h"

namespace visa::interp {

Index Restrict(const Index& index, const std::vector<std::string>& names) {
  Index out;
  for (const auto& [axis, value] : index.coords()) {
    if (std::binary_search(names.begin(), names.end(), axis)) out.Set(axis, value);
  }
  return out;
}

absl::StatusOr<HostTensor> MoveByIndexReference(const HostTensor& src, const Mapping& dst,
                                                MovePolicy policy) {
  RETURN_IF_ERROR(dst.status());
  ASSIGN_OR_RETURN(HostTensor out, HostTensor::Zeros(src.dtype(), dst));
  std::vector<bool> read(policy.allow_drop ? 0 : src.size(), false);
  for (int64_t p = 0; p < dst.size(); ++p) {
    Cell cell = dst.map(p);
    if (!cell.live()) {
      if (policy.pad_bits != 0) RETURN_IF_ERROR(out.SetBits(p, policy.pad_bits));
      continue;
    }
    std::optional<Index> wanted = MatchByDigit(cell.index, src.mapping());
    std::optional<int64_t> q = wanted ? src.mapping().inverse(*wanted) : std::nullopt;
    if (!q) return UnheldError(dst, p, cell.index, src.mapping());
    ASSIGN_OR_RETURN(uint32_t bits, src.GetBits(*q));
    RETURN_IF_ERROR(out.SetBits(p, bits));
    if (!read.empty()) read[*q] = true;
  }
  for (int64_t q = 0; q < static_cast<int64_t>(read.size()); ++q) {
    if (read[q]) continue;
    Cell cell = src.mapping().map(q);
    // Broadcast digits repeat an index; only the first position holding it is ever read.
    if (cell.live() && !read[*src.mapping().inverse(cell.index)]) {
      return DroppedError(src.mapping(), q, cell.index, dst);
    }
  }
  return out;
}

namespace {

// Copies elements of kWidth bytes (0: i4 nibbles) and flags the source positions read.
template <int kWidth>
struct Copier {
  const uint8_t* src;
  uint8_t* out;
  uint8_t* read;  // null when drops are allowed

  void One(int64_t p, int64_t q) const {
    if constexpr (kWidth == 0) {
      const uint8_t nibble = (src[q >> 1] >> ((q & 1) * 4)) & 0x0f;
      uint8_t& byte = out[p >> 1];
      const int shift = static_cast<int>(p & 1) * 4;
      byte = static_cast<uint8_t>((byte & ~(0x0f << shift)) | (nibble << shift));
    } else {
      std::copy(src + q * kWidth, src + (q + 1) * kWidth, out + p * kWidth);
    }
    // Several positions may read one source element; the flag only ever goes to 1.
    if (read != nullptr) std::atomic_ref<uint8_t>(read[q]).store(1, std::memory_order_relaxed);
  }

  // Levels [0, k] of a nest from (p, q); level k over [begin, end).
  void Nest(const std::vector<MoveLevel>& levels, size_t k, int64_t begin, int64_t end, int64_t p,
            int64_t q) const {
    const MoveLevel& l = levels[k];
    for (int64_t i = begin; i < end; ++i) {
      if (k == 0) {
        One(p + i * l.dst_stride, q + i * l.src_stride);
      } else {
        Nest(levels, k - 1, 0, levels[k - 1].count, p + i * l.dst_stride, q + i * l.src_stride);
      }
    }
  }
};

int ThreadsFor(int64_t elements, const MoveLimits& limits, bool nibbles) {
  if (nibbles || elements < limits.min_parallel) return 1;  // threads never share an i4 byte
  if (limits.threads > 0) return limits.threads;
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
}

// The nest copied with its outermost level split over threads in contiguous chunks.
template <int kWidth>
void CopyNest(std::vector<MoveLevel> levels, const Copier<kWidth>& copier, const MoveLimits& limits) {
  int64_t elements = 1;
  for (const MoveLevel& l : levels) elements *= l.count;
  const int threads = ThreadsFor(elements, limits, kWidth == 0);
  levels = SplitOuter(Coalesce(std::move(levels)), threads);
  const size_t top = levels.size() - 1;
  const int64_t outer = levels[top].count;
  auto run = [&](int t) {
    copier.Nest(levels, top, outer * t / threads, outer * (t + 1) / threads, 0, 0);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(run, t);
  run(0);
  for (std::thread& thread : pool) thread.join();
}

// Every position starts as the pad value; live positions are overwritten by the copy.
void FillPad(DType dtype, uint32_t bits, int64_t positions, std::vector<uint8_t>& out) {
  if (bits == 0 || out.empty()) return;
  const int width = std::max(StorageBits(dtype) / 8, 1);
  std::vector<uint8_t> unit(static_cast<size_t>(width), 0);
  VISA_CHECK(StoreElementBits(dtype, unit, 0, bits).ok(), "pad bits store");
  if (StorageBits(dtype) == 4) VISA_CHECK(StoreElementBits(dtype, unit, 1, bits).ok(), "pad bits store");
  for (size_t i = 0; i < out.size(); ++i) out[i] = unit[i % unit.size()];
  if (StorageBits(dtype) == 4 && positions % 2 != 0) out.back() &= 0x0f;  // no element there
}

// The first padding position of `dst` below `end` (the reference stops there when the pad bits do
// not fit).
std::optional<int64_t> FirstPad(const Mapping& dst, int64_t end) {
  const Layout layout = Layout::Of(dst);
  for (int64_t p = 0; p < end; ++p) {
    if (!layout.Evaluate(p).live()) return p;
  }
  return std::nullopt;
}

template <int kWidth>
absl::StatusOr<std::vector<uint8_t>> Copy(const HostTensor& src, const Mapping& dst, MovePolicy policy,
                                          std::vector<uint8_t> out, std::vector<uint8_t>& read) {
  const absl::Status fit = CheckBitsFit(src.dtype(), policy.pad_bits);
  if (fit.ok()) FillPad(src.dtype(), policy.pad_bits, dst.size(), out);
  const Copier<kWidth> copier{src.bytes().data(), out.data(), read.empty() ? nullptr : read.data()};
  std::optional<int64_t> stop;
  if (std::optional<std::vector<MoveLevel>> levels = MoveLevels(dst, src.mapping(), MatchRule::kByDigit)) {
    CopyNest(*std::move(levels), copier, policy.limits);
  } else {
    stop = ForEachRun(dst, src.mapping(), MatchRule::kByDigit, [&](absl::Span<const MoveRun> runs) {
      for (const MoveRun& r : runs) {
        for (int64_t i = 0; i < r.length; ++i) copier.One(r.dst + i, r.src + i * r.src_stride);
      }
    });
  }
  if (!fit.ok() && policy.pad_bits != 0 && FirstPad(dst, stop.value_or(dst.size()))) return fit;
  if (stop) return UnheldError(dst, *stop, dst.map(*stop).index, src.mapping());
  return out;
}

// The layout of `m` without a chip view's left-padded outer level, which the run lists peel
// (dsl/outer_padding.h).
Layout PeeledLayout(const Mapping& m) {
  const std::optional<PeeledPadding> peeled = PeelOuterPadding(m);
  return Layout::Of(peeled ? peeled->mapping : m);
}

}  // namespace

bool MoveByIndexIsCompiled(const HostTensor& src, const Mapping& dst, MovePolicy) {
  if (!dst.ok() || !dst.is_one_to_one() || !PeeledLayout(dst).affine()) return false;
  const int bits = StorageBits(src.dtype());
  return PeeledLayout(src.mapping()).invertible() && (bits == 4 || bits == 8 || bits == 16 || bits == 32);
}

absl::StatusOr<HostTensor> MoveByIndex(const HostTensor& src, const Mapping& dst, MovePolicy policy) {
  RETURN_IF_ERROR(dst.status());
  if (!MoveByIndexIsCompiled(src, dst, policy)) return MoveByIndexReference(src, dst, policy);
  std::vector<uint8_t> out;
  {  // the reference's output checks (storable dtype, size), in its order
    ASSIGN_OR_RETURN(HostTensor zeros, HostTensor::Zeros(src.dtype(), dst));
    out.assign(zeros.bytes().size(), 0);
  }
  std::vector<uint8_t> read(policy.allow_drop ? 0 : static_cast<size_t>(src.size()), 0);
  absl::StatusOr<std::vector<uint8_t>> copied;
  switch (StorageBits(src.dtype())) {
    case 4: copied = Copy<0>(src, dst, policy, std::move(out), read); break;
    case 8: copied = Copy<1>(src, dst, policy, std::move(out), read); break;
    case 16: copied = Copy<2>(src, dst, policy, std::move(out), read); break;
    default: copied = Copy<4>(src, dst, policy, std::move(out), read); break;
  }
  RETURN_IF_ERROR(copied.status());
  if (!policy.allow_drop) {
    if (std::optional<int64_t> q = FirstDropped(src.mapping(), [&](int64_t q) { return read[q] != 0; })) {
      return DroppedError(src.mapping(), *q, src.mapping().map(*q).index, dst);
    }
  }
  return HostTensor::FromBytes(src.dtype(), dst, *std::move(copied));
}

}  // namespace visa::interp
