// Compiling a program's kernels faster: kernels that differ only in their constant tables compile
// one shared body (shared_body.h; counted, each kernel still reading its own tables), a table
// read at a constant index keeps its kernel whole, the disk cache entry of such a program is
// still keyed by every kernel (a changed table is compiled again, a second process compiles
// nothing), and a large program spreads over the compile threads (program_partition.h) with the
// same results as on one.
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jit/compiler.h"
#include "jit/ir_loops.h"
#include "jit/program_partition.h"
#include "jit/shared_body.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace visa::jit {
namespace {

namespace fs = std::filesystem;

// out[i] = table[i] + extra for i < n: a kernel reading its table at a computed index.
using TableFn = void (*)(int64_t* out, int64_t n);

void BuildTableKernel(llvm::Module& module, const std::string& name, const std::vector<int64_t>& table,
                      int64_t extra) {
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  auto* type = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getInt64Ty()}, false);
  llvm::Function* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", fn));
  EmitLoop(b, b.getInt64(0), fn->getArg(1), [&](llvm::Value* i) {
    llvm::Value* value = b.CreateAdd(EmitTableLoad(b, module, table, i, 64), b.getInt64(extra));
    b.CreateStore(value, b.CreateGEP(b.getInt64Ty(), fn->getArg(0), i));
  });
  b.CreateRetVoid();
}

Compiler::Request TableRequest(const std::string& key, std::vector<int64_t> table, int64_t extra = 0) {
  return Compiler::Request{key, Optimization{IrPipeline::kKernel, 1},
                           [table, extra](llvm::Module& module, const std::string& name) {
                             BuildTableKernel(module, name, table, extra);
                           }};
}

std::vector<int64_t> RunTable(void* address, int64_t n) {
  std::vector<int64_t> out(n, -1);
  reinterpret_cast<TableFn>(address)(out.data(), n);
  return out;
}

std::unique_ptr<Compiler> NewCompiler(const std::string& dir = "", int threads = 1) {
  absl::StatusOr<std::unique_ptr<Compiler>> compiler =
      Compiler::Create({.disk_cache = !dir.empty(), .cache_dir = dir, .compile_threads = threads});
  EXPECT_TRUE(compiler.ok()) << compiler.status();
  return *std::move(compiler);
}

