// The butterfly AllReduce over chips of f32 GEMM tiles (chip_all_reduce.h).
#include "samples/models/chip_all_reduce.h"

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/chip_shuffle.h"

namespace visa::models {

absl::StatusOr<DmTensor> AddTileInVrf(Context& ctx, const MappingScope& m, const MatmulSpec& spec, const DmTensor& tile,
                                      const VrfTensor& vrf, const std::string& step) {
  return Enter(ctx.main.begin(tile.view())
                   .named(step)
                   .fetch(DType::kF32, m.m(spec.out_time()), m.m(spec.col8()))
                   .collect(m.m(spec.out_time()), m.m(spec.col8())))
      .vector_clip(ClipBinaryOpF32::kAdd, vrf)
      .vector_final()
      .commit(m.m(spec.rows + ", " + spec.col32()), Address::Any());
}

absl::StatusOr<DmTensor> AllReduceTiles(Context& ctx, const MappingScope& m, const MatmulSpec& spec,
                                        const DmTensor& partial, int64_t chips, const std::string& step) {
  DmTensor sum = partial;
  for (int64_t stride = 1; stride < chips; stride *= 2) {
    std::vector<int64_t> partner;  // chip c receives chip c XOR stride's sum
    for (int64_t chip = 0; chip < chips; ++chip) partner.push_back(chip ^ stride);
    const std::string round = absl::StrCat(step, " AllReduce round ", stride);
    Scratch scratch;
    ASSIGN_OR_RETURN(DmTensor theirs, ChipShuffle(ctx.tdma, sum, partner, Address::Any()));
    scratch(theirs);
    ASSIGN_OR_RETURN(VrfTensor theirs_vrf, TileToVrf(ctx, m, spec, theirs, round + " partner's sum to VRF"));
    ASSIGN_OR_RETURN(DmTensor added, AddTileInVrf(ctx, m, spec, sum, theirs_vrf, round + " add"));
    if (stride > 1) scratch(sum);
    sum = added;
  }
  return sum;
}

}  // namespace visa::models
