// The model steps a Llama-style program is built from, written once for every model here (the
// tiny decoder, the Llama 3 70B layer): the GEMM tile on the Contraction Engine (one 32-column tile
// per slice, the contracted axis restated as flits and packets), its K-chunked form for a
// contracted axis larger than a TRF row holds, the DM scratch a step frees when it ends, a tile's
// or a per-row scalar's image in the VRF, RMSNorm, the masked softmax and the V transpose.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/mapping_parser.h"
#include "runtime/program.h"
#include "runtime/tensor.h"
#include "runtime/tensor_unit.h"
#include "samples/models/llama_config.h"

namespace visa::models {

// The pieces of a contracted axis K the GEMM tile restates: K itself, its 16-element flits and
// its 32-element packets. `outer` are axes outside the innermost `inner` (a multiple of 32).
struct Contracted {
  std::string all, outer16, inner16, outer32, inner32;
};
Contracted Over(const std::string& outer, const std::string& inner);

// One GEMM tile per slice (the manual's Hello TCP GEMM): out[rows, cols % 32] = sum_k a[rows, k] *
// b_t[cols, k], with `slice` naming the batch axes and the column tile (cols / 32).
struct MatmulSpec {
  std::string step;   // the model step (op name in `visa explain` / `visa schedule`)
  std::string slice;  // e.g. "H, G, T / 32"
  std::string rows;   // the streamed operand's rows in a slice, at most 32 positions
  std::string cols;   // the axis whose 32 columns a slice holds
  Contracted k;
  std::string col32() const { return cols + " % 32"; }
  std::string col8() const { return cols + " % 8"; }
  std::string col4() const { return cols + " / 8 % 4"; }
  // The accumulator's Time (rows x 4 column groups) and the VRF image of a tile laid out as it.
  std::string out_time() const { return rows + ", " + col4(); }
};

// Frees DM scratch when a step ends. A traced program's ops keep a handle to every tensor they
// touched, so a tensor is never forgotten by itself while the kernel runs; without this the
// steps' DM tensors placed by Address::Any() would fill the 512 KiB of each slice.
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    for (const DeviceTensor& t : held_) t.Release();
  }
  void operator()(const DeviceTensor& t) { held_.push_back(t); }

 private:
  std::vector<DeviceTensor> held_;
};

// What follows the Reducer inside the same pipeline (vector_init ... vector_final), if anything.
using Epilogue = std::function<Stream(Stream)>;

Mapping Cluster(const MappingScope& m);
// The Slice level over the axes `axes`, padded to the cluster's 256 slices.
Mapping Slices(const MappingScope& m, const std::string& axes);
// The Vector Engine's entry with every lane taking the unconditional branch.
Stream Enter(Stream s);

// The GEMM tile. `a` is in HBM ([rows, K] as `spec` names them, moved to DM here, broadcast to the
// slices of each batch); `b_t` is in HBM (moved to DM here) or already in DM laid out as the tile
// wants it. The f32 sums (or bf16 with `bf16_out`) are committed to DM as [rows, cols % 32]; the
// operands' DM is freed when the GEMM's ops are recorded.
absl::StatusOr<DmTensor> Matmul(Context& ctx, const MappingScope& m, const MatmulSpec& spec, const HbmTensor& a,
                                const DeviceTensor& b_t, bool bf16_out, const Epilogue& epilogue = nullptr);

// The same in two parts, for a caller streaming tiles (tiled_projection.h): the operands' moves
// into DM (held by `scratch`), and the TRF load and GEMM on them. Issuing the next tile's moves
// before this tile's GEMM lets the DMA run while the Tensor Unit works (double buffering: the ops
// start in program order).
struct MatmulOperands {
  DmTensor a, b;
};
absl::StatusOr<MatmulOperands> MoveOperands(Context& ctx, const MappingScope& m, const MatmulSpec& spec,
                                            const HbmTensor& a, const DeviceTensor& b_t, Scratch& scratch);
absl::StatusOr<DmTensor> MatmulOn(Context& ctx, const MappingScope& m, const MatmulSpec& spec,
                                  const MatmulOperands& operands, bool bf16_out, const Epilogue& epilogue = nullptr);

// A GEMM tile's image in the VRF at byte `address` (f32, laid out as the accumulator's output).
absl::StatusOr<VrfTensor> TileToVrf(Context& ctx, const MappingScope& m, const MatmulSpec& spec, const DmTensor& tile,
                                    const std::string& what, int64_t address = 0);

// Moves a step's DM result to HBM (Address::Any) and frees the DM.
absl::StatusOr<HbmTensor> ToHbm(Context& ctx, const DmTensor& dm, const Mapping& element, const std::string& step);

// One f32 value per slice (element [1 # 2]) into the VRF at `address`, on the sub context: the
// per-row scalar (1/rms, a row's max or sum) as a Vector Engine operand.
absl::StatusOr<VrfTensor> RowToVrf(Context& ctx, const MappingScope& m, const DmTensor& row, int64_t address,
                                   const std::string& what);

// RMSNorm on the Vector Engine over x [S, D] (one token per slice for the sum of squares, then
// `chunk` elements of D per slice for x * (1/rms) * w, so that w's chunk fits the VRF), bf16 out.
// `chunk` divides D and is at most 1024 (4 KB of f32 in the 8 KB VRF).
absl::StatusOr<HbmTensor> RmsNorm(Context& ctx, const MappingScope& m, const LlamaConfig& c, const HbmTensor& x,
                                  const HbmTensor& w, const std::string& step);

// Scores [G, H, S, T] (f32) scaled by 1/sqrt(d_k), masked by the branch ids [S, T], softmax over T;
// bf16 weights [G, H, S, T].
absl::StatusOr<HbmTensor> MaskedSoftmax(Context& ctx, const MappingScope& m, const LlamaConfig& c,
                                        const HbmTensor& scores, const HbmTensor& mask, const std::string& step);

// The V cache tile [T, E % 32] of each weighted-sum slice transposed to [E % 32, T] in DM.
absl::StatusOr<DmTensor> TransposeV(Context& ctx, const MappingScope& m, const MatmulSpec& spec, const HbmTensor& v_cache,
                                    const std::string& step);

// The residual `x` [rows, cols] as the epilogue's VRF operand of a projection onto cols.
absl::StatusOr<VrfTensor> ResidualToVrf(Context& ctx, const MappingScope& m, const MatmulSpec& spec,
                                        const HbmTensor& x, const std::string& step, int64_t address = 0);

}  // namespace visa::models
