// KernelCache: compiled move kernels cached in memory, and running a move on host buffers.
//
// A move is planned once per (destination mapping, source mapping) pair: its loop nest, or when it
// has none, its run list from the relayout table. The code is keyed by what it computes (the nest's
// levels or "runs", and the element op), so equal stages of different programs share one compiled
// function. Running splits the outermost loop (or the run list) over the configured threads.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "dsl/mapping.h"
#include "jit/compiler.h"
#include "jit/contraction_epilogue.h"
#include "jit/contraction_kernel.h"
#include "jit/lane_contraction_kernel.h"
#include "jit/move_kernel.h"
#include "jit/op_memo.h"
#include "jit/packet_contraction_kernel.h"
#include "jit/streaming_move.h"
#include "jit/vector_kernel.h"
#include "jit/vector_reduce_kernel.h"
#include "jit/write_order.h"

namespace visa::jit {

struct JitStats {
  int64_t compiles = 0;       // kernels optimized and code-generated
  int64_t modules = 0;        // modules optimized and code-generated (a program's kernels share a few)
  int64_t disk_loads = 0;     // disk cache entries linked (a program's kernels share one)
  int64_t shared_bodies = 0;  // of compiles, kernels whose code is another's, tables aside (shared_body.h)
  int64_t cache_hits = 0;     // kernel requests served from the in-memory cache
  int64_t disk_hits = 0;      // kernels whose object came from the disk cache (not compiled)
  int64_t disk_writes = 0;    // compiled objects stored in the disk cache
  double compile_seconds = 0; // IR building, optimization and code generation (or the disk load), summed
  int64_t nest_moves = 0;     // moves run as loop nests
  int64_t run_moves = 0;      // moves run from a run list (no affine form)
  int64_t streaming_moves = 0;     // nest moves run with streaming stores (streaming_move.h)
  int64_t streaming_misaligned = 0;  // large nest moves of a streaming shape run ordinarily: base not aligned
  int64_t relaunch_streaming_moves = 0;  // kept moves run again with the relaunch threshold's streaming kernels
  int64_t sequencer_moves = 0;  // fetches run from their recorded sequencer configuration
  int64_t derived_fetches = 0;  // fetches whose nest was derived from the mappings instead
  int64_t sequencer_commits = 0;  // commits run from their recorded sequencer configuration
  int64_t derived_commits = 0;    // commits moved by index instead (sequencer_nest.h: WriteNestOf)
  int64_t descriptor_dmas = 0;    // DMA moves run from their recorded descriptors (dma_nest.h)
  int64_t derived_dmas = 0;       // DMA moves run otherwise, counted by why in derived_dma_reasons
  std::map<std::string, int64_t> derived_dma_reasons;
  int64_t fused_pipelines = 0;  // pipelines whose front ran as one lane contraction kernel
  int64_t fused_epilogues = 0;  // of those, pipelines whose cast and commit ran fused after it
  int64_t packet_pipelines = 0;  // of those, pipelines run by the packet kernel (no lanes)
  int64_t fma_pipelines = 0;    // fused pipelines whose operands allowed the fused first tree level
  int64_t bf16_pair_slices = 0;  // slices of fused pipelines run with vdpbf16ps pairs (bf16_pairs)
  int64_t direct_pipelines = 0; // data-movement pipelines run as one move between memories
  int64_t direct_plans = 0;     // data-movement pipelines planned (once per op and ends)
  int64_t staged_pipelines = 0; // pipelines run stage by stage
  int64_t live_unit_walks = 0;  // of those, walks over their live units alone (live_units.h)
  int64_t units_walked = 0;     // the units (chip x cluster x slice) the staged walks spanned
  int64_t compiled_reductions = 0;  // Vector Engine reduce steps run through generated code
  int64_t ready_moves = 0;  // data-movement ops run again from the move their first run kept (ready_moves.h)
};

// A nest move compiled and split over threads, not yet bound to buffers: what RunNest runs, kept
// by callers that run the same move again (ready_moves.h).
// A broadcast copy of a ReadyNest (write_order.h): a kernel over the destination alone, reading
// the positions written so far and writing them again `dst_offset_bytes` further on.
struct ReadyCopy {
  MoveFn fn = nullptr;
  int64_t outer = 0;
  int threads = 1;
  bool streaming = false;
  int64_t dst_offset_bytes = 0;
};

// What a kept nest move is planned from: its nest and element op, and its buffers' positions.
struct NestSource {
  MoveNest nest;
  ElementOp op;
  int64_t dst_positions = 0;
  int64_t src_positions = 0;
};

struct ReadyNest {
  MoveFn fn = nullptr;
  int64_t outer = 0;     // iterations of the outermost level, split over the threads
  int threads = 1;
  int64_t elements = 0;  // destination positions written
  bool streaming = false;  // its stores stream (streaming_move.h): Run fences them
  std::vector<ReadyCopy> copies;  // run after fn, in order: the broadcast levels' copies
  // Set when a relaunch may run the move with streaming stores where this run does not
  // (KernelCache::RelaunchVariant): its destination writes at least the relaunch threshold.
  std::shared_ptr<const NestSource> source;
  void Run(uint8_t* dst_data, const uint8_t* src_data) const;
  // Whether any of its kernels (fn or a copy) streams its stores.
  bool Streams() const;
};

class KernelCache {
 public:
  static absl::StatusOr<std::unique_ptr<KernelCache>> Create(int threads, const CompilerOptions& compiler = {});

