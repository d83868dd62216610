// Samples of the Cast and Transpose engines, with independent host references.
#include "samples/sample.h"

#include <Eigen/Core>

#include "dsl/status_macros.h"
#include "interp/index_move.h"

namespace visa::samples {

namespace {

// A [T, A] tensor of `from` fetched a flit per step, cast to `to` and committed as [T, A]; the
// reference converts each input value with `convert`.
Sample CastSample(std::string name, std::string description, DType from, DType to, std::string packet,
                  std::function<double(double)> convert) {
  Sample s;
  s.name = std::move(name);
  s.description = std::move(description);
  s.axes = "T = 4, A = 8";
  s.dtype = from;
  s.element = "T, A";
  s.kernel = [from, to, packet](Context& ctx, const DmTensor& input,
                                const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(input.view())
                                       .fetch(from, m.m("T"), m.m("A"))
                                       .collect(m.m("T"), m.m("A"))
                                       .cast(to, m.m(packet))
                                       .commit(m.m("T, A"), 0x2000));
    return out;
  };
  s.readback = "T, A";
  s.reference = [convert](const Index& index, const HostTensor& input) {
    return convert(*input.Get(interp::Restrict(index, {"A", "T"})));
  };
  return s;
}

}  // namespace

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
  samples.push_back(CastSample(
      "cast_i32_to_i8", "Cast Engine: i32 flits narrowed to i8 (two's complement wrap), committed 8 bytes a row",
      DType::kI32, DType::kI8, "A # 32", [](double value) {
        return static_cast<double>(static_cast<int8_t>(static_cast<uint8_t>(static_cast<int64_t>(value) & 0xff)));
      }));
  samples.push_back(CastSample(
      "cast_f32_to_bf16", "Cast Engine: f32 flits rounded to bf16 (nearest even), checked against Eigen",
      DType::kF32, DType::kBF16, "A # 16", [](double value) {
        return static_cast<double>(static_cast<float>(Eigen::bfloat16(static_cast<float>(value))));
      }));
  return samples;
}

}  // namespace visa::samples
