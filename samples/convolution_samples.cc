// The Contraction Engine's 2D convolution case studies, $(H + Fh)$(W + Fw)K, FhFwKC -> HWC: the
// Fetch Engine slides $(H + Fh) (H and Fh both step one input row) and the Stream Adapter's
// shift-reuse (collect_flits = 3) slides $(W + Fw) inside a buffered 64-byte input row, for
// filter-stride 1, filter-stride 2, dilation 2, and stride 2 with dilation 2.
#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "samples/contraction_sample.h"

namespace visa::samples {
namespace {

constexpr int kH = 4, kFh = 3, kK = 4, kC = 8, kRow = 32;

struct ConvShape {
  std::string name, description;
  int w, fw, stride, dilation;
  std::string input_row;   // the linear combination of one input row, e.g. "$(W: 1, Fw: 1)"
  std::string shift_time;  // the Time axis the shifts walk, e.g. "Fw"
  std::string window;      // OutPacket: one window of the row, e.g. "W # 32"
  std::string contracted;  // the packet after the tree, e.g. "W # 32"
  std::string fw_stored;   // Fw as stored in the TRF (padded to a whole flit row)
};

Sample Convolution(const ConvShape& c) {
  ContractionSpec spec;
  spec.name = c.name;
  spec.description = c.description;
  spec.axes = absl::StrCat("H = ", kH, ", Fh = ", kFh, ", K = ", kK, ", C = ", kC, ", W = ", c.w, ", Fw = ", c.fw);
  const std::string input = absl::StrCat("$(H: 1, Fh: 1), K, ", c.input_row);
  const std::string weights = absl::StrCat("C, Fh, K, ", c.fw_stored);
  spec.operands = {{DType::kBF16, input, 42, 0}, {DType::kBF16, weights, 43, 1 << 28}};
  spec.host_math = [c](const std::vector<HostTensor>& in) {
    const ConvShape2d shape{.h = kH, .fh = kFh, .k = kK, .c = kC, .w = c.w, .fw = c.fw, .row = kRow,
                            .fw_stored = in[1].mapping().size() / (kC * kFh * kK),
                            .stride = c.stride, .dilation = c.dilation};
    return PrepareHostConv2d(shape, in[0], in[1]);
  };
  spec.kernel = [c, input, weights](Context& ctx, const std::vector<HbmTensor>& in,
                                    const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
    const Mapping cluster = s.m("1 # 2"), slice = s.m("1 # 256");
    ASSIGN_OR_RETURN(DmTensor x, in[0].to_dm(ctx.tdma, 0, cluster, slice, s.m(input)));
    ASSIGN_OR_RETURN(DmTensor w, in[1].to_dm(ctx.tdma, 1 << 16, cluster, slice, s.m(weights)));
    const std::string filter = absl::StrCat("Fh, K, ", c.fw_stored);
    ASSIGN_OR_RETURN(TrfTensor trf, ctx.sub.begin(w.view())
                                        .fetch(DType::kBF16, s.m("C"), s.m(filter))
                                        .collect(s.m(absl::StrCat("C, [", filter, "] / 16")),
                                                 s.m(absl::StrCat("[", filter, "] % 16")))
                                        .to_trf(s.m("C"), s.m(filter), TrfAddress::kFull));
    ASSIGN_OR_RETURN(DmTensor out,
                     ctx.main.begin(x.view())
                         .fetch(DType::kBF16, s.m("H, Fh, K"), s.m(c.input_row))
                         .collect(s.m(absl::StrCat("H, Fh, K, [", c.input_row, "] / 16")),
                                  s.m(absl::StrCat("[", c.input_row, "] % 16")))
                         .align(s.m(absl::StrCat("H, Fh, K, ", c.shift_time)), s.m(c.window), trf)
                         .contract(s.m(c.contracted))
                         .accumulate(s.m(absl::StrCat("H, ", c.contracted)), s.m("C"), AccumulationKind::kInterleaved)
                         .commit(s.m(absl::StrCat("H, ", c.contracted, ", C")), 1 << 17));
    return out;
  };
  spec.readback = "H, W, C";
  spec.expected = [c](const std::vector<HostTensor>& in, const MappingScope&) -> absl::StatusOr<Expected> {
    std::vector<double> x = in[0].ToValues(), wt = in[1].ToValues();
    const int fw_stored = static_cast<int>(in[1].mapping().size() / (kC * kFh * kK));
    auto value = std::make_shared<std::vector<double>>(kH * c.w * kC);
    auto magnitude = std::make_shared<std::vector<double>>(kH * c.w * kC);
    for (int h = 0; h < kH; ++h) {
      for (int w = 0; w < c.w; ++w) {
        for (int ch = 0; ch < kC; ++ch) {
          double sum = 0, mags = 0;
          for (int fh = 0; fh < kFh; ++fh) {
            for (int k = 0; k < kK; ++k) {
              for (int fw = 0; fw < c.fw; ++fw) {
                const double a = x[((h + fh) * kK + k) * kRow + c.stride * w + c.dilation * fw];
                const double b = wt[((ch * kFh + fh) * kK + k) * fw_stored + fw];
                sum += a * b;
                mags += std::abs(a * b);
              }
            }
          }
          (*value)[(h * c.w + w) * kC + ch] = sum;
          (*magnitude)[(h * c.w + w) * kC + ch] = mags;
        }
      }
    }
    const int levels = kFh * kK * c.fw;  // every tap is a time step; at most one tree level
    auto at = [c](const std::vector<double>& t, const Index& i) { return t[(i["H"] * c.w + i["W"]) * kC + i["C"]]; };
    Expected expected;
    expected.value = [value, at](const Index& i) { return at(*value, i); };
    expected.bound = [magnitude, at, levels](const Index& i) { return SumBound(levels + 1, at(*magnitude, i), 0, false); };
    expected.note = absl::StrCat("bound: ", levels + 1, " f32 roundings (one per tap) x sum|x*w|, double reference");
    return expected;
  };
  return MakeContractionSample(std::move(spec));
}

}  // namespace

std::vector<Sample> ConvolutionSamples() {
  return {
      Convolution({"conv2d_stride1", "2D convolution, filter-stride 1: shift-reuse, 2 shifts of stride 1", 30, 3, 1, 1,
                   "$(W: 1, Fw: 1)", "Fw", "W # 32", "W # 32", "Fw # 4"}),
      Convolution({"conv2d_stride2", "2D convolution, filter-stride 2: 1 shift of stride 2, Fw % 2 summed by the tree",
                   15, 4, 2, 1, "$(W: 2, Fw: 1)", "Fw / 2", "W # 16, Fw % 2", "W # 16", "Fw"}),
      Convolution({"conv2d_dilation2", "2D convolution, dilation 2: 2 shifts of stride 2", 28, 3, 1, 2,
                   "$(W: 1, Fw: 2)", "Fw", "W # 32", "W # 32", "Fw # 4"}),
      Convolution({"conv2d_stride2_dilation2", "2D convolution, stride 2 and dilation 2: every other element is a dummy",
                   14, 3, 2, 2, "$(W: 2, Fw: 2) # 32", "Fw", "W # 16, 1 # 2", "W # 16", "Fw # 4"}),
  };
}

}  // namespace visa::samples
