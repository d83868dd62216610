// The Tensor Unit pipeline through the Context API: position rules, every engine rule of the fetch,
// collect, commit and register-file pages as a negative test, and the adapter stages end to end.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/mapping_parser.h"
#include "interp/index_move.h"
#include "interp/interpreter.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "tests/common/dm_input.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

class TensorUnitTest : public ::testing::Test {
 protected:
  void Use(const std::string& axes) { scope_ = std::make_unique<MappingScope>(*Axes::Parse(axes)); }
  Mapping m(const std::string& text) { return scope_->m(text); }

  // A DM tensor holding `host` (whose mapping names the slice and element axes).
  DmTensor Dm(const HostTensor& host, const std::string& slice, const std::string& element,
              int64_t address = 0, const std::string& cluster = "1 # 2") {
    return test::WriteDm(*device_, host, m(cluster), m(slice), m(element), address);
  }
  HostTensor Random(DType dtype, const std::string& layout, uint64_t seed = 7) {
    return *HostTensor::Random(dtype, m(layout), seed);
  }
  HostTensor Read(const DeviceTensor& t, const std::string& layout) { return *ReadAs(t, m(layout)); }

  std::unique_ptr<Device> device_ = std::make_unique<Device>(1);
  interp::Interpreter interp_;
  Context ctx_{*device_, interp_};
  std::unique_ptr<MappingScope> scope_;
};

TEST_F(TensorUnitTest, FetchCollectCommitIsTheIdentityOnTheTensor) {
  Use("A = 4, B = 8");
  HostTensor in = Random(DType::kI8, "A, B");
  DmTensor dm = Dm(in, "1 # 256", "A, B");
  absl::StatusOr<DmTensor> out =
      ctx_.main.begin(dm.view()).fetch(DType::kI8, m("A"), m("B")).collect(m("A"), m("B # 32")).commit(m("A, B # 16"), 512);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Read(*out, "A, B").ToBits(), in.ToBits());
  ASSERT_EQ(ctx_.program().ops.size(), 1u);
  EXPECT_THAT(ctx_.program().ToText(), HasSubstr("commit element [A, B # 16]"));
  // Writing B innermost-strided would break the commit sequencer's packet rule.
  absl::StatusOr<DmTensor> transposed =
      ctx_.main.begin(dm.view()).fetch(DType::kI8, m("A"), m("B")).collect(m("A"), m("B # 32")).commit(m("B, A"), 1024);
  ASSERT_FALSE(transposed.ok());
  EXPECT_THAT(transposed.status().message(), HasSubstr("Packet fetch"));
}

TEST_F(TensorUnitTest, CallsOutOfPlaceNameWhatIsAllowed) {
  Use("A = 4, B = 8");
  DmTensor dm = Dm(Random(DType::kI8, "A, B"), "1 # 256", "A, B");
  absl::StatusOr<DmTensor> out = ctx_.main.begin(dm.view()).collect(m("A"), m("B # 32")).commit(m("A, B"), 512);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("`collect` is not allowed after Begin"));
  EXPECT_THAT(out.status().message(), HasSubstr("allowed here: fetch"));
  absl::StatusOr<DmTensor> early = ctx_.main.begin(dm.view()).fetch(DType::kI8, m("A"), m("B")).commit(m("A, B"), 512);
  ASSERT_FALSE(early.ok());
  EXPECT_THAT(early.status().message(), HasSubstr("`commit` is not allowed after Fetch"));
}

TEST_F(TensorUnitTest, FetchRules) {
  // (Cluster and Slice sizes are refused when the DM tensor is placed; see device_test.)
  Use("A = 4, B = 8");
  DmTensor dm = Dm(Random(DType::kI8, "A, B"), "1 # 256", "A, B", 0x1000);
  EXPECT_THAT(ctx_.main.begin(dm.view()).fetch(DType::kI8, m("A, B / 2"), m("B % 2")).status().message(),
              HasSubstr("Fetch output packet must be 8-byte aligned, got 2 bytes"));
  EXPECT_THAT(ctx_.main.begin(dm.view()).fetch(DType::kF32, m("A"), m("B")).status().message(),
              HasSubstr("Type Casting"));
  EXPECT_THAT(ctx_.main.begin(dm.view()).fetch(DType::kI8, m("A"), m("A # 8")).status().message(),
              HasSubstr("Fetch: cannot read"));
  std::vector<uint32_t> table(256, 0);
  EXPECT_THAT(ctx_.sub.begin(dm.view()).fetch_with_table(DType::kI8, table, m("A"), m("B")).status().message(),
              HasSubstr("table lookup is a main-context adapter stage"));
  EXPECT_THAT(ctx_.main.begin(dm.view()).fetch_with_table(DType::kI8, {1, 2}, m("A"), m("B")).status().message(),
              HasSubstr("needs 256 entries"));
}

