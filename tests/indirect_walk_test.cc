// The IndirectLoop as both backends run it: the JIT walks the recorded Fetch Sequencer entry
// (changing the recorded stride changes the rows it reads), 4-bit rows (whole-byte row starts
// gathered on both backends, half-byte row starts refused by rule), unwritten rows and indices
// reported the same on both backends, and the masked indirect fetch (left and right padding).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "dsl/fetch_engine.h"
#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/indirect_dma.h"
#include "runtime/launch.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A device (tracking writes when asked), the interpreter or the JIT, and a context over them.
struct Bench {
  explicit Bench(bool jit, UninitializedReads reads = UninitializedReads::kOff) {
    DeviceOptions options;
    options.uninitialized_reads = reads;
    device = std::make_unique<Device>(1, options);
    if (jit) jit_backend = *jit::JitBackend::Create({.threads = 2});
    backend = jit ? static_cast<Backend*>(jit_backend.get()) : &interp;
    ctx = std::make_unique<Context>(*device, *backend);
  }
  std::unique_ptr<Device> device;
  interp::Interpreter interp;
  std::unique_ptr<jit::JitBackend> jit_backend;
  Backend* backend = nullptr;
  std::unique_ptr<Context> ctx;
};

class IndirectWalkTest : public ::testing::Test {
 protected:
  Mapping m(const std::string& text) { return s_.m(text); }

  // The table [W, V] (values from seed 5) in DM on slice 0, its Element `element`.
  // `hbm`: its Element in HBM on the way.
  absl::StatusOr<DmTensor> Table(Context& ctx, DType dtype, const std::string& element,
                                 const std::string& hbm_element = "W, V") {
    ASSIGN_OR_RETURN(table_host_, HostTensor::Random(dtype, m("W, V"), 5));
    ASSIGN_OR_RETURN(HbmTensor hbm, table_host_->to_hbm(ctx.pdma, 0, m("1"), m(hbm_element)));
    return hbm.to_dm(ctx.tdma, 0, m("1 # 2"), m("1 # 256"), m(element));
  }
  absl::StatusOr<DmTensor> IndexOf(Context& ctx, const std::vector<double>& rows) {
    ASSIGN_OR_RETURN(HostTensor host, HostTensor::FromValues(DType::kI32, m("K"), rows));
    ASSIGN_OR_RETURN(HbmTensor hbm, host.to_hbm(ctx.pdma, 1 << 20, m("1"), m("K")));
    return hbm.to_dm(ctx.tdma, 1 << 15, m("1 # 2"), m("1 # 256"), m("K"));
  }
  // table[W = rows[k], V = v] in [K, V] order, from the host image.
  std::vector<double> HostGather(const std::vector<double>& rows) {
    std::vector<double> out;
    const int64_t v_size = s_.axes().Find("V")->size;
    for (double row : rows) {
      for (int64_t v = 0; v < v_size; ++v) {
        Index at;
        at.Add("W", static_cast<int64_t>(row));
        at.Add("V", v);
        out.push_back(*table_host_->Get(at));
      }
    }
    return out;
  }

  std::optional<HostTensor> table_host_;
  MappingScope s_{*Axes::Parse("W = 12, V = 16, K = 6, R = 6")};
};

// fetch_indirect (K, V / 8 | V % 8) > collect > commit [K, V] at 64 KiB.
absl::StatusOr<DmTensor> Embed(Context& ctx, const DmTensor& table, const DmTensor& index, const MappingScope& s) {
  return ctx.main.begin(table.view())
      .fetch_indirect(table.dtype(), index, "W", s.m("K, V / 8"), s.m("V % 8"))
      .collect(s.m("K, V / 8"), s.m(absl::StrCat("V % 8 # ", 256 / Bits(table.dtype()))))  // one 32-byte flit
      .commit(s.m("K, V"), 1 << 16);
}

