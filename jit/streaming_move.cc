// Streaming moves: the choice rule, the vector-cut nest, the host's cache size and the fence.
#include "jit/streaming_move.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <cstdint>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "dsl/status_macros.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace visa::jit {
namespace {

constexpr int64_t kFallbackCacheBytes = int64_t{32} << 20;

constexpr int64_t kFallbackLevel2Bytes = int64_t{1} << 20;

// The size of the cache of `wanted` level (a unified or data cache) the kernel reports for cpu 0
// ("32768K"), or 0.
int64_t SysfsCacheBytes(int wanted) {
  for (int index = 0; index < 8; ++index) {
    const std::string dir = absl::StrCat("/sys/devices/system/cpu/cpu0/cache/index", index, "/");
    std::ifstream level_file(dir + "level");
    int level = 0;
    if (!(level_file >> level)) break;
    if (level != wanted) continue;
    std::ifstream type_file(dir + "type");
    std::string type;
    if ((type_file >> type) && type == "Instruction") continue;
    std::ifstream size_file(dir + "size");
    std::string word;
    if (!(size_file >> word)) return 0;
    absl::string_view text = word;
    int64_t scale = 1;
    if (absl::ConsumeSuffix(&text, "K")) scale = 1024;
    else if (absl::ConsumeSuffix(&text, "M")) scale = 1024 * 1024;
    int64_t value = 0;
    return absl::SimpleAtoi(text, &value) && value > 0 ? value * scale : 0;
  }
  return 0;
}

int64_t ElementBytes(const ElementOp& op) { return StorageBits(op.to) / 8; }

// The cache of `level`: what sysfs reports, else sysconf(`sysconf_name`), else `fallback`.
int64_t HostCacheBytes(int level, int sysconf_name, int64_t fallback) {
  if (const int64_t sysfs = SysfsCacheBytes(level); sysfs > 0) return sysfs;
  const long reported = sysconf(sysconf_name);
  return reported > 0 ? static_cast<int64_t>(reported) : fallback;
}

// A threshold: the environment variable `name` when set (a byte count, or "off"), else
// `from_caches`; a value that is neither is reported once and ignored.
int64_t MinBytesFromEnvironment(const char* name, int64_t from_caches) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return from_caches;
  if (std::optional<int64_t> parsed = ParseStreamingMinBytes(text)) return *parsed;
  std::fprintf(stderr, "visa: %s=%s is neither a byte count nor \"off\"; using %lld\n", name, text,
               static_cast<long long>(from_caches));
  return from_caches;
}

}  // namespace

const char* ToString(StreamingChoice choice) {
  switch (choice) {
    case StreamingChoice::kStream: return "stream";
    case StreamingChoice::kTooSmall: return "too small";
    case StreamingChoice::kShape: return "not whole vectors";
    case StreamingChoice::kMisaligned: return "misaligned base";
  }
  return "?";
}

bool HasStreamingShape(const MoveNest& nest, const ElementOp& op) {
  // A 4-bit store rewrites the byte it shares with its neighbour: never a whole vector of its own.
  if (StorageBits(op.to) % 8 != 0 || nest.levels.empty()) return false;
  const int64_t bytes = ElementBytes(op);
  const NestLevel& inner = nest.levels.front();
  if (inner.dst_stride != 1 || (inner.count * bytes) % kStreamVectorBytes != 0) return false;
  for (size_t k = 1; k < nest.levels.size(); ++k) {
    const NestLevel& level = nest.levels[k];
    if (level.count > 1 && (level.dst_stride * bytes) % kStreamVectorBytes != 0) return false;
  }
  return true;
}

StreamingChoice ChooseStreaming(const MoveNest& nest, const ElementOp& op, const void* dst_base, int64_t min_bytes) {
  if (!HasStreamingShape(nest, op)) return StreamingChoice::kShape;
  if (nest.elements() * ElementBytes(op) < min_bytes) return StreamingChoice::kTooSmall;
  if (reinterpret_cast<uintptr_t>(dst_base) % kStreamVectorBytes != 0) return StreamingChoice::kMisaligned;
  return StreamingChoice::kStream;
}

MoveNest StreamingNest(const MoveNest& nest, const ElementOp& op) {
  VISA_CHECK(HasStreamingShape(nest, op), "a streaming nest of a move that cannot stream");
  const int64_t lanes = kStreamVectorBytes / ElementBytes(op);
  const NestLevel inner = nest.levels.front();
  // The kernel splits the outermost level over threads, so the vector level is never the only one.
  if (inner.count == lanes && nest.levels.size() > 1) return nest;
  MoveNest cut = nest;
  cut.levels.front() = NestLevel{lanes, 1, inner.src_stride};
  cut.levels.insert(cut.levels.begin() + 1, NestLevel{inner.count / lanes, lanes, lanes * inner.src_stride});
  return cut;
}

int64_t StreamingMinBytes(int64_t llc_bytes) {
  return (llc_bytes > 0 ? llc_bytes : kFallbackCacheBytes) / 4;
}

int64_t HostLastLevelCacheBytes() {
  static const int64_t bytes = HostCacheBytes(3, _SC_LEVEL3_CACHE_SIZE, kFallbackCacheBytes);
  return bytes;
}

std::optional<int64_t> ParseStreamingMinBytes(absl::string_view text) {
  if (text == "off") return std::numeric_limits<int64_t>::max();
  int64_t bytes = 0;
  if (!absl::SimpleAtoi(text, &bytes) || bytes < 0) return std::nullopt;
  return bytes;
}

int64_t DefaultStreamingMinBytes() {
  static const int64_t bytes =
      MinBytesFromEnvironment("VISA_JIT_STREAMING_MIN_BYTES", StreamingMinBytes(HostLastLevelCacheBytes()));
  return bytes;
}

int64_t RelaunchStreamingMinBytes(int64_t first_run_min_bytes, int64_t level2_bytes) {
  if (first_run_min_bytes == std::numeric_limits<int64_t>::max()) return first_run_min_bytes;  // "off"
  const int64_t level2 = level2_bytes > 0 ? level2_bytes : kFallbackLevel2Bytes;
  return std::min(first_run_min_bytes, 2 * level2);
}

int64_t HostLevel2CacheBytes() {
  static const int64_t bytes = HostCacheBytes(2, _SC_LEVEL2_CACHE_SIZE, kFallbackLevel2Bytes);
  return bytes;
}

int64_t DefaultRelaunchStreamingMinBytes() {
  static const int64_t bytes = MinBytesFromEnvironment(
      "VISA_JIT_RELAUNCH_STREAMING_MIN_BYTES",
      RelaunchStreamingMinBytes(DefaultStreamingMinBytes(), HostLevel2CacheBytes()));
  return bytes;
}

void FenceStreamingStores() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_sfence();
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace visa::jit
