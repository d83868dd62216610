// Uninitialized reads (issue 15, finding 5): the shadow bitmap, what marks device bytes written
// (host writes, DMA moves, commits, commit_view, to_trf, Launch), what the interpreter and the
// host read-back report (op, tier, unit, byte range, tensor), the warning and off modes, the
// padding the manual lets hardware read, and the JIT running on a tracking device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/launch.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "runtime/uninitialized_reads.h"
#include "runtime/written_bytes.h"
#include "samples/sample.h"
#include "tools/run_command.h"

namespace visa {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

// ---- The shadow bitmap ---------------------------------------------------------------------

TEST(WrittenBytes, MarksAndFindsAcrossWordsAndPages) {
  WrittenBytes bytes(int64_t{1} << 20);
  EXPECT_EQ(bytes.FirstUnwritten(0, 10), 0);
  EXPECT_EQ(bytes.resident_bytes(), 0);
  // A range crossing a 64-byte word and a 64 KiB page boundary.
  const int64_t page = 64 * 1024;
  bytes.Mark(page - 70, 100);
  EXPECT_EQ(bytes.FirstUnwritten(page - 70, 100), std::nullopt);
  EXPECT_EQ(bytes.FirstUnwritten(page - 71, 10), page - 71);
  EXPECT_EQ(bytes.FirstUnwritten(page - 70, 101), page + 30);
  EXPECT_EQ(bytes.FirstUnwritten(page + 29, 0), std::nullopt);  // an empty range holds nothing unwritten
  // Each page holds one run of marked bytes: no bitmap yet.
  EXPECT_EQ(bytes.resident_bytes(), 0);
  bytes.Mark(page + 30, 1);  // adjacent: the run grows
  EXPECT_EQ(bytes.resident_bytes(), 0);
  EXPECT_EQ(bytes.FirstUnwritten(page - 70, 101), std::nullopt);
  // A second run apart from the first: still runs, no bitmap.
  bytes.Mark(page - 1000, 10);
  bytes.Mark(page + 1000, 10);
  EXPECT_EQ(bytes.resident_bytes(), 0);
  EXPECT_EQ(bytes.FirstUnwritten(page - 1000, 1100), page - 990);
  EXPECT_EQ(bytes.FirstUnwritten(page - 70, 101), std::nullopt);
  EXPECT_EQ(bytes.FirstUnwritten(page + 31, 2000), page + 31);
  EXPECT_EQ(bytes.FirstUnwritten(page + 1000, 20), page + 1010);
}

TEST(WrittenBytes, APageMarkedInOneRunKeepsNoBitmap) {
  // What a small tensor in every slice leaves: one run per page, found by its ends.
  const int64_t page = 64 * 1024;
  WrittenBytes bytes(4 * page);
  for (int64_t unit = 0; unit < 4; ++unit) bytes.Mark(unit * page + 2048, 2048);
  EXPECT_EQ(bytes.resident_bytes(), 0);
  EXPECT_EQ(bytes.FirstUnwritten(page + 2048, 2048), std::nullopt);
  EXPECT_EQ(bytes.FirstUnwritten(page + 2047, 10), page + 2047);
  EXPECT_EQ(bytes.FirstUnwritten(page + 3000, 2000), page + 4096);
  EXPECT_EQ(bytes.FirstUnwritten(page + 4096, 1), page + 4096);
  // Runs that overlap or touch it, before or after, merge into it.
  bytes.Mark(page + 1000, 1100);
  bytes.Mark(page + 4096, 4);
  EXPECT_EQ(bytes.resident_bytes(), 0);
  EXPECT_EQ(bytes.FirstUnwritten(page, page), page);
  EXPECT_EQ(bytes.FirstUnwritten(page + 1000, page), page + 4100);
  // Grown to the whole page, it is complete.
  bytes.Mark(page, 1000);
  bytes.Mark(page + 4100, page - 4100);
  EXPECT_EQ(bytes.resident_bytes(), 0);
  EXPECT_EQ(bytes.FirstUnwritten(page, page), std::nullopt);
}

// Small tensors side by side in every slice leave a few runs per page: up to eight are kept as
// their ends, the ninth gives the page a bitmap (a bit per byte and its summary), and the marks
// read the same either way.
TEST(WrittenBytes, APageTakesABitmapOnlyPastEightRuns) {
  const int64_t page = 64 * 1024;
  WrittenBytes bytes(2 * page);
  for (int64_t r = 0; r < 8; ++r) bytes.Mark(r * 4096, 32);
  EXPECT_EQ(bytes.resident_bytes(), 0);
  for (int64_t r = 0; r < 8; ++r) {
    EXPECT_EQ(bytes.FirstUnwritten(r * 4096, 32), std::nullopt) << r;
    EXPECT_EQ(bytes.FirstUnwritten(r * 4096, 33), r * 4096 + 32) << r;
    if (r > 0) {
      EXPECT_EQ(bytes.FirstUnwritten(r * 4096 - 1, 2), r * 4096 - 1) << r;
    }
  }
  bytes.Mark(4096 + 32, 4096 - 32);  // joins runs 1 and 2: seven runs
  EXPECT_EQ(bytes.resident_bytes(), 0);
  EXPECT_EQ(bytes.FirstUnwritten(4096, 4096 + 32), std::nullopt);
  bytes.Mark(40000, 8);
  bytes.Mark(50000, 8);  // nine runs
  EXPECT_EQ(bytes.resident_bytes(), page / 8 + page / 64 / 8);
  EXPECT_EQ(bytes.FirstUnwritten(4096, 4096 + 32), std::nullopt);
  EXPECT_EQ(bytes.FirstUnwritten(3 * 4096, 40), 3 * 4096 + 32);
  EXPECT_EQ(bytes.FirstUnwritten(40000, 8), std::nullopt);
  EXPECT_EQ(bytes.FirstUnwritten(39999, 8), 39999);
  bytes.Mark(0, page);  // complete: the bitmap goes
  EXPECT_EQ(bytes.resident_bytes(), 0);
  EXPECT_EQ(bytes.FirstUnwritten(0, page), std::nullopt);
  EXPECT_EQ(bytes.FirstUnwritten(0, page + 1), page);
}

TEST(WrittenBytes, APageMarkedCompletelyKeepsNoBitmap) {
  const int64_t page = 64 * 1024;
  WrittenBytes bytes(4 * page);
  bytes.Mark(page, page);  // exactly one page
  EXPECT_EQ(bytes.resident_bytes(), 0);
  EXPECT_EQ(bytes.FirstUnwritten(page, page), std::nullopt);
  EXPECT_EQ(bytes.FirstUnwritten(page - 1, 2), page - 1);
  EXPECT_EQ(bytes.FirstUnwritten(page, page + 1), 2 * page);
  // Pieces that overlap and arrive out of order complete a page too; until then it has a bitmap
  // once they are more than one run.
  bytes.Mark(2 * page + 1000, 50000);
  bytes.Mark(2 * page + 999, 2);  // overlaps one marked byte: counted once
  EXPECT_EQ(bytes.resident_bytes(), 0);
  bytes.Mark(2 * page + 60000, 10);
  EXPECT_EQ(bytes.resident_bytes(), 0);  // two runs
  EXPECT_EQ(bytes.FirstUnwritten(2 * page, page), 2 * page);
  bytes.Mark(2 * page, 1000);
  EXPECT_EQ(bytes.FirstUnwritten(2 * page, page), 2 * page + 51000);
  bytes.Mark(2 * page + 51000, page - 51000);
  EXPECT_EQ(bytes.resident_bytes(), 0);
  EXPECT_EQ(bytes.FirstUnwritten(page, 2 * page), std::nullopt);
  // Marking a complete page again changes nothing.
  bytes.Mark(2 * page + 5, 7);
  EXPECT_EQ(bytes.resident_bytes(), 0);
  EXPECT_EQ(bytes.FirstUnwritten(0, 4 * page), 0);
  EXPECT_EQ(bytes.FirstUnwritten(page, 3 * page), 3 * page);
}

TEST(WrittenBytes, AShortLastPageCompletesAtTheMemorysEnd) {
  const int64_t page = 64 * 1024;
  WrittenBytes bytes(page + 100);
  bytes.Mark(page, 60);
  bytes.Mark(page + 60, 40);
  EXPECT_EQ(bytes.resident_bytes(), 0);
  EXPECT_EQ(bytes.FirstUnwritten(page, 100), std::nullopt);
  EXPECT_EQ(bytes.FirstUnwritten(page - 1, 101), page - 1);
}

TEST(WrittenBytes, WholeWordsAndPartialWordsAgreeWithAByteModel) {
  // Marks of every alignment against a byte-per-byte model (an independent host computation).
  const int64_t size = 3 * 64 * 1024 + 77;
  WrittenBytes bytes(size);
  std::vector<bool> model(size, false);
  uint64_t state = 12345;
  auto next = [&state](int64_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(bound));
  };
  for (int i = 0; i < 300; ++i) {
    const int64_t at = next(size);
    const int64_t length = next(std::min<int64_t>(size - at, i % 3 == 0 ? 70000 : 300) + 1);
    bytes.Mark(at, length);
    for (int64_t b = at; b < at + length; ++b) model[b] = true;
    const int64_t from = next(size);
    const int64_t span = next(size - from + 1);
    std::optional<int64_t> expected;
    for (int64_t b = from; b < from + span; ++b) {
      if (!model[b]) {
        expected = b;
        break;
      }
    }
    ASSERT_EQ(bytes.FirstUnwritten(from, span), expected) << "draw " << i;
  }
}

