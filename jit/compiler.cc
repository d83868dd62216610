// Compiler: LLJIT for the host, O3 through the new pass manager, errors turned into Status.
#include "jit/compiler.h"

#include <mutex>

#include "absl/strings/str_cat.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace visa::jit {
namespace {

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

}  // namespace

struct Compiler::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::TargetMachine> machine;
  std::string cpu, features;
};

Compiler::Compiler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Compiler::~Compiler() = default;

absl::StatusOr<std::unique_ptr<Compiler>> Compiler::Create() {
  InitializeTargets();
  // detectHost fills in the host CPU name and its features (AVX2, AVX-512, ...).
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) return absl::InternalError(absl::StrCat("JIT: no host target: ", Message(builder.takeError())));
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto impl = std::make_unique<Impl>();
  impl->cpu = builder->getCPU();
  impl->features = builder->getFeatures().getString();
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine = builder->createTargetMachine();
  if (!machine) return absl::InternalError(absl::StrCat("JIT: target machine: ", Message(machine.takeError())));
  impl->machine = std::move(*machine);
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*builder)).create();
  if (!jit) return absl::InternalError(absl::StrCat("JIT: LLJIT: ", Message(jit.takeError())));
  impl->jit = std::move(*jit);
  // memcpy / memset, which the optimizer introduces for contiguous loops, come from the process.
  llvm::Expected<std::unique_ptr<llvm::orc::DynamicLibrarySearchGenerator>> process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          impl->jit->getDataLayout().getGlobalPrefix());
  if (!process) return absl::InternalError(absl::StrCat("JIT: process symbols: ", Message(process.takeError())));
  impl->jit->getMainJITDylib().addGenerator(std::move(*process));
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
                                        const std::string& function) {
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module, &os)) {
    return absl::InternalError(absl::StrCat("JIT: invalid IR for `", function, "`: ", problems));
  }
  // Every function is tuned for the host CPU so the vectorizers see its vector widths.
  for (llvm::Function& f : *module) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", impl_->cpu);
    f.addFnAttr("target-features", impl_->features);
  }
  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder passes(impl_->machine.get());
    passes.registerModuleAnalyses(mam);
    passes.registerCGSCCAnalyses(cgam);
    passes.registerFunctionAnalyses(fam);
    passes.registerLoopAnalyses(lam);
    passes.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager pipeline = passes.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    pipeline.run(*module, mam);
  }
  if (llvm::Error error = impl_->jit->addIRModule(
          llvm::orc::ThreadSafeModule(std::move(module), std::move(context)))) {
    return absl::InternalError(absl::StrCat("JIT: adding `", function, "`: ", Message(std::move(error))));
  }
  llvm::Expected<llvm::orc::ExecutorAddr> address = impl_->jit->lookup(function);
  if (!address) {
    return absl::InternalError(absl::StrCat("JIT: looking up `", function, "`: ", Message(address.takeError())));
  }
  return address->toPtr<void*>();
}

std::string Compiler::target() const { return absl::StrCat(impl_->cpu); }

}  // namespace visa::jit
