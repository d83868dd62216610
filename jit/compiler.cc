// Compiler: LLJIT for the host whose compile step optimizes and generates code; kernels looked up
// by their key in memory, then on disk (linking the stored object), and built only on a miss;
// errors turned into Status.
#include "jit/compiler.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "dsl/status_macros.h"
#include "dsl/vector_ops.h"
#include "jit/generator_version.h"
#include "jit/object_cache.h"
#include "jit/parallel.h"
#include "jit/program_entry.h"
#include "jit/program_partition.h"
#include "jit/shared_body.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/IRCompileLayer.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/IR/PassTimingInfo.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SmallVectorMemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace visa::jit {
namespace {

// The levels a module is compiled at travel with it as this module flag (ir * 4 + codegen), so
// the compile step, which sees only the module, reads them there, and modules that differ only in
// their levels have different bitcode: different symbols. (The disk cache key has them from
// KernelIdentity.)
constexpr const char* kOptimizationFlag = "visa.optimization";
// The identifier of a module holding several kernels of a program (CompileProgram, compiled
// outside ORC's compile layer by CompileModule).
constexpr absl::string_view kProgramModule = "visa program ";
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
    levels.strength_reduction = value < 16;
    levels.ir = static_cast<IrPipeline>(value % 16 / 4);
    levels.codegen = static_cast<int>(value % 4);
  }
  return levels;
}

// LLVM's switch for loop strength reduction (TargetPassConfig's -disable-lsr) is process-wide and
// read only while a code generation pipeline is built: GenerateObject sets it under this lock for
// the pipelines of modules without strength reduction.
std::mutex& PipelineBuildLock() {
  static std::mutex lock;
  return lock;
}

// A boolean LLVM option turned on while it lives when `on` (else left as the user set it), then
// restored; the caller holds PipelineBuildLock. Nothing when this LLVM has no such option.
class SwitchedOption {
 public:
  SwitchedOption(llvm::StringRef name, bool on)
      : option_(static_cast<llvm::cl::opt<bool>*>(llvm::cl::getRegisteredOptions().lookup(name))) {
    if (option_ == nullptr) return;
    before_ = option_->getValue();
    option_->setValue(on || before_);
  }
  ~SwitchedOption() {
    if (option_ != nullptr) option_->setValue(before_);
  }
  SwitchedOption(const SwitchedOption&) = delete;
  SwitchedOption& operator=(const SwitchedOption&) = delete;

 private:
  llvm::cl::opt<bool>* option_;
  bool before_ = false;
};

// The object code of `module` for `machine` at its level: orc::SimpleCompiler's work, with the
// code generation pipeline built without loop strength reduction when `levels` ask so.
// Measured (CPU time, one compile thread, load 4.5-6, sapphirerapids): llama_tiny_prefill's 69
// move kernels took 271 ms of optimization and code generation with strength reduction, 164-180
// ms without.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> GenerateObject(llvm::Module& module, llvm::TargetMachine& machine,
                                                                   Optimization levels) {
  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream out(bytes);
  llvm::legacy::PassManager codegen;
  llvm::MCContext* mc = nullptr;
  {
    std::lock_guard<std::mutex> hold(PipelineBuildLock());
    SwitchedOption no_lsr("disable-lsr", !levels.strength_reduction);
    if (machine.addPassesToEmitMC(codegen, mc, out)) {
      return llvm::make_error<llvm::StringError>("the target cannot emit an object", llvm::inconvertibleErrorCode());
    }
  }
  codegen.run(module);
  return std::make_unique<llvm::SmallVectorMemoryBuffer>(std::move(bytes), module.getModuleIdentifier() + "-object",
                                                        /*RequiresNullTerminator=*/false);
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
    // The x86 domain reassignment (general-purpose to mask register moves, AVX-512 hosts only)
    // never runs: measured (CPU time, one compile thread, load 6, sapphirerapids) it was half of
    // the code generation of llama_tiny_prefill's 16 epilogue, vector and reduce kernels under
    // -time-passes, which took 269 ms with it and 211 without. The pass reads its switch as it
    // runs, so it is set once here, for every module (and named in the disk cache key).
    if (auto* option = static_cast<llvm::cl::opt<bool>*>(
            llvm::cl::getRegisteredOptions().lookup("disable-x86-domain-reassignment"))) {
      option->setValue(true);
    }
    // LLVM's own options, to profile the compile (e.g. VISA_LLVM_FLAGS=-time-passes prints each
    // pass's time per module, IR passes and code generation).
    if (std::getenv("VISA_LLVM_FLAGS") != nullptr) {
      const char* argv[] = {"visa"};
      llvm::cl::ParseCommandLineOptions(1, argv, "", nullptr, "VISA_LLVM_FLAGS");
    }
  });
}

