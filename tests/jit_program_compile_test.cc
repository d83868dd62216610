// A program's kernels compile together (Compiler::CompileProgram): N kernels collected while
// preparing make one module per optimization level and, with the disk cache on, one entry that a
// second cache links whole, compiling nothing; a kernel asked for later still compiles lazily;
// the code computes what the host computes; a corrupt or foreign program entry is a miss.
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "interp/interpreter.h"
#include "jit/element_op.h"
#include "jit/jit_backend.h"
#include "jit/kernel_cache.h"
#include "jit/object_cache.h"
#include "jit/program_entry.h"
#include "runtime/recording_backend.h"
#include "runtime/trace_backend.h"
#include "runtime/trace_options.h"
#include "samples/sample.h"

namespace visa::jit {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kSourcePositions = 8 * 40 + 8;

// Distinct small kernels: 64 int32 elements read as 8 rows of 8 with row stride 1 and column
// stride `k` (k > 8, so no two levels merge and each is its own kernel).
MoveNest Strided(int64_t k) { return MoveNest{{{8, 1, k}, {8, 8, 1}}}; }

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

class ProgramCompileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "visa_program_compile_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  std::unique_ptr<KernelCache> NewCache(bool disk_cache = true) const {
    absl::StatusOr<std::unique_ptr<KernelCache>> cache = KernelCache::Create(
        1, {.disk_cache = disk_cache, .cache_dir = dir_, .compile_threads = 1});
    EXPECT_TRUE(cache.ok()) << cache.status();
    return *std::move(cache);
  }

  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(dir_)) names.push_back(e.path().string());
    return names;
  }

  // Collects the kernels of `nests` and compiles them as one program.
  static void Prepare(KernelCache& cache, const std::vector<MoveNest>& nests) {
    cache.CollectKernels();
    for (const MoveNest& nest : nests) ASSERT_TRUE(cache.CompileNest(nest, CopyOp(DType::kI32)).ok());
    const absl::Status compiled = cache.CompileCollected();
    ASSERT_TRUE(compiled.ok()) << compiled;
  }

  // Runs each nest and checks its bytes against the host's.
  static void ExpectHostBytes(KernelCache& cache, const std::vector<MoveNest>& nests) {
    std::vector<int32_t> src(kSourcePositions);
    std::iota(src.begin(), src.end(), 100);
    for (const MoveNest& nest : nests) {
      std::vector<int32_t> dst(64, -1);
      absl::StatusOr<int64_t> moved = cache.RunNest(nest, CopyOp(DType::kI32), reinterpret_cast<uint8_t*>(dst.data()),
                                                    64, reinterpret_cast<const uint8_t*>(src.data()), kSourcePositions);
      ASSERT_TRUE(moved.ok()) << moved.status();
      EXPECT_EQ(dst, HostMove(nest)) << nest.ToString();
    }
  }

  static std::vector<MoveNest> Nests(int64_t first, int count) {
    std::vector<MoveNest> nests;
    for (int i = 0; i < count; ++i) nests.push_back(Strided(first + i));
    return nests;
  }

  std::string dir_;
};

TEST_F(ProgramCompileTest, NSmallKernelsCompileAsOneModule) {
  std::unique_ptr<KernelCache> cache = NewCache(/*disk_cache=*/false);
  const std::vector<MoveNest> nests = Nests(9, 12);
  Prepare(*cache, nests);
  EXPECT_EQ(cache->stats().compiles, 12);
  EXPECT_EQ(cache->stats().modules, 1);
  // Running compiles nothing more: every kernel was linked by the program.
  ExpectHostBytes(*cache, nests);
  EXPECT_EQ(cache->stats().compiles, 12);
  EXPECT_EQ(cache->stats().modules, 1);
}

// Kernels of different keys whose code is equal (copies of different lengths: the length is an
// argument) compile once in a program, as they link once when compiled lazily.
TEST_F(ProgramCompileTest, EqualCodeUnderTwoKeysCompilesOnce) {
  std::unique_ptr<KernelCache> cache = NewCache(/*disk_cache=*/false);
  cache->CollectKernels();
  ASSERT_TRUE(cache->CompileNest(MoveNest{{{64, 1, 1}}}, CopyOp(DType::kI32)).ok());
  ASSERT_TRUE(cache->CompileNest(MoveNest{{{32, 1, 1}}}, CopyOp(DType::kI32)).ok());
  ASSERT_TRUE(cache->CompileCollected().ok());
  EXPECT_EQ(cache->stats().compiles, 1);
  EXPECT_EQ(cache->stats().modules, 1);
  std::vector<int32_t> src(64), dst(64, -1);
  std::iota(src.begin(), src.end(), 100);
  for (int64_t length : {32, 64}) {
    ASSERT_TRUE(cache->RunNest(MoveNest{{{length, 1, 1}}}, CopyOp(DType::kI32), reinterpret_cast<uint8_t*>(dst.data()),
                               64, reinterpret_cast<const uint8_t*>(src.data()), 64).ok());
    EXPECT_EQ(std::vector<int32_t>(dst.begin(), dst.begin() + length),
              std::vector<int32_t>(src.begin(), src.begin() + length));
  }
  EXPECT_EQ(cache->stats().compiles, 1);
}

