// The tiled GEMM (tiled_gemm.h).
#include "samples/models/tiled_gemm.h"

#include <memory>
#include <optional>
#include <vector>

#include <Eigen/Core>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/dma.h"
#include "samples/contraction_sample.h"
#include "samples/models/llama_steps.h"

namespace visa::models {
namespace {

constexpr int64_t kBf16 = 2;

// A 32-row tile of A against a slice's 32 columns, over one chunk of K: the op's own axes.
std::string OpAxes(const GemmTiles& shape, const TilePlan& plan) {
  return absl::StrCat("R = ", kGemmRows, ", N = ", shape.n, ", K = ", plan.k_chunk);
}

MatmulSpec SpecOf(int64_t row_tile, int64_t chunk) {
  return MatmulSpec{absl::StrCat("tiled GEMM [m", row_tile, " k", chunk, "]"), "N / 32", "R", "N", Over("", "K")};
}

// One chunk of B (each slice's 32 columns, in DM) into the TRF on the sub context.
absl::StatusOr<TrfTensor> LoadChunk(Context& ctx, const MappingScope& m, const MatmulSpec& spec, const DmTensor& b,
                                    TrfAddress half, int64_t chunk) {
  return ctx.sub.begin(b.view())
      .named(absl::StrCat("B chunk k", chunk, " to TRF ", TrfAddressName(half)))
      .fetch(DType::kBF16, m.m(spec.col8() + ", " + spec.col4()), m.m(spec.k.all))
      .collect(m.m(spec.col8() + ", " + spec.col4() + ", " + spec.k.outer16), m.m(spec.k.inner16))
      .to_trf(m.m(spec.col8()), m.m(spec.col4() + ", " + spec.k.all), half);
}

// The GEMM of one A tile (in DM, broadcast to the slices) against the TRF.
absl::StatusOr<DmTensor> Contract(Context& ctx, const MappingScope& m, const MatmulSpec& spec, const DmTensor& a,
                                  const TrfTensor& b, bool bf16_out, const Epilogue& epilogue) {
  Stream sums = ctx.main.begin(a.view())
                    .named(spec.step)
                    .fetch(DType::kBF16, m.m(spec.out_time()), m.m(spec.k.all))
                    .collect(m.m(spec.out_time() + ", " + spec.k.outer16), m.m(spec.k.inner16))
                    .align(m.m(spec.out_time() + ", " + spec.k.outer32), m.m(spec.k.inner32), b)
                    .contract(m.m("1"))
                    .accumulate(m.m(spec.out_time()), m.m(spec.col8()), AccumulationKind::kInterleaved);
  if (epilogue) sums = epilogue(std::move(sums));
  if (bf16_out) sums = std::move(sums).cast(DType::kBF16, m.m(spec.col8() + " # 16"));
  return std::move(sums).commit(m.m(spec.rows + ", " + spec.col32()), Address::Any());
}

// The ops in issue order: row block, chunk, row tile inside the block.
struct Step {
  int64_t row_tile, chunk, slot;  // slot: the row tile's place in its block (its partial sums)
  bool first_of_group;            // the first GEMM of a (block, chunk): the next chunk's TRF load follows it
};

std::vector<Step> Steps(const GemmTiles& shape, const TilePlan& plan) {
  std::vector<Step> steps;
  const int64_t row_tiles = shape.m / kGemmRows, chunks = shape.k / plan.k_chunk;
  for (int64_t block = 0; block < row_tiles / plan.m_block; ++block) {
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      for (int64_t slot = 0; slot < plan.m_block; ++slot) {
        steps.push_back({block * plan.m_block + slot, chunk, slot, slot == 0});
      }
    }
  }
  return steps;
}

}  // namespace

std::string StagedA(const TilePlan& plan) {
  return absl::StrCat("M / ", kGemmRows, ", K / ", plan.k_chunk, ", M % ", kGemmRows, ", K % ", plan.k_chunk);
}

std::string StagedC() { return "M / 32, N / 32, M % 32, N % 32"; }

std::string StagedB(const TilePlan& plan) { return absl::StrCat("K / ", plan.k_chunk, ", N, K % ", plan.k_chunk); }

