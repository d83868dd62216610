// The Fetch Sequencer's IndirectLoop (dsl/indirect_fetch.h, Stream::fetch_indirect): its recorded
// configuration in the manual's `(limit, [offset0, ...])` form, the rows it fetches on both
// backends against a host gather (and bit-identical), an out-of-range index failing the op on
// both, every rule of its place in the stream and of the index tensor naming "Indirect Access",
// a traced program replayed through Launch, the op's byte ranges, and `visa seq --indirect`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <sstream>

#include "dsl/fetch_engine.h"
#include "dsl/indirect_fetch.h"
#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/launch.h"
#include "runtime/op_description.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "samples/sample.h"
#include "tools/check_command.h"
#include "tools/seq_command.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

// One table and one index on a fresh device, run on the interpreter or the JIT.
class IndirectFetchTest : public ::testing::Test {
 protected:
  Mapping m(const std::string& text) { return s_.m(text); }

  struct Setup {
    std::unique_ptr<Device> device = std::make_unique<Device>(1);
    interp::Interpreter interp;
    std::unique_ptr<jit::JitBackend> jit;
    std::unique_ptr<Context> ctx;
  };

  std::unique_ptr<Setup> Make(bool jit) {
    auto setup = std::make_unique<Setup>();
    if (jit) setup->jit = *jit::JitBackend::Create({.threads = 2});
    setup->ctx = std::make_unique<Context>(*setup->device,
                                           jit ? static_cast<Backend&>(*setup->jit) : setup->interp);
    return setup;
  }

  // The table [W, V] (values from the seed) in DM with `element`, on the slices `slice` names.
  absl::StatusOr<DmTensor> Table(Context& ctx, DType dtype, const std::string& element,
                                 const std::string& slice = "1 # 256") {
    ASSIGN_OR_RETURN(HostTensor host, HostTensor::Random(dtype, m("W, V"), 11));
    table_host_ = host;
    ASSIGN_OR_RETURN(HbmTensor hbm, host.to_hbm(ctx.pdma, 0, m("1"), m("W, V")));
    return hbm.to_dm(ctx.tdma, 0, m("1 # 2"), m(slice), m(element));
  }

  // An index tensor of `dtype` along `axes` in DM (or SPM), on the slices `slice` names.
  absl::StatusOr<DmTensor> IndexTensor(Context& ctx, const std::vector<double>& values, DType dtype = DType::kI32,
                                 const std::string& axes = "K", const std::string& slice = "1 # 256",
                                 bool spm = false) {
    ASSIGN_OR_RETURN(HostTensor host, HostTensor::FromValues(dtype, m(axes), values));
    ASSIGN_OR_RETURN(HbmTensor hbm, host.to_hbm(ctx.pdma, 1 << 20, m("1"), m(axes)));
    if (spm) return hbm.to_spm(ctx.tdma, 1 << 15, m("1 # 2"), m(slice), m(axes));
    return hbm.to_dm(ctx.tdma, 1 << 15, m("1 # 2"), m(slice), m(axes));
  }

  // The embedding fetch: fetch_indirect > collect > commit [K, V].
  static absl::StatusOr<DmTensor> Fetch(Context& ctx, const DmTensor& table, const DmTensor& index, DType dtype,
                                        const MappingScope& s) {
    return ctx.main.begin(table.view())
        .fetch_indirect(dtype, index, "W", s.m("K, V / 8"), s.m("V % 8"))
        .collect(s.m("K, V / 8"), s.m("V % 8 # 16"))
        .commit(s.m("K, V"), 1 << 16);
  }

  // table[W = tokens[k], V = v] at every (k, v), as the host computes it.
  std::vector<double> HostGather(const std::vector<double>& tokens) {
    std::vector<double> out;
    for (double token : tokens) {
      for (int64_t v = 0; v < 16; ++v) {
        Index at;
        at.Add("W", static_cast<int64_t>(token));
        at.Add("V", v);
        out.push_back(*table_host_->Get(at));
      }
    }
    return out;
  }

