// my_kernels: a kernel program of its own, built against an installed visa (docs/first-kernel.md
// walks through it). `my_kernels tutorial` runs the kernels by hand on both backends; every other
// command line is visa's own (`run`, `check`, `bench`, `explain`, with --json) over these kernels.
#include <algorithm>
#include <cmath>
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

// The data-movement kernels as samples: axes, the DM input's layout, the kernel, and the host
// layout the output is read back into (compared with the input: both kernels keep every element).
std::vector<visa::samples::Sample> DataMovementSamples() {
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

// C[I, J] = sum over K of A[I, K] * B[J, K] (B stored as weights usually are, one row per output
// column), i8 inputs and exact i32 sums. Slice [I / 32, J / 32] gives each of 4 slices one 32 x 32
// tile of C; A's element [I % 32, K] names no J, so the move to DM broadcasts A's rows to the two
// slices of each I / 32 (and B's rows to those of each J / 32). The sub context loads B into the
// TRF, 8 rows J % 8 of [J / 8 % 4, K]; the main context streams A's rows, once per J / 8 % 4, the
// Reducer aligns each 64-byte packet of K with the TRF, multiplies and adds over K % 64 (contract)
// and sums the K / 64 steps (accumulate), and the Commit Engine writes the i32 tile.
absl::StatusOr<DmTensor> Gemm(Context& ctx, const DmTensor& a, const DmTensor& b, const MappingScope& s) {
  ASSIGN_OR_RETURN(visa::TrfTensor b_rows, ctx.sub.begin(b.view())
                                               .fetch(DType::kI8, s.m("J % 8, J / 8 % 4"), s.m("K"))
                                               .collect(s.m("J % 8, J / 8 % 4, K / 32"), s.m("K % 32"))
                                               .to_trf(s.m("J % 8"), s.m("J / 8 % 4, K"), visa::TrfAddress::kFull));
  return ctx.main.begin(a.view())
      .fetch(DType::kI8, s.m("I % 32, J / 8 % 4"), s.m("K"))
      .collect(s.m("I % 32, J / 8 % 4, K / 32"), s.m("K % 32"))
      .align(s.m("I % 32, J / 8 % 4, K / 64"), s.m("K % 64"), b_rows)
      .contract(s.m("1"))
      .accumulate(s.m("I % 32, J / 8 % 4"), s.m("J % 8"), visa::AccumulationKind::kInterleaved)
      .commit(s.m("I % 32, J % 32"), 0x2000);
}

// The GEMM as a sample of two inputs, each with its own layout and values: A uniform in [-8, 8],
// B over all of i8. The reference is the plain loop over K.
visa::samples::Sample GemmSample() {
  using visa::samples::InputValues;
  visa::samples::Sample gemm;
  gemm.name = "my_gemm";
  gemm.description = "C = A B^T on the Contraction Engine (I = J = 64, K = 128, i8 -> i32), a tile per slice";
  gemm.axes = "I = 64, J = 64, K = 128";
  const std::string tiles = "[I / 32, J / 32] # 256";
  gemm.inputs = {{.name = "a", .dtype = DType::kI8, .host = "I, K", .slice = tiles, .element = "I % 32, K",
                  .values = InputValues::Uniform(-8, 8), .seed = 1, .address = 0},
                 {.name = "b", .dtype = DType::kI8, .host = "J, K", .slice = tiles, .element = "J % 32, K",
                  .values = InputValues::Random(), .seed = 2, .address = 0x1000}};
  gemm.inputs_kernel = [](Context& ctx, const std::vector<DmTensor>& in,
                          const MappingScope& s) -> absl::StatusOr<visa::DeviceTensor> {
    return Gemm(ctx, in[0], in[1], s);
  };
  gemm.readback = "I, J";
  gemm.inputs_reference = [](const visa::Index& at, const std::vector<visa::HostTensor>& in) {
    double sum = 0;  // the host tensors are laid out [I, K] and [J, K]: position row * 128 + k
    for (int64_t k = 0; k < 128; ++k) sum += *in[0].Get(at["I"] * 128 + k) * *in[1].Get(at["J"] * 128 + k);
    return sum;
  };
  return gemm;
}

// One f32 per slice (a row's max or sum), loaded into the VRF at `address` to serve as an operand.
absl::StatusOr<visa::VrfTensor> PerRowToVrf(Context& ctx, const DmTensor& per_row, int64_t address,
                                           const MappingScope& s) {
  return ctx.sub.begin(per_row.view())
      .fetch(DType::kF32, s.m("1"), s.m("1 # 8"))
      .collect(s.m("1"), s.m("1 # 8"))
      .to_vrf(s.m("1 # 8"), address);
}

// softmax(x) along N, one row of N = 32 per slice (slice M), in three Vector Engine passes: the row
// max (reduce Max), the sum of exp(x - max) (SubF with the max from the VRF, Exp, reduce Add), and
// exp(x - max) / sum (FpDiv by the sum from the VRF). Floats need Way4 packets: vector_split halves
// each 8-lane flit [N % 8] into two [N % 4]; vector_concat (or, after a reduce, vector_pad_way8)
// widens back before vector_final.
absl::StatusOr<DmTensor> RowSoftmax(Context& ctx, const DmTensor& x, const MappingScope& s) {
  auto row = [&] {
    return ctx.main.begin(x.view())
        .fetch(DType::kF32, s.m("N / 8"), s.m("N % 8"))
        .collect(s.m("N / 8"), s.m("N % 8"))
        .vector_init()
        .vector_intra_slice_branch(visa::BranchMode::Unconditional())
        .vector_split(s.m("N / 4"), s.m("N % 4"));
  };
  using visa::FpBinaryOp, visa::FpUnaryOp;
  constexpr auto kMax = visa::IntraSliceReduceOpF32::kMax, kAdd = visa::IntraSliceReduceOpF32::kAdd;
  ASSIGN_OR_RETURN(DmTensor row_max, row()
                                         .vector_intra_slice_reduce("N", s.m("1"), s.m("1 # 4"), kMax)
                                         .vector_pad_way8(s.m("1 # 8"))
                                         .vector_final()
                                         .commit(s.m("1 # 2"), 0x1000));
  ASSIGN_OR_RETURN(visa::VrfTensor max, PerRowToVrf(ctx, row_max, 0, s));
  ASSIGN_OR_RETURN(DmTensor row_sum, row()
                                         .vector_fp_binary(FpBinaryOp::SubF(), max)
                                         .vector_fp_unary(FpUnaryOp::kExp)
                                         .vector_intra_slice_reduce("N", s.m("1"), s.m("1 # 4"), kAdd)
                                         .vector_pad_way8(s.m("1 # 8"))
                                         .vector_final()
                                         .commit(s.m("1 # 2"), 0x1100));
  ASSIGN_OR_RETURN(visa::VrfTensor sum, PerRowToVrf(ctx, row_sum, 64, s));
  return row()
      .vector_fp_binary(FpBinaryOp::SubF(), max)
      .vector_fp_unary(FpUnaryOp::kExp)
      .vector_fp_div(visa::FpDivBinaryOp::kDivF, sum)
      .vector_concat(s.m("N / 8"), s.m("N % 8"))
      .vector_final()
      .commit(s.m("N"), 0x2000);
}

// The softmax as a sample of one input with its own values (uniform in [-4, 4]), checked against a
// double-precision softmax within 64 f32 ulps of 1 (expf's error, 32 rounded additions, a division).
visa::samples::Sample SoftmaxSample() {
  visa::samples::Sample softmax;
  softmax.name = "my_softmax";
  softmax.description = "row softmax on the Vector Engine (M = 8 rows, N = 32, f32), a row per slice";
  softmax.axes = "M = 8, N = 32";
  softmax.inputs = {{.name = "x", .dtype = DType::kF32, .host = "M, N", .slice = "M # 256", .element = "N",
                     .values = visa::samples::InputValues::Uniform(-4, 4), .address = 0}};
  softmax.inputs_kernel = [](Context& ctx, const std::vector<DmTensor>& in,
                             const MappingScope& s) -> absl::StatusOr<visa::DeviceTensor> {
    return RowSoftmax(ctx, in[0], s);
  };
  softmax.readback = "M, N";
  softmax.inputs_reference = [](const visa::Index& at, const std::vector<visa::HostTensor>& in) {
    auto x = [&](int64_t n) { return *in[0].Get(at["M"] * 32 + n); };
    double max = x(0), sum = 0;
    for (int64_t n = 1; n < 32; ++n) max = std::max(max, x(n));
    for (int64_t n = 0; n < 32; ++n) sum += std::exp(x(n) - max);
    return std::exp(x(at["N"]) - max) / sum;
  };
  softmax.tolerance = 64.0 / (1 << 24);
  return softmax;
}

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "tutorial") == 0) return Tutorial();
  std::vector<visa::samples::Sample> kernels = DataMovementSamples();
  kernels.push_back(GemmSample());
  kernels.push_back(SoftmaxSample());
  return visa::cli::Main(argc, argv, kernels, {.name = "my_kernels"});
}