// The module as bitcode, to name its code (ContentName). Bitcode rather than text: printing a
// kernel with large constant tables (f8 conversions) took 8 ms, writing its bitcode 0.4 ms.
std::string IrBytes(const llvm::Module& module) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  llvm::WriteBitcodeToFile(module, os);
  os.flush();
  return bytes;
}

// The name a kernel's function is linked under: a hash of the module's bitcode (written with the
// builder's name), so equal code has equal symbols in every process, whatever key the caller
// found it by: kernels with different keys and the same code are linked once.
std::string ContentName(const std::string& ir) {
  llvm::BLAKE3 hasher;
  hasher.update(ir);
  return absl::StrCat("visa_", llvm::toHex(hasher.final(), /*LowerCase=*/true));
}

bool IsContentName(absl::string_view name) {
  return absl::ConsumePrefix(&name, "visa_") && IsObjectKey(name);  // the same 64 hex digits
}

// A disk cache entry's payload: the symbol its object defines, a newline, the object.
std::string PackEntry(absl::string_view symbol, llvm::StringRef object) {
  return absl::StrCat(symbol, "\n", absl::string_view(object.data(), object.size()));
}

struct EntryView {
  absl::string_view symbol, object;
};

// nullopt for a payload not of PackEntry's form (a miss).
std::optional<EntryView> UnpackEntry(absl::string_view payload) {
  const size_t newline = payload.find('\n');
  if (newline == absl::string_view::npos || !IsContentName(payload.substr(0, newline))) return std::nullopt;
  return EntryView{payload.substr(0, newline), payload.substr(newline + 1)};
}

// What the object cache's key names besides each kernel's own levels (KernelIdentity).
std::string OptimizationName() {
  return absl::StrCat("per-module levels, no domain reassignment", kSlpVectorizer ? " slp" : "");
}

// The new pass manager's default pipeline, with the target's cost model for the vectorizers.
void Optimize(llvm::Module& module, llvm::TargetMachine& machine, IrPipeline ir) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.SLPVectorization = kSlpVectorizer;
  // Times the IR passes when -time-passes is on (VISA_LLVM_FLAGS); prints when it goes.
  llvm::TimePassesHandler timing(llvm::TimePassesIsEnabled);
  llvm::PassInstrumentationCallbacks instrumentation;
  timing.registerCallbacks(instrumentation);
  llvm::PassBuilder passes(&machine, tuning, std::nullopt, &instrumentation);
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

// CPU seconds this thread has run: what a module's compile costs, whatever else the machine runs.
double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// A program's kernel, built and named, waiting for its module (BuildProgram).
struct KernelIr {
  std::string symbol;   // its content name
  std::string bitcode;  // the module it was built in, its function still named as built
  Optimization optimization;
  int64_t instructions = 0;
  // Split into a wrapper and a body taking its tables (shared_body.h): that module's bitcode and
  // the body's name (its shape's hash); empty when the kernel has no tables to split off.
  std::string split_bitcode, body;
  bool uses_split = false;  // compiled split: its body is shared with another kernel
  bool owns_body = false;   // of those, the one whose module defines the body
};

// The name every kernel's function has while it is built: it is linked under its content name.
constexpr const char* kBuildName = "visa_kernel";
// A wrapper's size, for spreading the program over threads: a call and a return.
constexpr int64_t kWrapperInstructions = 4;