TEST(WrittenBytes, RemarkedRangesAndFullWordSummariesAgreeWithAByteModel) {
  // Word-aligned marks (the whole-word path and its summary of full words), repeated marks of the
  // same ranges, and unaligned marks completing words, against a byte model; every search checked.
  const int64_t page = 64 * 1024;
  const int64_t size = 2 * page + 4096 + 13;
  WrittenBytes bytes(size);
  std::vector<bool> model(size, false);
  uint64_t state = 777;
  auto next = [&state](int64_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(bound));
  };
  auto mark = [&](int64_t at, int64_t length) {
    bytes.Mark(at, length);
    for (int64_t b = at; b < at + length; ++b) model[b] = true;
  };
  auto check = [&](int64_t from, int64_t span) {
    std::optional<int64_t> expected;
    for (int64_t b = from; b < from + span; ++b) {
      if (!model[b]) {
        expected = b;
        break;
      }
    }
    return bytes.FirstUnwritten(from, span) == expected;
  };
  // A full first 4 KiB group, then a whole-word mark over it and a hole: the hole is marked.
  mark(0, 4096);
  mark(4096 + 1, 4095);
  ASSERT_TRUE(check(0, 8192));
  EXPECT_EQ(bytes.FirstUnwritten(0, 8192), 4096);
  mark(0, 8192);
  EXPECT_EQ(bytes.FirstUnwritten(0, 8192), std::nullopt);
  // A word completed by two unaligned marks counts as full for a later whole-word search.
  mark(8192 + 10, 54);
  mark(8192, 10);
  EXPECT_EQ(bytes.FirstUnwritten(8192, 128), 8192 + 64);
  for (int i = 0; i < 400; ++i) {
    int64_t at = next(size);
    int64_t length = next(std::min<int64_t>(size - at, 9000) + 1);
    if (i % 2 == 0) {  // aligned to whole words
      at = at / 64 * 64;
      length = std::min(size - at, length / 64 * 64);
    }
    mark(at, length);
    if (i % 5 == 0) mark(at, length);  // again: nothing changes
    const int64_t from = next(size);
    ASSERT_TRUE(check(from, next(size - from + 1))) << "draw " << i;
    const int64_t aligned = from / 64 * 64;
    ASSERT_TRUE(check(aligned, next(size - aligned + 1))) << "draw " << i;
  }
}