TEST_F(TensorUnitTest, FetchCastWidensAndLimitsFetchSizeTo32OutputBytes) {
  // Fetch Engine > Type Casting: i8 -> i32 may fetch at most 8 bytes (32 output bytes) at once.
  Use("A = 4, B = 32");
  HostTensor in = Random(DType::kI8, "A, B");
  DmTensor dm = Dm(in, "1 # 256", "A, B");
  Stream fetched = ctx_.main.begin(dm.view()).fetch(DType::kI32, m("A"), m("B"));
  ASSERT_TRUE(fetched.status().ok()) << fetched.status();
  absl::StatusOr<DmTensor> out =
      std::move(fetched).collect(m("A, B / 8"), m("B % 8")).commit(m("A, B"), 0x1000);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ctx_.program().ToText(), HasSubstr("fetch_size 8 B, fetches_per_packet 4"));
  std::vector<double> want = in.ToValues();
  EXPECT_EQ(Read(*out, "A, B").ToValues(), want);
}

TEST_F(TensorUnitTest, ZeroPointSubtractionPerInterleavedTensor) {
  // Fetch Adapter > Zero-Point Subtraction: input [0..7] with zero points 100 and -100.
  Use("A = 8, I = 2");
  HostTensor in = *HostTensor::Iota(DType::kI8, m("A"));
  DmTensor lhs = Dm(in, "1 # 256", "A", 0);
  DmTensor rhs = Dm(in, "1 # 256", "A", 64);
  absl::StatusOr<DmTensor> out = ctx_.main.begin_interleaved(m("I"), lhs.view(), rhs.view())
                                     .fetch_with_zero_points(DType::kI32, 100, -100, m("I"), m("A"))
                                     .collect(m("I"), m("A"))
                                     .commit(m("I, A"), 0x1000);
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<double> want;
  for (int i = 0; i < 8; ++i) want.push_back(i - 100);
  for (int i = 0; i < 8; ++i) want.push_back(i + 100);
  EXPECT_EQ(Read(*out, "I, A").ToValues(), want);
}

TEST_F(TensorUnitTest, TableLookupAndMasking) {
  // Table Indexing: table[x] = 2x; Masking: A = 63 padded to 64 reads the pad value.
  Use("A = 8, M = 63");
  HostTensor in = *HostTensor::Iota(DType::kI8, m("A"));
  DmTensor dm = Dm(in, "1 # 256", "A");
  std::vector<uint32_t> table(256);
  for (uint32_t x = 0; x < 256; ++x) table[x] = (2 * x) & 0xff;
  absl::StatusOr<DmTensor> out = ctx_.main.begin(dm.view())
                                     .fetch_with_table(DType::kI8, table, m("1"), m("A"))
                                     .collect(m("1"), m("A # 32"))
                                     .commit(m("A"), 0x1000);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Read(*out, "A").ToValues(), (std::vector<double>{0, 2, 4, 6, 8, 10, 12, 14}));

  HostTensor big = Random(DType::kI8, "M");
  DmTensor masked_in = Dm(big, "1 # 256", "M", 0x2000);
  Stream masked = ctx_.main.begin(masked_in.view()).fetch_masked(DType::kI8, 0, m("1"), m("M # 64"));
  ASSERT_TRUE(masked.status().ok()) << masked.status();
  absl::StatusOr<DmTensor> stored =
      std::move(masked).collect(m("M # 64 / 32"), m("M # 64 % 32")).commit(m("M # 64"), 0x3000);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(Read(*stored, "M").ToValues(), big.ToValues());
}

