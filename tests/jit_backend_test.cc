// The JIT backend: loop-nest derivation, bit-exact conversions, every sample identical to the
// interpreter, replayed programs and DMA, thread counts, the program cache, and its error messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>
#include <random>
#include <sstream>

#include "dsl/mapping_parser.h"
#include "interp/index_move.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "jit/move_nest.h"
#include "runtime/launch.h"
#include "runtime/scalar_convert.h"
#include "runtime/transfer.h"
#include "samples/sample.h"
#include "tests/integer_matmul_reference.h"
#include "tools/check_command.h"
#include "tools/run_command.h"

namespace visa::jit {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<JitBackend> NewJit(int threads = 2) {
  absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = threads});
  EXPECT_TRUE(jit.ok()) << jit.status();
  return *std::move(jit);
}

TEST(MoveNest, APermutationIsAStridedNest) {
  MappingScope s(*Axes::Parse("A = 4, B = 8"));
  std::optional<MoveNest> nest = DeriveMoveNest(s.m("B, A"), s.m("A, B"));
  ASSERT_TRUE(nest.has_value());
  // Destination digit A (weight 1) reads source stride 8; B (weight 4) reads stride 1.
  EXPECT_EQ(nest->ToString(), "[4 : 1 <- 8, 8 : 4 <- 1]");
  EXPECT_EQ(nest->elements(), 32);
}

TEST(MoveNest, PaddingIsSkippedAndContiguousLevelsMerge) {
  MappingScope s(*Axes::Parse("A = 4, B = 8"));
  std::optional<MoveNest> padded = DeriveMoveNest(s.m("A, B # 32"), s.m("A, B"));
  ASSERT_TRUE(padded.has_value());
  EXPECT_EQ(padded->ToString(), "[8 : 1 <- 1, 4 : 32 <- 8]");
  std::optional<MoveNest> same = DeriveMoveNest(s.m("A, B"), s.m("A, B"));
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(Simplify(*same, 1).ToString(), "[32 : 1 <- 1]");
  // Split digits that land on whole source digits: A / 2, B, A % 2 from A, B.
  std::optional<MoveNest> split = DeriveMoveNest(s.m("A / 2, B, A % 2"), s.m("A, B"));
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->ToString(), "[2 : 1 <- 8, 8 : 2 <- 1, 2 : 16 <- 16]");
}

TEST(MoveNest, BroadcastReadsStrideZeroAndStraddlingDigitsHaveNoNest) {
  MappingScope s(*Axes::Parse("A = 4, B = 8, X = 3"));
  std::optional<MoveNest> broadcast = DeriveMoveNest(s.m("X, A"), s.m("A"));
  ASSERT_TRUE(broadcast.has_value());
  EXPECT_EQ(broadcast->ToString(), "[4 : 1 <- 1, 3 : 4 <- 0]");
  // A / 3 steps A by 3: from the source digit A % 4 (placed outside A / 4) it would reach 6,
  // straddling that digit and A / 4.
  MappingScope t(*Axes::Parse("A = 12"));
  EXPECT_FALSE(DeriveMoveNest(t.m("A % 3, A / 3"), t.m("A % 4, A / 4")).has_value());
  // Against a contiguous A (the source's digits merge) the same destination is a nest.
  EXPECT_TRUE(DeriveMoveNest(t.m("A % 3, A / 3"), t.m("A / 4, A % 4")).has_value());
}

// A move run by the JIT (nest or run list) equals the interpreter's MoveByIndex.
void ExpectMoveLikeInterpreter(const std::string& axes, const std::string& dst, const std::string& src,
                               DType dtype, bool expect_nest) {
  MappingScope s(*Axes::Parse(axes));
  HostTensor in = *HostTensor::Random(dtype, s.m(src), 11);
  absl::StatusOr<HostTensor> want = interp::MoveByIndex(in, s.m(dst));
  ASSERT_TRUE(want.ok()) << want.status();
  for (int threads : {1, 2}) {
    absl::StatusOr<std::unique_ptr<KernelCache>> cache = KernelCache::Create(threads);
    ASSERT_TRUE(cache.ok()) << cache.status();
    std::vector<uint8_t> out(want->bytes().size(), 0);
    ASSERT_TRUE((*cache)->Move(s.m(dst), s.m(src), CopyOp(dtype), out.data(), s.m(dst).size(), in.bytes().data(),
                               in.size(), false).ok());
    EXPECT_EQ(out, want->bytes()) << dst << " <- " << src << " on " << threads << " threads";
    EXPECT_EQ(*(*cache)->IsNest(s.m(dst), s.m(src), false), expect_nest);
  }
}