TEST(UninitializedReadsMode, ParsesTheThreeModesAndNamesThemWhenWrong) {
  EXPECT_EQ(*ParseUninitializedReads("error"), UninitializedReads::kError);
  EXPECT_EQ(*ParseUninitializedReads("WARN"), UninitializedReads::kWarn);
  EXPECT_EQ(*ParseUninitializedReads("off"), UninitializedReads::kOff);
  absl::StatusOr<UninitializedReads> bad = ParseUninitializedReads("zero");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), AllOf(HasSubstr("`zero` is not a mode"), HasSubstr("error"),
                                            HasSubstr("warn"), HasSubstr("off")));
  EXPECT_EQ(UninitializedReadsName(UninitializedReads::kWarn), "warn");
}

// ---- Kernels on the interpreter --------------------------------------------------------------

class UninitializedReadTest : public ::testing::Test {
 protected:
  void Use(const std::string& axes) { scope_ = std::make_unique<MappingScope>(*Axes::Parse(axes)); }
  Mapping m(const std::string& text) { return scope_->m(text); }

  // A fresh device and Context in `mode`; warnings are collected in warnings_.
  void Make(UninitializedReads mode) {
    DeviceOptions options;
    options.uninitialized_reads = mode;
    options.on_warning = [this](const std::string& warning) { warnings_.push_back(warning); };
    ctx_.reset();
    device_ = std::make_unique<Device>(1, options);
    ctx_ = std::make_unique<Context>(*device_, interp_);
  }
  void SetUp() override { Make(UninitializedReads::kError); }