  std::optional<HostTensor> table_host_;
  MappingScope s_{*Axes::Parse("W = 12, V = 16, K = 6, J = 2")};
};

const std::vector<double> kTokens = {11, 0, 7, 7, 3, 11};

TEST_F(IndirectFetchTest, RecordsTheIndirectLoopAsTheOutermostEntry) {
  std::unique_ptr<Setup> run = Make(false);
  Context& ctx = *run->ctx;
  DmTensor table = *Table(ctx, DType::kBF16, "W, V");
  DmTensor index = *IndexTensor(ctx, kTokens);
  ASSERT_TRUE(Fetch(ctx, table, index, DType::kBF16, s_).ok());
  const auto& pipe = std::get<PipelineOp>(ctx.program().ops.back().body);
  const auto& fetch = std::get<FetchStage>(pipe.stages[1]);
  ASSERT_TRUE(fetch.indirect.has_value());
  // A row of W is |V| = 16 elements; the IndirectLoop walks |K| = 6 of them, then V / 8 and V % 8.
  EXPECT_EQ(fetch.indirect->loop.sequencer, "[K -> (6, [index[K] x 16]), V / 8 -> 2 : 8, V % 8 -> 8 : 1] : 8");
  EXPECT_EQ(fetch.indirect->loop.row_stride, 16);
  EXPECT_EQ(fetch.indirect->loop.limit, 6);
  EXPECT_EQ(fetch.sequencer.entries[0].size, 6);  // the walkers see |K| steps of W's stride
  EXPECT_EQ(fetch.sequencer.entries[0].stride, 16);
  // One 16-byte packet per step, 12 steps; a contiguous run ends at the row (32 bytes).
  EXPECT_EQ(fetch.access.cycles, 12);
  EXPECT_EQ(fetch.access.contiguous_bytes, 32);
  const std::string text = ctx.program().ToText();
  EXPECT_THAT(text, HasSubstr("sequencer [K -> (6, [index[K] x 16]), V / 8 -> 2 : 8, V % 8 -> 8 : 1] : 8"));
  EXPECT_THAT(text, HasSubstr("indirect IndirectLoop (limit 6, [offset0, offset1, ...] = index[K] x 16 elements) "
                              "gathers rows of W = 12 into K, index DmTensor<i32"));
}

TEST_F(IndirectFetchTest, OpDescriptionReadsTheIndexAndTheWholeTable) {
  std::unique_ptr<Setup> run = Make(false);
  Context& ctx = *run->ctx;
  DmTensor table = *Table(ctx, DType::kBF16, "W, V");
  DmTensor index = *IndexTensor(ctx, kTokens);
  ASSERT_TRUE(Fetch(ctx, table, index, DType::kBF16, s_).ok());
  const OpDescription d = Describe(ctx.program().ops.back());
  ASSERT_EQ(d.reads.size(), 2u);
  // 12 x 16 bf16 = 384 bytes of table at DM 0; 6 i32 = 24 bytes of index at DM 0x8000.
  EXPECT_EQ(d.reads[0].total_bytes(), 384);
  EXPECT_EQ(d.reads[1].total_bytes(), 24);
  EXPECT_THAT(d.reads[1].ToString(), HasSubstr("[0x8000, 0x8018)"));
}

TEST_F(IndirectFetchTest, FetchesTheRowsTheIndexNamesOnBothBackends) {
  // Rows strided in DM (`V / 8, W, V % 8`); tokens with a repeat, the first and the last row.
  std::vector<std::vector<uint32_t>> bits;
  for (bool jit : {false, true}) {
    std::unique_ptr<Setup> run = Make(jit);
    Context& ctx = *run->ctx;
    DmTensor table = *Table(ctx, DType::kBF16, "V / 8, W, V % 8");
    DmTensor index = *IndexTensor(ctx, kTokens);
    absl::StatusOr<DmTensor> out = Fetch(ctx, table, index, DType::kBF16, s_);
    ASSERT_TRUE(out.ok()) << out.status();
    HostTensor got = *ReadAs(*out, m("K, V"));
    const std::vector<double> want = HostGather(kTokens);
    for (int64_t p = 0; p < got.mapping().size(); ++p) ASSERT_EQ(*got.Get(p), want[p]) << "jit " << jit << " at " << p;
    bits.push_back(got.ToBits());
    if (jit) {
      EXPECT_EQ(run->jit->stats().fused_pipelines + run->jit->stats().direct_pipelines, 0);
    }
  }
  EXPECT_EQ(bits[0], bits[1]);
}