TEST(JitMove, NestsAndRunListsMatchTheInterpreter) {
  ExpectMoveLikeInterpreter("A = 4, B = 8", "B, A", "A, B", DType::kI8, true);
  ExpectMoveLikeInterpreter("A = 4, B = 8", "B # 16, A", "A, B", DType::kF32, true);
  ExpectMoveLikeInterpreter("A = 5, B = 6", "B, A", "A, B", DType::kI4, true);
  ExpectMoveLikeInterpreter("A = 12", "A % 3, A / 3", "A % 4, A / 4", DType::kBF16, false);
  ExpectMoveLikeInterpreter("A = 65, B = 2", "[B, A # 72] / 24, [B, A # 72] % 24 # 32", "B, A # 72", DType::kI8, false);
}

// Moves match by digit: the source holds B / 2 only, so B % 2 broadcasts (the interpreter's
// MatchByDigit, dsl/index_matching.h), with stride 0 in the compiled nest.
TEST(JitMove, DigitsTheSourceLacksBroadcast) {
  MappingScope s(*Axes::Parse("A = 4, B = 8"));
  absl::StatusOr<std::unique_ptr<KernelCache>> cache = KernelCache::Create(1);
  ASSERT_TRUE(cache.ok());
  std::vector<uint8_t> src(16), dst(32);
  for (int i = 0; i < 16; ++i) src[i] = static_cast<uint8_t>(i + 1);
  absl::Status status =
      (*cache)->Move(s.m("A, B"), s.m("A, B / 2"), CopyOp(DType::kI8), dst.data(), 32, src.data(), 16, false).status();
  ASSERT_TRUE(status.ok()) << status;
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 8; ++b) EXPECT_EQ(dst[a * 8 + b], src[a * 4 + b / 2]) << a << " " << b;
  }
}

// Compiles `op` as a one-level move over `bits` and checks every result against the reference.
void ExpectConversionExact(ConversionStage stage, DType from, DType to, const std::vector<uint32_t>& bits) {
  absl::StatusOr<ElementOp> op = ConversionOp(stage, from, to);
  ASSERT_TRUE(op.ok()) << op.status();
  const int64_t n = static_cast<int64_t>(bits.size());
  MappingScope s(*Axes::Parse(absl::StrCat("A = ", n)));
  HostTensor in = *HostTensor::FromBits(from, s.m("A"), bits);
  absl::StatusOr<std::unique_ptr<KernelCache>> cache = KernelCache::Create(2);
  ASSERT_TRUE(cache.ok());
  std::vector<uint8_t> out(StorageBytes(to, n), 0);
  ASSERT_TRUE((*cache)->Move(s.m("A"), s.m("A"), *op, out.data(), n, in.bytes().data(), n, false).ok());
  HostTensor got = *HostTensor::FromBytes(to, s.m("A"), out);
  int failures = 0;
  for (int64_t i = 0; i < n && failures < 5; ++i) {
    const uint32_t want = *Convert(stage, from, to, bits[i]);
    if (*got.GetBits(i) != want) {
      ++failures;
      ADD_FAILURE() << Name(from) << " -> " << Name(to) << " of 0x" << std::hex << bits[i] << ": jit 0x"
                    << *got.GetBits(i) << ", reference 0x" << want;
    }
  }
}

std::vector<uint32_t> F32Patterns() {
  std::vector<uint32_t> bits = {0, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u, 1, 0x807fffffu,
                                0x7f7fffffu, 0x477fe000u, 0x477ff000u, 0x43e00000u, 0x43f00000u, 0x38800000u,
                                0x33800000u, 0x37800000u, 0x47800000u, 0x3f800001u, 0x3f808000u, 0x3f818000u};
  std::mt19937 rng(5);
  for (int i = 0; i < 200000; ++i) bits.push_back(rng());
  // Dense around the small exponents where subnormal codes and rounding carries live.
  for (uint32_t e = 96; e < 150; ++e) {
    for (int i = 0; i < 512; ++i) bits.push_back((e << 23) | (rng() & 0x807fffffu));
  }
  return bits;
}