  // A DM tensor on slice 0 written from the host.
  DmTensor Written(const HostTensor& host, const std::string& element, int64_t address,
                   const std::string& slice = "1 # 256") {
    absl::StatusOr<Placement> placement =
        Place(*device_, host.dtype(), Tier::kDm, {m("1"), m("1 # 2"), m(slice), m(element)}, address);
    EXPECT_TRUE(placement.ok()) << placement.status();
    absl::StatusOr<DeviceTensor> written = WriteAs(host, *device_, *placement);
    EXPECT_TRUE(written.ok()) << written.status();
    return DmTensor(*written);
  }
  // A DM tensor registered at an address without writing it (the manual's `from_addr`).
  DmTensor Unwritten(DType dtype, const std::string& element, int64_t address,
                     const std::string& slice = "1 # 256") {
    absl::StatusOr<DmTensor> t = DmTensor::Create(*device_, dtype, m("1"), m("1 # 2"), m(slice), m(element), address);
    EXPECT_TRUE(t.ok()) << t.status();
    return *t;
  }
  // fetch [packet] -> collect -> commit at 0x8000: the smallest kernel that reads DM.
  absl::StatusOr<DmTensor> Copy(const DmTensor& in, const std::string& packet = "A",
                                const std::string& flits = "") {
    return ctx_->main.begin(in)
        .fetch(in.dtype(), m("1"), m(packet))
        .collect(m("1"), m(flits.empty() ? packet + " # 32" : flits))
        .commit(m(packet), 0x8000);
  }

  std::unique_ptr<Device> device_;
  interp::Interpreter interp_;
  std::unique_ptr<Context> ctx_;
  std::unique_ptr<MappingScope> scope_;
  std::vector<std::string> warnings_;
};

TEST_F(UninitializedReadTest, FetchOfUnwrittenDmNamesOpTierUnitRangeAndTensor) {
  Use("A = 32");
  DmTensor in = Unwritten(DType::kI8, "A", 0x100);
  in.SetName("never_written");
  absl::StatusOr<DmTensor> out = Copy(in);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(out.status().message(),
              AllOf(HasSubstr("Uninitialized Read"), HasSubstr("the fetch of a main-context pipeline"),
                    HasSubstr("DM bytes [0x100, 0x101)"), HasSubstr("chip 0 cluster 0 slice 0"),
                    HasSubstr("element 0 (index {A=0})"), HasSubstr("`never_written`"),
                    HasSubstr("32 of its live elements are unwritten"), HasSubstr("kWarn")));
  // The failed op wrote nothing and left no tensor behind.
  EXPECT_THAT(warnings_, IsEmpty());
}

TEST_F(UninitializedReadTest, FirstUnwrittenElementOfAPartlyWrittenTensor) {
  // 16 bytes written through one tensor, then a 32-element tensor over the same bytes: elements
  // 16.. were never written, and the report names the first of them.
  Use("A = 32, B = 16");
  Written(*HostTensor::Random(DType::kI8, m("B"), 1), "B", 0x200);
  DmTensor in = Unwritten(DType::kI8, "A", 0x200);
  absl::StatusOr<DmTensor> out = Copy(in);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), AllOf(HasSubstr("DM bytes [0x210, 0x211)"), HasSubstr("element 16 (index {A=16})"),
                                            HasSubstr("16 of its live elements are unwritten")));
  // The written tile reads clean; the other tile is reported at its first element.
  ASSERT_TRUE(Copy(*in.view().tile(m("A"), 16, 0), "A = 16").ok());
  absl::StatusOr<DmTensor> upper = Copy(*in.view().tile(m("A"), 16, 16), "A = 16");
  ASSERT_FALSE(upper.ok());
  EXPECT_THAT(upper.status().message(), HasSubstr("element 16 (index {A=0})"));  // window index, tensor position
}

