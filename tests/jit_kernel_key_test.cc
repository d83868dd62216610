// Kernel keys are the same in every process: the in-memory cache and anything that names a
// kernel by its key across processes (the disk cache) see one name per kernel.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "jit/contraction_kernel.h"
#include "jit/element_op.h"
#include "jit/stable_hash.h"

namespace visa::jit {
namespace {

// Keys whose parts were hashed: a conversion table and a contraction's per-step tables.
std::string KeysWithTables() {
  ElementOp table = TableOp(DType::kF8E4M3, DType::kBF16, {0x0000, 0x3f80, 0x4000, 0xbf80});
  ContractionSpec spec;
  spec.retained = {0, 1, -1, 2};
  spec.target = {0, -1};
  spec.live_outer = {1, 0};
  spec.live_row = {1};
  spec.live_packet = {1, 1};
  spec.w_time = {0, 64, 128};
  spec.w_packet = {0, 1};
  return table.Key() + "\n" + spec.Key();
}

TEST(StableHash, IsFnv1a64) {
  // The FNV-1a reference values (Fowler, Noll, Vo): "" and "a".
  EXPECT_EQ(StableHashBytes("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(StableHashBytes("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_NE(StableHash(std::vector<int64_t>{}), StableHash(std::vector<int64_t>{0}));
  EXPECT_NE(StableHash(std::vector<uint8_t>{1, 0}), StableHash(std::vector<uint8_t>{0, 1}));
}

// Run by the test below in a new process: prints the keys.
TEST(KernelKey, PrintForAnotherProcess) {
  if (std::getenv("VISA_PRINT_KERNEL_KEYS") == nullptr) GTEST_SKIP() << "run by SameInAnotherProcess";
  std::printf("<<%s>>\n", KeysWithTables().c_str());
}

TEST(KernelKey, SameInAnotherProcess) {
  // A fresh exec (not a fork, which would inherit a per-process hash seed).
  char self[4096] = {};
  ASSERT_GT(readlink("/proc/self/exe", self, sizeof(self) - 1), 0);
  const std::string command =
      std::string("VISA_PRINT_KERNEL_KEYS=1 '") + self + "' --gtest_filter=KernelKey.PrintForAnotherProcess";
  FILE* child = popen(command.c_str(), "r");
  ASSERT_NE(child, nullptr);
  std::string output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), child)) output.append(buffer, n);
  ASSERT_EQ(pclose(child), 0) << output;
  const size_t begin = output.find("<<"), end = output.find(">>");
  ASSERT_TRUE(begin != std::string::npos && end != std::string::npos) << output;
  EXPECT_EQ(output.substr(begin + 2, end - begin - 2), KeysWithTables());
}

}  // namespace
}  // namespace visa::jit