TEST_F(TensorUnitTest, CollectRules) {
  Use("A = 8, B = 32");
  DmTensor dm = Dm(Random(DType::kBF16, "A, B"), "1 # 256", "A, B");
  auto fetched = [&] { return ctx_.main.begin(dm.view()).fetch(DType::kBF16, m("A"), m("B")); };
  // Collect Engine > Packet > 32 bytes: Time [A, B / 16], Packet [B % 16].
  EXPECT_TRUE(fetched().collect(m("A, B / 16"), m("B % 16")).status().ok());
  EXPECT_THAT(fetched().collect(m("A"), m("B % 16")).status().message(), HasSubstr("Collect time mismatch"));
  EXPECT_THAT(fetched().collect(m("A, B / 16"), m("B / 2")).status().message(),
              HasSubstr("Collect packet mismatch"));
  EXPECT_THAT(fetched().collect(m("A"), m("B")).status().message(),
              HasSubstr("Collect output packet must be exactly 32 bytes"));
}

TEST_F(TensorUnitTest, CommitRules) {
  Use("A = 4, B = 8, T = 2, C = 6");
  DmTensor dm = Dm(Random(DType::kI8, "A, B"), "1 # 256", "A, B");
  auto collected = [&](TensorUnit& unit, const std::string& time) {
    return unit.begin(dm.view()).fetch(DType::kI8, m(time), m("B")).collect(m(time), m("B # 32"));
  };
  // Example 2's key constraint: no broadcast during commit.
  EXPECT_THAT(collected(ctx_.main, "T, A").commit(m("A, B"), 0x1000).status().message(),
              HasSubstr("non-zero stride (no broadcast during commit)"));
  // Commit sequencer: strides are whole 8-byte units (A steps 12 bytes here).
  EXPECT_THAT(collected(ctx_.main, "A").commit(m("A, B # 12"), 0x1000).status().message(),
              HasSubstr("multiples of 8 bytes"));
  // commit_in_size must be 8, 16, 24 or 32 bytes: a 6-byte row cannot be written.
  DmTensor narrow = Dm(Random(DType::kI8, "A, C"), "1 # 256", "A, C # 8", 0x800);
  EXPECT_THAT(ctx_.main.begin(narrow.view())
                  .fetch(DType::kI8, m("A"), m("C # 8"))
                  .collect(m("A"), m("C # 32"))
                  .commit(m("A, C"), 0x1000)
                  .status()
                  .message(),
              HasSubstr("commit_in_size must be 8, 16, 24 or 32 bytes"));
  // Sub-context commits can only follow fetch: a cast in between is refused.
  HostTensor wide = Random(DType::kI32, "A, B");
  DmTensor wide_dm = Dm(wide, "1 # 256", "A, B", 0x2000);
  EXPECT_THAT(ctx_.sub.begin(wide_dm.view())
                  .fetch(DType::kI32, m("A"), m("B"))
                  .collect(m("A"), m("B"))
                  .cast(DType::kI8, m("B # 32"))
                  .commit(m("A, B"), 0x3000)
                  .status()
                  .message(),
              HasSubstr("Sub-context commits can only follow fetch"));
}

TEST_F(TensorUnitTest, CommitNeverWritesPastTheTensor) {
  // Kernel Examples, "Why dummy=23 Cannot Use 32-byte Commits": [B, A # 88] with 32-byte writes.
  Use("A = 65, B = 2");
  DmTensor dm = Dm(Random(DType::kI8, "B, A"), "1 # 256", "B, A # 96");
  absl::StatusOr<DmTensor> out = ctx_.main.begin(dm.view())
                                     .fetch(DType::kI8, m("[B, A # 96] / 32"), m("[B, A # 96] % 32"))
                                     .collect(m("[B, A # 96] / 32"), m("[B, A # 96] % 32"))
                                     .commit(m("B, A # 88"), 0x1000);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("must never exceed the tensor boundary"));
}

