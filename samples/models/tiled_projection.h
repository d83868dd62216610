// A projection whose weights do not fit the slices at once: y[S, cols] = x[S, depth] W^T with W
// stored transposed ([cols, depth]) in HBM as tiles of kTileDepth contracted values by up to 8192
// columns (one 32-column GEMM tile per slice, 256 slices), each tile moved HBM -> DM when its op
// runs (the manual's weight streaming). The contracted axis is cut into chunks of kTileDepth (a
// TRF row holds 4 columns x 1024 bf16); each chunk's GEMM adds the previous chunk's sums, loaded
// into the VRF, in its epilogue (the manual's time reduce across ops, the partial sums staying in
// DM). Columns go in groups of `group` (<= 8192, a multiple of kTileDepth dividing cols), one
// output tensor per group. The tiles are double buffered: tile t + 1's moves are issued before
// tile t's TRF load and GEMM, so the DMA streams while the Tensor Unit works.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/mapping_parser.h"
#include "runtime/device.h"
#include "runtime/program.h"
#include "runtime/tensor.h"
#include "samples/models/llama_steps.h"
#include "samples/models/vrf_arena.h"

namespace visa::models {

inline constexpr int64_t kTileDepth = 1024;
inline constexpr int64_t kMaxGroup = 8192;  // 256 slices x 32 columns

// The column group the tiles of a [cols, depth] matrix use: the largest multiple of kTileDepth up
// to kMaxGroup that divides cols (cols itself when smaller than kTileDepth).
int64_t GroupColumns(int64_t cols);

// The axes of one group's ops: S tokens, N = the group's columns, K = one chunk of the depth (and
// P = chips, the Chip level of tensors split over several chips).
std::string TileAxes(int64_t tokens, int64_t group, int64_t chips = 1);

// A row-major activation [S, cols] held as consecutive column groups in HBM (each [S, group]).
struct Activation {
  std::vector<HbmTensor> groups;
  int64_t group = 0;   // columns per group
  DType dtype = DType::kBF16;
  // Columns [start, start + len) as a tensor of their own, seen under `levels` (HBM: chip,
  // element); the range must lie inside one group.
  absl::StatusOr<HbmTensor> Columns(int64_t tokens, int64_t start, int64_t len, std::vector<Mapping> levels) const;
};

// The tiles of one weight matrix W^T [cols, depth] in HBM, tiles[g * chunks + k] = [N, K] bf16
// (on `chips` chips, Chip level P, each chip its own matrix of the same shape).
struct TiledWeights {
  int64_t cols = 0, depth = 0, group = 0;
  std::vector<DeviceTensor> tiles;
  int64_t chips = 1;
  int64_t groups() const { return cols / group; }
  int64_t chunks() const { return depth / kTileDepth; }
};

// Uploads W^T [cols, depth] (bf16 bit patterns, row-major) as tiles.
absl::StatusOr<TiledWeights> UploadTiled(Device& device, const std::vector<uint16_t>& w_t, int64_t cols, int64_t depth);
// The same over the device's chips: chip p's W^T is *per_chip[p] (tensor parallel, each chip its
// share of a larger matrix).
absl::StatusOr<TiledWeights> UploadTiledOverChips(Device& device, const std::vector<const std::vector<uint16_t>*>& per_chip,
                                                  int64_t cols, int64_t depth);

// A program's view of uploaded tiles (the kernel's inputs in the same order).
TiledWeights TilesOf(const TiledWeights& like, const std::vector<DeviceTensor>& inputs, size_t first);

struct ProjectionOptions {
  bool bf16_out = false;
  const Activation* residual = nullptr;  // f32 [S, cols] added to the sums (first chunk's epilogue)
  // Before the last chunk's GEMM of each group: loads what `finish` reads (e.g. up's tile into the
  // VRF at an address `vrf` hands out past the partial sums').
  std::function<absl::Status(Context&, const MappingScope&, const MatmulSpec&, int64_t group, VrfArena& vrf)> prepare;
  // Applied to the last chunk's sums inside the Vector Engine (e.g. SiLU(gate) x up). It also adds
  // `addend` (the earlier chunks' sums, when there are any) itself, in its Float stage: the Clip
  // add the other chunks use may not precede the Float stage's ops.
  std::function<Stream(Stream, const MappingScope&, const std::optional<VrfTensor>& addend)> finish;
  // Applied to each group's final sums in DM before they go to HBM (e.g. the AllReduce of partial
  // sums over chips, then the residual); returns the tile that goes, `sums` freed by it.
  std::function<absl::StatusOr<DmTensor>(Context&, const MappingScope&, const MatmulSpec&, int64_t group,
                                         const DmTensor& sums)>
      reduce;
};

// y = x W^T (+ residual) over `tokens` rows; `step` labels the ops ("Q projection [g0 k3]").
absl::StatusOr<Activation> TiledProjection(Context& ctx, int64_t tokens, const Activation& x, const TiledWeights& w,
                                           const std::string& step, const ProjectionOptions& options = {});

}  // namespace visa::models