TEST_F(IndirectFetchTest, ConvertsInTheFetchAdapterAndBroadcastsOverSlices) {
  // i8 rows cast to i32 by the adapter, the table and the index on slices 0..3 (each reads its own).
  std::vector<std::vector<uint32_t>> bits;
  for (bool jit : {false, true}) {
    std::unique_ptr<Setup> run = Make(jit);
    Context& ctx = *run->ctx;
    DmTensor table = *Table(ctx, DType::kI8, "W, V", "4 # 256");
    DmTensor index = *IndexTensor(ctx, kTokens, DType::kI32, "K", "4 # 256");
    absl::StatusOr<DmTensor> out = ctx.main.begin(table.view())
                                       .fetch_indirect(DType::kI32, index, "W", m("K, V / 8"), m("V % 8"))
                                       .collect(m("K, V / 8"), m("V % 8"))
                                       .commit(m("K, V"), 1 << 16);
    ASSERT_TRUE(out.ok()) << out.status();
    HostTensor got = *ReadAs(*out, m("K, V"));
    const std::vector<double> want = HostGather(kTokens);
    for (int64_t p = 0; p < got.mapping().size(); ++p) ASSERT_EQ(*got.Get(p), want[p]) << "jit " << jit << " at " << p;
    bits.push_back(got.ToBits());
  }
  EXPECT_EQ(bits[0], bits[1]);
}

TEST_F(IndirectFetchTest, AnIndexOutsideTheRowsFailsTheOpOnBothBackends) {
  for (bool jit : {false, true}) {
    for (double bad : {12.0, -1.0}) {
      std::unique_ptr<Setup> run = Make(jit);
      Context& ctx = *run->ctx;
      DmTensor table = *Table(ctx, DType::kBF16, "W, V");
      DmTensor index = *IndexTensor(ctx, {3, 0, bad, 1, 2, 11});
      absl::StatusOr<DmTensor> out = Fetch(ctx, table, index, DType::kBF16, s_);
      ASSERT_FALSE(out.ok()) << "jit " << jit;
      EXPECT_EQ(out.status().code(), absl::StatusCode::kOutOfRange);
      EXPECT_THAT(out.status().message(),
                  HasSubstr(absl::StrCat("Indirect Access: index[K = 2] = ", bad, " is outside the rows 0..11 of W")));
    }
  }
}

TEST_F(IndirectFetchTest, ATracedProgramReplaysWithAnotherIndexOnBothBackends) {
  for (bool jit : {false, true}) {
    std::unique_ptr<Setup> run = Make(jit);
    Context& ctx = *run->ctx;
    DmTensor table = *Table(ctx, DType::kBF16, "W, V");
    DmTensor traced_index = *IndexTensor(ctx, kTokens);
    MappingScope& s = s_;
    absl::StatusOr<Program> program = Trace(
        [&s](Context& c, const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
          ASSIGN_OR_RETURN(DmTensor out, Fetch(c, DmTensor(in[0]), DmTensor(in[1]), DType::kBF16, s));
          return std::vector<DeviceTensor>{out};
        },
        {table, traced_index});
    ASSERT_TRUE(program.ok()) << program.status();
    // The same placement, other rows: the replay reads the index it is given.
    const std::vector<double> tokens = {1, 1, 10, 4, 9, 0};
    DmTensor index = *IndexTensor(ctx, tokens);
    Backend& backend = jit ? static_cast<Backend&>(*run->jit) : run->interp;
    absl::StatusOr<std::vector<DeviceTensor>> outs = Launch(*program, *run->device, backend, {table, index});
    ASSERT_TRUE(outs.ok()) << outs.status();
    HostTensor got = *ReadAs((*outs)[0], m("K, V"));
    const std::vector<double> want = HostGather(tokens);
    for (int64_t p = 0; p < got.mapping().size(); ++p) ASSERT_EQ(*got.Get(p), want[p]) << "jit " << jit << " at " << p;
  }
}