TEST_F(ProgramCompileTest, CollectedAddressesAreNullUntilCompiled) {
  std::unique_ptr<KernelCache> cache = NewCache(/*disk_cache=*/false);
  cache->CollectKernels();
  EXPECT_TRUE(cache->collecting());
  ASSERT_TRUE(cache->CompileNest(Strided(9), CopyOp(DType::kI32)).ok());
  EXPECT_EQ(cache->stats().compiles, 0);
  cache->DiscardCollected();
  EXPECT_FALSE(cache->collecting());
  // Discarded kernels compile when asked for again, lazily.
  ExpectHostBytes(*cache, {Strided(9)});
  EXPECT_EQ(cache->stats().compiles, 1);
  EXPECT_EQ(cache->stats().modules, 1);
}

TEST_F(ProgramCompileTest, ASecondCacheLinksTheProgramAsOneEntryAndCompilesNothing) {
  const std::vector<MoveNest> nests = Nests(9, 10);
  {
    std::unique_ptr<KernelCache> cold = NewCache();
    Prepare(*cold, nests);
    EXPECT_EQ(cold->stats().modules, 1);
    EXPECT_EQ(cold->stats().disk_writes, 1);
  }
  EXPECT_EQ(Entries().size(), 1u);
  std::unique_ptr<KernelCache> warm = NewCache();
  Prepare(*warm, nests);
  EXPECT_EQ(warm->stats().compiles, 0);
  EXPECT_EQ(warm->stats().modules, 0);
  EXPECT_EQ(warm->stats().disk_loads, 1);
  EXPECT_EQ(warm->stats().disk_hits, 10);
  EXPECT_EQ(warm->stats().disk_writes, 0);
  ExpectHostBytes(*warm, nests);
  EXPECT_EQ(warm->stats().compiles, 0);
}

TEST_F(ProgramCompileTest, TheOrderOfTheOpsDoesNotChangeTheEntry) {
  std::vector<MoveNest> nests = Nests(9, 6);
  { Prepare(*NewCache(), nests); }
  std::reverse(nests.begin(), nests.end());
  std::unique_ptr<KernelCache> warm = NewCache();
  Prepare(*warm, nests);
  EXPECT_EQ(warm->stats().compiles, 0);
  EXPECT_EQ(warm->stats().disk_loads, 1);
}

TEST_F(ProgramCompileTest, AUsersNewKernelStillCompilesLazilyAndAloneOnceTheRestIsLinked) {
  std::unique_ptr<KernelCache> cache = NewCache();
  const std::vector<MoveNest> program = Nests(9, 8);
  Prepare(*cache, program);
  EXPECT_EQ(cache->stats().modules, 1);
  // A kernel no program announced: compiled when it runs, one module of its own.
  ExpectHostBytes(*cache, {Strided(30)});
  EXPECT_EQ(cache->stats().compiles, 9);
  EXPECT_EQ(cache->stats().modules, 2);
  // A program of the known kernels and one new one compiles only the new one.
  std::vector<MoveNest> grown = program;
  grown.push_back(Strided(31));
  Prepare(*cache, grown);
  EXPECT_EQ(cache->stats().compiles, 10);
  EXPECT_EQ(cache->stats().modules, 3);
  ExpectHostBytes(*cache, grown);
  EXPECT_EQ(cache->stats().compiles, 10);
}

TEST_F(ProgramCompileTest, ACorruptProgramEntryIsAMissAndIsRewritten) {
  const std::vector<MoveNest> nests = Nests(9, 5);
  { Prepare(*NewCache(), nests); }
  const std::vector<std::string> entries = Entries();
  ASSERT_EQ(entries.size(), 1u);
  fs::resize_file(entries[0], fs::file_size(entries[0]) / 2);
  std::unique_ptr<KernelCache> repaired = NewCache();
  Prepare(*repaired, nests);
  EXPECT_EQ(repaired->stats().compiles, 5);
  EXPECT_EQ(repaired->stats().disk_loads, 0);
  EXPECT_EQ(repaired->stats().disk_writes, 1);
  ExpectHostBytes(*repaired, nests);
  std::unique_ptr<KernelCache> third = NewCache();
  Prepare(*third, nests);
  EXPECT_EQ(third->stats().compiles, 0);
}

