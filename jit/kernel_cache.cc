// KernelCache: planning (nest or runs), compiling on a miss, and threaded execution.
#include "jit/kernel_cache.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <algorithm>
#include "absl/strings/str_cat.h"
#include "dsl/index_projection.h"
#include "dsl/status_macros.h"
#include "jit/parallel.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace visa::jit {
namespace {

// The run list of a move without an affine form, computed exactly as the interpreter's
// MoveByIndex does (Mapping::map on the destination, Mapping::inverse on the source), so both
// backends agree on every layout, composites included. Consecutive destination positions reading
// equally spaced source positions form one run.
absl::StatusOr<std::vector<int64_t>> RunsOf(const Mapping& dst, const Mapping& src, bool allow_drop) {
  const std::vector<std::string> src_axes = src.axis_names();
  std::vector<int64_t> runs;
  std::vector<bool> read(allow_drop ? 0 : src.size(), false);
  for (int64_t p = 0; p < dst.size(); ++p) {
    Cell cell = dst.map(p);
    if (!cell.live()) continue;
    Index wanted;
    for (const auto& [axis, value] : cell.index.coords()) {
      if (std::binary_search(src_axes.begin(), src_axes.end(), axis)) wanted.Set(axis, value);
    }
    std::optional<Index> projected = ProjectOntoSource(wanted, src);
    std::optional<int64_t> q = projected ? src.inverse(*projected) : std::nullopt;
    if (!q) {
      return absl::InvalidArgumentError(absl::StrCat("move: position ", p, " of `", dst.ToString(), "` holds ",
                                                     cell.index.ToString(), ", which the source `", src.ToString(),
                                                     "` does not hold"));
    }
    if (!read.empty()) read[*q] = true;
    const size_t n = runs.size();
    if (n > 0 && runs[n - 4] + runs[n - 2] == p) {
      int64_t& length = runs[n - 2];
      int64_t& stride = runs[n - 1];
      if (length == 1) stride = *q - runs[n - 3];
      if (runs[n - 3] + length * stride == *q) {
        ++length;
        continue;
      }
      if (length == 1) stride = 1;
    }
    runs.insert(runs.end(), {p, *q, 1, 1});
  }
  for (int64_t q = 0; q < static_cast<int64_t>(read.size()); ++q) {
    if (read[q]) continue;
    Cell cell = src.map(q);
    // Broadcast digits repeat an index; only the first position holding it is ever read.
    if (cell.live() && !read[*src.inverse(cell.index)]) {
      return absl::InvalidArgumentError(absl::StrCat("move: the source `", src.ToString(), "` holds ",
                                                     cell.index.ToString(), " (position ", q, "), which `",
                                                     dst.ToString(), "` does not hold; the move would drop data"));
    }
  }
  return runs;
}

// A mapping's text names its axes but not their sizes, which the key must hold too.
std::string MappingKey(const Mapping& m) {
  std::string key = m.ToString();
  for (const Axis& axis : m.symbols()) {
    absl::StrAppend(&key, " ", axis.name, "=", axis.size);
    if (axis.skew) absl::StrAppend(&key, "(", axis.skew->base, "-", axis.skew->offset, ")");
  }
  return key;
}

}  // namespace

absl::StatusOr<std::unique_ptr<KernelCache>> KernelCache::Create(int threads) {
  ASSIGN_OR_RETURN(std::unique_ptr<Compiler> compiler, Compiler::Create());
  return std::unique_ptr<KernelCache>(new KernelCache(std::move(compiler), threads));
}

absl::StatusOr<const KernelCache::Plan*> KernelCache::PlanFor(const Mapping& dst, const Mapping& src,
                                                             bool allow_drop) {
  RETURN_IF_ERROR(dst.status());
  RETURN_IF_ERROR(src.status());
  std::string key = absl::StrCat(MappingKey(dst), " <- ", MappingKey(src), allow_drop ? " drop" : "");
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second.get();
  auto plan = std::make_unique<Plan>();
  plan->nest = DeriveMoveNest(dst, src);
  if (!plan->nest) {
    ASSIGN_OR_RETURN(plan->runs, RunsOf(dst, src, allow_drop));
  }
  return plans_.emplace(std::move(key), std::move(plan)).first->second.get();
}

absl::StatusOr<void*> KernelCache::Cached(const std::string& key,
                                          const std::function<void(llvm::Module&, const std::string&)>& build) {
  auto it = kernels_.find(key);
  if (it != kernels_.end()) {
    ++stats_.cache_hits;
    return it->second;
  }
  const auto start = std::chrono::steady_clock::now();
  auto context = std::make_unique<llvm::LLVMContext>();
  const std::string name = absl::StrCat("visa_kernel_", next_name_++);
  std::unique_ptr<llvm::Module> module = compiler_->NewModule(*context, name);
  build(*module, name);
  ASSIGN_OR_RETURN(void* address, compiler_->Compile(std::move(module), std::move(context), name));
  stats_.compile_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ++stats_.compiles;
  kernels_.emplace(key, address);
  return address;
}