TEST_F(IndirectWalkTest, TheJitReadsRowsWhereTheRecordedIndirectLoopPoints) {
  // A traced program whose IndirectLoop entry is changed after tracing to twice the row stride:
  // a JIT that walks the recorded entry reads row 2 x index[k], which the mappings never say.
  Bench bench(/*jit=*/true);
  Context& ctx = *bench.ctx;
  DmTensor table = *Table(ctx, DType::kBF16, "W, V");
  const std::vector<double> tokens = {0, 5, 2, 2, 4, 1};
  DmTensor index = *IndexOf(ctx, tokens);
  MappingScope& s = s_;
  absl::StatusOr<Program> program = Trace(
      [&s](Context& c, const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
        ASSIGN_OR_RETURN(DmTensor out, Embed(c, DmTensor(in[0]), DmTensor(in[1]), s));
        return std::vector<DeviceTensor>{out};
      },
      {table, index});
  ASSERT_TRUE(program.ok()) << program.status();
  auto& pipe = std::get<PipelineOp>(program->ops.back().body);
  auto& fetch = std::get<FetchStage>(pipe.stages[1]);
  ASSERT_TRUE(fetch.indirect.has_value());
  ASSERT_EQ(fetch.sequencer.entries[0].stride, 16);
  fetch.sequencer.entries[0].stride = 32;
  fetch.indirect->loop.row_stride = 32;
  const int64_t walks_before = bench.jit_backend->stats().sequencer_moves;
  absl::StatusOr<std::vector<DeviceTensor>> outs = Launch(*program, *bench.device, *bench.backend, {table, index});
  ASSERT_TRUE(outs.ok()) << outs.status();
  EXPECT_EQ(bench.jit_backend->stats().sequencer_moves, walks_before + 1);
  HostTensor got = *ReadAs((*outs)[0], m("K, V"));
  std::vector<double> doubled;
  for (double t : tokens) doubled.push_back(2 * t);
  const std::vector<double> want = HostGather(doubled);
  for (int64_t p = 0; p < got.mapping().size(); ++p) ASSERT_EQ(*got.Get(p), want[p]) << "at " << p;
}

TEST_F(IndirectWalkTest, WalksEveryLayoutAndTypeLikeTheInterpreter) {
  // Rows contiguous, strided (V split around W), padded, and 4-bit rows of whole bytes.
  struct Case {
    DType dtype;
    const char* element;
  };
  const std::vector<double> tokens = {11, 0, 7, 7, 3, 11};
  for (const Case& c : {Case{DType::kI8, "W, V"}, Case{DType::kBF16, "V / 8, W, V % 8"},
                        Case{DType::kF32, "W, V # 24"}, Case{DType::kI4, "W, V"}, Case{DType::kI4, "W, V # 32"}}) {
    std::vector<std::vector<uint32_t>> bits;
    for (bool jit : {false, true}) {
      Bench bench(jit);
      Context& ctx = *bench.ctx;
      DmTensor table = *Table(ctx, c.dtype, c.element);
      DmTensor index = *IndexOf(ctx, tokens);
      // Packets of 8 bytes or 8 elements, each padded to a 32-byte flit at collect.
      const int64_t flit = 256 / Bits(c.dtype), packet = std::max<int64_t>(8, 64 / Bits(c.dtype));
      const std::string time = packet == 16 ? "K" : "K, V / 8";
      const std::string fetched = packet == 16 ? "V" : "V % 8";
      absl::StatusOr<DmTensor> out =
          ctx.main.begin(table.view())
              .fetch_indirect(c.dtype, index, "W", m(time), m(fetched))
              .collect(m(time), m(flit == packet ? fetched : absl::StrCat(fetched, " # ", flit)))
              .commit(m("K, V"), 1 << 16);
      ASSERT_TRUE(out.ok()) << Name(c.dtype) << " " << c.element << ": " << out.status();
      HostTensor got = *ReadAs(*out, m("K, V"));
      const std::vector<double> want = HostGather(tokens);
      for (int64_t p = 0; p < got.mapping().size(); ++p) {
        ASSERT_EQ(*got.Get(p), want[p]) << Name(c.dtype) << " " << c.element << " jit " << jit << " at " << p;
      }
      bits.push_back(got.ToBits());
      if (jit) {
        EXPECT_GT(bench.jit_backend->stats().sequencer_moves, 0);
      }
    }
    EXPECT_EQ(bits[0], bits[1]) << Name(c.dtype) << " " << c.element;
  }
}