TEST(ProgramEntry, RoundTripsAndRejectsWhatIsNotOne) {
  const std::string key = ObjectKey({"19", "cpu", "+f", "o", "g"}, "kernel");
  ProgramEntry entry;
  const std::string symbol = "visa_" + std::string(64, 'b');
  entry.kernels.push_back({key, symbol});
  entry.objects.push_back("object bytes\nwith a newline");
  const std::string packed = PackProgramEntry(entry);
  std::optional<ProgramEntry> back = UnpackProgramEntry(packed);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->kernels[0].key, key);
  EXPECT_EQ(back->kernels[0].symbol, symbol);
  EXPECT_EQ(back->objects, entry.objects);
  EXPECT_EQ(UnpackProgramEntry(packed.substr(0, packed.size() - 1)), std::nullopt);  // truncated
  EXPECT_EQ(UnpackProgramEntry(packed + "x"), std::nullopt);                           // trailing bytes
  EXPECT_EQ(UnpackProgramEntry("visa_" + key + "\nobject"), std::nullopt);             // a kernel entry
  ProgramEntry wrong_symbol = entry;
  wrong_symbol.kernels[0].symbol = "visa_p" + std::string(63, 'a');
  EXPECT_EQ(UnpackProgramEntry(PackProgramEntry(wrong_symbol)), std::nullopt);
  ProgramEntry no_objects = entry;
  no_objects.objects.clear();
  EXPECT_EQ(UnpackProgramEntry(PackProgramEntry(no_objects)), std::nullopt);
}

// A sample's whole program, prepared as `visa run` prepares it: its kernels make a module per
// optimization level they use (at most four kinds) and compile thread, the run matches the sample's own reference,
// and a second backend links the program from one disk entry.
TEST_F(ProgramCompileTest, ASamplesProgramCompilesAsAFewModulesAndLoadsAsOneEntry) {
  const samples::Sample* sample = samples::FindSample("vector_gemm_relu");
  ASSERT_NE(sample, nullptr);
  Program program;
  {
    TraceBackend trace;
    absl::StatusOr<samples::SampleRun> traced = sample->Run(trace, TracingOptions());
    ASSERT_TRUE(traced.ok()) << traced.status();
    program = std::move(traced->program);
  }
  auto backend = [&] {
    absl::StatusOr<std::unique_ptr<JitBackend>> jit =
        JitBackend::Create({.threads = 1, .disk_cache = true, .cache_dir = dir_});
    EXPECT_TRUE(jit.ok()) << jit.status();
    return *std::move(jit);
  };
  std::unique_ptr<JitBackend> cold = backend();
  ASSERT_TRUE(cold->Prepare(program).ok());
  const JitStats prepared = cold->stats();
  EXPECT_GT(prepared.compiles, 4);
  EXPECT_GE(prepared.modules, 1);
  EXPECT_LE(prepared.modules, 4 * CompileThreads(0));
  EXPECT_EQ(prepared.disk_writes, 1);
  absl::StatusOr<samples::SampleRun> run = sample->Run(*cold);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->mismatch) << *run->mismatch;

  std::unique_ptr<JitBackend> warm = backend();
  ASSERT_TRUE(warm->Prepare(program).ok());
  EXPECT_EQ(warm->stats().compiles, 0);
  EXPECT_EQ(warm->stats().disk_loads, 1);
  EXPECT_EQ(warm->stats().disk_hits, prepared.compiles);
}

// Every op of a sample run on a JIT whose kernels were compiled as one program writes what the
// interpreter writes (the program's kernels are bound to the right ops).
TEST(ProgramCompile, APreparedRunWritesWhatTheInterpreterWrites) {
  for (const char* name : {"vector_row_softmax", "moe_routing", "vector_gemm_bias_silu"}) {
    const samples::Sample* sample = samples::FindSample(name);
    ASSERT_NE(sample, nullptr) << name;
    TraceBackend trace;
    absl::StatusOr<samples::SampleRun> traced = sample->Run(trace, TracingOptions());
    ASSERT_TRUE(traced.ok()) << traced.status();
    std::unique_ptr<JitBackend> jit = *JitBackend::Create({.threads = 1});
    ASSERT_TRUE(jit->Prepare(traced->program).ok()) << name;
    EXPECT_GT(jit->stats().compiles, jit->stats().modules) << name;
    RecordingBackend on_jit(*jit);
    absl::StatusOr<samples::SampleRun> jit_run = sample->Run(on_jit);
    ASSERT_TRUE(jit_run.ok()) << jit_run.status();
    interp::Interpreter interpreter;
    RecordingBackend on_interpreter(interpreter);
    absl::StatusOr<samples::SampleRun> interp_run = sample->Run(on_interpreter);
    ASSERT_TRUE(interp_run.ok()) << interp_run.status();
    EXPECT_EQ(FirstDifference(jit_run->program, on_jit.records(), "jit", on_interpreter.records(), "interpreter"),
              std::nullopt)
        << name;
  }
}

}  // namespace
}  // namespace visa::jit