TEST(SharedBody, KernelsDifferingOnlyInTheirTablesCompileOneBody) {
  std::unique_ptr<Compiler> compiler = NewCompiler();
  absl::StatusOr<std::vector<void*>> addresses = compiler->CompileProgram(
      {TableRequest("a", {1, 2, 3, 4}), TableRequest("b", {50, 60, 70, 80}), TableRequest("c", {-1, -2, -3, -4})});
  ASSERT_TRUE(addresses.ok()) << addresses.status();
  EXPECT_EQ(compiler->kernels_compiled(), 3);
  EXPECT_EQ(compiler->bodies_shared(), 2);  // one body, two more kernels using it
  EXPECT_EQ(RunTable((*addresses)[0], 4), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(RunTable((*addresses)[1], 4), (std::vector<int64_t>{50, 60, 70, 80}));
  EXPECT_EQ(RunTable((*addresses)[2], 3), (std::vector<int64_t>{-1, -2, -3}));
  // A later program of the same shape uses the body compiled before.
  absl::StatusOr<std::vector<void*>> later =
      compiler->CompileProgram({TableRequest("d", {7, 7, 7, 7}), TableRequest("e", {9, 8, 7, 6})});
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_EQ(compiler->bodies_shared(), 4);
  EXPECT_EQ(RunTable((*later)[0], 4), (std::vector<int64_t>{7, 7, 7, 7}));
  EXPECT_EQ(RunTable((*later)[1], 4), (std::vector<int64_t>{9, 8, 7, 6}));
}

TEST(SharedBody, KernelsOfOtherCodeOrTableSizesKeepTheirOwn) {
  std::unique_ptr<Compiler> compiler = NewCompiler();
  absl::StatusOr<std::vector<void*>> addresses = compiler->CompileProgram(
      {TableRequest("a", {1, 2, 3, 4}), TableRequest("b", {1, 2, 3, 4, 5}), TableRequest("c", {1, 2, 3, 4}, 10)});
  ASSERT_TRUE(addresses.ok()) << addresses.status();
  EXPECT_EQ(compiler->kernels_compiled(), 3);
  EXPECT_EQ(compiler->bodies_shared(), 0);
  EXPECT_EQ(RunTable((*addresses)[1], 5), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(RunTable((*addresses)[2], 4), (std::vector<int64_t>{11, 12, 13, 14}));
}

TEST(SharedBody, ATableReadAtAConstantIndexIsNotSplitOff) {
  llvm::LLVMContext context;
  llvm::Module module("m", context);
  llvm::IRBuilder<> b(context);
  auto* type = llvm::FunctionType::get(b.getInt64Ty(), {}, false);
  llvm::Function* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, "k", module);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", fn));
  b.CreateRet(EmitTableLoad(b, module, {4, 5, 6}, b.getInt64(1), 64));
  EXPECT_FALSE(SplitOffTables(module, "k"));
  EXPECT_EQ(module.getFunction(kBodyPlaceholder), nullptr);
  EXPECT_FALSE(SplitOffTables(module, "absent"));
}

TEST(SharedBody, ShapesAreEqualExactlyWhenOnlyTheContentsDiffer) {
  auto shape = [](const std::vector<int64_t>& table, int64_t extra) {
    llvm::LLVMContext context;
    llvm::Module module("m", context);
    BuildTableKernel(module, "k", table, extra);
    EXPECT_TRUE(SplitOffTables(module, "k"));
    EXPECT_NE(module.getFunction(kBodyPlaceholder), nullptr);
    return ShapeBitcode(module);
  };
  EXPECT_EQ(shape({1, 2, 3}, 0), shape({4, 5, 6}, 0));
  EXPECT_NE(shape({1, 2, 3}, 0), shape({1, 2, 3, 4}, 0));
  EXPECT_NE(shape({1, 2, 3}, 0), shape({1, 2, 3}, 1));
}

class SharedBodyDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "visa_shared_body_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string dir_;
};