  // dst[p] = op(src[q]) for every live position p of `dst` and the position q of `src` holding
  // its index. `allow_drop`: source indices the destination lacks are not an error. Returns the
  // destination positions written.
  // `ran`, when given: the kernel a loop-nest move ran (its fn stays null for a run list), for
  // callers that keep it for the next run (ready_moves.h).
  absl::StatusOr<int64_t> Move(const Mapping& dst, const Mapping& src, const ElementOp& op, uint8_t* dst_data,
                    int64_t dst_positions, const uint8_t* src_data, int64_t src_positions, bool allow_drop,
                    ReadyNest* ran = nullptr);

  // A move given as its loop nest (e.g. a recorded sequencer configuration's, sequencer_nest.h).
  absl::StatusOr<int64_t> RunNest(const MoveNest& nest, const ElementOp& op, uint8_t* dst_data,
                                  int64_t dst_positions, const uint8_t* src_data, int64_t src_positions,
                                  ReadyNest* ran = nullptr);
  absl::Status CompileNest(const MoveNest& nest, const ElementOp& op);
  // Counts a run of a kept nest in the stats (RunNest counts its own).
  void Count(const ReadyNest& ready);
  // The kept nest `kept` planned again for a relaunch writing at `dst_data` (the device's memory
  // it wrote before): its kernels stream from relaunch_streaming_min_bytes() on. nullopt when
  // `kept` has no source or no kernel of the plan would stream; compiles what it needs.
  absl::StatusOr<std::optional<ReadyNest>> RelaunchVariant(const ReadyNest& kept, const uint8_t* dst_data);

  // The nest move dst <- src compiled for any buffers of these sizes (ordinary stores), to be run
  // again without planning (ReadyNest::Run, then Count); nullopt for a move without a loop nest.
  absl::StatusOr<std::optional<ReadyNest>> ReadyBetweenBuffers(const Mapping& dst, const Mapping& src,
                                                               const ElementOp& op, int64_t dst_positions,
                                                               int64_t src_positions, bool allow_drop);

  // Between these two calls (Prepare), kernels asked for are collected instead of compiled (their
  // addresses come back null: only their status may be used); CompileCollected compiles them as
  // one program (Compiler::CompileProgram) and ends the collection, DiscardCollected drops them.
  void CollectKernels();
  absl::Status CompileCollected();
  void DiscardCollected();
  bool collecting() const { return collecting_.has_value(); }

  // Plans and compiles the move without running it (Prepare).
  absl::Status Compile(const Mapping& dst, const Mapping& src, const ElementOp& op, bool allow_drop);

  // The compiled contraction kernel of `spec` (cached by its key).
  absl::StatusOr<ContractFn> Contraction(const ContractionSpec& spec);

  // Whether the move dst <- src has an affine loop nest (cached). In-place layouts are only used
  // for such moves: a run list over a memory-sized padded layout would walk every position.
  bool HasNest(const Mapping& dst, const Mapping& src);

  // Whether a move from `src` to `dst` is a copy of the whole image: `dst` has no padding (which a
  // move would have to clear) and both place every index at the same position; cached. Padding is
  // checked first because deciding equivalence of padded layouts may enumerate every position.
  absl::StatusOr<bool> SameUnpaddedLayout(const Mapping& dst, const Mapping& src);

  // The compiled per-slice epilogue of a fused contraction (cached by its key).
  absl::StatusOr<EpilogueFn> Epilogue(const ContractionEpilogue& epilogue);

  // The compiled fused contraction kernel of `spec` (cached by its key).
  absl::StatusOr<LaneContractionFn> LaneContraction(const LaneContractionSpec& spec);
  // The compiled packet contraction kernel of `spec` (packet_contraction_kernel.h; the lane
  // kernel's signature), cached by its key.
  absl::StatusOr<LaneContractionFn> PacketContraction(const PacketContractionSpec& spec);

  // The compiled loop of a vector segment (cached by its key).
  absl::StatusOr<VectorFn> Vector(const VectorKernelSpec& spec);
  absl::StatusOr<ZipFn> Zip(const ZipKernelSpec& spec);
  // The compiled intra- and inter-slice reductions (cached by their keys).
  absl::StatusOr<IntraReduceFn> IntraReduce(const IntraReduceKernelSpec& spec);
  absl::StatusOr<InterReduceFn> InterReduce(const InterReduceKernelSpec& spec);

  // How many destination positions the move writes (a nest's elements, or the runs' lengths).
  absl::StatusOr<int64_t> Coverage(const Mapping& dst, const Mapping& src, bool allow_drop);

