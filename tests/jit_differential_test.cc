// Differential testing: random valid programs run on the interpreter and on the JIT, every backend
// call's result compared bit for bit (a failure prints the seed that reproduces it).
//
// A draw picks axes, a dtype, a DM layout (slice digit, permuted and padded Element), DMA moves
// before and after the pipeline (DM -> DM with another layout, DM -> HBM), and a Tensor Unit chain:
// a fetch (plain, cast, table, zero point, masked; one tensor or two interleaved), an optional
// switch, a collect, an optional cast and transpose, and a commit (optionally into some slices
// only) or a register-file load. Draws the tracer rejects are simply drawn again.
#include <gtest/gtest.h>

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "samples/sample.h"
#include "tools/check_command.h"

namespace visa {
namespace {

using samples::Sample;

class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}

  Sample Make() {
    Sample s;
    s.name = "random";
    // Axes: A, B outer, C the packet axis, S the slice axis, I for interleaving.
    const int64_t a = Pick({1, 2, 3, 4}), b = Pick({1, 2, 5, 8}), c = Pick({2, 3, 4, 8, 16, 32, 64});
    const int64_t slices = Pick({1, 2, 4, 256});
    s.axes = absl::StrCat("A = ", a, ", B = ", b, ", C = ", c, ", S = ", slices, ", I = 2");
    s.dtype = Pick({DType::kI8, DType::kI8, DType::kI4, DType::kI16, DType::kI32, DType::kBF16, DType::kF16,
                    DType::kF32, DType::kF8E4M3, DType::kF8E5M2});
    s.slice = slices == 256 ? "S" : absl::StrCat("S # 256");
    std::vector<std::string> outer = {"A", "B"};
    if (Coin()) std::swap(outer[0], outer[1]);
    const int64_t cpad = c + Pick({0, 0, 1, 3, 8});
    const std::string inner = cpad == c ? "C" : absl::StrCat("C # ", cpad);
    s.element = absl::StrCat(outer[0], ", ", outer[1], ", ", inner);
    const bool interleave = Coin(0.2);
    s.readback = interleave ? "I, S, A, B, C" : "S, A, B, C";
    s.kernel = Kernel(s.dtype, c, outer, interleave);
    return s;
  }

 private:
  template <typename T>
  T Pick(std::initializer_list<T> options) {
    std::uniform_int_distribution<size_t> d(0, options.size() - 1);
    return *(options.begin() + d(rng_));
  }
  bool Coin(double p = 0.5) { return std::bernoulli_distribution(p)(rng_); }

  // The fetch's output type and adapter, chosen among what the Fetch Adapter can do for `in`.
  struct FetchChoice {
    DType out;
    enum { kPlain, kTable, kZeroPoint, kMasked } kind = kPlain;
  };
  FetchChoice ChooseFetch(DType in) {
    std::vector<FetchChoice> options = {{in}};
    switch (in) {
      case DType::kI8:
        options.push_back({DType::kI32});
        options.push_back({DType::kI9, FetchChoice::kZeroPoint});
        options.push_back({DType::kI8, FetchChoice::kTable});
        break;
      case DType::kI4: options.push_back({DType::kI32}); break;
      case DType::kI16: options.push_back({DType::kI32}); break;
      case DType::kBF16:
      case DType::kF16: options.push_back({DType::kF32}); break;
      case DType::kF8E4M3:
      case DType::kF8E5M2:
        options.push_back({DType::kF32});
        options.push_back({DType::kBF16, FetchChoice::kTable});
        break;
      case DType::kF32: options.push_back({DType::kBF16}); break;
      default: break;
    }
    options.push_back({in, FetchChoice::kMasked});
    std::uniform_int_distribution<size_t> d(0, options.size() - 1);
    return options[d(rng_)];
  }

  using KernelFn = std::function<absl::StatusOr<DeviceTensor>(Context&, const DmTensor&, const MappingScope&)>;