// One module of `members` (all at `levels`), optimized and code-generated by `machine` (which no
// other thread uses meanwhile) in a context of its own: the object, or why not. Each kernel
// comes as bitcode because the threads cannot share the context it was built in.
absl::StatusOr<std::string> CompileModule(const std::vector<const KernelIr*>& members, Optimization levels,
                                          llvm::TargetMachine& machine, const llvm::DataLayout& layout,
                                          const std::string& triple) {
  llvm::LLVMContext context;
  auto program = std::make_unique<llvm::Module>(absl::StrCat(kProgramModule, OptimizationCode(levels)), context);
  program->setDataLayout(layout);
  program->setTargetTriple(triple);
  for (const KernelIr* kernel : members) {
    llvm::Expected<std::unique_ptr<llvm::Module>> module = llvm::parseBitcodeFile(
        llvm::MemoryBufferRef(kernel->uses_split ? kernel->split_bitcode : kernel->bitcode, kernel->symbol), context);
    if (!module) return absl::InternalError(absl::StrCat("JIT: rereading kernel ", kernel->symbol, ": ",
                                                         Message(module.takeError())));
    llvm::Function* entry = (*module)->getFunction(kBuildName);
    VISA_CHECK(entry != nullptr, "a built kernel's bitcode holds its function");
    entry->setName(kernel->symbol);
    // Another module defines the shared body (or defined it before): only its declaration here.
    if (kernel->uses_split && !kernel->owns_body) (*module)->getFunction(kernel->body)->deleteBody();
    if (llvm::Linker::linkModules(*program, std::move(*module))) {
      return absl::InternalError(absl::StrCat("JIT: kernel ", kernel->symbol, " does not link into its program's module"));
    }
  }
  Optimize(*program, machine, levels.ir);
  machine.setOptLevel(CodegenLevel(levels.codegen));
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> object = GenerateObject(*program, machine, levels);
  if (llvm::TimePassesIsEnabled) llvm::reportAndResetTimings(&llvm::errs());
  if (!object) return absl::InternalError(absl::StrCat("JIT: generating a program's module: ", Message(object.takeError())));
  return std::string((*object)->getBuffer());
}

// Called with each module's object as it is compiled (to store it on disk).
using CompiledFn = std::function<void(const llvm::Module&, llvm::MemoryBufferRef)>;

// LLJIT's compile step: optimizes (here, not before addIRModule, so the module's levels are read
// where they apply) and generates code. The disk cache was asked before the module was built.
class OptimizingCompiler final : public llvm::orc::IRCompileLayer::IRCompiler {
 public:
  OptimizingCompiler(llvm::TargetMachine& machine, CompiledFn compiled)
      : IRCompiler(llvm::orc::irManglingOptionsFromTargetOptions(machine.Options)),
        machine_(machine),
        compiled_(std::move(compiled)) {}

  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> operator()(llvm::Module& module) override {
    const Optimization levels = OptimizationOf(module);
    Optimize(module, machine_, levels.ir);
    // The pass pipeline below is built for this module, at the target machine's level then.
    machine_.setOptLevel(CodegenLevel(levels.codegen));
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> object = GenerateObject(module, machine_, levels);
    if (llvm::TimePassesIsEnabled) llvm::reportAndResetTimings(&llvm::errs());
    if (object) compiled_(module, (*object)->getMemBufferRef());
    return object;
  }

 private:
  llvm::TargetMachine& machine_;
  CompiledFn compiled_;
};

// The disk cache the options and the environment ask for; null when it is off or has no directory.
std::unique_ptr<DiskObjectCache> OpenDiskCache(const CompilerOptions& options) {
  if (!options.disk_cache || DiskCacheDisabledByEnvironment()) return nullptr;
  std::optional<std::string> directory = CacheDirectory(options.cache_dir);
  if (!directory) return nullptr;
  return std::make_unique<DiskObjectCache>(*std::move(directory));
}

}  // namespace

std::string KernelIdentity(absl::string_view kernel_key, Optimization optimization) {
  return absl::StrCat("ir ", static_cast<int>(optimization.ir), " codegen ", optimization.codegen,
                      optimization.strength_reduction ? "" : " no-lsr", "\n", kernel_key);
}

int OptimizationCode(Optimization optimization) {
  return (optimization.strength_reduction ? 0 : 16) + static_cast<int>(optimization.ir) * 4 + optimization.codegen;
}

