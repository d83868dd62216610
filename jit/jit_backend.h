// JitBackend: the Backend that compiles every stage into host code with LLVM ORC (see compiler.h)
// instead of evaluating it element by element.
//
// Each stage is a move between two layouts (fetch: DM Element -> stream; switch / collect /
// transpose: stream -> stream; cast: stream -> stream with a conversion; commit / to_trf / to_vrf
// and DMA: -> a device tensor), lowered to the loop nest of (count, stride) levels that the
// layouts' digits give (move_nest.h: the sequencer's loop structure over element positions),
// packets vectorized by LLVM for the host CPU, and the outermost loop split over threads. Device
// memory is staged per unit (staging.h). The results are bit-exact with the interpreter; an op the
// JIT has no code for fails with Unimplemented naming it, never falling back to the interpreter.
#pragma once

#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "jit/contraction_epilogue.h"
#include "jit/direct_pipeline.h"
#include "jit/fused_contraction.h"
#include "jit/kernel_cache.h"
#include "jit/ready_moves.h"
#include "runtime/backend.h"
#include "runtime/launch.h"

namespace visa::jit {

// The padding runs (start, length pairs) of stream layouts, by the layout's text (what fetches mask).
using PaddingCache = absl::flat_hash_map<std::string, std::vector<int64_t>>;

struct JitOptions {
  // Worker threads per move: 0 for the host's hardware threads, else 1 to kMaxThreads
  // (jit/parallel.h); Create refuses any other count. One by default, so that a program embedding
  // the library starts no workers it did not ask for; the `visa` command line asks for the host's.
  int threads = 1;
  // Compiled kernels kept on disk for later processes (object_cache.h). Off by default so that a
  // library user (and every test) writes nothing outside its process unless it asks to;
  // VISA_JIT_CACHE=off turns it off even when asked.
  bool disk_cache = false;
  std::string cache_dir = {};  // empty: $VISA_CACHE_DIR, $XDG_CACHE_HOME/visa/jit, $HOME/.cache/visa/jit
  // Data-movement pipelines run as one move between memories (direct_pipeline.h). False runs them
  // stage by stage, so that every fetch walks its recorded Fetch Sequencer configuration: agreement
  // with the interpreter then checks that derivation too (the tests do both).
  bool direct_pipelines = true;
  // The fused contraction's first tree level as an FMA where a scan finds every product exact
  // (exact_products.h): the same bits. Off by default because it measured no faster on an AMD
  // Zen 5 host (its multiplies and adds use separate pipes, and the multiplies are the bound),
  // while the scan costs a pass over the operands; on a CPU whose adds share the FMA ports it
  // removes a third of the first level's instructions.
  bool fma_first_level = false;
};

class JitBackend : public Backend {
 public:
  static absl::StatusOr<std::unique_ptr<JitBackend>> Create(JitOptions options = {});

  const char* name() const override { return "jit"; }
  absl::Status Run(const PipelineOp& op, const PipelineTensors& tensors) override;
  absl::Status Run(const DmaOp& op, const DmaTensors& tensors) override;

  // Compiles every kernel `program` needs before it runs (Launch then only runs code), together:
  // the kernels not compiled in this process yet form one program (Compiler::CompileProgram: a
  // module per optimization level, one disk cache entry). A program whose hash was prepared before
  // costs one lookup. Returns the seconds spent compiling.
  absl::StatusOr<double> Prepare(const Program& program);
  // The same for a kernel not traced yet: traces it on `inputs` (launch.h, Trace) and prepares
  // the Program, which it returns for Launch.
  absl::StatusOr<Program> Prepare(const KernelOf& kernel, const std::vector<DeviceTensor>& inputs);

  int threads() const { return kernels_->threads(); }
  // The same rule as JitOptions::threads (0: the host's); an error leaves the count unchanged.
  absl::Status set_threads(int threads);
  const JitStats& stats() const { return kernels_->stats(); }
  std::string target() const { return kernels_->compiler().target(); }

 private:
  JitBackend(std::unique_ptr<KernelCache> kernels, bool direct_pipelines, bool fma_first_level)
      : kernels_(std::move(kernels)), direct_pipelines_(direct_pipelines), fma_first_level_(fma_first_level) {}
  absl::Status PrepareOp(const Op& op);
  // The op's fused plan, or nullptr when it runs stage by stage (planned once per configuration).
  absl::StatusOr<const FusedContraction*> FusedPlanFor(const PipelineOp& op);
  // The op's fused epilogue into `output` (contraction_epilogue.h), or nullptr when the stages
  // after accumulate run on the accumulator image (the reason, with VISA_JIT_DEBUG, on stderr).
  // Planned once per op and output layout.
  const ContractionEpilogue* EpilogueFor(const PipelineOp& op, const FusedContraction& plan,
                                         const DeviceTensor& output);
  // Runs the fused front of `op`: with `epilogue`, the whole op (nullopt), else the Reducer's
  // output stream image; FailedPrecondition when the tensors do not line up with the plan (the
  // op then runs stage by stage).
  absl::StatusOr<std::optional<HostTensor>> RunFused(const FusedContraction& plan, const ContractionEpilogue* epilogue,
                                                     const PipelineTensors& tensors);

  // The op's one move between memories when it is pure data movement, else nullptr (the reason,
  // with VISA_JIT_DEBUG, on stderr). Planned once per op and ends (DirectPipelineKey).
  absl::StatusOr<const DirectPipeline*> DirectPlanFor(const PipelineOp& op, const DeviceTensor& input,
                                                      const DeviceTensor& output);

  // Runs the move op `serial` kept for these ends (ready_moves.h) and counts it; nullptr (nothing
  // run) when there is none.
  absl::StatusOr<const ReadyMove*> RunKept(uint64_t serial, const DeviceTensor& src, const DeviceTensor& dst);
  // Keeps the nest move `kernel` that op `serial` ran between `src_base` and `dst_base` in the
  // ends' memories, for its next run (nothing for a run-list move).
  void Keep(uint64_t serial, const DeviceTensor& src, const uint8_t* src_base, const DeviceTensor& dst,
            const uint8_t* dst_base, const ReadyNest& kernel, std::string derived_reason = {});
  // Counts a DMA as run from its descriptors (`why_not` empty) or derived, by why.
  void CountDma(const std::string& why_not);

  std::unique_ptr<KernelCache> kernels_;
  bool direct_pipelines_;
  bool fma_first_level_;
  absl::flat_hash_map<std::string, std::unique_ptr<std::variant<DirectPipeline, std::string>>> direct_plans_;
  absl::flat_hash_set<uint64_t> prepared_;
  PaddingCache padded_;
  absl::flat_hash_map<std::string, std::unique_ptr<std::variant<FusedContraction, std::string>>> fused_plans_;
  absl::flat_hash_map<std::string, std::unique_ptr<std::variant<ContractionEpilogue, std::string>>> epilogues_;
  ReadyMoves ready_;  // data-movement ops' moves, for their next runs
};

}  // namespace visa::jit