  // Whether the move of the pair runs as a loop nest (false: a run list).
  absl::StatusOr<bool> IsNest(const Mapping& dst, const Mapping& src, bool allow_drop);

  int threads() const { return threads_; }
  // Nest moves writing at least this many bytes stream their stores when they can
  // (streaming_move.h); by default DefaultStreamingMinBytes().
  int64_t streaming_min_bytes() const { return streaming_min_bytes_; }
  void set_streaming_min_bytes(int64_t bytes) { streaming_min_bytes_ = bytes; }
  // The same for a kept move run again on the device it wrote before (RelaunchVariant); by
  // default DefaultRelaunchStreamingMinBytes().
  int64_t relaunch_streaming_min_bytes() const { return relaunch_streaming_min_bytes_; }
  void set_relaunch_streaming_min_bytes(int64_t bytes) { relaunch_streaming_min_bytes_ = bytes; }
  void set_threads(int threads) { threads_ = std::max(threads, 1); }
  const JitStats& stats() const { return stats_; }
  JitStats& stats() { return stats_; }
  // What ops' later runs reuse (op_memo.h).
  OpMemo& memo() { return memo_; }
  const Compiler& compiler() const { return *compiler_; }

 private:
  struct Plan {
    std::optional<MoveNest> nest;  // before Simplify
    // Four per run when there is no nest. Computed on the first run, not when compiling: the
    // run-list kernel does not depend on it, and a convolution's lists cost more than its code.
    mutable std::optional<std::vector<int64_t>> runs;
  };
  explicit KernelCache(std::unique_ptr<Compiler> compiler, int threads)
      : compiler_(std::move(compiler)),
        threads_(std::max(threads, 1)),
        streaming_min_bytes_(DefaultStreamingMinBytes()),
        relaunch_streaming_min_bytes_(DefaultRelaunchStreamingMinBytes()) {}
  absl::StatusOr<const Plan*> PlanFor(const Mapping& dst, const Mapping& src, bool allow_drop);
  // The plan's run list (`dst` <- `src`: the plan's pair), computed on first use.
  absl::StatusOr<const std::vector<int64_t>*> RunsFor(const Plan& plan, const Mapping& dst, const Mapping& src,
                                                      bool allow_drop);
  absl::StatusOr<MoveFn> KernelFor(const MoveSpec& spec);
  // RunNest's kernel and thread split for a destination at `dst_data` (whose alignment decides
  // whether the stores stream), checked against the buffers' positions, without running it.
  // Streaming from `min_bytes` destination bytes on (streaming_min_bytes() unless given).
  absl::StatusOr<ReadyNest> Ready(const MoveNest& nest, const ElementOp& op, int64_t dst_positions,
                                  int64_t src_positions, const uint8_t* dst_data,
                                  std::optional<int64_t> min_bytes = std::nullopt);
  // The kernel of a simplified nest: streaming when ChooseStreaming says so for `dst_base`
  // (nullptr: any vector-aligned base, as when preparing) and `min_bytes`.
  MoveSpec NestSpec(MoveNest simplified, const ElementOp& op, const uint8_t* dst_base, int64_t min_bytes);
  // How a nest is run: in write order with its broadcast levels as copies (write_order.h) when
  // it is a plain copy of whole bytes, else as given (its copies empty).
  WritePlan PlanFor(const MoveNest& nest, const ElementOp& op) const;
  // The compiled kernel of `nest` (simplified for `threads`) writing at `dst_base`.
  absl::StatusOr<ReadyCopy> ReadyKernel(const MoveNest& nest, const ElementOp& op, int threads,
                                        const uint8_t* dst_base, int64_t min_bytes);
  // The function `key` names, from memory, else from the disk cache, else built with
  // `build(module, name)` and compiled. `key` is the kernel spec's Key(): it must name everything
  // `build` reads, since on disk it stands for the code (compiler.h: KernelIdentity).
  absl::StatusOr<void*> Cached(const std::string& key, Optimization optimization,
                               const std::function<void(llvm::Module&, const std::string&)>& build);

  // Measures `compile` (which calls the compiler) into the stats.
  absl::Status Timed(const std::function<absl::Status()>& compile, absl::string_view what);

  std::unique_ptr<Compiler> compiler_;
  // While collecting (CollectKernels): the kernels asked for, in order, each key once.
  std::optional<std::vector<Compiler::Request>> collecting_;
  absl::flat_hash_set<std::string> collected_keys_;
  absl::flat_hash_map<std::string, bool> same_layouts_;
  absl::flat_hash_map<std::string, bool> has_nest_;
  int threads_;
  int64_t streaming_min_bytes_;
  int64_t relaunch_streaming_min_bytes_;
  absl::flat_hash_map<std::string, std::unique_ptr<Plan>> plans_;
  absl::flat_hash_map<std::string, void*> kernels_;
  JitStats stats_;
  OpMemo memo_;
};

}  // namespace visa::jit