struct Compiler::Impl {
  // A linked function and the disk cache key its object is stored under.
  struct Linked {
    void* address = nullptr;
    std::string key;
  };

  // Declared before the JIT, which refers to them from its compile step: destroyed after it.
  std::unique_ptr<llvm::TargetMachine> machine;
  // Machines for the program compile's other threads (CompileModule), made when first needed.
  std::optional<llvm::orc::JITTargetMachineBuilder> machine_builder;
  std::vector<std::unique_ptr<llvm::TargetMachine>> thread_machines;
  int compile_threads = 1;
  std::unique_ptr<DiskObjectCache> cache;
  CodegenConfig config;
  int64_t compiles = 0;    // modules optimized and code-generated
  int64_t kernels_compiled = 0;  // the kernels those modules held
  int64_t disk_links = 0;  // kernels whose object came from the disk cache
  int64_t disk_loads = 0;  // disk cache entries linked
  absl::flat_hash_map<std::string, std::string> storing;  // the symbol of each key being compiled
  std::unique_ptr<llvm::orc::LLJIT> jit;
  absl::flat_hash_map<std::string, void*> by_key;       // by ObjectKey
  absl::flat_hash_map<std::string, Linked> by_symbol;   // by ContentName
  absl::flat_hash_set<std::string> linked_bodies;       // shared bodies compiled (shared_body.h)
  int64_t bodies_shared = 0;  // kernels compiled as a wrapper around another kernel's body

  void Compiled(const llvm::Module& module, llvm::MemoryBufferRef object);
  std::optional<void*> LinkFromDisk(const std::string& key);
  absl::StatusOr<void*> Build(const std::string& key, const std::string& kernel_key, Optimization optimization,
                              const BuildFn& build);
  void StoreAlias(const std::string& key, const Linked& linked);
  // A program's kernels (CompileProgram): `keys[i]` is request `fresh[i]`'s ObjectKey, sorted.
  std::optional<std::vector<void*>> LinkProgramFromDisk(const std::string& program_key,
                                                        const std::vector<std::string>& keys);
  absl::StatusOr<std::vector<void*>> BuildProgram(const std::string& program_key, const std::vector<Request>& requests,
                                                  const std::vector<size_t>& fresh,
                                                  const std::vector<std::string>& keys);
  // Verifies `module` (whose kernels `what` names), tags it with its levels and tunes its
  // functions for the host.
  absl::Status Finish(llvm::Module& module, Optimization optimization, absl::string_view what) const;
  // The machine thread `t` of a program compile uses (0: the JIT's own).
  absl::StatusOr<llvm::TargetMachine*> MachineFor(int t);
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
                               OptimizationName(),
                               absl::StrCat("ir generators ", kIrGeneratorVersion, " sources ", GeneratorSourceDigest())};
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine = builder->createTargetMachine();
  if (!machine) return absl::InternalError(absl::StrCat("JIT: target machine: ", Message(machine.takeError())));
  impl->machine = std::move(*machine);
  impl->machine_builder = *builder;
  impl->compile_threads = CompileThreads(options.compile_threads);
  impl->cache = OpenDiskCache(options);
  llvm::TargetMachine& target = *impl->machine;
  Impl* state = impl.get();
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(*builder))
          .setCompileFunctionCreator([&target, state](llvm::orc::JITTargetMachineBuilder)
                                         -> llvm::Expected<std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
            return std::make_unique<OptimizingCompiler>(
                target, [state](const llvm::Module& module, llvm::MemoryBufferRef object) {
                  state->Compiled(module, object);
                });
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

absl::StatusOr<void*> Compiler::Compile(const std::string& kernel_key, Optimization optimization,
                                        const BuildFn& build) {
  const std::string key = ObjectKey(impl_->config, KernelIdentity(kernel_key, optimization));
  if (auto it = impl_->by_key.find(key); it != impl_->by_key.end()) return it->second;
  std::optional<void*> address;
  if (impl_->cache) address = impl_->LinkFromDisk(key);
  if (!address) {
    ASSIGN_OR_RETURN(address, impl_->Build(key, kernel_key, optimization, build));
  }
  impl_->by_key.emplace(key, *address);
  return *address;
}

void Compiler::Impl::Compiled(const llvm::Module& module, llvm::MemoryBufferRef object) {
  ++compiles;
  ++kernels_compiled;
  auto it = storing.find(module.getModuleIdentifier());
  if (cache == nullptr || it == storing.end()) return;
  // A failed write costs only a compile in a later process; the kernel itself is fine.
  (void)cache->Store(it->first, PackEntry(it->second, object.getBuffer()));
}

// The kernel stored under `key`, linked; nullopt when the entry is absent, corrupt or does not
// link (a miss: the caller compiles it).
std::optional<void*> Compiler::Impl::LinkFromDisk(const std::string& key) {
  std::optional<std::string> payload = cache->Load(key);
  if (!payload) return std::nullopt;
  std::optional<EntryView> entry = UnpackEntry(*payload);
  if (!entry) return std::nullopt;
  const std::string symbol(entry->symbol);
  if (auto it = by_symbol.find(symbol); it != by_symbol.end()) {
    ++disk_links;  // the same code under another key, linked before
    return it->second.address;
  }
  // Its own tracker, so an object that does not link is removed again before the compile.
  llvm::orc::ResourceTrackerSP tracker = jit->getMainJITDylib().createResourceTracker();
  std::unique_ptr<llvm::MemoryBuffer> object = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(entry->object.data(), entry->object.size()), key);
  llvm::Error added = jit->addObjectFile(tracker, std::move(object));
  if (added) {
    llvm::consumeError(std::move(added));
    llvm::consumeError(tracker->remove());
    return std::nullopt;
  }
  llvm::Expected<llvm::orc::ExecutorAddr> address = jit->lookup(symbol);
  if (!address) {
    llvm::consumeError(address.takeError());
    llvm::consumeError(tracker->remove());
    return std::nullopt;
  }
  ++disk_links;
  ++disk_loads;
  by_symbol[symbol] = Linked{address->toPtr<void*>(), key};
  return address->toPtr<void*>();
}