TEST_F(SharedBodyDiskTest, ASecondProcessLinksTheSharedProgramAndAChangedTableCompilesAgain) {
  const std::vector<Compiler::Request> program = {TableRequest("a", {1, 2, 3}), TableRequest("b", {4, 5, 6})};
  {
    std::unique_ptr<Compiler> cold = NewCompiler(dir_);
    ASSERT_TRUE(cold->CompileProgram(program).ok());
    EXPECT_EQ(cold->bodies_shared(), 1);
    EXPECT_EQ(cold->disk_writes(), 1);
  }
  std::unique_ptr<Compiler> warm = NewCompiler(dir_);
  absl::StatusOr<std::vector<void*>> linked = warm->CompileProgram(program);
  ASSERT_TRUE(linked.ok()) << linked.status();
  EXPECT_EQ(warm->compiles(), 0);
  EXPECT_EQ(warm->disk_loads(), 1);
  EXPECT_EQ(RunTable((*linked)[0], 3), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(RunTable((*linked)[1], 3), (std::vector<int64_t>{4, 5, 6}));
  // Kernel b's table changed (and with it its key): the program is another entry, compiled.
  std::unique_ptr<Compiler> changed = NewCompiler(dir_);
  absl::StatusOr<std::vector<void*>> recompiled =
      changed->CompileProgram({TableRequest("a", {1, 2, 3}), TableRequest("b changed", {4, 5, 7})});
  ASSERT_TRUE(recompiled.ok()) << recompiled.status();
  EXPECT_EQ(changed->disk_loads(), 0);
  EXPECT_EQ(changed->kernels_compiled(), 2);
  EXPECT_EQ(RunTable((*recompiled)[1], 3), (std::vector<int64_t>{4, 5, 7}));
}

TEST(ProgramPartition, ASmallProgramStaysOnOneThreadWithAModulePerLevel) {
  const std::vector<KernelCost> kernels = {{5, 80}, {5, 90}, {7, 100}, {5, 60}};
  const std::vector<std::vector<PlannedModule>> plan = PartitionKernels(kernels, 2);
  ASSERT_EQ(plan.size(), 1u);
  ASSERT_EQ(plan[0].size(), 2u);
  EXPECT_EQ(plan[0][0].level, 5);
  EXPECT_EQ(plan[0][0].kernels, (std::vector<size_t>{0, 1, 3}));
  EXPECT_EQ(plan[0][1].level, 7);
  EXPECT_EQ(plan[0][1].kernels, (std::vector<size_t>{2}));
  EXPECT_TRUE(PartitionKernels({}, 2).empty());
}

TEST(ProgramPartition, ALargeProgramSpreadsEveryKernelOnceAndBalanced) {
  std::vector<KernelCost> kernels;
  for (int i = 0; i < 40; ++i) kernels.push_back({5 + i % 3, 100 + 37 * i});
  kernels.push_back({6, 4700});
  const std::vector<std::vector<PlannedModule>> plan = PartitionKernels(kernels, 2);
  ASSERT_EQ(plan.size(), 2u);
  std::multiset<size_t> seen;
  std::vector<int64_t> load(2, 0);
  for (size_t t = 0; t < plan.size(); ++t) {
    std::set<int> levels;
    for (const PlannedModule& module : plan[t]) {
      EXPECT_TRUE(levels.insert(module.level).second) << "one module per level and thread";
      EXPECT_FALSE(module.kernels.empty());
      for (size_t k : module.kernels) {
        EXPECT_EQ(kernels[k].level, module.level);
        seen.insert(k);
        load[t] += kernels[k].instructions + kFunctionCost;
      }
    }
  }
  EXPECT_EQ(seen.size(), kernels.size());
  EXPECT_EQ(std::set<size_t>(seen.begin(), seen.end()).size(), kernels.size());
  // Largest first onto the least loaded: the loads differ by at most the smallest kernel's cost.
  EXPECT_LE(std::abs(load[0] - load[1]), 100 + kFunctionCost);
}

TEST(ProgramPartition, TwoCompileThreadsGiveTheSameResultsAsOne) {
  std::vector<Compiler::Request> requests;
  for (int i = 0; i < 24; ++i) {
    std::vector<int64_t> table(8 + i);
    std::iota(table.begin(), table.end(), 100 * i);
    requests.push_back(TableRequest("k" + std::to_string(i), table, i));
  }
  std::vector<std::vector<int64_t>> results[2];
  int64_t modules[2] = {0, 0};
  for (int threads : {1, 2}) {
    std::unique_ptr<Compiler> compiler = NewCompiler("", threads);
    absl::StatusOr<std::vector<void*>> addresses = compiler->CompileProgram(requests);
    ASSERT_TRUE(addresses.ok()) << addresses.status();
    for (size_t i = 0; i < addresses->size(); ++i) results[threads - 1].push_back(RunTable((*addresses)[i], 8 + i));
    modules[threads - 1] = compiler->compiles();
  }
  EXPECT_EQ(modules[0], 1);
  EXPECT_EQ(modules[1], 2);
  EXPECT_EQ(results[0], results[1]);
  for (size_t i = 0; i < results[0].size(); ++i) {
    EXPECT_EQ(results[0][i][0], static_cast<int64_t>(100 * i + i));
    EXPECT_EQ(results[0][i].back(), static_cast<int64_t>(100 * i + 7 + 2 * i));
  }
}

}  // namespace
}  // namespace visa::jit
