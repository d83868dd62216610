// KernelCache: planning (nest or runs), compiling on a miss, and threaded execution.
#include "jit/kernel_cache.h"

#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include "absl/strings/str_cat.h"
#include "dsl/equivalence.h"
#include "dsl/index_matching.h"
#include "dsl/layout.h"
#include "dsl/status_macros.h"
#include "jit/mapping_facts.h"
#include "jit/parallel.h"
#include "jit/streaming_move.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace visa::jit {
namespace {

// The run list of a move without an affine form: the layout algebra's one run-list function,
// under the engine rule the interpreter moves data by, so both backends agree on every layout.
absl::StatusOr<std::vector<int64_t>> RunsOf(const Mapping& dst, const Mapping& src, bool allow_drop) {
  std::vector<int64_t> runs;
  std::vector<bool> read(allow_drop ? 0 : src.size(), false);
  const std::optional<int64_t> unheld = ForEachRun(dst, src, MatchRule::kByDigit, [&](absl::Span<const MoveRun> chunk) {
    for (const MoveRun& r : chunk) {
      runs.insert(runs.end(), {r.dst, r.src, r.length, r.src_stride});
      for (int64_t i = 0; i < r.length && !read.empty(); ++i) read[r.src + i * r.src_stride] = true;
    }
  });
  if (unheld) return UnheldError(dst, *unheld, dst.map(*unheld).index, src);
  if (read.empty()) return runs;
  if (std::optional<int64_t> q = FirstDropped(src, [&](int64_t q) { return bool(read[q]); })) {
    return DroppedError(src, *q, src.map(*q).index, dst);
  }
  return runs;
}

// Each kernel kind's optimization (compiler.cc measures the kernel pipeline against O2). The
// per-element contraction kernel (contractions that do not fuse, e.g. convolutions) measured the
// same under both (the 2D convolution's main op 10-12 ms, its kernels 34-40 ms to compile).
// Move kernels are loops of loads and stores: code generation at level 1 makes the same data-movement
// benchmark times (2 MiB 0.091 ms, 32 MiB 2.61 ms on one thread) and cut the first compile of
// matmul_f8 from 97 to 89 ms and of vector_rms_norm_split_reduce from 93-105 to 87 ms.
// Without loop strength reduction (compiler.h): 271 -> 180 ms CPU for llama_tiny_prefill's 69
// move kernels, and the same run times (docs/jit.md, "Compile time").
constexpr Optimization kMoveOptimization{IrPipeline::kKernel, 1, /*strength_reduction=*/false};
// Float lane kernels: code generation at level 2 instead of 3 ran the GEMM op as fast (3.81-3.88 ms
// against 3.96 on one thread) and compiled matmul_f8 in 89-91 ms instead of 97-99.
constexpr Optimization kLaneOptimization{IrPipeline::kKernel, 2};
// Integer lane kernels of 16-bit pairs or byte quads (AVX512BW hosts) run markedly faster under O2
// (the i8 GEMM op 7.2 ms against 9.6 ms on one thread, 3.4 against 4.9 on two) and still compile
// within 100 ms (matmul_i8 70 ms); float lane kernels gain nothing from it and would compile up to
// 129 ms. Integer kernels of 32-bit values (trees, as the float ones: hosts without AVX512BW) take
// the float kernels' levels: on an AVX2 host matmul_i8's lane kernel compiled in 49 ms CPU instead
// of 77 under O2, and the i8 GEMM op ran the same (jit_bench, 1 thread, 22-26 ms both, load 8).
constexpr Optimization kIntegerLaneOptimization{IrPipeline::kO2, 3};
constexpr Optimization kContractionOptimization{IrPipeline::kKernel, 3};
// A fused contraction's epilogue (contraction_epilogue.h): one loop the vectorizer turns into
// loads, conversions, shuffles and stores.
constexpr Optimization kEpilogueOptimization{IrPipeline::kKernel, 3};
// The Vector Engine's element loops and the two-group zip (not measured yet): the kernel pipeline,
// whose loop vectorizer covers their inline arithmetic.
constexpr Optimization kVectorOptimization{IrPipeline::kKernel, 3};

// CPU seconds this thread has run: what compiling costs, whatever else the machine runs.
double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

}  // namespace