// Stores under `key` the entry of code linked before under another key, so that a later process
// finds this kernel without building it either.
void Compiler::Impl::StoreAlias(const std::string& key, const Linked& linked) {
  if (cache == nullptr || linked.key.empty() || linked.key == key) return;
  if (std::optional<std::string> payload = cache->Load(linked.key)) (void)cache->Store(key, *payload);
}

absl::StatusOr<void*> Compiler::Impl::Build(const std::string& key, const std::string& kernel_key,
                                            Optimization optimization, const BuildFn& build) {
  auto context = std::make_unique<llvm::LLVMContext>();
  // One name for every kernel while it is built: it is linked under a name derived from its code.
  const std::string name = "visa_kernel";
  auto module = std::make_unique<llvm::Module>(name, *context);
  module->setDataLayout(jit->getDataLayout());
  module->setTargetTriple(jit->getTargetTriple().str());
  build(*module, name);
  const absl::string_view what = absl::string_view(kernel_key).substr(0, 80);
  RETURN_IF_ERROR(Finish(*module, optimization, what));
  llvm::Function* entry = module->getFunction(name);
  if (entry == nullptr) return absl::InternalError(absl::StrCat("JIT: kernel `", what, "` built no function"));
  const std::string symbol = ContentName(IrBytes(*module));
  if (auto it = by_symbol.find(symbol); it != by_symbol.end()) {
    StoreAlias(key, it->second);
    return it->second.address;
  }
  entry->setName(symbol);
  module->setModuleIdentifier(key);
  storing[key] = symbol;
  llvm::Error added = jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context)));
  // The lookup materializes the module: the compile step runs (and stores the object) here.
  llvm::Expected<llvm::orc::ExecutorAddr> address =
      added ? llvm::Expected<llvm::orc::ExecutorAddr>(std::move(added)) : jit->lookup(symbol);
  storing.erase(key);
  if (!address) {
    return absl::InternalError(absl::StrCat("JIT: compiling kernel `", what, "`: ", Message(address.takeError())));
  }
  by_symbol[symbol] = Linked{address->toPtr<void*>(), cache ? key : ""};
  return address->toPtr<void*>();
}

