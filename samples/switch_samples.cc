// One sample per Switch Engine topology, with random data that differs on every slice so that a
// routing mistake shows as a mismatch. Configurations follow the manual's Switch Engine page.
#include "samples/sample.h"

#include "dsl/status_macros.h"

namespace visa::samples {
namespace {

struct SwitchCase {
  std::string name, description, axes, element, fetch_time, fetch_packet;
  SwitchConfig config;
  std::string out_slice, out_time, collect_packet, commit_element, readback;
  std::string slice = "A";
};

Sample Make(const SwitchCase& c) {
  Sample s;
  s.name = c.name;
  s.description = c.description;
  s.axes = c.axes;
  s.dtype = DType::kI8;
  s.slice = c.slice;
  s.element = c.element;
  s.kernel = [c](Context& ctx, const DmTensor& input, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
    ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(input.view())
                                       .fetch(DType::kI8, m.m(c.fetch_time), m.m(c.fetch_packet))
                                       .switch_engine(c.config, m.m(c.out_slice), m.m(c.out_time))
                                       .collect(m.m(c.out_time), m.m(c.collect_packet))
                                       .commit(m.m(c.commit_element), 0x4000));
    return out;
  };
  s.readback = c.readback;
  return s;
}

}  // namespace

std::vector<Sample> SwitchSamples() {
  return {
      Make({"switch_transpose", "Transpose{32, 2}: slices A / 2 % 32 and A % 2 trade places",
            "A = 256, B = 4, C = 8", "B, C", "B", "C", SwitchConfig::Transpose(32, 2),
            "A / 64, A % 2, A / 2 % 32", "B", "C # 32", "B, C", "A, B, C"}),
      Make({"switch_broadcast1", "Broadcast1{4, 8}: each slice's data reaches a ring of 4 x 8 slices",
            "A = 256, B = 2, C = 8, X = 4", "B, C", "B", "C", SwitchConfig::Broadcast1(4, 8),
            "A / 32, X, A % 8", "B, A / 8 % 4", "C # 32", "B, A / 8 % 4, C", "A, X, B, C"}),
      Make({"switch_broadcast01", "Broadcast01{2, 2, 4}: broadcast across slice pairs and time",
            "A = 256, B = 8, C = 8", "B, C", "B", "C", SwitchConfig::Broadcast01(2, 2, 4),
            "A / 4, 4", "B / 4, A / 2 % 2, B % 4, A % 2", "C # 32",
            "B / 4, A / 2 % 2, B % 4, A % 2, C", "A, B, C"}),
      Make({"switch_inter_transpose", "InterTranspose{2, 16, 2}: slice and time digits exchanged",
            "A = 256, B = 8, P = 32", "B, P", "B", "P", SwitchConfig::InterTranspose(2, 16, 2),
            "A / 32, B / 2 % 2, A % 16", "B / 4, B % 2, A / 16 % 2", "P",
            "B / 4, B % 2, A / 16 % 2, P", "A, B, P"}),
      Make({"switch_transposed_broadcast1", "TransposedBroadcast1{8, 8}: A % 8 moves to time, tiles broadcast",
            "A = 256, B = 2, C = 8, Y = 8", "B, C", "B", "C", SwitchConfig::TransposedBroadcast1(8, 8),
            "A / 64, Y, A / 8 % 8", "B, A % 8", "C # 32", "B, A % 8, C", "A, Y, B, C"}),
      Make({"switch_custom_broadcast", "CustomBroadcast{32}: 2 x 2 tiles broadcast within rings of 32 slices",
            "A = 16, B = 16, C = 2, D = 8, X = 2, Y = 2", "C, D", "C", "D", SwitchConfig::CustomBroadcast(32),
            "A / 2, X, B / 2, Y", "C, A % 2, B % 2", "D # 32", "C, A % 2, B % 2, D", "A, B, X, Y, C, D",
            "A, B"}),
  };
}

}  // namespace visa::samples
