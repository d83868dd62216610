// Projections with weights streamed tile by tile (tiled_projection.h).
#include "samples/models/tiled_projection.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>
#include <optional>

#include "absl/strings/str_cat.h"
#include "dsl/dtype.h"
#include "dsl/status_macros.h"
#include "runtime/dma.h"
#include "runtime/transfer.h"

namespace visa::models {
namespace {

// Scopes by (tokens, group, chips), parsed once per process (a projection's ops reuse them).
const MappingScope& ScopeFor(int64_t tokens, int64_t group, int64_t chips = 1) {
  static auto* scopes = new std::map<std::tuple<int64_t, int64_t, int64_t>, std::unique_ptr<MappingScope>>();
  auto& slot = (*scopes)[{tokens, group, chips}];
  if (!slot) {
    absl::StatusOr<MappingScope> parsed = MappingScope::Parse(TileAxes(tokens, group, chips));
    VISA_CHECK(parsed.ok(), "the tile axes parse");
    slot = std::make_unique<MappingScope>(*std::move(parsed));
  }
  return *slot;
}

int64_t ChunkDepth(int64_t depth) { return std::min(depth, kTileDepth); }

}  // namespace

int64_t GroupColumns(int64_t cols) {
  if (cols <= kTileDepth) return cols;
  for (int64_t g = kMaxGroup; g >= kTileDepth; g -= kTileDepth) {
    if (cols % g == 0) return g;
  }
  return kTileDepth;
}

std::string TileAxes(int64_t tokens, int64_t group, int64_t chips) {
  return absl::StrCat("S = ", tokens, ", N = ", group, ", K = ", kTileDepth,
                      chips > 1 ? absl::StrCat(", P = ", chips) : "");
}

absl::StatusOr<HbmTensor> Activation::Columns(int64_t tokens, int64_t start, int64_t len,
                                              std::vector<Mapping> levels) const {
  const int64_t g = start / group, offset = start % group;
  if (g >= static_cast<int64_t>(groups.size()) || offset + len > group || tokens != 1) {
    return absl::InvalidArgumentError(absl::StrCat("activation: columns [", start, ", ", start + len,
                                                   ") do not lie in one group of ", group, " (one token)"));
  }
  ASSIGN_OR_RETURN(DeviceTensor view, groups[static_cast<size_t>(g)].Relabel(std::move(levels),
                                                                             StorageBytes(dtype, offset)));
  return HbmTensor(view);
}

absl::StatusOr<TiledWeights> UploadTiled(Device& device, const std::vector<uint16_t>& w_t, int64_t cols, int64_t depth) {
  return UploadTiledOverChips(device, {&w_t}, cols, depth);
}

absl::StatusOr<TiledWeights> UploadTiledOverChips(Device& device, const std::vector<const std::vector<uint16_t>*>& per_chip,
                                                  int64_t cols, int64_t depth) {
  const int64_t chips = static_cast<int64_t>(per_chip.size());
  TiledWeights w{cols, depth, GroupColumns(cols), {}, chips};
  for (const std::vector<uint16_t>* w_t : per_chip) {
    if (depth % kTileDepth != 0 || cols % w.group != 0 || static_cast<int64_t>(w_t->size()) != cols * depth) {
      return absl::InvalidArgumentError(absl::StrCat("tiled weights: [", cols, ", ", depth, "] do not tile by ",
                                                     kTileDepth, " (", w_t->size(), " values)"));
    }
  }
  const MappingScope& m = ScopeFor(1, w.group, chips);
  const std::string chip = chips > 1 ? "P" : "1", host = chips > 1 ? "P, N, K" : "N, K";
  const size_t tile_bytes = static_cast<size_t>(w.group * kTileDepth * 2);
  Dma pdma = Dma::Pcie(device);
  for (int64_t g = 0; g < w.groups(); ++g) {
    for (int64_t k = 0; k < w.chunks(); ++k) {
      std::vector<uint8_t> bytes(tile_bytes * static_cast<size_t>(chips));
      for (int64_t p = 0; p < chips; ++p) {
        for (int64_t n = 0; n < w.group; ++n) {
          const uint16_t* row = &(*per_chip[static_cast<size_t>(p)])[static_cast<size_t>((g * w.group + n) * depth + k * kTileDepth)];
          std::memcpy(&bytes[static_cast<size_t>(p) * tile_bytes + static_cast<size_t>(n * kTileDepth * 2)], row,
                      kTileDepth * 2);
        }
      }
      ASSIGN_OR_RETURN(HostTensor host_tile, HostTensor::FromBytes(DType::kBF16, m.m(host), std::move(bytes)));
      ASSIGN_OR_RETURN(HbmTensor tile, host_tile.to_hbm(pdma, Address::Any(), m.m(chip), m.m("N, K")));
      w.tiles.push_back(tile);
    }
  }
  return w;
}

TiledWeights TilesOf(const TiledWeights& like, const std::vector<DeviceTensor>& inputs, size_t first) {
  TiledWeights w{like.cols, like.depth, like.group, {}, like.chips};
  w.tiles.assign(inputs.begin() + static_cast<std::ptrdiff_t>(first),
                 inputs.begin() + static_cast<std::ptrdiff_t>(first + like.tiles.size()));
  return w;
}

absl::StatusOr<Activation> TiledProjection(Context& ctx, int64_t tokens, const Activation& x, const TiledWeights& w,
                                           const std::string& step, const ProjectionOptions& options) {
  const MappingScope& m = ScopeFor(tokens, w.group);
  Activation y{{}, w.group, options.bf16_out ? DType::kBF16 : DType::kF32};
  const int64_t chunk = ChunkDepth(w.depth), tiles = w.groups() * w.chunks();
  auto spec_of = [&](int64_t t) {
    return MatmulSpec{absl::StrCat(step, " [g", t / w.chunks(), " k", t % w.chunks(), "]"), "N / 32", "S", "N",
                      Over("", "K")};
  };
  // A tile's moves into DM, with the Scratch that frees them.
  struct Moved {
    std::unique_ptr<Scratch> scratch;
    MatmulOperands operands;
  };
  auto move = [&](int64_t t) -> absl::StatusOr<Moved> {
    ASSIGN_OR_RETURN(HbmTensor x_k, x.Columns(tokens, t % w.chunks() * chunk, chunk, {x.groups[0].chip(), m.m("S, K")}));
    auto scratch = std::make_unique<Scratch>();
    ASSIGN_OR_RETURN(MatmulOperands operands,
                     MoveOperands(ctx, m, spec_of(t), x_k, w.tiles[static_cast<size_t>(t)], *scratch));
    return Moved{std::move(scratch), operands};
  };
  // Tile t + 1's moves are issued before tile t's TRF load and GEMM (the ops start in program
  // order), so the DMA streams the next tile while the Tensor Unit works on this one; tile t's DM
  // is freed once its GEMM is issued (two tiles' operands in DM at a time).
  ASSIGN_OR_RETURN(Moved next, move(0));
  std::optional<DmTensor> partial;  // the sums over the group's chunks so far, f32 in DM
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t g = t / w.chunks(), k = t % w.chunks();
    const bool last = k + 1 == w.chunks();
    const MatmulSpec spec = spec_of(t);
    const std::string& at = spec.step;
    Moved current = std::move(next);
    if (t + 1 < tiles) {
      ASSIGN_OR_RETURN(next, move(t + 1));
    }
    // The operand the epilogue adds: the residual on the first chunk, the partial sums after.
    // Loaded into the VRF from inside the epilogue, i.e. after this tile's TRF load is issued: a
    // load waiting for the previous GEMM placed earlier would hold the later ops back.
    std::optional<VrfTensor> addend;
    VrfArena vrf;
    const int64_t tile_bytes = tokens * 32 * 4;  // [S, 32 columns] f32
    auto load_operands = [&]() -> absl::Status {
      if (k == 0 && options.residual != nullptr) {
        ASSIGN_OR_RETURN(HbmTensor r, options.residual->Columns(tokens, g * w.group, w.group,
                                                                         {options.residual->groups[0].chip(), m.m("S, N")}));
        ASSIGN_OR_RETURN(const int64_t residual_at, vrf.Take(tile_bytes, at + " residual"));
        ASSIGN_OR_RETURN(VrfTensor loaded, ResidualToVrf(ctx, m, spec, r, at + " residual", residual_at));
        addend = loaded;
      } else if (partial) {
        ASSIGN_OR_RETURN(const int64_t partial_at, vrf.Take(tile_bytes, at + " partial sums"));
        ASSIGN_OR_RETURN(VrfTensor loaded, TileToVrf(ctx, m, spec, *partial, at + " partial sums to VRF", partial_at));
        addend = loaded;
        partial->Release();
      }
      if (last && options.prepare) RETURN_IF_ERROR(options.prepare(ctx, m, spec, g, vrf));
      return absl::OkStatus();
    };
    absl::Status loaded = absl::OkStatus();
    Epilogue epilogue = nullptr;
    if ((k == 0 && options.residual != nullptr) || partial.has_value() || (last && options.finish)) {
      epilogue = [&](Stream s) {
        loaded = load_operands();
        Stream v = Enter(std::move(s));
        if (!loaded.ok()) return std::move(v).vector_final();  // reported after the GEMM returns
        if (last && options.finish) {
          v = options.finish(std::move(v), m, addend);
        } else if (addend) {
          v = std::move(v).vector_clip(ClipBinaryOpF32::kAdd, *addend);
        }
        return std::move(v).vector_final();
      };
    }
    ASSIGN_OR_RETURN(DmTensor sums, MatmulOn(ctx, m, spec, current.operands, last && options.bf16_out, epilogue));
    RETURN_IF_ERROR(loaded);
    partial = sums;
    if (last && options.reduce) {
      ASSIGN_OR_RETURN(partial, options.reduce(ctx, m, spec, g, sums));
    }
    if (last) {
      ASSIGN_OR_RETURN(HbmTensor out, ToHbm(ctx, *partial, m.m("S, N"), absl::StrCat(step, " [g", g, "] result")));
      y.groups.push_back(out);
      partial.reset();
    }
  }
  return y;
}

}  // namespace visa::models
