// The JIT's on-disk object cache: a second JIT loads every kernel instead of compiling it and
// computes the same bytes; corrupt entries are misses; the cache can be turned off; keys change
// with the target; concurrent writers never expose half an entry. Every test works in its own
// temporary directory (VISA_CACHE_DIR), never in the user's ~/.cache.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/jit_backend.h"
#include "jit/object_cache.h"
#include "runtime/recording_backend.h"
#include "samples/sample.h"
#include "tools/run_command.h"

namespace visa::jit {
namespace {

namespace fs = std::filesystem;

// Sets (or unsets) an environment variable for one test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    Set(value);
  }
  ~ScopedEnv() { Set(old_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  void Set(const std::optional<std::string>& value) {
    if (value) {
      setenv(name_, value->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  const char* name_;
  std::optional<std::string> old_;
};

struct Recorded {
  absl::StatusOr<samples::SampleRun> run;
  std::vector<RecordingBackend::Record> records;
  JitStats stats;
};

class ObjectCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "visa_object_cache_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    cache_dir_.emplace("VISA_CACHE_DIR", dir_);
    switch_.emplace("VISA_JIT_CACHE", std::nullopt);  // CI may turn the cache off; these tests need it
  }
  void TearDown() override {
    switch_.reset();
    cache_dir_.reset();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // The entries in the cache directory (hidden temporaries included, so leftovers show).
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    std::error_code error;
    for (const fs::directory_entry& e : fs::directory_iterator(dir_, error)) names.push_back(e.path().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  static std::unique_ptr<JitBackend> NewJit(bool disk_cache = true, const std::string& cache_dir = "") {
    JitOptions options;
    options.threads = 2;
    options.disk_cache = disk_cache;
    options.cache_dir = cache_dir;
    absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create(options);
    EXPECT_TRUE(jit.ok()) << jit.status();
    return *std::move(jit);
  }

  static Recorded Run(JitBackend& jit, const std::string& name) {
    const samples::Sample* sample = samples::FindSample(name);
    EXPECT_NE(sample, nullptr) << name;
    RecordingBackend recording(jit);
    Recorded r{sample->Run(recording), recording.records(), {}};
    r.stats = jit.stats();
    EXPECT_TRUE(r.run.ok()) << r.run.status();
    if (r.run.ok()) {
      EXPECT_FALSE(r.run->mismatch) << *r.run->mismatch;
    }
    return r;
  }

  static std::optional<std::string> Difference(const Recorded& a, const Recorded& b) {
    return FirstDifference(a.run->program, a.records, "first", b.records, "second");
  }

  std::string dir_;
  std::optional<ScopedEnv> cache_dir_, switch_;
};

CodegenConfig SomeConfig() { return {"19.1.7", "znver4", "+avx2,+avx512f", "O2 codegen 3"}; }

TEST_F(ObjectCacheTest, ASecondJitLoadsEveryKernelAndCompilesNothing) {
  std::unique_ptr<JitBackend> cold = NewJit();
  const Recorded first = Run(*cold, "gemm_k64");
  ASSERT_TRUE(first.run.ok());
  EXPECT_GT(first.stats.compiles, 0);
  EXPECT_EQ(first.stats.disk_hits, 0);
  EXPECT_EQ(first.stats.disk_writes, first.stats.compiles);
  EXPECT_EQ(static_cast<int64_t>(Entries().size()), first.stats.compiles);

  std::unique_ptr<JitBackend> warm = NewJit();
  const Recorded second = Run(*warm, "gemm_k64");
  ASSERT_TRUE(second.run.ok());
  EXPECT_EQ(second.stats.compiles, 0);
  EXPECT_EQ(second.stats.disk_hits, first.stats.compiles);
  EXPECT_EQ(second.stats.disk_writes, 0);
  EXPECT_EQ(Difference(first, second), std::nullopt);
}

// The second process of the test below (kernel keys may hold per-process hashes, which only
// another process shows); on its own it is skipped.
TEST(ObjectCacheChild, AWarmProcessCompilesNothing) {
  if (std::getenv("VISA_OBJECT_CACHE_CHILD") == nullptr) GTEST_SKIP() << "run by ASecondProcessCompilesNothing";
  JitOptions options;
  options.threads = 2;  // as the parent's NewJit: kernels split over threads are keyed by the count
  options.disk_cache = true;
  std::unique_ptr<JitBackend> jit = *JitBackend::Create(options);
  absl::StatusOr<samples::SampleRun> run = samples::FindSample("gemm_k64")->Run(*jit);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->mismatch) << *run->mismatch;
  EXPECT_EQ(jit->stats().compiles, 0);
  EXPECT_GT(jit->stats().disk_hits, 0);
}

TEST_F(ObjectCacheTest, ASecondProcessCompilesNothing) {
  std::unique_ptr<JitBackend> cold = NewJit();
  EXPECT_GT(Run(*cold, "gemm_k64").stats.compiles, 0);
  ScopedEnv child("VISA_OBJECT_CACHE_CHILD", "1");
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::string command =
      absl::StrCat("'", self, "' --gtest_filter=ObjectCacheChild.AWarmProcessCompilesNothing >/dev/null");
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

TEST_F(ObjectCacheTest, CorruptEntriesAreMissesAndAreRewritten) {
  std::unique_ptr<JitBackend> cold = NewJit();
  const Recorded first = Run(*cold, "dot");
  ASSERT_TRUE(first.run.ok());
  const std::vector<std::string> entries = Entries();
  ASSERT_GE(entries.size(), 3u);
  // Half an entry, an entry whose last byte rotted, and an empty file.
  fs::resize_file(entries[0], fs::file_size(entries[0]) / 2);
  {
    std::fstream rot(entries[1], std::ios::in | std::ios::out | std::ios::binary);
    rot.seekg(-1, std::ios::end);
    const char last = static_cast<char>(rot.get());
    rot.seekp(-1, std::ios::end);
    rot.put(static_cast<char>(last ^ 0x5a));
  }
  fs::resize_file(entries[2], 0);

  std::unique_ptr<JitBackend> repaired = NewJit();
  const Recorded second = Run(*repaired, "dot");
  ASSERT_TRUE(second.run.ok());
  // The three rebuilt (compiled, or linked once more where their code equals a loaded kernel's) and
  // stored again; the others loaded.
  EXPECT_GE(second.stats.compiles, 1);
  EXPECT_LE(second.stats.compiles, 3);
  EXPECT_EQ(second.stats.disk_hits, static_cast<int64_t>(entries.size()) - 3);
  EXPECT_EQ(second.stats.disk_writes, 3);
  EXPECT_EQ(Difference(first, second), std::nullopt);

  std::unique_ptr<JitBackend> third = NewJit();
  EXPECT_EQ(Run(*third, "dot").stats.compiles, 0);
}

TEST_F(ObjectCacheTest, ATurnedOffCacheWritesNothing) {
  std::unique_ptr<JitBackend> off = NewJit(/*disk_cache=*/false);
  const Recorded by_option = Run(*off, "dot");
  EXPECT_GT(by_option.stats.compiles, 0);
  EXPECT_EQ(by_option.stats.disk_writes, 0);
  EXPECT_TRUE(Entries().empty());

  ScopedEnv env("VISA_JIT_CACHE", "OFF");
  std::unique_ptr<JitBackend> asked = NewJit(/*disk_cache=*/true);
  const Recorded by_environment = Run(*asked, "dot");
  EXPECT_GT(by_environment.stats.compiles, 0);
  EXPECT_EQ(by_environment.stats.disk_writes + by_environment.stats.disk_hits, 0);
  EXPECT_TRUE(Entries().empty());
}

TEST_F(ObjectCacheTest, TheRunCommandApiKeepsKernelsInMemory) {
  // Only the command line turns the disk cache on; tests calling the command function write nothing.
  std::ostringstream out, err;
  EXPECT_EQ(cli::RunSampleCommand({.sample = "transpose_engine", .backend = "jit"}, out, err), 0) << err.str();
  EXPECT_TRUE(Entries().empty());
}

TEST_F(ObjectCacheTest, AnUnusableDirectoryOnlyCostsCompiles) {
  const std::string file = dir_ + "/a_file";
  std::ofstream(file) << "not a directory";
  std::unique_ptr<JitBackend> jit = NewJit(true, file + "/cache");
  const Recorded r = Run(*jit, "dot");
  EXPECT_GT(r.stats.compiles, 0);
  EXPECT_EQ(r.stats.disk_writes, 0);
}

TEST(ObjectKey, ChangesWithEveryPartOfTheTarget) {
  const CodegenConfig base = SomeConfig();
  const std::string key = ObjectKey(base, "define void @f() { ret void }");
  EXPECT_TRUE(IsObjectKey(key)) << key;
  EXPECT_EQ(ObjectKey(base, "define void @f() { ret void }"), key);
  EXPECT_NE(ObjectKey(base, "define void @g() { ret void }"), key);
  CodegenConfig other = base;
  other.llvm_version = "19.1.8";
  EXPECT_NE(ObjectKey(other, "define void @f() { ret void }"), key);
  other = base;
  other.cpu = "skylake-avx512";
  EXPECT_NE(ObjectKey(other, "define void @f() { ret void }"), key);
  other = base;
  other.features = "+avx2";
  EXPECT_NE(ObjectKey(other, "define void @f() { ret void }"), key);
  other = base;
  other.optimization = "O3 codegen 3";
  EXPECT_NE(ObjectKey(other, "define void @f() { ret void }"), key);
  // Parts are delimited: moving text from one part to the next is another key.
  other = base;
  other.cpu = "znver4+avx2,";
  other.features = "+avx512f";
  EXPECT_NE(ObjectKey(other, "define void @f() { ret void }"), key);
}

TEST_F(ObjectCacheTest, AnObjectOfAnotherTargetIsAMiss) {
  DiskObjectCache cache(dir_);
  CodegenConfig host = SomeConfig(), other_cpu = SomeConfig(), other_llvm = SomeConfig();
  other_cpu.cpu = "skylake-avx512";
  other_llvm.llvm_version = "20.1.0";
  const std::string ir = "define void @f() { ret void }";
  ASSERT_TRUE(cache.Store(ObjectKey(host, ir), "object bytes").ok());
  EXPECT_EQ(cache.Load(ObjectKey(other_cpu, ir)), std::nullopt);
  EXPECT_EQ(cache.Load(ObjectKey(other_llvm, ir)), std::nullopt);
  EXPECT_EQ(cache.Load(ObjectKey(host, ir)), "object bytes");
  EXPECT_EQ(cache.hits(), 1);
  EXPECT_EQ(cache.writes(), 1);
}

TEST_F(ObjectCacheTest, KeysThatAreNotKeysNameNoFile) {
  DiskObjectCache cache(dir_);
  for (const std::string& bad : std::vector<std::string>{"", "../../etc/passwd", std::string(64, 'A'), std::string(63, 'a')}) {
    EXPECT_EQ(cache.Load(bad), std::nullopt) << bad;
    EXPECT_EQ(cache.Store(bad, "x").code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_TRUE(Entries().empty());
  // A directory where an entry would be is a miss too.
  const std::string key = ObjectKey(SomeConfig(), "ir");
  fs::create_directory(cache.PathOf(key));
  EXPECT_EQ(cache.Load(key), std::nullopt);
}

TEST(CacheDirectory, ExplicitThenVisaThenXdgThenHome) {
  ScopedEnv visa("VISA_CACHE_DIR", "/v"), xdg("XDG_CACHE_HOME", "/x"), home("HOME", "/h");
  EXPECT_EQ(CacheDirectory("/explicit"), "/explicit");
  EXPECT_EQ(CacheDirectory(""), "/v");
  {
    ScopedEnv no_visa("VISA_CACHE_DIR", std::nullopt);
    EXPECT_EQ(CacheDirectory(""), "/x/visa/jit");
    ScopedEnv relative_xdg("XDG_CACHE_HOME", "relative");  // invalid by the XDG spec: ignored
    EXPECT_EQ(CacheDirectory(""), "/h/.cache/visa/jit");
    ScopedEnv no_home("HOME", std::nullopt);
    EXPECT_EQ(CacheDirectory(""), std::nullopt);
  }
}

TEST(DiskCacheSwitch, OffZeroFalseNoTurnItOff) {
  for (const char* off : {"off", "OFF", "0", "false", "No"}) {
    ScopedEnv env("VISA_JIT_CACHE", off);
    EXPECT_TRUE(DiskCacheDisabledByEnvironment()) << off;
  }
  for (std::optional<std::string> on : {std::optional<std::string>("on"), std::optional<std::string>("1"),
                                        std::optional<std::string>(""), std::optional<std::string>()}) {
    ScopedEnv env("VISA_JIT_CACHE", on);
    EXPECT_FALSE(DiskCacheDisabledByEnvironment()) << on.value_or("(unset)");
  }
}

// Writers storing one key (as concurrent processes would, each with its own cache object) while
// readers load it: once the entry exists, a reader always sees one writer's whole object (a
// rename replaces it at once; rewriting in place would show readers a short file: a miss), and
// no temporary is left.
TEST_F(ObjectCacheTest, ConcurrentWritersNeverExposeHalfAnEntry) {
  const std::string key = ObjectKey(SomeConfig(), "shared kernel");
  constexpr int kWriters = 3, kReaders = 2, kRounds = 30;
  std::vector<std::string> objects;
  for (int w = 0; w < kWriters; ++w) objects.push_back(std::string(size_t{1} << 18, static_cast<char>('a' + w)));
  ASSERT_TRUE(DiskObjectCache(dir_).Store(key, objects[0]).ok());
  std::vector<int> bad(kReaders, 0);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      DiskObjectCache cache(dir_);
      for (int r = 0; r < kRounds; ++r) EXPECT_TRUE(cache.Store(key, objects[w]).ok());
    });
  }
  for (int reader = 0; reader < kReaders; ++reader) {
    threads.emplace_back([&, reader] {
      DiskObjectCache cache(dir_);
      for (int r = 0; r < 4 * kRounds; ++r) {
        std::optional<std::string> got = cache.Load(key);
        if (!got || std::find(objects.begin(), objects.end(), *got) == objects.end()) ++bad[reader];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int reader = 0; reader < kReaders; ++reader) EXPECT_EQ(bad[reader], 0);
  DiskObjectCache cache(dir_);
  std::optional<std::string> final_object = cache.Load(key);
  ASSERT_TRUE(final_object.has_value());
  EXPECT_NE(std::find(objects.begin(), objects.end(), *final_object), objects.end());
  EXPECT_EQ(Entries(), std::vector<std::string>{cache.PathOf(key)});
}

}  // namespace
}  // namespace visa::jit