TEST_F(UninitializedReadTest, WarningModeReportsAndGoesOn) {
  Make(UninitializedReads::kWarn);
  Use("A = 32");
  DmTensor in = Unwritten(DType::kI8, "A", 0x100);
  absl::StatusOr<DmTensor> out = Copy(in);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_THAT(warnings_, SizeIs(1));
  EXPECT_THAT(warnings_[0], AllOf(HasSubstr("Uninitialized Read"), HasSubstr("DM bytes [0x100, 0x101)")));
  EXPECT_THAT(warnings_[0], Not(HasSubstr("kWarn")));  // the hint to warn belongs to the error only
  EXPECT_EQ(device_->warnings(), warnings_);
  // What the run read is what this memory holds when nothing wrote it: zero.
  EXPECT_EQ(ReadAs(*out, m("A"))->ToBits(), std::vector<uint32_t>(32, 0));
  // The output was written (with that data): reading it is not reported again.
  ASSERT_TRUE(Copy(*out).ok());
  EXPECT_THAT(warnings_, SizeIs(1));
}

TEST_F(UninitializedReadTest, OffModeHasNoShadowAndNoReport) {
  Make(UninitializedReads::kOff);
  Use("A = 32");
  Written(*HostTensor::Random(DType::kI8, m("A"), 1), "A", 0);
  EXPECT_EQ(device_->shadow_bytes(), 0);
  EXPECT_TRUE(Copy(Unwritten(DType::kI8, "A", 0x100)).ok());
  EXPECT_THAT(warnings_, IsEmpty());
  // Tracking has a shadow of what was written (a bitmap once a page holds more than eight runs).
  Make(UninitializedReads::kError);
  for (int k = 0; k < 9; ++k) {
    Written(*HostTensor::Random(DType::kI8, m("A"), k + 1), "A", 0x100 * k);
  }
  EXPECT_GT(device_->shadow_bytes(), 0);
}

TEST_F(UninitializedReadTest, HbmReadBackOfANeverWrittenTensor) {
  Use("A = 64");
  absl::StatusOr<HbmTensor> hbm = HbmTensor::Create(*device_, DType::kF32, m("1"), m("A"), 0x4000);
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  absl::StatusOr<HostTensor> back = hbm->to_host(ctx_->pdma, m("A"));
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(back.status().message(), AllOf(HasSubstr("Uninitialized Read: a pdma to_host reads HBM bytes [0x4000, "
                                                       "0x4004) on chip 0"),
                                             HasSubstr(hbm->name())));
  // A DMA move of it is the same read.
  absl::StatusOr<HbmTensor> copy = hbm->to_hbm(ctx_->tdma, 0x8000, m("A"));
  ASSERT_FALSE(copy.ok());
  EXPECT_THAT(copy.status().message(), HasSubstr("a tdma move reads HBM bytes [0x4000, 0x4004)"));
  // SPM is addressed in its own addresses (inside DM's top 64 KiB).
  absl::StatusOr<DmTensor> spm =
      DmTensor::Create(*device_, DType::kF32, m("1"), m("1 # 2"), m("1 # 256"), m("A"), 0x40, Tier::kSpm);
  ASSERT_TRUE(spm.ok()) << spm.status();
  absl::StatusOr<HbmTensor> from_spm = spm->to_hbm(ctx_->tdma, 0x8000, m("A"));
  ASSERT_FALSE(from_spm.ok());
  EXPECT_THAT(from_spm.status().message(), HasSubstr("a tdma move reads SPM bytes [0x40, 0x44) on chip 0 cluster 0 slice 0"));
  ASSERT_TRUE(WriteInto(*HostTensor::Random(DType::kF32, m("A"), 8), *spm).ok());
  EXPECT_TRUE(spm->to_hbm(ctx_->tdma, 0x8000, m("A")).ok());
}

TEST_F(UninitializedReadTest, WrittenThenReadKernelIsClean) {
  // Host -> HBM -> DM -> fetch / commit -> HBM -> host, every byte read written first: no report,
  // even as a warning, and the data goes round unchanged.
  Make(UninitializedReads::kWarn);
  Use("A = 8, B = 32");
  HostTensor host = *HostTensor::Random(DType::kBF16, m("A, B"), 3);
  absl::StatusOr<HbmTensor> hbm = host.to_hbm(ctx_->pdma, 0, m("1"), m("A, B"));
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  absl::StatusOr<DmTensor> dm = hbm->to_dm(ctx_->tdma, 0, m("1 # 2"), m("1 # 256"), m("A, B"));
  ASSERT_TRUE(dm.ok()) << dm.status();
  absl::StatusOr<DmTensor> out = ctx_->main.begin(*dm)
                                     .fetch(DType::kBF16, m("A"), m("B"))
                                     .collect(m("A, B / 16"), m("B % 16"))
                                     .commit(m("A, B"), 0x4000);
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<HbmTensor> back = out->to_hbm(ctx_->tdma, 0x10000, m("B, A"));
  ASSERT_TRUE(back.ok()) << back.status();
  absl::StatusOr<HostTensor> read = back->to_host(ctx_->pdma, m("A, B"));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->ToBits(), host.ToBits());
  EXPECT_THAT(warnings_, IsEmpty());
}