absl::StatusOr<HbmTensor> TiledGemm(Context& ctx, const GemmTiles& shape, const TilePlan& plan, const HbmTensor& a,
                                    const HbmTensor& b, int64_t out_address) {
  RETURN_IF_ERROR(CheckTilePlan(shape, plan));
  ASSIGN_OR_RETURN(MappingScope whole, MappingScope::Parse(absl::StrCat("M = ", shape.m, ", N = ", shape.n, ", K = ", shape.k)));
  ASSIGN_OR_RETURN(MappingScope m, MappingScope::Parse(OpAxes(shape, plan)));
  // C tile-major in HBM ([M / 32, N / 32] tiles of [32, 32]): each slice's 32 x 32 result is 2 KiB
  // of consecutive bytes, written in 256-byte requests; row-major C would cut it into 64-byte rows
  // N x 2 bytes apart (one request each, on few channels: 30x slower on the cycle model).
  ASSIGN_OR_RETURN(HbmTensor out, HbmTensor::Create(ctx.device(), DType::kBF16, whole.m("1"), whole.m(StagedC()),
                                                    Address(out_address)));
  const int64_t chunks = shape.k / plan.k_chunk;
  const int64_t a_tile_bytes = kGemmRows * plan.k_chunk * kBf16;
  const Mapping slice = Slices(m, "N / 32");

  // B stays in DM, each slice's 32 columns, one tensor per chunk.
  Scratch resident;
  std::vector<DmTensor> b_chunks;
  {
    ScopedDmaOperation named(ctx.tdma, "B to DM");
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      ASSIGN_OR_RETURN(DeviceTensor view, b.Relabel({m.m("1"), m.m("N, K")}, chunk * shape.n * plan.k_chunk * kBf16));
      ASSIGN_OR_RETURN(DmTensor dm, HbmTensor(view).to_dm(ctx.tdma, Address::Any(), Cluster(m), slice, m.m("N % 32, K")));
      resident(dm);
      b_chunks.push_back(dm);
    }
  }
  // A tile (row tile, chunk) into DM, broadcast to every slice; its Scratch frees it.
  struct Moved {
    std::unique_ptr<Scratch> scratch;
    DmTensor a;
  };
  auto move = [&](const Step& step) -> absl::StatusOr<Moved> {
    ScopedDmaOperation named(ctx.tdma, absl::StrCat("A tile [m", step.row_tile, " k", step.chunk, "] to DM"));
    ASSIGN_OR_RETURN(DeviceTensor view,
                     a.Relabel({m.m("1"), m.m("R, K")}, (step.row_tile * chunks + step.chunk) * a_tile_bytes));
    ASSIGN_OR_RETURN(DmTensor dm, HbmTensor(view).to_dm(ctx.tdma, Address::Any(), Cluster(m), slice, m.m("R, K")));
    auto scratch = std::make_unique<Scratch>();
    (*scratch)(dm);
    return Moved{std::move(scratch), dm};
  };
  // Chunk loads alternate between the TRF halves when two fit (the next loads while main
  // contracts with the current); a full-TRF chunk waits for the GEMMs reading the previous one.
  auto half_of = [&](int64_t group) {
    if (!plan.trf_double_buffered()) return TrfAddress::kFull;
    return group % 2 == 0 ? TrfAddress::kFirstHalf : TrfAddress::kSecondHalf;
  };
  const std::vector<Step> steps = Steps(shape, plan);
  std::vector<std::optional<DmTensor>> partial(static_cast<size_t>(plan.m_block));
  int64_t group = 0;
  ASSIGN_OR_RETURN(TrfTensor trf, LoadChunk(ctx, m, SpecOf(0, 0), b_chunks[0], half_of(0), 0));
  std::optional<TrfTensor> next_trf;
  ASSIGN_OR_RETURN(Moved next, move(steps[0]));
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& step = steps[i];
    const MatmulSpec spec = SpecOf(step.row_tile, step.chunk);
    const bool last = step.chunk + 1 == chunks;
    if (step.first_of_group && i > 0) {
      ++group;
      trf = *next_trf;
      next_trf.reset();
    }
    Moved current = std::move(next);
    std::optional<DmTensor>& sums = partial[static_cast<size_t>(step.slot)];
    absl::Status loaded = absl::OkStatus();
    Epilogue epilogue = nullptr;
    if (sums.has_value()) {
      // The previous chunk's sums into the VRF (two slots: the next op's load need not wait for
      // this GEMM to finish reading), added by the Vector Engine before the cast.
      epilogue = [&](Stream s) {
        absl::StatusOr<VrfTensor> addend =
            TileToVrf(ctx, m, spec, *sums, spec.step + " partial sums to VRF", (i % 2) * kGemmRows * kSliceColumns * 4);
        Stream v = Enter(std::move(s));
        if (!addend.ok()) {
          loaded = addend.status();
          return std::move(v).vector_final();  // reported after the GEMM returns
        }
        return std::move(v).vector_clip(ClipBinaryOpF32::kAdd, *addend).vector_final();
      };
    }
    ASSIGN_OR_RETURN(DmTensor result, Contract(ctx, m, spec, current.a, trf, last, epilogue));
    RETURN_IF_ERROR(loaded);
    // The next A tile moves while this GEMM runs (into the DM this GEMM's predecessor read: two
    // buffers). Issued after the GEMM, not before it, so the partial sums' VRF load the GEMM
    // waits for is not held behind the move in program order.
    if (i + 1 < steps.size()) {
      ASSIGN_OR_RETURN(next, move(steps[i + 1]));
    }
    if (sums.has_value()) sums->Release();
    sums = result;
    // The next group's chunk of B: into the other TRF half right after this group's first GEMM
    // (it loads while main contracts), or, when one chunk fills the TRF, after the group's last.
    const size_t next_group = i - static_cast<size_t>(step.slot) + static_cast<size_t>(plan.m_block);
    const bool load_now = plan.trf_double_buffered() ? step.slot == 0 : step.slot + 1 == plan.m_block;
    if (load_now && next_group < steps.size()) {
      const int64_t chunk = steps[next_group].chunk;
      ASSIGN_OR_RETURN(next_trf, LoadChunk(ctx, m, spec, b_chunks[static_cast<size_t>(chunk)], half_of(group + 1), chunk));
    }
    if (last) {
      ScopedDmaOperation named(ctx.tdma, absl::StrCat("C tile [m", step.row_tile, "] to HBM"));
      ASSIGN_OR_RETURN(DeviceTensor place, out.Relabel({m.m("1"), m.m("N / 32, R, N % 32")},
                                                       step.row_tile * kGemmRows * shape.n * kBf16));
      RETURN_IF_ERROR(MoveInto(ctx.tdma, *sums, HbmTensor(place)));
      sums->Release();
      sums.reset();
    }
  }
  return out;
}