// ---- rules: each failure names Indirect Access --------------------------------------------------

class IndirectFetchRuleTest : public IndirectFetchTest {
 protected:
  // The status fetch_indirect leaves on a table laid out `element` with `index`.
  absl::Status Attempt(const DmTensor& table, const DmTensor& index, const std::string& axis,
                       const std::string& time, const std::string& packet) {
    return ctx_->main.begin(table.view())
        .fetch_indirect(table.dtype(), index, axis, m(time), m(packet))
        .commit(m("K, V"), 1 << 16)
        .status();
  }
  void SetUp() override { setup_ = Make(false); ctx_ = setup_->ctx.get(); }
  std::unique_ptr<Setup> setup_;
  Context* ctx_ = nullptr;
};

TEST_F(IndirectFetchRuleTest, TheIndexHoldsI32RowNumbers) {
  DmTensor table = *Table(*ctx_, DType::kI8, "W, V");
  DmTensor index = *IndexTensor(*ctx_, kTokens, DType::kF32);
  EXPECT_THAT(Attempt(table, index, "W", "K", "V").message(),
              HasSubstr("Indirect Access: the index tensor DmTensor<f32"));
  EXPECT_THAT(Attempt(table, index, "W", "K", "V").message(), HasSubstr("IndirectLoop offsets are i32 row numbers"));
}

TEST_F(IndirectFetchRuleTest, TheIndexLivesInDm) {
  DmTensor table = *Table(*ctx_, DType::kI8, "W, V");
  DmTensor index = *IndexTensor(*ctx_, kTokens, DType::kI32, "K", "1 # 256", /*spm=*/true);
  EXPECT_THAT(Attempt(table, index, "W", "K", "V").message(),
              HasSubstr("is in SPM; the Fetch Sequencer reads its offsets from DM"));
}

TEST_F(IndirectFetchRuleTest, TheIndexHasOneAxisNotTheTables) {
  DmTensor table = *Table(*ctx_, DType::kI8, "W, V");
  DmTensor two = *IndexTensor(*ctx_, std::vector<double>(12, 0), DType::kI32, "K, J");
  EXPECT_THAT(Attempt(table, two, "W", "K", "V").message(),
              HasSubstr("Indirect Access: the index tensor DmTensor<i32"));
  EXPECT_THAT(Attempt(table, two, "W", "K", "V").message(), HasSubstr("along exactly one axis"));
  std::vector<double> sixteen(16, 0);
  DmTensor by_v = *IndexTensor(*ctx_, sixteen, DType::kI32, "V");
  EXPECT_THAT(Attempt(table, by_v, "W", "V", "V").message(),
              HasSubstr("Indirect Access: the index axis `V` is also an axis of the table"));
}

TEST_F(IndirectFetchRuleTest, EverySliceOfTheTableHoldsTheIndex) {
  DmTensor table = *Table(*ctx_, DType::kI8, "W, V", "4 # 256");
  DmTensor index = *IndexTensor(*ctx_, kTokens);  // slice 0 only
  EXPECT_THAT(Attempt(table, index, "W", "K", "V").message(),
              HasSubstr("Indirect Access: Slice 1 holds rows of the table"));
}

TEST_F(IndirectFetchRuleTest, TheIndirectLoopIsTheOutermostTimeEntry) {
  DmTensor table = *Table(*ctx_, DType::kI8, "W, V");
  DmTensor index = *IndexTensor(*ctx_, kTokens);
  EXPECT_THAT(Attempt(table, index, "W", "V / 8, K", "V % 8").message(),
              HasSubstr("Indirect Access: the IndirectLoop is the Fetch Sequencer's outermost entry: Time `V / 8, K` "
                        "must start with the whole index axis `K`"));
  EXPECT_THAT(Attempt(table, index, "W", "K, W % 2", "V").message(),
              HasSubstr("are read only through the IndirectLoop"));
  EXPECT_THAT(Attempt(table, index, "W", "K", "V, K").message(),
              HasSubstr("the IndirectLoop is a Time entry"));
}