absl::StatusOr<std::unique_ptr<KernelCache>> KernelCache::Create(int threads, const CompilerOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<Compiler> compiler, Compiler::Create(options));
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
  return plans_.emplace(std::move(key), std::move(plan)).first->second.get();
}

absl::StatusOr<const std::vector<int64_t>*> KernelCache::RunsFor(const Plan& plan, const Mapping& dst,
                                                               const Mapping& src, bool allow_drop) {
  VISA_CHECK(!plan.nest, "a move with a loop nest has no run list");
  if (!plan.runs) {
    ASSIGN_OR_RETURN(std::vector<int64_t> runs, RunsOf(dst, src, allow_drop));
    plan.runs = std::move(runs);
  }
  return &*plan.runs;
}

absl::Status KernelCache::Timed(const std::function<absl::Status()>& compile, absl::string_view what) {
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = ThreadCpuSeconds();
  const int64_t modules = compiler_->compiles(), kernels = compiler_->kernels_compiled();
  const int64_t links = compiler_->disk_hits(), loads = compiler_->disk_loads(), writes = compiler_->disk_writes();
  const int64_t shared = compiler_->bodies_shared();
  RETURN_IF_ERROR(compile());
  stats_.compile_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t compiled = compiler_->kernels_compiled() - kernels, linked = compiler_->disk_hits() - links;
  stats_.compiles += compiled;
  stats_.modules += compiler_->compiles() - modules;
  stats_.shared_bodies += compiler_->bodies_shared() - shared;
  // Optimizing and generating code leaves megabytes of freed LLVM memory in the heap; give it
  // back, so it does not add to the device memory a run touches afterwards (peak memory).
  if (compiled > 0) malloc_trim(0);
  stats_.disk_hits += linked;
  stats_.disk_loads += compiler_->disk_loads() - loads;
  stats_.disk_writes += compiler_->disk_writes() - writes;
  if (compiled + linked == 0) ++stats_.cache_hits;  // code equal to another key's, linked before
  if (std::getenv("VISA_JIT_DEBUG") != nullptr) {
    std::fprintf(stderr, "kernel %.60s: %.2f ms CPU%s\n", std::string(what).c_str(),
                 (ThreadCpuSeconds() - cpu_start) * 1e3,
                 compiled ? "" : linked ? " (from disk)" : " (linked before)");
  }
  return absl::OkStatus();
}

absl::StatusOr<void*> KernelCache::Cached(const std::string& key, Optimization optimization,
                                          const std::function<void(llvm::Module&, const std::string&)>& build) {
  auto it = kernels_.find(key);
  if (it != kernels_.end()) {
    ++stats_.cache_hits;
    return it->second;
  }
  if (collecting_) {
    if (collected_keys_.insert(key).second) collecting_->push_back({key, optimization, build});
    return nullptr;
  }
  void* address = nullptr;
  RETURN_IF_ERROR(Timed(
      [&]() -> absl::Status {
        ASSIGN_OR_RETURN(address, compiler_->Compile(key, optimization, build));
        return absl::OkStatus();
      },
      key));
  kernels_.emplace(key, address);
  return address;
}

void KernelCache::CollectKernels() {
  collecting_.emplace();
  collected_keys_.clear();
}

void KernelCache::DiscardCollected() {
  collecting_.reset();
  collected_keys_.clear();
}

absl::Status KernelCache::CompileCollected() {
  VISA_CHECK(collecting_.has_value(), "CompileCollected follows CollectKernels");
  const std::vector<Compiler::Request> requests = *std::move(collecting_);
  DiscardCollected();
  if (requests.empty()) return absl::OkStatus();
  std::vector<void*> addresses;
  RETURN_IF_ERROR(Timed(
      [&]() -> absl::Status {
        ASSIGN_OR_RETURN(addresses, compiler_->CompileProgram(requests));
        return absl::OkStatus();
      },
      absl::StrCat("program of ", requests.size(), " kernels")));
  for (size_t i = 0; i < requests.size(); ++i) kernels_.emplace(requests[i].kernel_key, addresses[i]);
  return absl::OkStatus();
}

