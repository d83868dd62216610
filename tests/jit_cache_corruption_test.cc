// A damaged disk cache entry is recompiled, never loaded: truncated at every part of the entry,
// a flipped byte in its header, key or object, another kernel's entry copied over it, an entry
// whose checksum is right but whose payload is no object or whose object does not define the
// symbol it names. After each, the kernel computes what a host loop computes and its entry is
// stored again, so the next cache loads it. Works in its own temporary directory.
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jit/contraction_epilogue.h"
#include "jit/element_op.h"
#include "jit/kernel_cache.h"
#include "jit/object_cache.h"

namespace visa::jit {
namespace {

namespace fs = std::filesystem;

// Two kernels moving 64 int32 elements: a transpose of 8 x 8 and rows read with a skew of one.
MoveNest Transpose() { return MoveNest{{{8, 1, 8}, {8, 8, 1}}}; }
MoveNest Skew() { return MoveNest{{{8, 1, 1}, {8, 8, 9}}}; }

// What `nest` writes, computed on the host: dst[d] = src[s] for each pair, src[i] = i + 100.
std::vector<int32_t> HostMove(const MoveNest& nest) {
  std::vector<int32_t> dst(64, -1);
  for (int64_t outer = 0; outer < nest.levels[1].count; ++outer) {
    for (int64_t inner = 0; inner < nest.levels[0].count; ++inner) {
      dst[outer * nest.levels[1].dst_stride + inner * nest.levels[0].dst_stride] =
          static_cast<int32_t>(outer * nest.levels[1].src_stride + inner * nest.levels[0].src_stride + 100);
    }
  }
  return dst;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

class CacheCorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "visa_cache_corruption_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  std::unique_ptr<KernelCache> NewCache() const {
    absl::StatusOr<std::unique_ptr<KernelCache>> cache = KernelCache::Create(1, {.disk_cache = true, .cache_dir = dir_});
    EXPECT_TRUE(cache.ok()) << cache.status();
    return *std::move(cache);
  }

  // Runs `nest` through a new cache; returns its stats. The bytes must be the host's.
  JitStats RunOnce(const MoveNest& nest) const {
    std::unique_ptr<KernelCache> cache = NewCache();
    std::vector<int32_t> src(72);
    std::iota(src.begin(), src.end(), 100);
    std::vector<int32_t> dst(64, -1);
    absl::StatusOr<int64_t> moved = cache->RunNest(nest, CopyOp(DType::kI32), reinterpret_cast<uint8_t*>(dst.data()),
                                                   64, reinterpret_cast<const uint8_t*>(src.data()), 72);
    EXPECT_TRUE(moved.ok()) << moved.status();
    EXPECT_EQ(dst, HostMove(nest)) << nest.ToString();
    return cache->stats();
  }

  // The entries in the directory (hidden temporaries too, so leftovers show).
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(dir_)) names.push_back(e.path().string());
    return names;
  }

  // Fills the cache with `nest`'s kernel and returns its entry's path.
  std::string Filled(const MoveNest& nest) const {
    const std::vector<std::string> before = Entries();
    const JitStats stats = RunOnce(nest);
    EXPECT_EQ(stats.compiles, 1);
    EXPECT_EQ(stats.disk_writes, 1);
    for (const std::string& path : Entries()) {
      if (std::find(before.begin(), before.end(), path) == before.end()) return path;
    }
    ADD_FAILURE() << "no entry was written";
    return "";
  }

  // After `damage` to the transpose's entry, a new cache recompiles it (right bytes), stores it
  // again, and the cache after that loads it.
  void ExpectRecompiledAfter(const std::string& what, const std::function<void(const std::string&)>& damage) {
    SCOPED_TRACE(what);
    const std::string path = Filled(Transpose());
    const std::string intact = ReadAll(path);
    damage(path);
    ASSERT_NE(ReadAll(path), intact) << "the damage changed nothing";
    const JitStats repaired = RunOnce(Transpose());
    EXPECT_EQ(repaired.compiles, 1);
    EXPECT_EQ(repaired.disk_hits, 0);
    EXPECT_EQ(repaired.disk_writes, 1);
    EXPECT_EQ(ReadAll(path), intact) << "the entry is stored again as the compile makes it";
    const JitStats loaded = RunOnce(Transpose());
    EXPECT_EQ(loaded.compiles, 0);
    EXPECT_EQ(loaded.disk_hits, 1);
    fs::remove_all(dir_);
    fs::create_directory(dir_);
  }

  // The key an entry's file is named by.
  static std::string KeyOf(const std::string& path) { return fs::path(path).stem().string(); }

  std::string dir_;
};

