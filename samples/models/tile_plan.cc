// The tiled GEMM's tile-size rule (tile_plan.h).
#include "samples/models/tile_plan.h"

#include "absl/strings/str_cat.h"

namespace visa::models {
namespace {

constexpr int64_t kBf16 = 2, kF32 = 4;
constexpr int64_t kTrfColumnsPerRow = 4;   // N / 8 % 4: a TRF row holds 4 columns of B
constexpr int64_t kPacketValues = 32;      // the aligner's 64-byte bf16 packet (2 flits)
constexpr int64_t kMaxMBlock = 8;

int64_t TrfChunkBytes(int64_t k_chunk) { return kTrfColumnsPerRow * k_chunk * kBf16; }

absl::Status Invalid(const std::string& rule, const GemmTiles& shape, const TilePlan& plan, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("tile plan: ", rule, ": ", plan.ToString(), " for M = ", shape.m,
                                                 ", N = ", shape.n, ", K = ", shape.k, ": ", why));
}

}  // namespace

bool TilePlan::trf_double_buffered() const { return 2 * TrfChunkBytes(k_chunk) <= kTrfRowBytes; }

std::string TilePlan::ToString() const {
  return absl::StrCat("k_chunk ", k_chunk, " x m_block ", m_block,
                      trf_double_buffered() ? " (TRF halves)" : " (full TRF)");
}

SliceBudget BudgetOf(const GemmTiles& shape, const TilePlan& plan) {
  SliceBudget b;
  b.trf_row = (plan.trf_double_buffered() ? 2 : 1) * TrfChunkBytes(plan.k_chunk);
  const int64_t b_resident = kSliceColumns * shape.k * kBf16;
  const int64_t a_tiles = 2 * kGemmRows * plan.k_chunk * kBf16;  // this op's and the next's
  const int64_t partials = plan.m_block * kGemmRows * kSliceColumns * kF32;
  const int64_t output = kGemmRows * kSliceColumns * kBf16;
  b.dm = b_resident + a_tiles + partials + output;
  b.vrf = 2 * kGemmRows * kSliceColumns * kF32;  // this op's partial sums and the next's
  return b;
}

absl::Status CheckTilePlan(const GemmTiles& shape, const TilePlan& plan) {
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.m % kGemmRows != 0 || shape.n % kSliceColumns != 0 ||
      shape.n > kSliceColumns * kSlices) {
    return Invalid("shape", shape, plan,
                   absl::StrCat("M must be a multiple of ", kGemmRows, " and N a multiple of ", kSliceColumns,
                                " up to ", kSliceColumns * kSlices, " (32 columns on each of 256 slices)"));
  }
  if (plan.k_chunk <= 0 || plan.k_chunk % kPacketValues != 0 || shape.k % plan.k_chunk != 0) {
    return Invalid("flit alignment", shape, plan,
                   absl::StrCat("k_chunk must be a multiple of ", kPacketValues,
                                " (64-byte bf16 packets of two 32-byte flits) dividing K"));
  }
  if (plan.m_block <= 0 || (shape.m / kGemmRows) % plan.m_block != 0) {
    return Invalid("shape", shape, plan, absl::StrCat("m_block must divide the ", shape.m / kGemmRows, " row tiles"));
  }
  const SliceBudget b = BudgetOf(shape, plan);
  if (b.trf_row > kTrfRowBytes) {
    return Invalid("TRF capacity", shape, plan,
                   absl::StrCat(b.trf_row, " bytes per TRF row (4 columns x k_chunk bf16), more than ", kTrfRowBytes));
  }
  if (b.dm > kDmSliceBytes) {
    return Invalid("DM capacity", shape, plan,
                   absl::StrCat(b.dm, " bytes per slice (B resident, two A tiles, the partial sums of m_block tiles, "
                                "the output tile), more than ", kDmSliceBytes));
  }
  if (b.vrf > kVrfSliceBytes) {
    return Invalid("VRF capacity", shape, plan, absl::StrCat(b.vrf, " bytes per slice, more than ", kVrfSliceBytes));
  }
  return absl::OkStatus();
}

absl::StatusOr<TilePlan> ChooseTilePlan(const GemmTiles& shape) {
  for (int64_t k_chunk = kTrfRowBytes / (2 * kTrfColumnsPerRow * kBf16); k_chunk >= kPacketValues;
       k_chunk -= kPacketValues) {
    if (shape.k % k_chunk != 0) continue;
    for (int64_t m_block = kMaxMBlock; m_block >= 1; --m_block) {
      const TilePlan plan{k_chunk, m_block};
      if (CheckTilePlan(shape, plan).ok()) return plan;
    }
  }
  // Nothing fits: the smallest plan's error names the rule it breaks.
  const TilePlan smallest{kPacketValues, 1};
  absl::Status why = CheckTilePlan(shape, smallest);
  if (why.ok()) why = Invalid("shape", shape, smallest, "no double-buffered chunk divides K");
  return why;
}

}  // namespace visa::models