absl::StatusOr<MoveFn> KernelCache::KernelFor(const MoveSpec& spec) {
  ASSIGN_OR_RETURN(void* address, Cached(spec.Key(), kMoveOptimization, [spec](llvm::Module& module, const std::string& name) {
                     BuildMoveFunction(module, name, spec);
                   }));
  return reinterpret_cast<MoveFn>(address);
}

absl::StatusOr<ContractFn> KernelCache::Contraction(const ContractionSpec& spec) {
  ASSIGN_OR_RETURN(void* address, Cached(spec.Key(), kContractionOptimization, [spec](llvm::Module& module, const std::string& name) {
                     BuildContractionFunction(module, name, spec);
                   }));
  return reinterpret_cast<ContractFn>(address);
}

bool KernelCache::HasNest(const Mapping& dst, const Mapping& src) {
  if (!dst.ok() || !src.ok()) return false;
  std::string key = absl::StrCat(MappingKey(dst), " <- ", MappingKey(src));
  auto it = has_nest_.find(key);
  if (it != has_nest_.end()) return it->second;
  const bool nest = DeriveMoveNest(dst, src).has_value();
  has_nest_.emplace(std::move(key), nest);
  return nest;
}

absl::StatusOr<bool> KernelCache::SameUnpaddedLayout(const Mapping& dst, const Mapping& src) {
  if (HasPadding(dst)) return false;
  std::string key = absl::StrCat(MappingKey(dst), " == ", MappingKey(src));
  auto it = same_layouts_.find(key);
  if (it != same_layouts_.end()) return it->second;
  bool same = dst.size() == src.size();
  if (same) {
    ASSIGN_OR_RETURN(same, Equivalent(dst, src));
  }
  same_layouts_.emplace(std::move(key), same);
  return same;
}

absl::StatusOr<LaneContractionFn> KernelCache::LaneContraction(const LaneContractionSpec& spec) {
  const Optimization optimization =
      IsFloat(spec.acc_type) || PacksValues(spec) ? kLaneOptimization : kIntegerLaneOptimization;
  ASSIGN_OR_RETURN(void* address, Cached(spec.Key(), optimization, [spec](llvm::Module& module, const std::string& name) {
                     BuildLaneContractionFunction(module, name, spec);
                   }));
  return reinterpret_cast<LaneContractionFn>(address);
}

absl::StatusOr<LaneContractionFn> KernelCache::PacketContraction(const PacketContractionSpec& spec) {
  ASSIGN_OR_RETURN(void* address, Cached(spec.Key(), kLaneOptimization, [spec](llvm::Module& module, const std::string& name) {
                     BuildPacketContractionFunction(module, name, spec);
                   }));
  return reinterpret_cast<LaneContractionFn>(address);
}

absl::StatusOr<EpilogueFn> KernelCache::Epilogue(const ContractionEpilogue& epilogue) {
  ASSIGN_OR_RETURN(void* address, Cached(EpilogueKey(epilogue), kEpilogueOptimization,
                                         [epilogue](llvm::Module& module, const std::string& name) {
                                           BuildEpilogueFunction(module, name, epilogue);
                                         }));
  return reinterpret_cast<EpilogueFn>(address);
}

absl::StatusOr<VectorFn> KernelCache::Vector(const VectorKernelSpec& spec) {
  ASSIGN_OR_RETURN(void* address, Cached(spec.Key(), kVectorOptimization, [spec](llvm::Module& module, const std::string& name) {
                     BuildVectorFunction(module, name, spec);
                   }));
  return reinterpret_cast<VectorFn>(address);
}