std::vector<uint32_t> AllPatterns(int width) {
  std::vector<uint32_t> bits(size_t{1} << width);
  for (uint32_t i = 0; i < bits.size(); ++i) bits[i] = i;
  return bits;
}

TEST(JitConversions, CastEngineNarrowingsAreBitExact) {
  const std::vector<uint32_t> f32 = F32Patterns();
  for (DType to : {DType::kBF16, DType::kF16, DType::kF8E4M3, DType::kF8E5M2}) {
    ExpectConversionExact(ConversionStage::kCastEngine, DType::kF32, to, f32);
  }
  for (DType to : {DType::kI4, DType::kI8, DType::kI16}) {
    ExpectConversionExact(ConversionStage::kCastEngine, DType::kI32, to, f32);
  }
}

TEST(JitConversions, FetchCastsAreBitExactOnEveryPattern) {
  ExpectConversionExact(ConversionStage::kFetchCast, DType::kBF16, DType::kF32, AllPatterns(16));
  ExpectConversionExact(ConversionStage::kFetchCast, DType::kF16, DType::kF32, AllPatterns(16));
  ExpectConversionExact(ConversionStage::kFetchCast, DType::kF8E4M3, DType::kF32, AllPatterns(8));
  ExpectConversionExact(ConversionStage::kFetchCast, DType::kF8E5M2, DType::kF32, AllPatterns(8));
  ExpectConversionExact(ConversionStage::kFetchCast, DType::kI4, DType::kI32, AllPatterns(4));
  ExpectConversionExact(ConversionStage::kFetchCast, DType::kI8, DType::kI32, AllPatterns(8));
  ExpectConversionExact(ConversionStage::kFetchTableLookup, DType::kF8E5M2, DType::kBF16, AllPatterns(8));
}

TEST(JitConversions, AConversionNoStagePerformsIsRefusedWithTheRule) {
  absl::StatusOr<ElementOp> op = ConversionOp(ConversionStage::kCastEngine, DType::kI8, DType::kI32);
  ASSERT_FALSE(op.ok());
  EXPECT_THAT(op.status().message(), HasSubstr("Cast Engine"));
}

class JitSampleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(JitSampleTest, IdenticalToTheInterpreter) {
  std::ostringstream out, err;
  const int code = cli::CheckSampleCommand({.sample = GetParam()}, out, err);
  // samples_test checks the interpreter against the references; here only agreement counts.
  if (err.str().find(" on interp: ") != std::string::npos) GTEST_SKIP() << err.str();
  EXPECT_EQ(code, 0) << out.str() << err.str();
  EXPECT_EQ(out.str(), GetParam() + ": identical\n") << err.str();
}

