// Compiler: LLJIT for the host whose compile step optimizes and generates code, or loads the
// object from the disk cache instead of both; errors turned into Status.
#include "jit/compiler.h"

#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "dsl/vector_ops.h"
#include "jit/object_cache.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/ObjectCache.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/IRCompileLayer.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace visa::jit {
namespace {

// The levels a module is compiled at travel with it as this module flag (ir * 4 + codegen), so
// the compile step, which sees only the module, reads them there, and modules that differ only in
// their levels have different bitcode: different symbols and disk cache keys.
constexpr const char* kOptimizationFlag = "visa.optimization";
// The SLP vectorizer stays off (the library's PipelineTuningOptions leave it off, unlike clang at
// -O2): it made the old per-element contraction kernel 15% faster but runs none of the lane /
// fused kernels faster and costs ~10% compile time.
constexpr bool kSlpVectorizer = false;

// The kernel pipeline: the JIT's IR is already explicit (vector types where lanes are meant,
// counted loops, no calls), so it needs promotion of its few allocas, local simplification,
// hoisting of loop invariants and the loop vectorizer (packing, widening and move loops are
// scalar in IR). Measured (CPU time, this host) against O2 on every sample: the same kernel run
// times (GEMM main op 31-34 ms vs 35-39 ms, i8 GEMM 22 vs 20 ms, data movement at 2 MiB and
// 32 MiB the same), half the compile time (GEMM's kernels 172 -> 76 ms, the f8 matmul's 177 ->
// 79 ms, a cast f32 -> bf16 51 -> 15 ms). Without the loop vectorizer the GEMM's main op ran
// 1.8x slower; loop unrolling and GVN on top ran no faster and cost 1.9x the compile time.
// instcombine by name verifies that it reached a fixpoint and aborts the process when it did not
// (LLVM 19's default for a textual pipeline, meant for its own tests; O2 turns it off): a missed
// simplification is no error, so it is off here too.
constexpr const char* kKernelPipeline =
    "function(sroa,early-cse,simplifycfg,instcombine<no-verify-fixpoint>,loop-simplify,lcssa,loop-mssa(licm),"
    "loop(indvars),loop-vectorize,instcombine<no-verify-fixpoint>,simplifycfg)";

llvm::CodeGenOptLevel CodegenLevel(int level) {
  switch (level) {
    case 0: return llvm::CodeGenOptLevel::None;
    case 1: return llvm::CodeGenOptLevel::Less;
    case 2: return llvm::CodeGenOptLevel::Default;
    default: return llvm::CodeGenOptLevel::Aggressive;
  }
}

Optimization OptimizationOf(const llvm::Module& module) {
  Optimization levels;
  if (auto* flag = llvm::mdconst::extract_or_null<llvm::ConstantInt>(module.getModuleFlag(kOptimizationFlag))) {
    const int64_t value = flag->getSExtValue();
    levels.ir = static_cast<IrPipeline>(value / 4);
    levels.codegen = static_cast<int>(value % 4);
  }
  return levels;
}

std::string Message(llvm::Error error) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << error;
  return text;
}

void InitializeTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

// The module as bitcode: what its object is a function of (with the CodegenConfig). Bitcode
// rather than text: printing a kernel with large constant tables (f8 conversions) took 8 ms,
// writing its bitcode 0.4 ms.
std::string IrBytes(const llvm::Module& module) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  llvm::WriteBitcodeToFile(module, os);
  os.flush();
  return bytes;
}

// The name a kernel's function is linked under: a hash of the module's bitcode (written with the
// builder's name), so equal code has equal symbols in every process, whatever key the caller
// found it by, and an object loaded from disk defines the name looked up.
std::string ContentName(const std::string& ir) {
  llvm::BLAKE3 hasher;
  hasher.update(ir);
  return absl::StrCat("visa_", llvm::toHex(hasher.final(), /*LowerCase=*/true));
}

// What the object cache's key names besides each module's own levels (its flag).
std::string OptimizationName() { return absl::StrCat("per-module levels", kSlpVectorizer ? " slp" : ""); }