absl::StatusOr<ZipFn> KernelCache::Zip(const ZipKernelSpec& spec) {
  ASSIGN_OR_RETURN(void* address, Cached(spec.Key(), kVectorOptimization, [spec](llvm::Module& module, const std::string& name) {
                     BuildZipFunction(module, name, spec);
                   }));
  return reinterpret_cast<ZipFn>(address);
}

absl::StatusOr<IntraReduceFn> KernelCache::IntraReduce(const IntraReduceKernelSpec& spec) {
  ASSIGN_OR_RETURN(void* address, Cached(spec.Key(), kVectorOptimization, [spec](llvm::Module& module, const std::string& name) {
                     BuildIntraReduceFunction(module, name, spec);
                   }));
  return reinterpret_cast<IntraReduceFn>(address);
}

absl::StatusOr<InterReduceFn> KernelCache::InterReduce(const InterReduceKernelSpec& spec) {
  ASSIGN_OR_RETURN(void* address, Cached(spec.Key(), kVectorOptimization, [spec](llvm::Module& module, const std::string& name) {
                     BuildInterReduceFunction(module, name, spec);
                   }));
  return reinterpret_cast<InterReduceFn>(address);
}

absl::StatusOr<int64_t> KernelCache::Coverage(const Mapping& dst, const Mapping& src, bool allow_drop) {
  ASSIGN_OR_RETURN(const Plan* plan, PlanFor(dst, src, allow_drop));
  if (plan->nest) return plan->nest->elements();
  ASSIGN_OR_RETURN(const std::vector<int64_t>* runs, RunsFor(*plan, dst, src, allow_drop));
  int64_t elements = 0;
  for (size_t r = 2; r < runs->size(); r += 4) elements += (*runs)[r];
  return elements;
}

absl::StatusOr<bool> KernelCache::IsNest(const Mapping& dst, const Mapping& src, bool allow_drop) {
  ASSIGN_OR_RETURN(const Plan* plan, PlanFor(dst, src, allow_drop));
  return plan->nest.has_value();
}

absl::Status KernelCache::Compile(const Mapping& dst, const Mapping& src, const ElementOp& op, bool allow_drop) {
  ASSIGN_OR_RETURN(const Plan* plan, PlanFor(dst, src, allow_drop));
  if (plan->nest) return CompileNest(*plan->nest, op);
  return KernelFor(MoveSpec{std::nullopt, op}).status();
}

absl::StatusOr<int64_t> KernelCache::Move(const Mapping& dst, const Mapping& src, const ElementOp& op, uint8_t* dst_data,
                               int64_t dst_positions, const uint8_t* src_data, int64_t src_positions,
                               bool allow_drop, ReadyNest* ran) {
  ASSIGN_OR_RETURN(const Plan* plan, PlanFor(dst, src, allow_drop));
  // Two threads must never share a byte of a 4-bit destination.
  const int threads = StorageBits(op.to) == 4 ? 1 : threads_;
  if (plan->nest) {
    if (std::getenv("VISA_JIT_DEBUG") != nullptr) {
      std::fprintf(stderr, "move %s <- %s: %s (%lld <- %lld)\n", dst.ToString().c_str(), src.ToString().c_str(),
                   plan->nest->ToString().c_str(), static_cast<long long>(dst_positions),
                   static_cast<long long>(src_positions));
    }
    return RunNest(*plan->nest, op, dst_data, dst_positions, src_data, src_positions, ran);
  }
  MoveSpec spec{std::nullopt, op};
  ASSIGN_OR_RETURN(MoveFn fn, KernelFor(spec));
  ASSIGN_OR_RETURN(const std::vector<int64_t>* run_list, RunsFor(*plan, dst, src, allow_drop));
  ++stats_.run_moves;
  const int64_t* runs = run_list->data();
  int64_t elements = 0;
  for (size_t r = 2; r < run_list->size(); r += 4) elements += (*run_list)[r];
  Parallel(static_cast<int64_t>(run_list->size() / 4), ThreadsFor(elements, threads),
           [&](int64_t begin, int64_t end) { fn(dst_data, src_data, runs, begin, end); });
  return elements;
}

