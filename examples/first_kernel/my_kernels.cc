// my_kernels: a kernel program of its own, built against an installed visa (docs/first-kernel.md
// walks through it). `my_kernels tutorial` runs the kernels by hand on both backends; every other
// command line is visa's own (`run`, `check`, `bench`, `explain`, with --json) over these kernels.
#include <cstdio>
#include <cstring>
#include <memory>

#include "dsl/status_macros.h"
#include "visa.h"

using visa::Context;
using visa::DmTensor;
using visa::DType;
using visa::MappingScope;

// Permute: per slice, [A, B, C] becomes [B, A, C]. The Fetch Engine reads one C row (8 bytes)
// per step of the time mapping [A, B]; the Collect Engine pads each row to a 32-byte flit; the
// Commit Engine writes the rows in the order [B, A].
absl::StatusOr<DmTensor> Permute(Context& ctx, const DmTensor& input, const MappingScope& s) {
  return ctx.main.begin(input.view())
      .fetch(DType::kI8, s.m("A, B"), s.m("C"))  // time, packet
      .collect(s.m("A, B"), s.m("C # 32"))
      .commit(s.m("B, A, C"), 0x1000);
}

// Halves: the same copy of [A, B] done in two passes over tile views. A tile of `A` with 32
// values is named `A = 32` on the stream side, with tile-local coordinates (0 to 31 in both
// halves); the view's own mapping keeps the tensor's footprint: `A = 32 # 64, B`.
absl::StatusOr<DmTensor> Halves(Context& ctx, const DmTensor& input, const MappingScope& s) {
  ASSIGN_OR_RETURN(DmTensor out, DmTensor::Create(ctx.device(), DType::kI8,
                                                  {.cluster = s.m("1 # 2"), .slice = s.m("1 # 256"),
                                                   .element = s.m("A, B")},
                                                  0x2000));
  for (int64_t half = 0; half < 2; ++half) {
    ASSIGN_OR_RETURN(DmTensor from, input.view().tile(s.m("A"), 32, 32 * half));
    ASSIGN_OR_RETURN(DmTensor to, out.view().tile(s.m("A"), 32, 32 * half));
    RETURN_IF_ERROR(ctx.main.begin(from)
                        .fetch(DType::kI8, s.m("A = 32"), s.m("B"))
                        .collect(s.m("A = 32"), s.m("B"))
                        .commit_view(to));
  }
  return out;
}

// By hand: host -> HBM -> DM, the kernel, and back to the host, checked element by element.
absl::Status RunPermuteByHand(visa::Backend& backend) {
  ASSIGN_OR_RETURN(MappingScope s, MappingScope::Parse("A = 4, B = 8, C = 8"));
  visa::Device device(1);
  Context ctx(device, backend);
  ASSIGN_OR_RETURN(visa::HostTensor input, visa::HostTensor::Iota(DType::kI8, s.m("A, B, C")));
  ASSIGN_OR_RETURN(visa::HbmTensor hbm, input.to_hbm(ctx.pdma, 0, {.element = s.m("A, B, C")}));
  ASSIGN_OR_RETURN(DmTensor dm, hbm.to_dm(ctx.tdma, 0, {.cluster = s.m("1 # 2"), .slice = s.m("1 # 256"),
                                                         .element = s.m("A, B, C")}));
  ASSIGN_OR_RETURN(DmTensor out, Permute(ctx, dm, s));
  ASSIGN_OR_RETURN(visa::HostTensor back, out.to_host(ctx, s.m("A, B, C")));
  if (back.ToBits() != input.ToBits()) return absl::InternalError("the permuted tensor differs from the input");
  std::printf("permute on %s: %lld elements read back, %zu ops recorded\n", backend.name(),
              static_cast<long long>(back.size()), ctx.program().ops.size());
  return absl::OkStatus();
}

int Tutorial() {
  visa::interp::Interpreter interpreter;
  absl::StatusOr<std::unique_ptr<visa::jit::JitBackend>> jit = visa::jit::JitBackend::Create();
  for (absl::Status status : {RunPermuteByHand(interpreter),
                              jit.ok() ? RunPermuteByHand(**jit) : jit.status()}) {
    if (!status.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
      return 2;
    }
  }
  return 0;
}

// The kernels as samples: axes, the DM input's layout, the kernel, and the host layout the
// output is read back into (compared with the input: both kernels keep every element).
std::vector<visa::samples::Sample> MyKernels() {
  visa::samples::Sample permute;
  permute.name = "my_permute";
  permute.description = "[A, B, C] -> [B, A, C] through fetch, collect and a permuting commit";
  permute.axes = "A = 4, B = 8, C = 8";
  permute.element = "A, B, C";
  permute.kernel = [](Context& ctx, const DmTensor& input, const MappingScope& s) -> absl::StatusOr<visa::DeviceTensor> {
    return Permute(ctx, input, s);
  };
  permute.readback = "A, B, C";

  visa::samples::Sample halves = permute;
  halves.name = "my_halves";
  halves.description = "[A, B] copied in two passes over tile views of A";
  halves.axes = "A = 64, B = 32";
  halves.element = "A, B";
  halves.kernel = [](Context& ctx, const DmTensor& input, const MappingScope& s) -> absl::StatusOr<visa::DeviceTensor> {
    return Halves(ctx, input, s);
  };
  halves.readback = "A, B";
  return {permute, halves};
}

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "tutorial") == 0) return Tutorial();
  return visa::cli::Main(argc, argv, MyKernels(), {.name = "my_kernels"});
}