std::vector<std::string> FastSamples() {
  std::vector<std::string> names;
  for (const samples::Sample& sample : samples::AllSamples()) {
    // The segmentation and convolution samples take seconds to minutes on either backend (set-up
    // and references); `visa check --all` covers them.
    if (sample.slow || sample.name == "fetch_commit_segmentation" || sample.name.rfind("conv2d", 0) == 0) continue;
    names.push_back(sample.name);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(All, JitSampleTest, ::testing::ValuesIn(FastSamples()),
                         [](const auto& info) { return info.param; });

TEST(JitCommands, RunOnTheJitPrintsTheOkLine) {
  std::ostringstream out, err;
  EXPECT_EQ(cli::RunSampleCommand({.sample = "transpose_engine", .backend = "jit"}, out, err), 0) << err.str();
  EXPECT_EQ(out.str(), "transpose_engine: ok (512 elements, max error 0)\n");
}

TEST(JitCommands, CheckNamesAnUnknownSample) {
  std::ostringstream out, err;
  EXPECT_EQ(cli::CheckSampleCommand({.sample = "nope"}, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("unknown sample `nope`"));
}

TEST(JitCommands, FirstDifferenceNamesOpPositionIndexAndBothValues) {
  // Two recordings of the same sample on the interpreter, one of them with a corrupted element.
  const samples::Sample* sample = samples::FindSample("transpose_engine");
  ASSERT_NE(sample, nullptr);
  interp::Interpreter a, b;
  RecordingBackend ra(a), rb(b);
  absl::StatusOr<samples::SampleRun> run = sample->Run(ra);
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(sample->Run(rb).ok());
  std::vector<RecordingBackend::Record> records = rb.records();
  HostTensor& image = *records[1].image;  // what the pipeline committed (after the input's DMA move)
  Index index;
  index.Set("C", 1);
  index.Set("F", 2);
  index.Set("E", 3);
  const int64_t p = image.mapping().inverse(index).value();
  ASSERT_TRUE(image.SetBits(p, (*image.GetBits(p) + 1) & 0xff).ok());
  std::optional<std::string> diff = FirstDifference(run->program, ra.records(), "interp", records, "jit");
  ASSERT_TRUE(diff.has_value());
  EXPECT_THAT(*diff, HasSubstr("op 2 (commit)"));  // op 0 host -> HBM, op 1 HBM -> DM
  EXPECT_THAT(*diff, HasSubstr("(chip 0, cluster 0, slice 0, element "));
  EXPECT_THAT(*diff, HasSubstr("{C=1, E=3, F=2}"));
  EXPECT_THAT(*diff, HasSubstr("interp 0x"));
  EXPECT_THAT(*diff, HasSubstr("jit 0x"));
}

// The JIT's fetches are the recorded Fetch Sequencer configurations walked as loop nests, not
// moves re-derived from the mappings; the padded packet of Example 1 (C # 8 over C = 2) is masked.
TEST(JitSequencer, FetchesWalkTheRecordedSequencerConfiguration) {
  for (const char* name : {"fetch_commit_permutation", "fetch_commit_tail_padding", "transpose_engine"}) {
    const samples::Sample* sample = samples::FindSample(name);
    ASSERT_NE(sample, nullptr) << name;
    absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = 2, .direct_pipelines = false});
    ASSERT_TRUE(jit.ok()) << jit.status();
    absl::StatusOr<samples::SampleRun> run = sample->Run(**jit);
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_FALSE(run->mismatch) << *run->mismatch;
    EXPECT_GT((*jit)->stats().sequencer_moves, 0) << name;
    EXPECT_EQ((*jit)->stats().derived_fetches, 0) << name;
  }
}

// Commits are the recorded Commit Sequencer configurations walked as loop nests (the time
// entries over whole stream packets, the packet entries over the committed part of each), with
// the interpreter's bytes; a commit the walk does not cover (a commit_view, disabled slices) is
// moved by index and counted.
TEST(JitSequencer, CommitsWalkTheRecordedSequencerConfiguration) {
  int64_t walked = 0, derived = 0;
  for (const samples::Sample& sample : samples::AllSamples()) {
    if (sample.slow) continue;
    absl::StatusOr<std::unique_ptr<JitBackend>> jit = JitBackend::Create({.threads = 2, .direct_pipelines = false});
    ASSERT_TRUE(jit.ok()) << jit.status();
    interp::Interpreter interpreter;
    RecordingBackend with_jit(**jit), with_interp(interpreter);
    absl::StatusOr<samples::SampleRun> run = sample.Run(with_jit);
    ASSERT_TRUE(run.ok()) << sample.name << ": " << run.status();
    EXPECT_FALSE(run->mismatch) << sample.name << ": " << *run->mismatch;
    ASSERT_TRUE(sample.Run(with_interp).ok()) << sample.name;
    EXPECT_EQ(FirstDifference(run->program, with_interp.records(), "interp", with_jit.records(), "jit"), std::nullopt)
        << sample.name;
    std::cout << sample.name << ": " << (*jit)->stats().sequencer_commits << " commits walked, "
              << (*jit)->stats().derived_commits << " moved by index\n";
    walked += (*jit)->stats().sequencer_commits;
    derived += (*jit)->stats().derived_commits;
  }
  EXPECT_GT(walked, 0);
  std::cout << "commits walked " << walked << ", moved by index " << derived << "\n";
}

// Data-movement pipelines (fetch, switch / collect / transpose, store) run as one move from the
// input's memory to the output's, with the same bytes as the interpreter; a pipeline with a cast
// or a contraction does not.
TEST(JitDirectPipelines, DataMovementRunsAsOneMoveBetweenMemories) {
  for (const char* name : {"fetch_commit_permutation", "fetch_commit_segmentation", "transpose_engine",
                           "switch_custom_broadcast", "switch_inter_transpose"}) {
    const samples::Sample* sample = samples::FindSample(name);
    ASSERT_NE(sample, nullptr) << name;
    std::unique_ptr<JitBackend> jit = NewJit();
    absl::StatusOr<samples::SampleRun> run = sample->Run(*jit);
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_FALSE(run->mismatch) << *run->mismatch;
    EXPECT_GT(jit->stats().direct_pipelines, 0) << name;
    EXPECT_EQ(jit->stats().sequencer_moves + jit->stats().derived_fetches, 0) << name;
  }
  const samples::Sample* cast = samples::FindSample("cast_i32_to_i8");
  std::unique_ptr<JitBackend> jit = NewJit();
  absl::StatusOr<samples::SampleRun> run = cast->Run(*jit);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->mismatch) << *run->mismatch;
  EXPECT_GT(jit->stats().staged_pipelines, 0);
}