TEST_F(TensorUnitTest, ToTrfAndToVrfLoadTheRegisterFiles) {
  Use("A = 32, R = 2");
  HostTensor in = Random(DType::kBF16, "A");
  DmTensor dm = Dm(in, "1 # 256", "A");
  absl::StatusOr<TrfTensor> trf = ctx_.sub.begin(dm.view())
                                      .fetch(DType::kBF16, m("1"), m("A"))
                                      .collect(m("A / 16"), m("A % 16"))
                                      .to_trf(m("1"), m("A"), TrfAddress::kFull);
  ASSERT_TRUE(trf.ok()) << trf.status();
  EXPECT_EQ(Read(*trf, "A").ToBits(), in.ToBits());
  // Rows come from the outer part of Time.
  absl::StatusOr<TrfTensor> rows = ctx_.sub.begin(dm.view())
                                       .fetch(DType::kBF16, m("1"), m("A"))
                                       .collect(m("A / 16"), m("A % 16"))
                                       .to_trf(m("A / 16"), m("A % 16"), TrfAddress::kFirstHalf);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(Read(*rows, "A").ToBits(), in.ToBits());

  HostTensor ints = Random(DType::kI32, "A");
  DmTensor int_dm = Dm(ints, "1 # 256", "A", 0x1000);
  absl::StatusOr<VrfTensor> vrf = ctx_.sub.begin(int_dm.view())
                                      .fetch(DType::kI32, m("A / 8"), m("A % 8"))
                                      .collect(m("A / 8"), m("A % 8"))
                                      .to_vrf(m("A"), 0);
  ASSERT_TRUE(vrf.ok()) << vrf.status();
  EXPECT_EQ(Read(*vrf, "A").ToBits(), ints.ToBits());
}

TEST_F(TensorUnitTest, RegisterFileRules) {
  Use("A = 32, R = 2");
  DmTensor dm = Dm(Random(DType::kBF16, "A"), "1 # 256", "A");
  auto collected = [&](TensorUnit& unit) {
    return unit.begin(dm.view()).fetch(DType::kBF16, m("1"), m("A")).collect(m("A / 16"), m("A % 16"));
  };
  EXPECT_THAT(collected(ctx_.main).to_trf(m("1"), m("A")).status().message(),
              HasSubstr("loaded from the sub context"));
  EXPECT_THAT(collected(ctx_.sub).to_trf(m("R"), m("A % 16")).status().message(), HasSubstr("row mismatch"));
  EXPECT_THAT(collected(ctx_.sub).to_trf(m("1"), m("A % 16")).status().message(), HasSubstr("element mismatch"));
  EXPECT_THAT(collected(ctx_.sub).to_vrf(m("A"), 0).status().message(), HasSubstr("i32 or f32"));
  DmTensor ints = Dm(Random(DType::kI32, "A"), "1 # 256", "A", 0x1000);
  auto collected_ints = [&] {
    return ctx_.sub.begin(ints.view()).fetch(DType::kI32, m("A / 8"), m("A % 8")).collect(m("A / 8"), m("A % 8"));
  };
  EXPECT_THAT(collected_ints().to_vrf(m("A"), 8180).status().message(),
              HasSubstr("exceeds register file capacity (8192 bytes per slice)"));
  EXPECT_THAT(collected_ints().to_vrf(m("A % 8"), 0).status().message(), HasSubstr("element mismatch"));
  Use("A = 32, R = 3");
  EXPECT_THAT(collected(ctx_.sub).to_trf(m("R"), m("A")).status().message(),
              HasSubstr("Row::SIZE must be 1, 2, 4, or 8, got 3"));
}

TEST_F(TensorUnitTest, TrfHalfCapacity) {
  Use("A = 2048");
  DmTensor dm = Dm(Random(DType::kI32, "A"), "1 # 256", "A");
  absl::StatusOr<TrfTensor> trf = ctx_.sub.begin(dm.view())
                                      .fetch(DType::kI32, m("A / 8"), m("A % 8"))
                                      .collect(m("A / 8"), m("A % 8"))
                                      .to_trf(m("1"), m("A"), TrfAddress::kFirstHalf);
  ASSERT_FALSE(trf.ok());
  EXPECT_THAT(trf.status().message(), HasSubstr("exceeds the tensor register file capacity (4096 bytes per row"));
}

}  // namespace
}  // namespace visa