absl::Status Compiler::Impl::Finish(llvm::Module& module, Optimization optimization, absl::string_view what) const {
  module.addModuleFlag(llvm::Module::Error, kOptimizationFlag, OptimizationCode(optimization));
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(module, &os)) {
    return absl::InternalError(absl::StrCat("JIT: invalid IR for kernel `", what, "`: ", problems));
  }
  // Every function is tuned for the host CPU so the vectorizers see its vector widths.
  for (llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", config.cpu);
    f.addFnAttr("target-features", config.features);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<void*>> Compiler::CompileProgram(const std::vector<Request>& requests) {
  std::vector<std::string> keys;
  std::vector<size_t> fresh;  // the requests to build, one per key not linked yet
  absl::flat_hash_map<std::string, size_t> requested;
  for (size_t i = 0; i < requests.size(); ++i) {
    keys.push_back(ObjectKey(impl_->config, KernelIdentity(requests[i].kernel_key, requests[i].optimization)));
    if (!impl_->by_key.contains(keys.back()) && requested.emplace(keys.back(), i).second) fresh.push_back(i);
  }
  // Sorted by key: the program's entry names the set, whatever order its ops asked in.
  std::sort(fresh.begin(), fresh.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  if (fresh.size() == 1) {
    const Request& only = requests[fresh[0]];
    RETURN_IF_ERROR(Compile(only.kernel_key, only.optimization, only.build).status());
  } else if (fresh.size() > 1) {
    std::vector<std::string> fresh_keys;
    for (size_t i : fresh) fresh_keys.push_back(keys[i]);
    const std::string program_key = ObjectKey(impl_->config, absl::StrCat("program\n", absl::StrJoin(fresh_keys, "\n")));
    std::optional<std::vector<void*>> linked;
    if (impl_->cache) linked = impl_->LinkProgramFromDisk(program_key, fresh_keys);
    if (!linked) {
      ASSIGN_OR_RETURN(linked, impl_->BuildProgram(program_key, requests, fresh, fresh_keys));
    }
    for (size_t j = 0; j < fresh.size(); ++j) impl_->by_key.emplace(fresh_keys[j], (*linked)[j]);
  }
  std::vector<void*> addresses;
  for (const std::string& key : keys) addresses.push_back(impl_->by_key.at(key));
  return addresses;
}

std::optional<std::vector<void*>> Compiler::Impl::LinkProgramFromDisk(const std::string& program_key,
                                                                      const std::vector<std::string>& keys) {
  std::optional<std::string> payload = cache->Load(program_key);
  if (!payload) return std::nullopt;
  std::optional<ProgramEntry> entry = UnpackProgramEntry(*payload);
  if (!entry || entry->kernels.size() != keys.size()) return std::nullopt;
  for (size_t j = 0; j < keys.size(); ++j) {
    if (entry->kernels[j].key != keys[j]) return std::nullopt;
  }
  // One tracker for the entry's objects, so an entry that does not link is removed whole.
  llvm::orc::ResourceTrackerSP tracker = jit->getMainJITDylib().createResourceTracker();
  auto fail = [&](llvm::Error error) -> std::optional<std::vector<void*>> {
    llvm::consumeError(std::move(error));
    llvm::consumeError(tracker->remove());
    return std::nullopt;
  };
  for (const std::string& object : entry->objects) {
    if (llvm::Error added = jit->addObjectFile(tracker, llvm::MemoryBuffer::getMemBufferCopy(object, program_key))) {
      return fail(std::move(added));
    }
  }
  std::vector<void*> addresses;
  for (const ProgramEntry::Kernel& kernel : entry->kernels) {
    llvm::Expected<llvm::orc::ExecutorAddr> address = jit->lookup(kernel.symbol);
    if (!address) return fail(address.takeError());
    addresses.push_back(address->toPtr<void*>());
  }
  for (size_t j = 0; j < addresses.size(); ++j) by_symbol.try_emplace(entry->kernels[j].symbol, Linked{addresses[j], ""});
  disk_links += static_cast<int64_t>(addresses.size());
  ++disk_loads;
  return addresses;
}

absl::StatusOr<llvm::TargetMachine*> Compiler::Impl::MachineFor(int t) {
  if (t == 0) return machine.get();
  while (static_cast<int>(thread_machines.size()) < t) {
    llvm::Expected<std::unique_ptr<llvm::TargetMachine>> made = machine_builder->createTargetMachine();
    if (!made) return absl::InternalError(absl::StrCat("JIT: target machine: ", Message(made.takeError())));
    thread_machines.push_back(std::move(*made));
  }
  return thread_machines[t - 1].get();
}

absl::StatusOr<std::vector<void*>> Compiler::Impl::BuildProgram(const std::string& program_key,
                                                                const std::vector<Request>& requests,
                                                                const std::vector<size_t>& fresh,
                                                                const std::vector<std::string>& keys) {
  // Each kernel is built as Build builds it, so its content name is the one a lazy compile of it
  // gives: equal code under another key is compiled once, here or from before.
  std::vector<std::string> symbols(fresh.size());
  std::vector<KernelIr> kernels;  // the distinct new ones
  absl::flat_hash_set<std::string> in_program;  // symbols the program's modules define
  for (size_t j = 0; j < fresh.size(); ++j) {
    const Request& request = requests[fresh[j]];
    llvm::LLVMContext context;
    auto module = std::make_unique<llvm::Module>(kBuildName, context);
    module->setDataLayout(jit->getDataLayout());
    module->setTargetTriple(jit->getTargetTriple().str());
    request.build(*module, kBuildName);
    const absl::string_view what = absl::string_view(request.kernel_key).substr(0, 80);
    RETURN_IF_ERROR(Finish(*module, request.optimization, what));
    if (module->getFunction(kBuildName) == nullptr) {
      return absl::InternalError(absl::StrCat("JIT: kernel `", what, "` built no function"));
    }
    std::string bitcode = IrBytes(*module);
    symbols[j] = ContentName(bitcode);
    if (by_symbol.contains(symbols[j]) || !in_program.insert(symbols[j]).second) continue;
    const Optimization o = request.optimization;
    KernelIr kernel{symbols[j], std::move(bitcode), o, module->getInstructionCount(), {}, {}};
    if (SplitOffTables(*module, kBuildName)) {
      kernel.body = absl::StrCat("visa_body_", absl::StripPrefix(ContentName(ShapeBitcode(*module)), "visa_"));
      module->getFunction(kBodyPlaceholder)->setName(kernel.body);
      kernel.split_bitcode = IrBytes(*module);
    }
    kernels.push_back(std::move(kernel));
  }
  // Kernels that differ only in their tables' contents share one body: the first defines it
  // (unless a program before did), the others are wrappers around it. A kernel alone with its
  // shape compiles as it is.
  absl::flat_hash_map<std::string, int> shapes;
  for (const KernelIr& kernel : kernels) {
    if (!kernel.body.empty()) ++shapes[kernel.body];
  }
  for (KernelIr& kernel : kernels) {
    if (kernel.body.empty()) continue;
    kernel.uses_split = shapes[kernel.body] > 1 || linked_bodies.contains(kernel.body);
    kernel.owns_body = kernel.uses_split && linked_bodies.insert(kernel.body).second;
    if (kernel.uses_split && !kernel.owns_body) ++bodies_shared;
  }
  std::vector<KernelCost> costs;
  for (const KernelIr& kernel : kernels) {
    const int64_t instructions = kernel.uses_split && !kernel.owns_body ? kWrapperInstructions : kernel.instructions;
    costs.push_back(KernelCost{OptimizationCode(kernel.optimization), instructions});
  }
  // Code generation costs per function: the kernels are spread over the compile threads, each
  // compiling one module per optimization level among its own.
  const std::vector<std::vector<PlannedModule>> plan = PartitionKernels(costs, compile_threads);
  std::vector<llvm::TargetMachine*> machines;
  for (size_t t = 0; t < plan.size(); ++t) {
    ASSIGN_OR_RETURN(llvm::TargetMachine * m, MachineFor(static_cast<int>(t)));
    machines.push_back(m);
  }
  std::vector<std::vector<absl::StatusOr<std::string>>> objects(plan.size());
  const llvm::DataLayout layout = jit->getDataLayout();
  const std::string triple = jit->getTargetTriple().str();
  const bool debug = std::getenv("VISA_JIT_DEBUG") != nullptr;
  Parallel(static_cast<int64_t>(plan.size()), static_cast<int>(plan.size()), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      for (const PlannedModule& module : plan[t]) {
        std::vector<const KernelIr*> members;
        for (size_t k : module.kernels) members.push_back(&kernels[k]);
        const double start = ThreadCpuSeconds();
        objects[t].push_back(CompileModule(members, members.front()->optimization, *machines[t], layout, triple));
        if (debug) {
          int64_t wrappers = 0;
          for (const KernelIr* kernel : members) wrappers += kernel->uses_split && !kernel->owns_body;
          std::fprintf(stderr, "program module on compile thread %lld: levels %d/%d%s, %zu kernels (%lld around a shared body): %.2f ms CPU\n",
                       static_cast<long long>(t), module.level % 16 / 4, module.level % 4, module.level >= 16 ? " no-lsr" : "", members.size(),
                       static_cast<long long>(wrappers), (ThreadCpuSeconds() - start) * 1e3);
        }
      }
    }
  });
  // One tracker for the program's objects, linked in a fixed order (thread by thread).
  llvm::orc::ResourceTrackerSP tracker = jit->getMainJITDylib().createResourceTracker();
  std::vector<std::string> program_objects;
  for (std::vector<absl::StatusOr<std::string>>& thread : objects) {
    for (absl::StatusOr<std::string>& object : thread) {
      if (!object.ok()) return object.status();
      ++compiles;
      if (llvm::Error added = jit->addObjectFile(tracker, llvm::MemoryBuffer::getMemBufferCopy(*object, program_key))) {
        return absl::InternalError(absl::StrCat("JIT: linking a program's module: ", Message(std::move(added))));
      }
      program_objects.push_back(*std::move(object));
    }
  }
  std::vector<void*> addresses;
  for (size_t j = 0; j < fresh.size(); ++j) {
    if (auto it = by_symbol.find(symbols[j]); it != by_symbol.end()) {
      addresses.push_back(it->second.address);
      continue;
    }
    llvm::Expected<llvm::orc::ExecutorAddr> address = jit->lookup(symbols[j]);
    if (!address) {
      return absl::InternalError(absl::StrCat("JIT: linking kernel `", requests[fresh[j]].kernel_key.substr(0, 80),
                                              "`: ", Message(address.takeError())));
    }
    by_symbol[symbols[j]] = Linked{address->toPtr<void*>(), ""};
    addresses.push_back(address->toPtr<void*>());
  }
  kernels_compiled += static_cast<int64_t>(in_program.size());
  // An entry names every kernel of the program; one whose code was linked before this program
  // is not in its objects, so a later process without it misses the entry and compiles again.
  if (cache != nullptr && !program_objects.empty()) {
    ProgramEntry entry;
    for (size_t j = 0; j < fresh.size(); ++j) entry.kernels.push_back({keys[j], symbols[j]});
    entry.objects = std::move(program_objects);
    // A failed write costs only a compile in a later process.
    (void)cache->Store(program_key, PackProgramEntry(entry));
  }
  return addresses;
}

int CompileThreads(int requested) {
  if (requested > 0) return std::min(requested, kMaxCompileThreads);
  if (const char* env = std::getenv("VISA_JIT_COMPILE_THREADS")) {
    int value = 0;
    if (absl::SimpleAtoi(env, &value) && value > 0) return std::min(value, kMaxCompileThreads);
  }
  return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, kMaxCompileThreads);
}

const CodegenConfig& Compiler::config() const { return impl_->config; }

std::string Compiler::target() const { return absl::StrCat(impl_->config.cpu); }

std::string Compiler::disk_cache_directory() const { return impl_->cache ? impl_->cache->directory() : ""; }
int64_t Compiler::compiles() const { return impl_->compiles; }
int64_t Compiler::kernels_compiled() const { return impl_->kernels_compiled; }
int64_t Compiler::disk_loads() const { return impl_->disk_loads; }
int64_t Compiler::bodies_shared() const { return impl_->bodies_shared; }
int64_t Compiler::disk_hits() const { return impl_->disk_links; }
int64_t Compiler::disk_writes() const { return impl_->cache ? impl_->cache->writes() : 0; }

}  // namespace visa::jit