// The new pass manager's default pipeline, with the target's cost model for the vectorizers.
void Optimize(llvm::Module& module, llvm::TargetMachine& machine, IrPipeline ir) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.SLPVectorization = kSlpVectorizer;
  llvm::PassBuilder passes(&machine, tuning);
  passes.registerModuleAnalyses(mam);
  passes.registerCGSCCAnalyses(cgam);
  passes.registerFunctionAnalyses(fam);
  passes.registerLoopAnalyses(lam);
  passes.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager pipeline;
  switch (ir) {
    case IrPipeline::kNone: pipeline = passes.buildO0DefaultPipeline(llvm::OptimizationLevel::O0); break;
    case IrPipeline::kO2: pipeline = passes.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2); break;
    case IrPipeline::kKernel: {
      llvm::Error error = passes.parsePassPipeline(pipeline, kKernelPipeline);
      VISA_CHECK(!error, "the kernel pass pipeline parses");
      break;
    }
  }
  pipeline.run(module, mam);
}

// LLJIT's compile step. The cache is asked first, so that a hit skips the optimization pipeline
// as well as code generation (which is why optimizing happens here and not before addIRModule).
class CachingCompiler final : public llvm::orc::IRCompileLayer::IRCompiler {
 public:
  CachingCompiler(llvm::TargetMachine& machine, DiskObjectCache* cache, int64_t& compiles)
      : IRCompiler(llvm::orc::irManglingOptionsFromTargetOptions(machine.Options)),
        machine_(machine),
        codegen_(machine),
        cache_(cache),
        compiles_(compiles) {}

  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> operator()(llvm::Module& module) override {
    if (cache_ != nullptr) {
      if (std::unique_ptr<llvm::MemoryBuffer> object = cache_->orc().getObject(&module)) return object;
    }
    const Optimization levels = OptimizationOf(module);
    Optimize(module, machine_, levels.ir);
    // The pass pipeline below is built for this module, at the target machine's level then.
    machine_.setOptLevel(CodegenLevel(levels.codegen));
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> object = codegen_(module);
    if (!object) return object;
    ++compiles_;
    if (cache_ != nullptr) cache_->orc().notifyObjectCompiled(&module, (*object)->getMemBufferRef());
    return object;
  }

 private:
  llvm::TargetMachine& machine_;
  llvm::orc::SimpleCompiler codegen_;  // without the cache: it was asked above
  DiskObjectCache* cache_;
  int64_t& compiles_;
};

// The disk cache the options and the environment ask for; null when it is off or has no directory.
std::unique_ptr<DiskObjectCache> OpenDiskCache(const CompilerOptions& options) {
  if (!options.disk_cache || DiskCacheDisabledByEnvironment()) return nullptr;
  std::optional<std::string> directory = CacheDirectory(options.cache_dir);
  if (!directory) return nullptr;
  return std::make_unique<DiskObjectCache>(*std::move(directory));
}

}  // namespace

struct Compiler::Impl {
  // Declared before the JIT, which refers to them from its compile step: destroyed after it.
  std::unique_ptr<llvm::TargetMachine> machine;
  std::unique_ptr<DiskObjectCache> cache;
  CodegenConfig config;
  int64_t compiles = 0;  // modules optimized and code-generated
  std::unique_ptr<llvm::orc::LLJIT> jit;
  absl::flat_hash_map<std::string, void*> linked;  // by ContentName
};

Compiler::Compiler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Compiler::~Compiler() = default;