TEST_F(IndirectFetchRuleTest, TheRowsAreAnAxisOfTheElement) {
  DmTensor table = *Table(*ctx_, DType::kI8, "W, V");
  DmTensor index = *IndexTensor(*ctx_, kTokens);
  EXPECT_THAT(Attempt(table, index, "X", "K", "V").message(),
              HasSubstr("Indirect Access: the DM Element `W, V` has no axis `X`"));
}

TEST_F(IndirectFetchRuleTest, OneTableNotAnInterleavedPair) {
  DmTensor table = *Table(*ctx_, DType::kI8, "W, V");
  DmTensor index = *IndexTensor(*ctx_, kTokens);
  MappingScope s(*Axes::Parse("W = 12, V = 16, K = 6, I = 2"));
  absl::Status status = ctx_->main.begin_interleaved(s.m("I"), table.view(), table.view())
                            .fetch_indirect(DType::kI8, index, "W", s.m("K"), s.m("V"))
                            .commit(s.m("K, V"), 1 << 16)
                            .status();
  EXPECT_THAT(status.message(), HasSubstr("Indirect Access: fetch_indirect reads one table"));
}

// The planner's own rules, on stream shapes alone.
StreamShape Begin(const MappingScope& s, const std::string& slice, const std::string& element) {
  return StreamShape{DType::kI8, s.m("1"), s.m("1 # 2"), s.m(slice), s.m("1"), s.m(element), std::nullopt};
}

TEST(IndirectFetchPlan, TheRowsAreOneSequencerEntry) {
  MappingScope s(*Axes::Parse("W = 16, V = 32, K = 8"));
  absl::StatusOr<FetchStage> stage = PlanIndirectFetchStage(Begin(s, "1 # 256", "W / 4, V, W % 4"),
                                                            ContextKind::kMain, DType::kI8, "W",
                                                            Axis{"K", 8}, s.m("K, V"), s.m("1 # 8"));
  ASSERT_FALSE(stage.ok());
  EXPECT_THAT(stage.status().message(), HasSubstr("Indirect Access: the rows `W` are not one sequencer entry"));
}

TEST(IndirectFetchPlan, TheRowsLieWithinEachSlicesElement) {
  MappingScope s(*Axes::Parse("W = 16, V = 32, K = 8"));
  absl::StatusOr<FetchStage> stage = PlanIndirectFetchStage(Begin(s, "W # 256", "V"), ContextKind::kMain,
                                                            DType::kI8, "W", Axis{"K", 8}, s.m("K"), s.m("V"));
  ASSERT_FALSE(stage.ok());
  EXPECT_THAT(stage.status().message(), HasSubstr("Indirect Access: the table's rows `W` are spread over `W # 256`"));
}

TEST(IndirectFetchPlan, TheLimitIsAtMostTheIterationLimit) {
  MappingScope s(*Axes::Parse("W = 16, V = 32, K = 65537"));
  absl::StatusOr<FetchStage> stage = PlanIndirectFetchStage(Begin(s, "1 # 256", "W, V"), ContextKind::kMain,
                                                            DType::kI8, "W", Axis{"K", 65537}, s.m("K"), s.m("V"));
  ASSERT_FALSE(stage.ok());
  EXPECT_THAT(stage.status().message(),
              HasSubstr("Indirect Access: Iteration limit: the IndirectLoop's limit |K| = 65537 is over the 65536"));
  // 65,536 is allowed.
  MappingScope ok(*Axes::Parse("W = 16, V = 32, K = 65536"));
  EXPECT_TRUE(PlanIndirectFetchStage(Begin(ok, "1 # 256", "W, V"), ContextKind::kMain, DType::kI8, "W",
                                     Axis{"K", 65536}, ok.m("K"), ok.m("V"))
                  .ok());
}

