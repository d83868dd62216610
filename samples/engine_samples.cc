// Samples of the Cast and Transpose engines, with independent host references.
#include "samples/sample.h"

#include <Eigen/Core>

#include "dsl/status_macros.h"
#include "interp/index_move.h"

namespace visa::samples {

std::vector<Sample> EngineSamples() {
  std::vector<Sample> samples;
  {
    Sample s;
    s.name = "transpose_engine";
    s.description = "Transpose Engine: time [C, F] / packet [E # 32] becomes [C, E] / [F # 32]";
    s.axes = "C = 8, E = 8, F = 8";
    s.dtype = DType::kI8;
    s.element = "C, F, E";
    s.kernel = [](Context& ctx, const DmTensor& input, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
      ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(input.view())
                                         .fetch(DType::kI8, m.m("C, F"), m.m("E"))
                                         .collect(m.m("C, F"), m.m("E # 32"))
                                         .transpose(m.m("C, E"), m.m("F # 32"))
                                         .commit(m.m("C, E, F"), 0x2000));
      return out;
    };
    s.readback = "C, E, F";
    samples.push_back(s);
  }
  {
    Sample s;
    s.name = "cast_i32_to_i8";
    s.description = "Cast Engine: i32 flits narrowed to i8 (two's complement wrap), committed 8 bytes a row";
    s.axes = "T = 4, A = 8";
    s.dtype = DType::kI32;
    s.element = "T, A";
    s.kernel = [](Context& ctx, const DmTensor& input, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
      ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(input.view())
                                         .fetch(DType::kI32, m.m("T"), m.m("A"))
                                         .collect(m.m("T"), m.m("A"))
                                         .cast(DType::kI8, m.m("A # 32"))
                                         .commit(m.m("T, A"), 0x2000));
      return out;
    };
    s.readback = "T, A";
    s.reference = [](const Index& index, const HostTensor& input) {
      int64_t value = static_cast<int64_t>(*input.Get(interp::Restrict(index, {"A", "T"})));
      return static_cast<double>(static_cast<int8_t>(static_cast<uint8_t>(value & 0xff)));
    };
    samples.push_back(s);
  }
  {
    Sample s;
    s.name = "cast_f32_to_bf16";
    s.description = "Cast Engine: f32 flits rounded to bf16 (nearest even), checked against Eigen";
    s.axes = "T = 4, A = 8";
    s.dtype = DType::kF32;
    s.element = "T, A";
    s.kernel = [](Context& ctx, const DmTensor& input, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
      ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(input.view())
                                         .fetch(DType::kF32, m.m("T"), m.m("A"))
                                         .collect(m.m("T"), m.m("A"))
                                         .cast(DType::kBF16, m.m("A # 16"))
                                         .commit(m.m("T, A"), 0x2000));
      return out;
    };
    s.readback = "T, A";
    s.reference = [](const Index& index, const HostTensor& input) {
      float value = static_cast<float>(*input.Get(interp::Restrict(index, {"A", "T"})));
      return static_cast<double>(static_cast<float>(Eigen::bfloat16(value)));
    };
    samples.push_back(s);
  }
  return samples;
}

}  // namespace visa::samples