  KernelFn Kernel(DType in, int64_t c, std::vector<std::string> outer, bool interleave) {
    const FetchChoice fetch = ChooseFetch(in);
    const bool dma_before = Coin(0.3);
    const bool dma_after = Coin(0.3);
    const bool sub = Coin(0.15);
    const bool bitmap = Coin(0.15);
    const bool time_swap = Coin(0.3);
    const bool cast = Coin(0.6);
    const bool transpose = Coin(0.5);
    const int64_t table_seed = static_cast<int64_t>(rng_());
    // The packet: C padded to a whole number of 8-byte units of the output type (sometimes more).
    const int64_t bits = WireBits(fetch.out);
    const int64_t unit = 64 / bits;  // elements per 8 bytes
    const int64_t packet = ((c + unit - 1) / unit) * unit * Pick({1, 1, 2});
    const int64_t flit = 256 / bits;
    const DType cast_to = fetch.out == DType::kI32 ? Pick({DType::kI8, DType::kI16, DType::kI4})
                                                   : Pick({DType::kBF16, DType::kF16, DType::kF8E4M3, DType::kF8E5M2});
    const uint64_t bitmap_pick = rng_();
    return [=](Context& ctx, const DmTensor& input, const MappingScope& m) -> absl::StatusOr<DeviceTensor> {
      DmTensor source = input;
      if (dma_before) {
        // Another DM layout: the outer axes swapped, C unpadded.
        ASSIGN_OR_RETURN(source, input.to_dm(ctx.tdma, 0x20000, m.m("1 # 2"), input.slice(),
                                             m.m(absl::StrCat(outer[1], ", ", outer[0], ", C"))));
      }
      std::vector<std::string> time = outer;
      if (time_swap) std::swap(time[0], time[1]);
      const std::string packet_text = packet == c ? "C" : absl::StrCat("C # ", packet);
      TensorUnit& unit_ctx = sub ? ctx.sub : ctx.main;
      Stream stream = [&] {
        if (interleave) {
          absl::StatusOr<DmTensor> twin = source.to_dm(ctx.tdma, 0x40000, source.cluster(), source.slice(),
                                                       source.element());
          if (!twin.ok()) return ctx.main.begin(source.view()).fetch(in, m.m("Z"), m.m("Z"));  // fails: no axis Z
          return unit_ctx.begin_interleaved(m.m("I"), source.view(), twin->view());
        }
        return unit_ctx.begin(source.view());
      }();
      std::string time_text = absl::StrJoin(time, ", ");
      if (interleave) time_text = absl::StrCat("I, ", time_text);
      switch (fetch.kind) {
        case FetchChoice::kPlain:
          stream = std::move(stream).fetch(fetch.out, m.m(time_text), m.m(packet_text));
          break;
        case FetchChoice::kMasked:
          stream = std::move(stream).fetch_masked(fetch.out, 1.0, m.m(time_text), m.m(packet_text));
          break;
        case FetchChoice::kZeroPoint:
          stream = interleave ? std::move(stream).fetch_with_zero_points(fetch.out, 3, -7, m.m(time_text),
                                                                         m.m(packet_text))
                              : std::move(stream).fetch_with_zero_point(fetch.out, 5, m.m(time_text),
                                                                        m.m(packet_text));
          break;
        case FetchChoice::kTable: {
          std::vector<uint32_t> table(size_t{1} << Bits(in));
          std::mt19937_64 t(table_seed);
          for (uint32_t& v : table) v = static_cast<uint32_t>(t()) & ((1u << Bits(fetch.out)) - 1);
          stream = std::move(stream).fetch_with_table(fetch.out, std::move(table), m.m(time_text), m.m(packet_text));
          break;
        }
      }
      // Collect: one flit per step.
      std::string time2 = time_text, packet2 = absl::StrCat(packet_text, " # ", flit);
      if (packet > flit) {
        time2 = absl::StrCat(time_text, ", [", packet_text, "] / ", flit);
        packet2 = absl::StrCat("[", packet_text, "] % ", flit);
      } else if (packet == flit) {
        packet2 = packet_text;
      }
      stream = std::move(stream).collect(m.m(time2), m.m(packet2));
      DType type = fetch.out;
      if (cast && (type == DType::kI32 || type == DType::kF32)) {
        const std::string cast_packet = absl::StrCat("[", packet2, "] # ", 256 / WireBits(cast_to));
        stream = std::move(stream).cast(cast_to, m.m(cast_packet));
        packet2 = cast_packet;
        type = cast_to;
      }
      if (transpose && !interleave && (type == DType::kI8 || type == DType::kBF16)) {
        // Rows are the innermost time axis, columns the packet's live elements.
        const int64_t out_align = 256 / WireBits(type);
        const std::string rows = time.back();
        std::string t_out = absl::StrCat(time.front(), ", C");
        if (packet > flit) t_out = absl::StrCat(time.front(), ", [", packet_text, "] / ", flit, ", C");
        stream = std::move(stream).transpose(m.m(t_out), m.m(absl::StrCat(rows, " # ", out_align)));
        time2 = t_out;
        packet2 = absl::StrCat(rows, " # ", out_align);
      }
      const std::string element = absl::StrCat(time2, ", ", packet2);
      if (sub) {
        if (type == DType::kI32 || type == DType::kF32) {
          ASSIGN_OR_RETURN(VrfTensor v, std::move(stream).to_vrf(m.m(element), 0));
          return DeviceTensor(v);
        }
        ASSIGN_OR_RETURN(TrfTensor t, std::move(stream).to_trf(m.m("1"), m.m(element)));
        return DeviceTensor(t);
      }
      absl::StatusOr<DmTensor> out =
          bitmap ? std::move(stream).commit(m.m(element), 0x60000,
                                            SliceBitmap::Only({0, static_cast<int>(bitmap_pick % 256), 3}))
                 : std::move(stream).commit(m.m(element), 0x60000);
      RETURN_IF_ERROR(out.status());
      if (!dma_after) return DeviceTensor(*out);
      ASSIGN_OR_RETURN(HbmTensor h, out->to_hbm(ctx.tdma, 0x100000, m.m(absl::StrCat("S, ", element))));
      return DeviceTensor(h);
    };
  }