samples::Sample TiledGemmSample(const std::string& name, const GemmTiles& shape, bool slow, const TilePlan* plan) {
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  absl::StatusOr<TilePlan> chosen = plan != nullptr ? absl::StatusOr<TilePlan>(*plan) : ChooseTilePlan(shape);
  VISA_CHECK(chosen.ok(), "the sample's shape has a tile plan");
  const TilePlan p = *chosen;
  samples::ContractionSpec spec;
  spec.name = name;
  spec.description = absl::StrCat("tiled GEMM beyond the SRAM (M = ", shape.m, ", N = ", shape.n, ", K = ", shape.k,
                                  ", bf16, ", p.ToString(),
                                  "): A tiles streamed HBM -> DM under the contraction, f32 sums across K chunks");
  spec.axes = absl::StrCat("M = ", shape.m, ", N = ", shape.n, ", K = ", shape.k);
  spec.operands = {{DType::kBF16, "M, K", 42, 0, StagedA(p)}, {DType::kBF16, "K, N", 43, int64_t{1} << 28, StagedB(p)}};
  spec.host_math = [shape](const std::vector<HostTensor>& in) {
    return samples::PrepareHostGemm({.rows = shape.m, .inner = shape.k, .cols = shape.n}, in[0], in[1]);
  };
  spec.kernel = [shape, p](Context& ctx, const std::vector<HbmTensor>& in,
                           const MappingScope&) -> absl::StatusOr<DeviceTensor> {
    constexpr int64_t kOutAddress = int64_t{3} << 28;
    ASSIGN_OR_RETURN(HbmTensor out, TiledGemm(ctx, shape, p, in[0], in[1], kOutAddress));
    return out;
  };
  spec.readback = "M, N";
  spec.expected = [shape, p](const std::vector<HostTensor>& in, const MappingScope&) -> absl::StatusOr<samples::Expected> {
    auto to_matrix = [](const HostTensor& t, int64_t rows, int64_t cols) {
      const std::vector<double> values = t.ToValues();
      Matrix out(rows, cols);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) out(r, c) = static_cast<float>(values[static_cast<size_t>(r * cols + c)]);
      }
      return out;
    };
    auto product = std::make_shared<Matrix>();
    auto magnitude = std::make_shared<Matrix>();
    {
      const Matrix a = to_matrix(in[0], shape.m, shape.k), b = to_matrix(in[1], shape.k, shape.n);
      *product = a * b;
      *magnitude = a.cwiseAbs() * b.cwiseAbs();
    }
    // Roundings on any path: the tree (5) and the time steps of one chunk, then one f32 add per
    // later chunk (the epilogue's partial sums).
    const int levels = 5 + static_cast<int>(p.k_chunk / 32) + static_cast<int>(shape.k / p.k_chunk);
    samples::Expected e;
    e.value = [product](const Index& i) { return static_cast<double>((*product)(i["M"], i["N"])); };
    e.bound = [product, magnitude, levels](const Index& i) {
      return samples::SumBound(levels, (*magnitude)(i["M"], i["N"]), (*product)(i["M"], i["N"]), true);
    };
    e.note = absl::StrCat("bound: ", levels, " f32 roundings (tree depth + time steps of a chunk + one add per chunk) "
                          "x sum|a*b| + bf16 half-ulp, Eigen float reference, every element");
    return e;
  };
  spec.slow = slow;
  return samples::MakeContractionSample(std::move(spec));
}

}  // namespace visa::models