// A traced program replayed with Launch: DMA moves and pipelines all run on the JIT.
TEST(JitLaunch, ReplayedProgramsMatchAndPreparedProgramsAreCachedByHash) {
  const samples::Sample* sample = samples::FindSample("switch_broadcast01");
  ASSERT_NE(sample, nullptr);
  interp::Interpreter interp;
  absl::StatusOr<samples::SampleRun> run = sample->Run(interp);
  ASSERT_TRUE(run.ok());
  std::unique_ptr<JitBackend> jit = NewJit();
  absl::StatusOr<double> first = jit->Prepare(run->program);
  ASSERT_TRUE(first.ok()) << first.status();
  const int64_t compiles = jit->stats().compiles;
  EXPECT_GT(compiles, 0);
  EXPECT_EQ(*jit->Prepare(run->program), 0.0);
  absl::StatusOr<samples::SampleRun> again = sample->Run(*jit);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->mismatch) << *again->mismatch;
  EXPECT_EQ(jit->stats().compiles, compiles);  // every kernel came from the cache
}

TEST(JitLaunch, OneAndTwoThreadsGiveTheSameBytes) {
  const samples::Sample* sample = samples::FindSample("switch_custom_broadcast");
  ASSERT_NE(sample, nullptr);
  std::unique_ptr<JitBackend> one = NewJit(1), two = NewJit(2);
  RecordingBackend r1(*one), r2(*two);
  absl::StatusOr<samples::SampleRun> run = sample->Run(r1);
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(sample->Run(r2).ok());
  EXPECT_EQ(FirstDifference(run->program, r1.records(), "1 thread", r2.records(), "2 threads"), std::nullopt);
}

