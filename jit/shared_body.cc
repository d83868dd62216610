// SharedBody: a kernel's function split into a wrapper and a body taking the tables as arguments.
#include "jit/shared_body.h"

#include <utility>
#include <vector>

#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

namespace visa::jit {
namespace {

// A table: a private constant array of numbers (what ir_loops.h's EmitTableLoad and the lane
// kernels' line tables make).
bool IsTable(const llvm::GlobalVariable& g) {
  if (!g.isConstant() || !g.hasPrivateLinkage() || !g.hasInitializer()) return false;
  const auto* array = llvm::dyn_cast<llvm::ArrayType>(g.getValueType());
  return array != nullptr && (array->getElementType()->isIntegerTy() || array->getElementType()->isFloatingPointTy());
}

// The name LoadParameters gives its table (the module may add a suffix to keep names unique).
constexpr llvm::StringLiteral kParameterTable = "visa.parameters";

bool IsParameterTable(const llvm::GlobalVariable& g) { return g.getName().starts_with(kParameterTable); }

// Whether every use of `table` is an address computed in `f` at a run-time index: a load at a
// constant index is folded to the table's value, which an argument would prevent (unless the
// values are parameters, which a shared body is meant to take at run time).
bool ReadOnlyAtComputedIndices(const llvm::GlobalVariable& table, const llvm::Function& f) {
  for (const llvm::User* user : table.users()) {
    const auto* gep = llvm::dyn_cast<llvm::GetElementPtrInst>(user);
    if (gep == nullptr || gep->getPointerOperand() != &table || gep->getFunction() != &f ||
        (gep->hasAllConstantIndices() && !IsParameterTable(table))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<llvm::Value*> LoadParameters(llvm::IRBuilder<>& b, llvm::Module& module, const std::vector<int64_t>& values) {
  if (values.empty()) return {};
  llvm::Type* i64 = b.getInt64Ty();
  std::vector<llvm::Constant*> entries;
  for (int64_t v : values) entries.push_back(llvm::ConstantInt::get(i64, static_cast<uint64_t>(v)));
  auto* array = llvm::ArrayType::get(i64, values.size());
  auto* table = new llvm::GlobalVariable(module, array, /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
                                         llvm::ConstantArray::get(array, entries), kParameterTable);
  std::vector<llvm::Value*> loads;
  for (size_t i = 0; i < values.size(); ++i) {
    // An instruction, not a folded constant expression: SplitOffTables replaces the table in it.
    llvm::Value* address = b.Insert(llvm::GetElementPtrInst::CreateInBounds(
        array, table, {b.getInt64(0), b.getInt64(static_cast<int64_t>(i))}));
    loads.push_back(b.CreateLoad(i64, address));
  }
  return loads;
}

bool SplitOffTables(llvm::Module& module, const std::string& name) {
  llvm::Function* kernel = module.getFunction(name);
  if (kernel == nullptr || kernel->isDeclaration() || kernel->isVarArg()) return false;
  std::vector<llvm::GlobalVariable*> tables;
  for (llvm::GlobalVariable& g : module.globals()) {
    if (!IsTable(g)) continue;
    if (!ReadOnlyAtComputedIndices(g, *kernel)) return false;
    tables.push_back(&g);
  }
  if (tables.empty()) return false;
  llvm::LLVMContext& context = module.getContext();
  const llvm::DataLayout& layout = module.getDataLayout();
  std::vector<llvm::Type*> params(kernel->getFunctionType()->param_begin(), kernel->getFunctionType()->param_end());
  const unsigned own = static_cast<unsigned>(params.size());
  for (llvm::GlobalVariable* table : tables) params.push_back(table->getType());
  auto* type = llvm::FunctionType::get(kernel->getReturnType(), params, /*isVarArg=*/false);
  llvm::Function* body = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, kBodyPlaceholder, module);
  body->copyAttributesFrom(kernel);
  body->setLinkage(llvm::GlobalValue::ExternalLinkage);
  // Shared by several wrappers: inlining it into one would only copy it.
  body->addFnAttr(llvm::Attribute::NoInline);
  body->splice(body->end(), kernel);
  for (unsigned a = 0; a < own; ++a) {
    kernel->getArg(a)->replaceAllUsesWith(body->getArg(a));
    body->getArg(a)->takeName(kernel->getArg(a));
  }
  for (unsigned t = 0; t < tables.size(); ++t) {
    llvm::Argument* arg = body->getArg(own + t);
    tables[t]->replaceAllUsesWith(arg);
    // What the optimizer knew of the constant global, except its values.
    const uint64_t bytes = layout.getTypeAllocSize(tables[t]->getValueType());
    body->addParamAttr(own + t, llvm::Attribute::NoAlias);
    body->addParamAttr(own + t, llvm::Attribute::ReadOnly);
    body->addParamAttr(own + t, llvm::Attribute::NonNull);
    body->addParamAttr(own + t, llvm::Attribute::NoUndef);
    body->addParamAttr(own + t, llvm::Attribute::getWithDereferenceableBytes(context, bytes));
    body->addParamAttr(own + t, llvm::Attribute::getWithAlignment(context, tables[t]->getPointerAlignment(layout)));
  }
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", kernel));
  std::vector<llvm::Value*> args;
  for (llvm::Argument& a : kernel->args()) args.push_back(&a);
  for (llvm::GlobalVariable* table : tables) args.push_back(table);
  llvm::CallInst* call = b.CreateCall(body, args);
  call->setTailCall(true);
  if (kernel->getReturnType()->isVoidTy()) {
    b.CreateRetVoid();
  } else {
    b.CreateRet(call);
  }
  return true;
}

std::string ShapeBitcode(llvm::Module& module) {
  std::vector<std::pair<llvm::GlobalVariable*, llvm::Constant*>> contents;
  for (llvm::GlobalVariable& g : module.globals()) {
    if (!IsTable(g)) continue;
    contents.emplace_back(&g, g.getInitializer());
    g.setInitializer(llvm::ConstantAggregateZero::get(g.getValueType()));
  }
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  llvm::WriteBitcodeToFile(module, os);
  os.flush();
  for (auto& [g, initializer] : contents) g->setInitializer(initializer);
  return bytes;
}

}  // namespace visa::jit
