// Samples of the manual's remaining primitives: fetch masking with left and right padding
// ("Masking Configuration"), each against an independent host reference.
#include "samples/sample.h"

#include "dsl/status_macros.h"

namespace visa::samples {
namespace {

// Padding case 1 on real data: rows of B = 90 i8 values read as `# 2 + B + # 4` (the base address
// moves back 2, the adapter masks 2 elements in front and 4 behind) and committed into rows
// left-padded the same way; read back, every element must be where it was.
Sample MaskedFetchLeftRightPad() {
  Sample s;
  s.name = "masked_fetch_left_right_pad";
  s.description = "Padding case 1: rows read as `# 2 + B + # 4` (base_addr -2, lpad 2), committed back";
  s.axes = "A = 8, B = 90";
  s.dtype = DType::kI8;
  s.element = "A, B # 96";
  s.kernel = [](Context& ctx, const DmTensor& input, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(input.view())
                                       .fetch_masked(DType::kI8, 0, m.m("A, [# 2 + B + # 4] / 32"),
                                                     m.m("[# 2 + B + # 4] % 32"))
                                       .collect(m.m("A, [# 2 + B + # 4] / 32"), m.m("[# 2 + B + # 4] % 32"))
                                       .commit(m.m("A, # 2 + B + # 4"), 1 << 16));
    return out;
  };
  s.readback = "A, B";
  return s;
}

}  // namespace

std::vector<Sample> PrimitiveSamples() {
  std::vector<Sample> samples;
  samples.push_back(MaskedFetchLeftRightPad());
  return samples;
}

}  // namespace visa::samples