// ---- 4-bit rows ------------------------------------------------------------------------------

TEST_F(IndirectWalkTest, RowsStartingInsideAByteAreRefusedOnBothPaths) {
  // 13 i4 elements per row, rows back to back: row 1 starts at bit 52, inside a byte.
  s_ = MappingScope(*Axes::Parse("W = 16, V = 13, K = 4"));
  for (bool jit : {false, true}) {
    Bench bench(jit);
    Context& ctx = *bench.ctx;
    DmTensor table = *Table(ctx, DType::kI4, "W, V");
    DmTensor index = *IndexOf(ctx, {1, 2, 3, 4});
    absl::Status fetch = ctx.main.begin(table.view())
                             .fetch_indirect(DType::kI4, index, "W", m("K"), m("V # 16"))
                             .collect(m("K"), m("V # 64"))
                             .commit(m("K, V"), 1 << 16)
                             .status();
    EXPECT_THAT(fetch.message(), AllOf(HasSubstr("Indirect Access: the IndirectLoop's offsets index[K] x 13 i4 "
                                                 "elements start rows of W inside a byte"),
                                       HasSubstr("Fetch Sequencer > Constraints")));
    absl::StatusOr<DeviceTensor> gather =
        Gather(ctx.tdma, table, index, "W", Destination{Tier::kDm, Address(1 << 16), {m("1"), m("1 # 2"), m("1 # 256"), m("K, V # 14")}});
    ASSERT_FALSE(gather.ok());
    EXPECT_THAT(gather.status().message(), HasSubstr("start rows of W inside a byte (13 x 4 bits)"));
  }
}

TEST_F(IndirectWalkTest, OddFourBitRowsOnWholeBytesAreGatheredOnBothBackends) {
  // Rows of 13 i4 elements padded to 16 (8 bytes apart): a DMA gather moves 6.5-byte rows (the
  // JIT copies them nibble by nibble), and the fetch walks them.
  s_ = MappingScope(*Axes::Parse("W = 16, V = 13, K = 4"));
  const std::vector<double> tokens = {15, 0, 3, 1};
  std::vector<std::vector<uint32_t>> gathered, fetched;
  for (bool jit : {false, true}) {
    Bench bench(jit);
    Context& ctx = *bench.ctx;
    DmTensor table = *Table(ctx, DType::kI4, "W, V # 16", "W, V # 16");
    DmTensor index = *IndexOf(ctx, tokens);
    absl::StatusOr<DeviceTensor> gather = Gather(
        ctx.tdma, table, index, "W", Destination{Tier::kDm, Address(1 << 16), {m("1"), m("1 # 2"), m("1 # 256"), m("K, V # 16")}});
    ASSERT_TRUE(gather.ok()) << gather.status();
    HostTensor rows = *ReadAs(*gather, m("K, V"));
    const std::vector<double> want = HostGather(tokens);
    for (int64_t p = 0; p < rows.mapping().size(); ++p) ASSERT_EQ(*rows.Get(p), want[p]) << "jit " << jit << " at " << p;
    gathered.push_back(rows.ToBits());
    absl::StatusOr<DmTensor> out = ctx.main.begin(table.view())
                                       .fetch_indirect(DType::kI4, index, "W", m("K"), m("V # 16"))
                                       .collect(m("K"), m("V # 64"))
                                       .commit(m("K, V # 16"), 1 << 17);
    ASSERT_TRUE(out.ok()) << out.status();
    HostTensor got = *ReadAs(*out, m("K, V"));
    for (int64_t p = 0; p < got.mapping().size(); ++p) ASSERT_EQ(*got.Get(p), want[p]) << "jit " << jit << " at " << p;
    fetched.push_back(got.ToBits());
  }
  EXPECT_EQ(gathered[0], gathered[1]);
  EXPECT_EQ(fetched[0], fetched[1]);
}

// ---- unwritten reads -------------------------------------------------------------------------