TEST_F(UninitializedReadTest, PaddingIsNeverReported) {
  Use("A = 20, B = 4");
  HostTensor host = *HostTensor::Random(DType::kI8, m("A"), 5);
  // A tensor's own `#` positions: the host writes only the 20 live bytes of `A # 32`; fetching the
  // padded packet reads the 12 padding bytes too.
  DmTensor padded = Written(host, "A # 32", 0);
  absl::StatusOr<DmTensor> copied = Copy(padded, "A # 32", "A # 32");
  ASSERT_TRUE(copied.ok()) << copied.status();
  // Packet padding beyond the data (manual, "Padding Packets": "Padding reads beyond the actual
  // data, but this is safe"): the 20-byte tensor fetched as 32-byte packets reads 12 bytes that
  // belong to no tensor and were never written.
  DmTensor exact = Written(host, "A", 0x1000);
  absl::StatusOr<DmTensor> out = Copy(exact, "A # 32", "A # 32");
  ASSERT_TRUE(out.ok()) << out.status();
  // DMA moves and the host read-back read live positions only: HBM `[B, A # 32]` written from
  // the host, moved to DM and read back.
  HostTensor rows = *HostTensor::Random(DType::kI8, m("B, A"), 6);
  absl::StatusOr<HbmTensor> hbm = rows.to_hbm(ctx_->pdma, 0, m("1"), m("B, A # 32"));
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  absl::StatusOr<DmTensor> dm = hbm->to_dm(ctx_->tdma, 0x3000, m("1 # 2"), m("1 # 256"), m("B, A # 32"));
  ASSERT_TRUE(dm.ok()) << dm.status();
  absl::StatusOr<HostTensor> back = hbm->to_host(ctx_->pdma, m("B, A"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToBits(), rows.ToBits());
}

TEST_F(UninitializedReadTest, InterleavedFetchNamesTheUnwrittenTensor) {
  Use("A = 8, I = 2");
  DmTensor lhs = Written(*HostTensor::Iota(DType::kI8, m("A")), "A", 0);
  DmTensor rhs = Unwritten(DType::kI8, "A", 64);
  rhs.SetName("rhs");
  absl::StatusOr<DmTensor> out = ctx_->main.begin_interleaved(m("I"), lhs.view(), rhs.view())
                                     .fetch(DType::kI8, m("I"), m("A"))
                                     .collect(m("I"), m("A # 32"))
                                     .commit(m("I, A"), 0x1000);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), AllOf(HasSubstr("DM bytes [0x40, 0x41)"), HasSubstr("`rhs`")));
}

TEST_F(UninitializedReadTest, CommitMarksOnlyItsEnabledSlices) {
  // Disabled slices keep what their DM held there: never written, so reading the new tensor
  // whole is reported at the first disabled slice.
  Use("A = 4, B = 32");
  DmTensor in = Written(*HostTensor::Random(DType::kI8, m("A, B"), 2), "B", 0, "A # 256");
  absl::StatusOr<DmTensor> out = ctx_->main.begin(in)
                                     .fetch(DType::kI8, m("1"), m("B"))
                                     .collect(m("1"), m("B"))
                                     .commit(m("B"), 0x400, SliceBitmap::Only({0, 2, 3}));
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<HbmTensor> back = out->to_hbm(ctx_->tdma, 0, m("A, B"));
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(back.status().message(),
              AllOf(HasSubstr("a tdma move reads DM bytes [0x400, 0x401) on chip 0 cluster 0 slice 1"),
                    HasSubstr("32 of its live elements are unwritten")));
}

