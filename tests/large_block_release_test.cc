// tools/large_block_release.h: after the setting, and after `visa run`, a large block is mapped
// on its own and unmapped when freed, even once a larger block was freed before (which, with
// glibc's adjustment, would have moved the threshold above it and put the block in the heap).
#include "tools/large_block_release.h"

#include <malloc.h>

#include <cstdlib>
#include <sstream>

#include "gtest/gtest.h"
#include "tools/run_command.h"

namespace visa::cli {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Keeps the compiler from eliding a malloc / free pair whose block nothing reads.
void* volatile sink = nullptr;

void* Touched(size_t bytes) {
  auto* block = static_cast<char*>(std::malloc(bytes));
  for (size_t i = 0; i < bytes; i += 4096) block[i] = 1;
  sink = block;
  return block;
}

// Bytes glibc holds in blocks mapped on their own.
size_t MappedBytes() { return mallinfo2().hblkhd; }

// Frees a 16 MiB block (the threshold would follow it up), then checks that a 1 MiB block is
// mapped while it lives and unmapped once freed.
void ExpectLargeBlocksMappedAfterALargerFree() {
  std::free(Touched(16 * kMiB));
  const size_t before = MappedBytes();
  void* block = Touched(kMiB);
  EXPECT_GE(MappedBytes(), before + kMiB) << "a 1 MiB block came from the heap";
  std::free(block);
  EXPECT_EQ(MappedBytes(), before) << "a freed 1 MiB block stayed mapped";
}

bool SanitizedAllocator() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#endif
#endif
  return false;
}

TEST(LargeBlockRelease, FixesTheThresholdBelowAFreedLargerBlock) {
  if (SanitizedAllocator()) GTEST_SKIP() << "the sanitizer's allocator has no mmap threshold";
  ASSERT_TRUE(ReleaseLargeBlocksOnFree());
  ExpectLargeBlocksMappedAfterALargerFree();
}

TEST(LargeBlockRelease, VisaRunAppliesIt) {
  if (SanitizedAllocator()) GTEST_SKIP() << "the sanitizer's allocator has no mmap threshold";
  std::ostringstream out, err;
  ASSERT_EQ(RunSampleCommand({.sample = "fetch_commit_permutation"}, out, err), 0) << err.str();
  ExpectLargeBlocksMappedAfterALargerFree();
}

}  // namespace
}  // namespace visa::cli