// A [W = 12, V = 16] i8 table at DM 0 of which only rows 0..5 were written (through a [R = 6, V]
// tensor over the same bytes), and an index at DM 0x8000 written with `rows` (or never written).
struct HalfWritten {
  DmTensor table;
  DmTensor index;
};

absl::StatusOr<HalfWritten> MakeHalfWritten(Device& device, const MappingScope& s, const std::vector<double>& rows,
                                            bool write_index = true) {
  ASSIGN_OR_RETURN(HostTensor first_rows, HostTensor::Random(DType::kI8, s.m("R, V"), 3));
  ASSIGN_OR_RETURN(Placement half, Place(device, DType::kI8, Tier::kDm, {s.m("1"), s.m("1 # 2"), s.m("1 # 256"), s.m("R, V")}, 0));
  RETURN_IF_ERROR(WriteAs(first_rows, device, half).status());
  ASSIGN_OR_RETURN(DmTensor table, DmTensor::Create(device, DType::kI8, s.m("1"), s.m("1 # 2"), s.m("1 # 256"), s.m("W, V"), 0));
  if (!write_index) {
    ASSIGN_OR_RETURN(DmTensor index,
                     DmTensor::Create(device, DType::kI32, s.m("1"), s.m("1 # 2"), s.m("1 # 256"), s.m("K"), 0x8000));
    return HalfWritten{table, index};
  }
  ASSIGN_OR_RETURN(HostTensor values, HostTensor::FromValues(DType::kI32, s.m("K"), rows));
  ASSIGN_OR_RETURN(Placement at,
                   Place(device, DType::kI32, Tier::kDm, {s.m("1"), s.m("1 # 2"), s.m("1 # 256"), s.m("K")}, 0x8000));
  ASSIGN_OR_RETURN(DeviceTensor index, WriteAs(values, device, at));
  return HalfWritten{table, DmTensor(index)};
}

TEST_F(IndirectWalkTest, GatheredRowsNothingWroteAreReportedOnBothBackends) {
  std::vector<std::string> messages;
  for (bool jit : {false, true}) {
    // Rows 0..5 only: clean.
    {
      Bench bench(jit, UninitializedReads::kError);
      HalfWritten t = *MakeHalfWritten(*bench.device, s_, {1, 3, 5, 1, 0, 2});
      absl::StatusOr<DmTensor> out = Embed(*bench.ctx, t.table, t.index, s_);
      EXPECT_TRUE(out.ok()) << "jit " << jit << ": " << out.status();
    }
    // Row 8 (index[K = 2]) was never written: the read is reported, naming the row and k.
    Bench bench(jit, UninitializedReads::kError);
    HalfWritten t = *MakeHalfWritten(*bench.device, s_, {1, 3, 8, 1, 9, 2});
    absl::StatusOr<DmTensor> out = Embed(*bench.ctx, t.table, t.index, s_);
    ASSERT_FALSE(out.ok()) << "jit " << jit;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(out.status().message(),
                AllOf(HasSubstr("Uninitialized Read"),
                      HasSubstr("the IndirectLoop's row W = 8 (index[K = 2]) read by an indirect fetch"),
                      HasSubstr("DM bytes [0x80, 0x81)"), HasSubstr("element 128"),
                      HasSubstr("96 of its live elements are unwritten")));
    messages.push_back(std::string(out.status().message()));
  }
  EXPECT_EQ(messages[0], messages[1]);
}