TEST_F(CacheCorruptionTest, AnIntactEntryIsLoaded) {
  Filled(Transpose());
  const JitStats second = RunOnce(Transpose());
  EXPECT_EQ(second.compiles, 0);
  EXPECT_EQ(second.disk_hits, 1);
}

TEST_F(CacheCorruptionTest, TruncatedEntriesAreRecompiled) {
  // The header is magic (8 bytes), key (64), length (8), checksum (8); then the payload.
  for (size_t keep : {size_t{0}, size_t{4}, size_t{8}, size_t{40}, size_t{72}, size_t{80}, size_t{88}, size_t{100}}) {
    ExpectRecompiledAfter("kept " + std::to_string(keep) + " bytes",
                          [keep](const std::string& path) { fs::resize_file(path, keep); });
  }
  ExpectRecompiledAfter("half the entry", [](const std::string& path) { fs::resize_file(path, fs::file_size(path) / 2); });
  ExpectRecompiledAfter("all but its last byte",
                        [](const std::string& path) { fs::resize_file(path, fs::file_size(path) - 1); });
  ExpectRecompiledAfter("a byte appended", [](const std::string& path) { WriteAll(path, ReadAll(path) + "x"); });
}

TEST_F(CacheCorruptionTest, FlippedBytesAreRecompiled) {
  for (size_t at : {size_t{0}, size_t{7}, size_t{8}, size_t{71}, size_t{72}, size_t{80}, size_t{88}, size_t{89},
                    size_t{200}}) {
    ExpectRecompiledAfter("byte " + std::to_string(at) + " flipped", [at](const std::string& path) {
      std::string bytes = ReadAll(path);
      ASSERT_LT(at, bytes.size());
      bytes[at] = static_cast<char>(bytes[at] ^ 0x20);
      WriteAll(path, bytes);
    });
  }
  ExpectRecompiledAfter("the last byte flipped", [](const std::string& path) {
    std::string bytes = ReadAll(path);
    bytes.back() = static_cast<char>(bytes.back() ^ 0x01);
    WriteAll(path, bytes);
  });
}

TEST_F(CacheCorruptionTest, AnotherKernelsEntryIsNotLoaded) {
  // Whole and intact, but the skew kernel's: copied over the transpose's file, it is a miss (an
  // entry names its own key), and the transpose computes the transpose.
  const std::string skew = Filled(Skew());
  ExpectRecompiledAfter("the skew kernel's entry copied over it",
                        [&](const std::string& path) { WriteAll(path, ReadAll(skew)); });
}

TEST_F(CacheCorruptionTest, AWellFormedEntryThatDoesNotLinkIsRecompiled) {
  // Entries with a right checksum written through the cache itself, so only their payload is wrong.
  ExpectRecompiledAfter("no symbol line", [](const std::string& path) {
    DiskObjectCache cache(fs::path(path).parent_path().string());
    ASSERT_TRUE(cache.Store(KeyOf(path), "not an entry").ok());
  });
  ExpectRecompiledAfter("a symbol but no object", [](const std::string& path) {
    DiskObjectCache cache(fs::path(path).parent_path().string());
    std::string payload = *cache.Load(KeyOf(path));
    ASSERT_TRUE(cache.Store(KeyOf(path), payload.substr(0, payload.find('\n') + 1) + "\x7f" "ELF garbage").ok());
  });
  // The skew's object under the transpose's symbol: it links, but does not define the symbol.
  const std::string skew = Filled(Skew());
  ExpectRecompiledAfter("another kernel's object", [&](const std::string& path) {
    DiskObjectCache cache(fs::path(path).parent_path().string());
    const std::string own = *cache.Load(KeyOf(path));
    const std::string other = *cache.Load(KeyOf(skew));
    ASSERT_TRUE(cache.Store(KeyOf(path), own.substr(0, own.find('\n')) + other.substr(other.find('\n'))).ok());
  });
}

}  // namespace
}  // namespace visa::jit