// ---- visa seq --indirect -------------------------------------------------------------------

std::string Seq(cli::SeqOptions options, int& code) {
  std::ostringstream out, err;
  code = cli::RunSeq(options, out, err);
  return out.str() + err.str();
}

TEST(SeqIndirect, PrintsTheIndirectLoopEntry) {
  cli::SeqOptions o;
  o.axes = "W=16,V=32,K=8";
  o.buf = "W, V";
  o.time = "K";
  o.packet = "V";
  o.indirect = "W:K";
  int code = 0;
  EXPECT_EQ(Seq(o, code),
            "config: [(8, [index[K] x 32]), 32 : 1] : 32\n"
            "indirect: limit 8, offsets index[K] x 32 elements, rows W = 16\n"
            "contiguous_bytes: 32\naccess_bytes: 32\ncycles: 8\n");
  EXPECT_EQ(code, 0);
  o.labels = true;
  EXPECT_THAT(Seq(o, code), HasSubstr("config: [K -> (8, [index[K] x 32]), V -> 32 : 1] : 32\n"));
}

TEST(SeqIndirect, RefusesAWriteAndBadSyntaxAndBrokenRules) {
  cli::SeqOptions o;
  o.axes = "W=16,V=32,K=8";
  o.buf = "W, V";
  o.time = "K";
  o.packet = "V";
  o.indirect = "W:K";
  o.write = true;
  int code = 0;
  EXPECT_THAT(Seq(o, code), HasSubstr("error: --indirect is a fetch's IndirectLoop"));
  EXPECT_EQ(code, 2);
  o.write = false;
  o.indirect = "W";
  EXPECT_THAT(Seq(o, code), HasSubstr("error: --indirect takes ROWS:INDEX (e.g. W:K), got `W`"));
  o.indirect = "W:K";
  o.time = "V / 8, K";
  o.packet = "V % 8";
  EXPECT_THAT(Seq(o, code), HasSubstr("error: Indirect Access: the IndirectLoop is the Fetch Sequencer's outermost"));
  EXPECT_EQ(code, 2);
}

// ---- the samples ----------------------------------------------------------------------------

TEST(IndirectFetchSamples, MatchTheirHostReferencesAndAreIdenticalOnBothBackends) {
  for (const char* name : {"embedding_fetch", "embedding_fetch_strided", "gathered_matmul"}) {
    const samples::Sample* sample = samples::FindSample(name);
    ASSERT_NE(sample, nullptr) << name;
    interp::Interpreter interp;
    absl::StatusOr<samples::SampleRun> run = sample->Run(interp);
    ASSERT_TRUE(run.ok()) << name << ": " << run.status();
    EXPECT_FALSE(run->mismatch.has_value()) << name << ": " << *run->mismatch;
    std::ostringstream out, err;
    EXPECT_EQ(cli::CheckSampleCommand({.sample = name, .progress = false}, out, err), 0) << out.str() << err.str();
    EXPECT_EQ(out.str(), absl::StrCat(name, ": identical\n"));
  }
}

TEST(IndirectFetchSamples, EmbeddingFetchExplainsItsIndirectLoop) {
  interp::Interpreter interp;
  absl::StatusOr<samples::SampleRun> run = samples::FindSample("embedding_fetch")->Run(interp);
  ASSERT_TRUE(run.ok()) << run.status();
  const std::string text = run->program.ToText();
  // W = 16 rows of V = 32 i8: the row stride is 32 elements, one 32-byte packet per token.
  EXPECT_THAT(text, HasSubstr("fetch i8 -> i8 time [K] packet [V]\n    sequencer [K -> (8, [index[K] x 32]), "
                              "V -> 32 : 1] : 32\n    indirect IndirectLoop (limit 8, [offset0, offset1, ...] = "
                              "index[K] x 32 elements) gathers rows of W = 16 into K"));
  EXPECT_THAT(text, HasSubstr("contiguous 32 B, fetch_size 32 B, fetches_per_packet 1, cycles 8"));
}

}  // namespace
}  // namespace visa