// A DMA gather reads the rows its index names, not the whole table: both backends (the JIT checks
// each op's reads before it runs, interp/op_reads.h) report only a named row nothing wrote, and the
// index, in the same words.
TEST_F(IndirectWalkTest, ADmaGatherIsCheckedOnTheRowsItNames) {
  const Destination out{Tier::kDm, Address(1 << 16), {m("1"), m("1 # 2"), m("1 # 256"), m("K, V")}};
  std::vector<std::string> messages;
  for (bool jit : {false, true}) {
    {
      Bench bench(jit, UninitializedReads::kError);
      HalfWritten t = *MakeHalfWritten(*bench.device, s_, {1, 3, 5, 1, 0, 2});
      absl::StatusOr<DeviceTensor> gathered = Gather(bench.ctx->tdma, t.table, t.index, "W", out);
      EXPECT_TRUE(gathered.ok()) << "jit " << jit << ": " << gathered.status();
    }
    {
      Bench bench(jit, UninitializedReads::kError);
      HalfWritten t = *MakeHalfWritten(*bench.device, s_, {1, 3, 8, 1, 9, 2});
      absl::StatusOr<DeviceTensor> gathered = Gather(bench.ctx->tdma, t.table, t.index, "W", out);
      ASSERT_FALSE(gathered.ok()) << "jit " << jit;
      EXPECT_THAT(gathered.status().message(),
                  AllOf(HasSubstr("Uninitialized Read"), HasSubstr("the IndirectLoop's row W = 8 (index[K = 2]) read by a"),
                        HasSubstr("gather")));
      messages.push_back(std::string(gathered.status().message()));
    }
    {
      Bench bench(jit, UninitializedReads::kError);
      HalfWritten t = *MakeHalfWritten(*bench.device, s_, {}, /*write_index=*/false);
      absl::StatusOr<DeviceTensor> gathered = Gather(bench.ctx->tdma, t.table, t.index, "W", out);
      ASSERT_FALSE(gathered.ok()) << "jit " << jit;
      EXPECT_THAT(gathered.status().message(),
                  AllOf(HasSubstr("Uninitialized Read"), HasSubstr("the IndirectLoop's index read by a")));
      messages.push_back(std::string(gathered.status().message()));
    }
  }
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[0], messages[2]);
  EXPECT_EQ(messages[1], messages[3]);
}

TEST_F(IndirectWalkTest, AnUnwrittenIndexIsReportedOnBothBackends) {
  for (bool jit : {false, true}) {
    Bench bench(jit, UninitializedReads::kError);
    HalfWritten t = *MakeHalfWritten(*bench.device, s_, {}, /*write_index=*/false);
    absl::StatusOr<DmTensor> out = Embed(*bench.ctx, t.table, t.index, s_);
    ASSERT_FALSE(out.ok()) << "jit " << jit;
    EXPECT_THAT(out.status().message(), AllOf(HasSubstr("Uninitialized Read"),
                                              HasSubstr("the IndirectLoop's index read by an indirect fetch"),
                                              HasSubstr("DM bytes [0x8000, 0x8004)")));
  }
}

}  // namespace
}  // namespace visa

namespace visa {
namespace {

// ---- the masked indirect fetch ---------------------------------------------------------------

TEST_F(IndirectWalkTest, AMaskedIndirectFetchPadsLeftAndRightOnBothBackends) {
  // Rows of 16 f32 (padded to 24 in DM, room for the shifted reads) fetched with 3 pad elements
  // before and 5 after each: the sequencer's base address moves back 3 (`@ base_addr = -3`), the
  // adapter masks with lpad 3 (pad value -1.5).
  const std::vector<double> tokens = {11, 0, 7, 7, 3, 11};
  std::vector<std::vector<uint8_t>> images;
  for (bool jit : {false, true}) {
    Bench bench(jit);
    Context& ctx = *bench.ctx;
    DmTensor table = *Table(ctx, DType::kF32, "W, V # 24");
    DmTensor index = *IndexOf(ctx, tokens);
    const Mapping time = m("K, [# 3 + V + # 5] / 8"), packet = m("[# 3 + V + # 5] % 8");
    absl::StatusOr<DmTensor> out = ctx.main.begin(table.view())
                                       .fetch_indirect_masked(DType::kF32, -1.5, index, "W", time, packet)
                                       .collect(time, packet)
                                       .commit(m("K, # 3 + V + # 5"), 1 << 16);
    ASSERT_TRUE(out.ok()) << "jit " << jit << ": " << out.status();
    const auto& pipe = std::get<PipelineOp>(ctx.program().ops.back().body);
    const auto& fetch = std::get<FetchStage>(pipe.stages[1]);
    EXPECT_THAT(fetch.indirect->loop.sequencer, HasSubstr("K -> (6, [index[K] x 24])"));
    EXPECT_THAT(fetch.indirect->loop.sequencer, HasSubstr("@ base_addr = -3"));
    EXPECT_EQ(fetch.mask.lpad, 3);
    // The rows land where the unpadded fetch puts them; the commit writes only live positions, so
    // the committed image holds the rows between untouched (zero) pads, the same on both backends.
    HostTensor got = *ReadAs(*out, m("K, V"));
    const std::vector<double> want = HostGather(tokens);
    for (int64_t p = 0; p < got.mapping().size(); ++p) ASSERT_EQ(*got.Get(p), want[p]) << "jit " << jit << " at " << p;
    std::vector<uint8_t> bytes(6 * 24 * 4);
    ASSERT_TRUE(bench.device->Read(Tier::kDm, 0, 1 << 16, absl::MakeSpan(bytes)).ok());
    images.push_back(bytes);
  }
  EXPECT_EQ(images[0], images[1]);
}

}  // namespace
}  // namespace visa