TEST(JitLaunch, DmaMovesRunOnTheJit) {
  MappingScope s(*Axes::Parse("A = 8, B = 64"));
  auto device = std::make_unique<Device>(1);
  std::unique_ptr<JitBackend> jit = NewJit();
  Context ctx(*device, *jit);
  HostTensor host = *HostTensor::Random(DType::kBF16, s.m("A, B"), 3);
  absl::StatusOr<HbmTensor> hbm = host.to_hbm(ctx.pdma, 0, s.m("1"), s.m("A, B"));
  ASSERT_TRUE(hbm.ok());
  absl::StatusOr<DmTensor> dm = hbm->to_dm(ctx.tdma, 0, s.m("1 # 2"), s.m("A # 256"), s.m("B"));
  ASSERT_TRUE(dm.ok()) << dm.status();
  absl::StatusOr<HbmTensor> back = dm->to_hbm(ctx.tdma, 0x10000, s.m("B, A"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(ctx.tdma.last().elements, 512);
  EXPECT_EQ(ReadAs(*back, s.m("A, B"))->ToBits(), host.ToBits());
  EXPECT_GE(jit->stats().nest_moves, 2);
}

// `host` in slice 0's DM at `address` by way of HBM, its Element the host's layout.
DmTensor OnOneSlice(Context& ctx, const MappingScope& s, const HostTensor& host, int64_t address) {
  absl::StatusOr<HbmTensor> hbm = host.to_hbm(ctx.pdma, address, s.m("1"), host.mapping());
  EXPECT_TRUE(hbm.ok()) << hbm.status();
  absl::StatusOr<DmTensor> dm = hbm->to_dm(ctx.tdma, address, s.m("1 # 2"), s.m("1 # 256"), host.mapping());
  EXPECT_TRUE(dm.ok()) << dm.status();
  return *dm;
}

// x [A, K] in slice 0's DM contracted with w [R, K] through the TRF into [A, R], read back:
// fetched `flit` elements of K at a time, aligned as (`time`, `packet`).
HostTensor ContractOnOneSlice(Backend& backend, const MappingScope& s, DType type, const HostTensor& x,
                              const HostTensor& w, int flit, const std::string& time, const std::string& packet) {
  auto device = std::make_unique<Device>(1);
  Context ctx(*device, backend);
  DmTensor wd = OnOneSlice(ctx, s, w, 1 << 16), xd = OnOneSlice(ctx, s, x, 0);
  const std::string outer = absl::StrCat("K / ", flit), inner = absl::StrCat("K % ", flit);
  absl::StatusOr<TrfTensor> trf = ctx.sub.begin(wd.view())
                                      .fetch(type, s.m("R, " + outer), s.m(inner))
                                      .collect(s.m("R, " + outer), s.m(inner))
                                      .to_trf(s.m("R"), s.m("K"), TrfAddress::kFull);
  EXPECT_TRUE(trf.ok()) << trf.status();
  absl::StatusOr<DmTensor> out = ctx.main.begin(xd.view())
                                     .fetch(type, s.m("A, " + outer), s.m(inner))
                                     .collect(s.m("A, " + outer), s.m(inner))
                                     .align(s.m(time), s.m(packet), *trf)
                                     .contract(s.m("1"))
                                     .accumulate(s.m("A"), s.m("R"), AccumulationKind::kInterleaved)
                                     .commit(s.m("A, R"), 1 << 12);
  EXPECT_TRUE(out.ok()) << out.status();
  return *ReadAs(*out, s.m("A, R"));
}

// Zero-point (asymmetric quantized) contraction on the JIT: the i9 staging stream never reaches
// memory, and the i32 results equal sum (x - zp) * w computed on the host.
TEST(JitContraction, ZeroPointFetchIntoAContractionIsExact) {
  MappingScope s(*Axes::Parse("A = 8, K = 64, R = 8"));
  const int32_t zero_point = 5;
  auto device = std::make_unique<Device>(1);
  std::unique_ptr<JitBackend> jit = NewJit();
  Context ctx(*device, *jit);
  HostTensor x = *HostTensor::Random(DType::kI8, s.m("A, K"), 21);
  HostTensor w = *HostTensor::Random(DType::kI8, s.m("R, K"), 22);
  DmTensor wd = OnOneSlice(ctx, s, w, 1 << 16), xd = OnOneSlice(ctx, s, x, 0);
  absl::StatusOr<TrfTensor> trf = ctx.sub.begin(wd.view())
                                      .fetch(DType::kI8, s.m("R, K / 32"), s.m("K % 32"))
                                      .collect(s.m("R, K / 32"), s.m("K % 32"))
                                      .to_trf(s.m("R"), s.m("K"), TrfAddress::kFull);
  ASSERT_TRUE(trf.ok()) << trf.status();
  absl::StatusOr<DmTensor> out = ctx.main.begin(xd.view())
                                     .fetch_with_zero_point(DType::kI9, zero_point, s.m("A, K / 32"), s.m("K % 32"))
                                     .collect(s.m("A, K / 32"), s.m("K % 32"))
                                     .align(s.m("A"), s.m("K"), *trf)
                                     .contract(s.m("1"))
                                     .accumulate(s.m("A"), s.m("R"), AccumulationKind::kInterleaved)
                                     .commit(s.m("A, R"), 1 << 12);
  ASSERT_TRUE(out.ok()) << out.status();
  HostTensor got = *ReadAs(*out, s.m("A, R"));
  EXPECT_EQ(IntegerValues(got), IntegerMatmulReference(x, w, 8, 8, 64, zero_point));
}

// i8 x i8 sums by byte quads (vpdpbusd, which multiplies unsigned by signed bytes: the operand is
// stored biased by 128 and each sum starts at -128 * the sum of its weights): exact at the extremes
// of the type, -128 * -128 and 127 * -128 included, against a host loop and the interpreter.
TEST(JitContraction, IntegerSumsAreExactAtTheExtremesOfTheType) {
  MappingScope s(*Axes::Parse("A = 16, K = 128, R = 8"));
  auto run = [&](Backend& backend, const HostTensor& x, const HostTensor& w) {
    return ContractOnOneSlice(backend, s, DType::kI8, x, w, 32, "A, K / 64", "K % 64");
  };
  HostTensor x = *HostTensor::Random(DType::kI8, s.m("A, K"), 41);
  HostTensor w = *HostTensor::Random(DType::kI8, s.m("R, K"), 42);
  for (int k = 0; k < 128; ++k) {
    ASSERT_TRUE(x.Set(k, -128).ok());          // row a = 0: all -128
    ASSERT_TRUE(x.Set(128 + k, 127).ok());     // row a = 1: all 127
    ASSERT_TRUE(w.Set(k, -128).ok());          // row r = 0: all -128
    ASSERT_TRUE(w.Set(128 + k, k % 2 ? 127 : -128).ok());
  }
  std::unique_ptr<JitBackend> jit = NewJit();
  HostTensor got = run(*jit, x, w);
  EXPECT_EQ(jit->stats().fused_pipelines, 1);  // the lane kernel, not the stage-by-stage path
  interp::Interpreter interpreter;
  EXPECT_EQ(got.ToBits(), run(interpreter, x, w).ToBits());
  EXPECT_EQ(IntegerValues(got), IntegerMatmulReference(x, w, 16, 8, 128));
  EXPECT_EQ(*got.Get(0), 128.0 * 128 * 128);  // -128 * -128, 128 times
}

// The fused first tree level (fma) runs where a scan finds every product exact, and the plain tree
// where it does not (here products that overflow f32): the interpreter's bits either way.
TEST(JitContraction, FusedFirstLevelOnlyWhereProductsAreExact) {
  MappingScope s(*Axes::Parse("A = 32, K = 32, R = 8"));
  auto run = [&](Backend& backend, const HostTensor& x, const HostTensor& w) {
    return ContractOnOneSlice(backend, s, DType::kBF16, x, w, 16, "A", "K").ToBits();
  };
  HostTensor x = *HostTensor::Random(DType::kBF16, s.m("A, K"), 31);
  HostTensor w = *HostTensor::Random(DType::kBF16, s.m("R, K"), 32);
  interp::Interpreter interpreter;
  absl::StatusOr<std::unique_ptr<JitBackend>> created = JitBackend::Create({.threads = 2, .fma_first_level = true});
  ASSERT_TRUE(created.ok()) << created.status();
  std::unique_ptr<JitBackend> jit = *std::move(created);
  EXPECT_EQ(run(*jit, x, w), run(interpreter, x, w));
  EXPECT_EQ(jit->stats().fused_pipelines, 1);
  EXPECT_EQ(jit->stats().fma_pipelines, 1);
  // 2^100 * 2^100 overflows: the scan refuses the fused level, the plain tree gives infinities.
  ASSERT_TRUE(x.Set(5, 0x1p100).ok());
  ASSERT_TRUE(w.Set(5, 0x1p100).ok());  // the same k as x[0, 5]
  const std::vector<uint32_t> plain = run(*jit, x, w);
  EXPECT_EQ(plain, run(interpreter, x, w));
  EXPECT_EQ(jit->stats().fused_pipelines, 2);
  EXPECT_EQ(jit->stats().fma_pipelines, 1);
  EXPECT_NE(std::find(plain.begin(), plain.end(), 0x7f800000u), plain.end());  // +inf reached the output
}

}  // namespace
}  // namespace visa::jit