  std::mt19937_64 rng_;
};

// The interpreter's and the JIT's records of one sample, compared; "" when identical.
absl::StatusOr<std::string> Compare(const Sample& sample, jit::JitBackend& jit) {
  interp::Interpreter interpreter;
  RecordingBackend want(interpreter), got(jit);
  ASSIGN_OR_RETURN(samples::SampleRun reference, sample.Run(want));
  absl::StatusOr<samples::SampleRun> run = sample.Run(got);
  if (!run.ok()) return absl::StrCat("the JIT failed where the interpreter ran: ", run.status().message());
  std::optional<std::string> difference =
      FirstDifference(reference.program, want.records(), "interp", got.records(), "jit");
  return difference ? *difference : "";
}

TEST(JitDifferential, RandomProgramsAgreeWithTheInterpreter) {
  absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create({.threads = 2});
  ASSERT_TRUE(jit.ok()) << jit.status();
  constexpr int kPrograms = 300;
  int valid = 0, draws = 0;
  for (uint64_t seed = 1; valid < kPrograms && draws < 40 * kPrograms; ++seed, ++draws) {
    Sample sample = Draw(seed).Make();
    absl::StatusOr<std::string> difference = Compare(sample, **jit);
    if (!difference.ok()) continue;  // the tracer rejected the draw: draw again
    ++valid;
    ASSERT_EQ(*difference, "") << "seed " << seed << " (rerun with Draw(" << seed << ")): " << sample.axes
                               << ", " << std::string(Name(sample.dtype)) << " [" << sample.element << "]";
  }
  EXPECT_EQ(valid, kPrograms) << "too many draws were invalid (" << draws << " draws)";
  EXPECT_GT((*jit)->stats().nest_moves, 0);
}

}  // namespace
}  // namespace visa