absl::Status KernelCache::CompileNest(const MoveNest& nest, const ElementOp& op) {
  const WritePlan plan = PlanFor(nest, op);
  std::vector<MoveNest> nests{plan.first};
  for (const BroadcastCopy& copy : plan.copies) nests.push_back(copy.nest);
  for (const MoveNest& each : nests) {
    MoveSpec spec{Simplify(each, threads_), op};
    RETURN_IF_ERROR(KernelFor(spec).status());
    // A move large enough to stream usually gets an aligned base (device memories are
    // page-aligned): its streaming kernel is compiled now too, the ordinary one stays for a
    // misaligned base.
    const MoveSpec streaming = NestSpec(*spec.nest, op, nullptr, streaming_min_bytes_);
    if (streaming.streaming) RETURN_IF_ERROR(KernelFor(streaming).status());
  }
  return absl::OkStatus();
}

MoveSpec KernelCache::NestSpec(MoveNest simplified, const ElementOp& op, const uint8_t* dst_base,
                               int64_t min_bytes) {
  const StreamingChoice choice = ChooseStreaming(simplified, op, dst_base, min_bytes);
  if (choice == StreamingChoice::kMisaligned) ++stats_.streaming_misaligned;
  if ((choice == StreamingChoice::kStream || choice == StreamingChoice::kMisaligned) && dst_base != nullptr &&
      std::getenv("VISA_JIT_DEBUG") != nullptr) {
    std::fprintf(stderr, "streaming %s: %s\n", simplified.ToString().c_str(), ToString(choice));
  }
  if (choice != StreamingChoice::kStream) return MoveSpec{std::move(simplified), op};
  return MoveSpec{StreamingNest(simplified, op), op, /*streaming=*/true};
}

WritePlan KernelCache::PlanFor(const MoveNest& nest, const ElementOp& op) const {
  const bool plain_copy = op.kind == ElementOp::Kind::kCopy && op.from == op.to && StorageBits(op.to) % 8 == 0;
  if (!plain_copy) return WritePlan{nest, {}};
  return PlanWrites(nest);
}

absl::StatusOr<ReadyCopy> KernelCache::ReadyKernel(const MoveNest& nest, const ElementOp& op, int threads,
                                                   const uint8_t* dst_base, int64_t min_bytes) {
  const MoveSpec spec = NestSpec(Simplify(nest, threads), op, dst_base, min_bytes);
  if (std::getenv("VISA_JIT_DEBUG") != nullptr) {
    std::fprintf(stderr, "nest kernel %s\n", spec.Key().c_str());
  }
  ASSIGN_OR_RETURN(MoveFn fn, KernelFor(spec));
  return ReadyCopy{fn, spec.nest->levels.back().count, ThreadsFor(spec.nest->elements(), threads), spec.streaming, 0};
}

absl::StatusOr<ReadyNest> KernelCache::Ready(const MoveNest& nest, const ElementOp& op, int64_t dst_positions,
                                             int64_t src_positions, const uint8_t* dst_data,
                                             std::optional<int64_t> min_bytes) {
  const int64_t stream_from = min_bytes.value_or(streaming_min_bytes_);
  VISA_CHECK(nest.max_dst() < dst_positions && nest.max_src() < src_positions, "a move nest leaves its buffers");
  // Two threads must never share a byte of a 4-bit destination.
  const int threads = StorageBits(op.to) == 4 ? 1 : threads_;
  const WritePlan plan = PlanFor(nest, op);
  ASSIGN_OR_RETURN(ReadyCopy first, ReadyKernel(plan.first, op, threads, dst_data, stream_from));
  ReadyNest ready{first.fn, first.outer, first.threads, nest.elements(), first.streaming, {}, nullptr};
  const int64_t bytes = StorageBits(op.to) / 8;
  for (const BroadcastCopy& copy : plan.copies) {
    const int64_t offset = copy.dst_offset * bytes;
    ASSIGN_OR_RETURN(ReadyCopy kernel, ReadyKernel(copy.nest, op, threads, dst_data + offset, stream_from));
    kernel.dst_offset_bytes = offset;
    ready.copies.push_back(kernel);
  }
  // A first run's plan of a move a relaunch would stream at a lower threshold keeps what a
  // relaunch plans it from.
  const int64_t written_bytes = nest.elements() * StorageBits(op.to) / 8;
  if (!min_bytes && relaunch_streaming_min_bytes_ < stream_from && written_bytes >= relaunch_streaming_min_bytes_) {
    ready.source = std::make_shared<const NestSource>(NestSource{nest, op, dst_positions, src_positions});
  }
  return ready;
}