TEST_F(UninitializedReadTest, CommitViewMarksOnlyItsWindow) {
  Use("A = 8, B = 8");
  DmTensor whole = Unwritten(DType::kI8, "A, B", 0x2000);
  DmTensor top = Written(*HostTensor::Random(DType::kI8, m("A = 4, B"), 12), "A = 4, B", 0);
  auto pipeline = [&](const DmTensor& src) {
    return ctx_->main.begin(src.view()).fetch(DType::kI8, m("A = 4"), m("B")).collect(m("A = 4"), m("B # 32"));
  };
  ASSERT_TRUE(pipeline(top).commit_view(*whole.tile(m("A"), 4, 0)).ok());
  // The upper half of `whole` was never written.
  absl::StatusOr<HbmTensor> back = whole.to_hbm(ctx_->tdma, 0, m("A, B"));
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(back.status().message(), AllOf(HasSubstr("DM bytes [0x2020, 0x2021)"), HasSubstr("index {A=4, B=0}"),
                                             HasSubstr("32 of its live elements are unwritten")));
  ASSERT_TRUE(pipeline(top).commit_view(*whole.tile(m("A"), 4, 4)).ok());
  EXPECT_TRUE(whole.to_hbm(ctx_->tdma, 0, m("A, B")).ok());
}

TEST_F(UninitializedReadTest, ContractionWithUnwrittenTrfWeights) {
  Use("A = 32, B = 32, C = 8");
  DmTensor x = Written(*HostTensor::Random(DType::kBF16, m("A, B"), 1), "A, B", 0);
  absl::StatusOr<TrfTensor> trf = TrfTensor::Create(*device_, DType::kBF16, m("1"), m("1 # 2"), m("1 # 256"), m("C"),
                                                    m("B"), TrfAddress::kFull);
  ASSERT_TRUE(trf.ok()) << trf.status();
  auto contract = [&](const TrfTensor& weights) {
    return ctx_->main.begin(x)
        .fetch(DType::kBF16, m("A, B / 16"), m("B % 16"))
        .collect(m("A, B / 16"), m("B % 16"))
        .align(m("A"), m("B"), weights)
        .contract(m("1"))
        .accumulate(m("A"), m("C"), AccumulationKind::kInterleaved)
        .commit(m("A, C"), 1 << 12);
  };
  absl::StatusOr<DmTensor> out = contract(*trf);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(),
              AllOf(HasSubstr("the TRF Sequencer (align's weights) reads TRF bytes [0x0, 0x2)"),
                    HasSubstr("chip 0 cluster 0 slice 0 row 0"), HasSubstr(trf->name())));
  // Weights loaded through to_trf are written.
  DmTensor w = Written(*HostTensor::Random(DType::kBF16, m("C, B"), 2), "C, B", 1 << 16);
  absl::StatusOr<TrfTensor> loaded = ctx_->sub.begin(w)
                                         .fetch(DType::kBF16, m("C, B / 16"), m("B % 16"))
                                         .collect(m("C, B / 16"), m("B % 16"))
                                         .to_trf(m("C"), m("B"));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(contract(*loaded).ok());
}

TEST_F(UninitializedReadTest, LaunchedProgramChecksItsInputsAndMarksItsOutputs) {
  Use("A = 32");
  DmTensor input = Written(*HostTensor::Random(DType::kI8, m("A"), 4), "A", 0);
  absl::StatusOr<Program> program = Trace(
      [&](Context& ctx, const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
        ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(DmTensor(in[0]))
                                           .fetch(DType::kI8, m("1"), m("A"))
                                           .collect(m("1"), m("A # 32"))
                                           .commit(m("A"), 0x8000));
        return std::vector<DeviceTensor>{out};
      },
      {input});
  ASSERT_TRUE(program.ok()) << program.status();
  // The program's input written by the host (WriteAs): the run is clean and its output readable.
  Device device(1);
  absl::StatusOr<Placement> placement = Place(device, DType::kI8, Tier::kDm, input.levels(), Address(0));
  ASSERT_TRUE(placement.ok());
  absl::StatusOr<DeviceTensor> written = WriteAs(*HostTensor::Random(DType::kI8, m("A"), 4), device, *placement);
  ASSERT_TRUE(written.ok());
  absl::StatusOr<std::vector<DeviceTensor>> outputs = Launch(*program, device, interp_, {*written});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  EXPECT_TRUE(CheckAllWritten((*outputs)[0], "a read-back").ok());
  // The same input registered but never written.
  Device fresh(1);
  absl::StatusOr<DmTensor> unwritten =
      DmTensor::Create(fresh, DType::kI8, m("1"), m("1 # 2"), m("1 # 256"), m("A"), Address(0));
  ASSERT_TRUE(unwritten.ok());
  absl::StatusOr<std::vector<DeviceTensor>> failed = Launch(*program, fresh, interp_, {*unwritten});
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(failed.status().message(), HasSubstr("Uninitialized Read: the fetch of a main-context pipeline"));
}