namespace visa {
namespace {

// The left pad reaches the Vector Engine masked: gathered rows read as `# 3 + V + # 5` with the
// pad value 0 (Add's identity, which the reduction requires), reduced by the Intra-Slice Reduce
// whose Valid Count Generator keeps `# 3 + V` (the left pad included, the right pad left out:
// ReducePadding::kLeftIdentity, as the masked_row_sum sample). Each sum is the host's, in the
// manual's order (each 4-way step's tree (a + b) + (c + d), then the steps in order). (The 3
// positions a shifted read takes from before a row are the previous row's padding, which the DMA
// wrote as zero, so this checks the walk and the reduction, not that the mask overwrote them.)
TEST_F(IndirectWalkTest, AMaskedIndirectFetchFeedsItsLeftPadValueToTheReduction) {
  const std::vector<double> tokens = {11, 0, 7, 7, 3, 11};
  constexpr float kPad = 0.0f;
  std::vector<std::vector<uint32_t>> bits;
  for (bool jit : {false, true}) {
    Bench bench(jit);
    Context& ctx = *bench.ctx;
    DmTensor table = *Table(ctx, DType::kF32, "W, V # 24");
    DmTensor index = *IndexOf(ctx, tokens);
    const Mapping time = m("K, [# 3 + V + # 5] / 8"), packet = m("[# 3 + V + # 5] % 8");
    absl::StatusOr<DmTensor> out =
        ctx.main.begin(table.view())
            .fetch_indirect_masked(DType::kF32, kPad, index, "W", time, packet)
            .collect(time, packet)
            .vector_init()
            .vector_intra_slice_branch(BranchMode::Unconditional())
            .vector_split(m("K, [# 3 + V + # 5] / 8, [# 3 + V + # 5] % 8 / 4"), m("[# 3 + V + # 5] % 4"))
            .vector_intra_slice_reduce("V", m("K"), m("1 # 4"), IntraSliceReduceOpF32::kAdd,
                                       ReducePadding::kLeftIdentity)
            .vector_pad_way8(m("1 # 8"))
            .vector_final()
            .commit(m("K, 1 # 2"), 1 << 16);
    ASSERT_TRUE(out.ok()) << "jit " << jit << ": " << out.status();
    HostTensor got = *ReadAs(*out, m("K"));
    for (int64_t k = 0; k < 6; ++k) {
      auto lane = [&](int64_t p) -> float {  // position p of `# 3 + V`, beyond it the identity
        if (p < 3) return kPad;
        if (p - 3 >= 16) return 0.0f;
        Index at;
        at.Add("W", static_cast<int64_t>(tokens[k]));
        at.Add("V", p - 3);
        return static_cast<float>(*table_host_->Get(at));
      };
      float acc = 0;
      for (int64_t step = 0; 4 * step < 3 + 16; ++step) {
        const float tree = (lane(4 * step) + lane(4 * step + 1)) + (lane(4 * step + 2) + lane(4 * step + 3));
        acc = step == 0 ? tree : acc + tree;
      }
      EXPECT_EQ(static_cast<float>(*got.Get(k)), acc) << "jit " << jit << " k " << k;
    }
    bits.push_back(got.ToBits());
  }
  EXPECT_EQ(bits[0], bits[1]);
}

}  // namespace
}  // namespace visa