absl::StatusOr<std::optional<ReadyNest>> KernelCache::RelaunchVariant(const ReadyNest& kept, const uint8_t* dst_data) {
  if (kept.source == nullptr) return std::nullopt;
  const NestSource& source = *kept.source;
  ASSIGN_OR_RETURN(ReadyNest ready, Ready(source.nest, source.op, source.dst_positions, source.src_positions, dst_data,
                                          relaunch_streaming_min_bytes_));
  if (!ready.Streams()) return std::nullopt;
  if (std::getenv("VISA_JIT_DEBUG") != nullptr) {
    std::fprintf(stderr, "relaunch streaming %s\n", source.nest.ToString().c_str());
  }
  return ready;
}

absl::StatusOr<std::optional<ReadyNest>> KernelCache::ReadyBetweenBuffers(const Mapping& dst, const Mapping& src,
                                                                       const ElementOp& op, int64_t dst_positions,
                                                                       int64_t src_positions, bool allow_drop) {
  ASSIGN_OR_RETURN(const Plan* plan, PlanFor(dst, src, allow_drop));
  if (!plan->nest) return std::nullopt;
  const int threads = StorageBits(op.to) == 4 ? 1 : threads_;
  MoveSpec spec{Simplify(*plan->nest, threads), op};
  VISA_CHECK(spec.nest->max_dst() < dst_positions && spec.nest->max_src() < src_positions,
             "a move nest leaves its buffers");
  ASSIGN_OR_RETURN(MoveFn fn, KernelFor(spec));
  return ReadyNest{fn, spec.nest->levels.back().count, ThreadsFor(spec.nest->elements(), threads),
                   spec.nest->elements(), false, {}, nullptr};
}

bool ReadyNest::Streams() const {
  return streaming || std::any_of(copies.begin(), copies.end(), [](const ReadyCopy& c) { return c.streaming; });
}

void ReadyNest::Run(uint8_t* dst_data, const uint8_t* src_data) const {
  Parallel(outer, threads, [&](int64_t begin, int64_t end) {
    fn(dst_data, src_data, nullptr, begin, end);
    // Streaming stores are weakly ordered: each thread fences its own before the join publishes
    // the destination to the caller (and to the next op).
    if (streaming) FenceStreamingStores();
  });
  for (const ReadyCopy& copy : copies) {
    Parallel(copy.outer, copy.threads, [&](int64_t begin, int64_t end) {
      copy.fn(dst_data + copy.dst_offset_bytes, dst_data, nullptr, begin, end);
      if (copy.streaming) FenceStreamingStores();
    });
  }
}

void KernelCache::Count(const ReadyNest& ready) {
  ++stats_.nest_moves;
  if (ready.Streams()) ++stats_.streaming_moves;
}

absl::StatusOr<int64_t> KernelCache::RunNest(const MoveNest& nest, const ElementOp& op, uint8_t* dst_data,
                                             int64_t dst_positions, const uint8_t* src_data, int64_t src_positions,
                                             ReadyNest* ran) {
  ASSIGN_OR_RETURN(ReadyNest ready, Ready(nest, op, dst_positions, src_positions, dst_data));
  Count(ready);
  ready.Run(dst_data, src_data);
  if (ran != nullptr) *ran = ready;
  return ready.elements;
}

}  // namespace visa::jit