// ---- The JIT on a tracking device ------------------------------------------------------------

// The JIT does not check its reads, but what it writes is marked (by the Context, after each op),
// so the host reads its results back without a report.
TEST_F(UninitializedReadTest, JitWritesAreMarked) {
  absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create();
  ASSERT_TRUE(jit.ok()) << jit.status();
  Context ctx(*device_, **jit);
  Use("A = 8, B = 32");
  HostTensor host = *HostTensor::Random(DType::kI8, m("A, B"), 9);
  absl::StatusOr<HbmTensor> hbm = host.to_hbm(ctx.pdma, 0, m("1"), m("A, B"));
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  absl::StatusOr<DmTensor> dm = hbm->to_dm(ctx.tdma, 0, m("1 # 2"), m("1 # 256"), m("A, B"));
  ASSERT_TRUE(dm.ok()) << dm.status();
  absl::StatusOr<DmTensor> out = ctx.main.begin(*dm)
                                     .fetch(DType::kI8, m("A"), m("B"))
                                     .collect(m("A"), m("B"))
                                     .commit(m("A, B"), 0x4000, SliceBitmap::Only({0}));
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<HbmTensor> back = out->to_hbm(ctx.tdma, 0x10000, m("A, B"));
  ASSERT_TRUE(back.ok()) << back.status();
  absl::StatusOr<HostTensor> read = back->to_host(ctx.pdma, m("A, B"));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->ToBits(), host.ToBits());
}

// ---- The option through samples and `visa run` -----------------------------------------------

// A sample whose kernel fetches a DM tensor placed next to its input and never written.
samples::Sample ReadsUnwrittenMemory() {
  samples::Sample sample;
  sample.name = "reads_unwritten";
  sample.axes = "A = 32";
  sample.element = "A";
  sample.readback = "A";
  sample.kernel = [](Context& ctx, const DmTensor&, const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
    ASSIGN_OR_RETURN(DmTensor stale, DmTensor::Create(ctx.device(), DType::kI8, s.m("1"), s.m("1 # 2"), s.m("1 # 256"),
                                                      s.m("A"), 0x1000));
    return ctx.main.begin(stale).fetch(DType::kI8, s.m("1"), s.m("A")).collect(s.m("1"), s.m("A")).commit(s.m("A"), 0x2000);
  };
  sample.reference = [](const Index&, const HostTensor&) { return 0.0; };  // what unwritten memory reads as here
  return sample;
}

TEST(UninitializedReadSample, DeviceOptionsReachTheSamplesDevice) {
  const samples::Sample sample = ReadsUnwrittenMemory();
  interp::Interpreter interpreter;
  absl::StatusOr<samples::SampleRun> failed = sample.Run(interpreter);
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(failed.status().message(), HasSubstr("Uninitialized Read"));
  std::vector<std::string> warnings;
  DeviceOptions warn;
  warn.uninitialized_reads = UninitializedReads::kWarn;
  warn.on_warning = [&warnings](const std::string& w) { warnings.push_back(w); };
  absl::StatusOr<samples::SampleRun> warned = sample.Run(interpreter, warn);
  ASSERT_TRUE(warned.ok()) << warned.status();
  EXPECT_FALSE(warned->mismatch.has_value());
  EXPECT_THAT(warnings, SizeIs(1));
}

TEST(UninitializedReadCommand, RunFlagTakesTheThreeModes) {
  for (const char* mode : {"error", "warn", "off"}) {
    std::ostringstream out, err;
    EXPECT_EQ(cli::RunSampleCommand({.sample = "cast_i32_to_i8", .uninitialized = mode}, out, err), 0) << err.str();
    EXPECT_EQ(err.str(), "") << mode;  // the samples read only what they wrote
  }
  std::ostringstream out, err;
  EXPECT_EQ(cli::RunSampleCommand({.sample = "cast_i32_to_i8", .uninitialized = "zero"}, out, err), 2);
  EXPECT_THAT(err.str(), AllOf(HasSubstr("error: --uninitialized: "), HasSubstr("`zero` is not a mode")));
}

}  // namespace
}  // namespace visa