absl::StatusOr<MoveFn> KernelCache::KernelFor(const MoveSpec& spec) {
  ASSIGN_OR_RETURN(void* address, Cached(spec.Key(), [&](llvm::Module& module, const std::string& name) {
                     BuildMoveFunction(module, name, spec);
                   }));
  return reinterpret_cast<MoveFn>(address);
}

absl::StatusOr<ContractFn> KernelCache::Contraction(const ContractionSpec& spec) {
  ASSIGN_OR_RETURN(void* address, Cached(spec.Key(), [&](llvm::Module& module, const std::string& name) {
                     BuildContractionFunction(module, name, spec);
                   }));
  return reinterpret_cast<ContractFn>(address);
}

absl::StatusOr<int64_t> KernelCache::Coverage(const Mapping& dst, const Mapping& src, bool allow_drop) {
  ASSIGN_OR_RETURN(const Plan* plan, PlanFor(dst, src, allow_drop));
  if (plan->nest) return plan->nest->elements();
  int64_t elements = 0;
  for (size_t r = 2; r < plan->runs.size(); r += 4) elements += plan->runs[r];
  return elements;
}

absl::StatusOr<bool> KernelCache::IsNest(const Mapping& dst, const Mapping& src, bool allow_drop) {
  ASSIGN_OR_RETURN(const Plan* plan, PlanFor(dst, src, allow_drop));
  return plan->nest.has_value();
}

absl::Status KernelCache::Compile(const Mapping& dst, const Mapping& src, const ElementOp& op, bool allow_drop) {
  ASSIGN_OR_RETURN(const Plan* plan, PlanFor(dst, src, allow_drop));
  MoveSpec spec{plan->nest ? std::optional<MoveNest>(Simplify(*plan->nest, threads_)) : std::nullopt, op};
  return KernelFor(spec).status();
}

absl::StatusOr<int64_t> KernelCache::Move(const Mapping& dst, const Mapping& src, const ElementOp& op, uint8_t* dst_data,
                               int64_t dst_positions, const uint8_t* src_data, int64_t src_positions,
                               bool allow_drop) {
  ASSIGN_OR_RETURN(const Plan* plan, PlanFor(dst, src, allow_drop));
  // Two threads must never share a byte of a 4-bit destination.
  const int threads = StorageBits(op.to) == 4 ? 1 : threads_;
  if (plan->nest) {
    if (std::getenv("VISA_JIT_DEBUG") != nullptr) {
      std::fprintf(stderr, "move %s <- %s: %s (%lld <- %lld)\n", dst.ToString().c_str(), src.ToString().c_str(),
                   plan->nest->ToString().c_str(), static_cast<long long>(dst_positions),
                   static_cast<long long>(src_positions));
    }
    return RunNest(*plan->nest, op, dst_data, dst_positions, src_data, src_positions);
  }
  MoveSpec spec{std::nullopt, op};
  ASSIGN_OR_RETURN(MoveFn fn, KernelFor(spec));
  ++stats_.run_moves;
  const int64_t* runs = plan->runs.data();
  int64_t elements = 0;
  for (size_t r = 2; r < plan->runs.size(); r += 4) elements += plan->runs[r];
  Parallel(static_cast<int64_t>(plan->runs.size() / 4), ThreadsFor(elements, threads),
           [&](int64_t begin, int64_t end) { fn(dst_data, src_data, runs, begin, end); });
  return elements;
}

absl::Status KernelCache::CompileNest(const MoveNest& nest, const ElementOp& op) {
  return KernelFor(MoveSpec{Simplify(nest, threads_), op}).status();
}

absl::StatusOr<int64_t> KernelCache::RunNest(const MoveNest& nest, const ElementOp& op, uint8_t* dst_data,
                                             int64_t dst_positions, const uint8_t* src_data, int64_t src_positions) {
  // Two threads must never share a byte of a 4-bit destination.
  const int threads = StorageBits(op.to) == 4 ? 1 : threads_;
  MoveSpec spec{Simplify(nest, threads), op};
  VISA_CHECK(spec.nest->max_dst() < dst_positions && spec.nest->max_src() < src_positions,
             "a move nest leaves its buffers");
  ASSIGN_OR_RETURN(MoveFn fn, KernelFor(spec));
  ++stats_.nest_moves;
  Parallel(spec.nest->levels.back().count, ThreadsFor(spec.nest->elements(), threads),
           [&](int64_t begin, int64_t end) { fn(dst_data, src_data, nullptr, begin, end); });
  return spec.nest->elements();
}

}  // namespace visa::jit