absl::StatusOr<std::unique_ptr<Compiler>> Compiler::Create(const CompilerOptions& options) {
  InitializeTargets();
  // detectHost fills in the host CPU name and its features (AVX2, AVX-512, ...).
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) return absl::InternalError(absl::StrCat("JIT: no host target: ", Message(builder.takeError())));
  auto impl = std::make_unique<Impl>();
  impl->config = CodegenConfig{LLVM_VERSION_STRING, builder->getCPU(), builder->getFeatures().getString(),
                               OptimizationName()};
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine = builder->createTargetMachine();
  if (!machine) return absl::InternalError(absl::StrCat("JIT: target machine: ", Message(machine.takeError())));
  impl->machine = std::move(*machine);
  impl->cache = OpenDiskCache(options);
  llvm::TargetMachine& target = *impl->machine;
  DiskObjectCache* cache = impl->cache.get();
  int64_t& compiles = impl->compiles;
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(*builder))
          .setCompileFunctionCreator([&target, cache, &compiles](llvm::orc::JITTargetMachineBuilder)
                                         -> llvm::Expected<std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
            return std::make_unique<CachingCompiler>(target, cache, compiles);
          })
          .create();
  if (!jit) return absl::InternalError(absl::StrCat("JIT: LLJIT: ", Message(jit.takeError())));
  impl->jit = std::move(*jit);
  // memcpy / memset, which the optimizer introduces for contiguous loops, come from the process.
  llvm::Expected<std::unique_ptr<llvm::orc::DynamicLibrarySearchGenerator>> process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          impl->jit->getDataLayout().getGlobalPrefix());
  if (!process) return absl::InternalError(absl::StrCat("JIT: process symbols: ", Message(process.takeError())));
  impl->jit->getMainJITDylib().addGenerator(std::move(*process));
  // The Vector Engine's scalar functions, which compiled vector loops call by name.
  llvm::orc::SymbolMap scalar_functions;
  for (const VeFnInfo& f : AllVeFns()) {
    scalar_functions[impl->jit->mangleAndIntern(f.symbol)] = llvm::orc::ExecutorSymbolDef(
        llvm::orc::ExecutorAddr::fromPtr(f.fn), llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  }
  if (llvm::Error error = impl->jit->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(scalar_functions)))) {
    return absl::InternalError(absl::StrCat("JIT: scalar functions: ", Message(std::move(error))));
  }
  return std::unique_ptr<Compiler>(new Compiler(std::move(impl)));
}

std::unique_ptr<llvm::Module> Compiler::NewModule(llvm::LLVMContext& context, const std::string& name) const {
  auto module = std::make_unique<llvm::Module>(name, context);
  module->setDataLayout(impl_->jit->getDataLayout());
  module->setTargetTriple(impl_->jit->getTargetTriple().str());
  return module;
}

absl::StatusOr<void*> Compiler::Compile(std::unique_ptr<llvm::Module> module,
                                        std::unique_ptr<llvm::LLVMContext> context,
                                        const std::string& function, Optimization optimization) {
  module->addModuleFlag(llvm::Module::Error, kOptimizationFlag,
                        static_cast<int>(optimization.ir) * 4 + optimization.codegen);
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module, &os)) {
    return absl::InternalError(absl::StrCat("JIT: invalid IR for `", function, "`: ", problems));
  }
  // Every function is tuned for the host CPU so the vectorizers see its vector widths.
  for (llvm::Function& f : *module) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", impl_->config.cpu);
    f.addFnAttr("target-features", impl_->config.features);
  }
  llvm::Function* entry = module->getFunction(function);
  if (entry == nullptr) return absl::InternalError(absl::StrCat("JIT: the module has no function `", function, "`"));
  // Names and keys are taken from the IR before any pass runs, so the compile step can look the
  // key up first.
  const std::string ir = IrBytes(*module);
  const std::string symbol = ContentName(ir);
  if (auto it = impl_->linked.find(symbol); it != impl_->linked.end()) return it->second;
  entry->setName(symbol);
  if (impl_->cache) module->setModuleIdentifier(ObjectKey(impl_->config, ir));
  if (llvm::Error error = impl_->jit->addIRModule(
          llvm::orc::ThreadSafeModule(std::move(module), std::move(context)))) {
    return absl::InternalError(absl::StrCat("JIT: adding `", function, "`: ", Message(std::move(error))));
  }
  // The lookup materializes the module: the compile step runs (or the cache answers) here.
  llvm::Expected<llvm::orc::ExecutorAddr> address = impl_->jit->lookup(symbol);
  if (!address) {
    return absl::InternalError(absl::StrCat("JIT: looking up `", function, "`: ", Message(address.takeError())));
  }
  return impl_->linked[symbol] = address->toPtr<void*>();
}

std::string Compiler::target() const { return absl::StrCat(impl_->config.cpu); }

std::string Compiler::disk_cache_directory() const { return impl_->cache ? impl_->cache->directory() : ""; }
int64_t Compiler::compiles() const { return impl_->compiles; }
int64_t Compiler::disk_hits() const { return impl_->cache ? impl_->cache->hits() : 0; }
int64_t Compiler::disk_writes() const { return impl_->cache ? impl_->cache->writes() : 0; }

}  // namespace visa::jit
