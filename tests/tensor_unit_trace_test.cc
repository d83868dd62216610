// What a Context records in its Program beyond single pipelines: DMA moves through ctx.tdma /
// ctx.pdma, commits into existing DM views, the commit slice bitmap, and Trace / Launch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "runtime/launch.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "tests/common/dm_input.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

class TensorUnitTraceTest : public ::testing::Test {
 protected:
  void Use(const std::string& axes) { scope_ = std::make_unique<MappingScope>(*Axes::Parse(axes)); }
  Mapping m(const std::string& text) { return scope_->m(text); }

  // An HBM tensor on chip 0 holding `host` (written directly, not through a context).
  HbmTensor Hbm(const HostTensor& host, int64_t address) {
    absl::StatusOr<Placement> placement =
        Place(*device_, host.dtype(), Tier::kHbm, {m("1"), host.mapping()}, address);
    EXPECT_TRUE(placement.ok()) << placement.status();
    absl::StatusOr<DeviceTensor> written = WriteAs(host, *device_, *placement);
    EXPECT_TRUE(written.ok()) << written.status();
    return HbmTensor(*written);
  }
  // A DM tensor holding `host` on every slice the mappings name.
  DmTensor Dm(const HostTensor& host, const std::string& slice, const std::string& element,
              int64_t address = 0, const std::string& cluster = "1 # 2") {
    return test::WriteDm(*device_, host, m(cluster), m(slice), m(element), address);
  }
  HostTensor Read(const DeviceTensor& t, const std::string& layout) { return *ReadAs(t, m(layout)); }

  std::unique_ptr<Device> device_ = std::make_unique<Device>(1);
  interp::Interpreter interp_;
  Context ctx_{*device_, interp_};
  std::unique_ptr<MappingScope> scope_;
};

TEST_F(TensorUnitTraceTest, DmaMovesAreRecordedInOrderWithPipelines) {
  Use("A = 4, B = 8");
  HostTensor in = *HostTensor::Random(DType::kI8, m("A, B"), 3);
  HbmTensor hbm = Hbm(in, 0);
  absl::StatusOr<DmTensor> dm = hbm.to_dm(ctx_.tdma, 0, m("1 # 2"), m("1 # 256"), m("A, B"));
  ASSERT_TRUE(dm.ok()) << dm.status();
  absl::StatusOr<DmTensor> out = ctx_.main.begin(dm->view())
                                     .fetch(DType::kI8, m("A"), m("B"))
                                     .collect(m("A"), m("B # 32"))
                                     .commit(m("A, B # 16"), 512);
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<HbmTensor> back = out->to_hbm(ctx_.tdma, 0x1000, m("A, B"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(Read(*back, "A, B").ToBits(), in.ToBits());

  const Program& program = ctx_.program();
  ASSERT_EQ(program.ops.size(), 3u);
  const auto* first = std::get_if<DmaOp>(&program.ops[0].body);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->context, ContextKind::kTdma);
  EXPECT_EQ(first->src.id, hbm.id());
  EXPECT_EQ(first->dst.id, dm->id());
  EXPECT_EQ(first->dst.text, dm->ToString());
  ASSERT_NE(std::get_if<PipelineOp>(&program.ops[1].body), nullptr);
  const auto* last = std::get_if<DmaOp>(&program.ops[2].body);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->src.id, out->id());
  EXPECT_EQ(last->dst.id, back->id());

  const std::string text = program.ToText();
  EXPECT_THAT(text, HasSubstr("op 0: dma tdma " + hbm.ToString() + " -> " + dm->ToString()));
  EXPECT_THAT(text, HasSubstr("op 1: pipeline main"));
  EXPECT_THAT(text, HasSubstr("op 2: dma tdma " + out->ToString() + " -> " + back->ToString()));
}

TEST_F(TensorUnitTraceTest, HostMovesAndFailedMovesThroughPdma) {
  Use("A = 4, B = 8");
  HostTensor in = *HostTensor::Random(DType::kI8, m("A, B"), 5);
  absl::StatusOr<HbmTensor> hbm = in.to_hbm(ctx_.pdma, 0, m("1"), m("A, B"));
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  // A refused move records nothing.
  EXPECT_FALSE(hbm->to_dm(ctx_.pdma, 0, m("1 # 2"), m("1 # 256"), m("A, B")).ok());
  absl::StatusOr<HostTensor> back = hbm->to_host(ctx_.pdma, m("B, A"));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(ctx_.program().ops.size(), 2u);
  EXPECT_THAT(ctx_.program().ToText(),
              HasSubstr("op 0: dma pdma HostTensor<i8, [A, B]> -> " + hbm->ToString()));
  EXPECT_THAT(ctx_.program().ToText(),
              HasSubstr("op 1: dma pdma " + hbm->ToString() + " -> HostTensor<i8, [B, A]>"));
}

TEST_F(TensorUnitTraceTest, CommitViewWritesTileHalvesOfOneTensor) {
  Use("A = 8, B = 8");
  HostTensor old = *HostTensor::Random(DType::kI8, m("A, B"), 11);
  DmTensor whole = Dm(old, "1 # 256", "A, B", 0x2000);
  HostTensor top = *HostTensor::Random(DType::kI8, m("A = 4, B"), 12);
  HostTensor bottom = *HostTensor::Random(DType::kI8, m("A = 4, B"), 13);
  DmTensor top_dm = Dm(top, "1 # 256", "A = 4, B", 0);
  DmTensor bottom_dm = Dm(bottom, "1 # 256", "A = 4, B", 0x100);
  absl::StatusOr<DmTensor> first = whole.tile(m("A"), 4, 0);
  absl::StatusOr<DmTensor> second = whole.tile(m("A"), 4, 4);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  auto pipeline = [&](const DmTensor& src) {
    return ctx_.main.begin(src.view()).fetch(DType::kI8, m("A = 4"), m("B")).collect(m("A = 4"), m("B # 32"));
  };

  absl::Status wrote = pipeline(top_dm).commit_view(*first);
  ASSERT_TRUE(wrote.ok()) << wrote;
  // The other half keeps its bytes.
  std::vector<uint32_t> want = old.ToBits();
  std::vector<uint32_t> top_bits = top.ToBits();
  std::copy(top_bits.begin(), top_bits.end(), want.begin());
  EXPECT_EQ(Read(whole, "A, B").ToBits(), want);

  wrote = pipeline(bottom_dm).commit_view(*second);
  ASSERT_TRUE(wrote.ok()) << wrote;
  std::vector<uint32_t> bottom_bits = bottom.ToBits();
  std::copy(bottom_bits.begin(), bottom_bits.end(), want.begin() + 32);
  EXPECT_EQ(Read(whole, "A, B").ToBits(), want);
  EXPECT_TRUE(whole.CheckReadable().ok());

  ASSERT_EQ(ctx_.program().ops.size(), 2u);
  const auto& op = std::get<PipelineOp>(ctx_.program().ops[1].body);
  EXPECT_EQ(op.output.id, whole.id());
  EXPECT_EQ(op.output.text, second->ToString());
  EXPECT_THAT(ctx_.program().ToText(), HasSubstr("commit element [" + second->element().ToString() + "]"));
}

TEST_F(TensorUnitTraceTest, CommitViewRules) {
  Use("A = 4, B = 8");
  HostTensor in = *HostTensor::Random(DType::kI8, m("A, B"), 17);
  DmTensor src = Dm(in, "1 # 256", "A, B", 0);
  auto pipeline = [&]() {
    return ctx_.main.begin(src.view()).fetch(DType::kI8, m("A"), m("B")).collect(m("A"), m("B # 32"));
  };
  DmTensor half_slices = Dm(in, "A # 256", "B", 0x1000);
  absl::Status slice = pipeline().commit_view(half_slices.view());
  ASSERT_FALSE(slice.ok());
  EXPECT_THAT(slice.message(), HasSubstr("the target's Slice must equal the stream's"));
  DmTensor other_cluster = Dm(in, "1 # 256", "A % 2, B", 0x1000, "A / 2");
  EXPECT_THAT(pipeline().commit_view(other_cluster.view()).message(),
              HasSubstr("the target's Cluster must equal the stream's"));
  HostTensor wide = *HostTensor::Random(DType::kI32, m("A, B"), 17);
  DmTensor i32 = Dm(wide, "1 # 256", "A, B", 0x1000);
  EXPECT_THAT(pipeline().commit_view(i32.view()).message(), HasSubstr("dtype i8 must equal"));
  // The Commit Engine's own rules apply to the view's Element.
  DmTensor transposed = Dm(in, "1 # 256", "B, A", 0x1000);
  EXPECT_THAT(pipeline().commit_view(transposed.view()).message(), HasSubstr("Packet fetch"));
  EXPECT_TRUE(ctx_.program().ops.empty());
}

TEST_F(TensorUnitTraceTest, SliceBitmapWritesOnlyEnabledSlices) {
  // Row A of the tensor lives on slice A; with only slice 0 enabled, slice 1 keeps zero.
  Use("A = 4, B = 8");
  HostTensor in = *HostTensor::Random(DType::kI8, m("A, B"), 19);
  DmTensor src = Dm(in, "A # 256", "B", 0);
  auto pipeline = [&]() {
    return ctx_.main.begin(src.view()).fetch(DType::kI8, m("1"), m("B")).collect(m("1"), m("B # 32"));
  };
  auto slice_bytes = [&](int slice, int64_t address) {
    std::vector<uint8_t> bytes(8);
    EXPECT_TRUE(device_->ReadDm(SliceId{0, 0, slice}, address, absl::MakeSpan(bytes)).ok());
    return bytes;
  };
  auto row = [&](int a) {
    std::vector<uint8_t> bytes;
    for (int b = 0; b < 8; ++b) bytes.push_back(static_cast<uint8_t>(in.ToBits()[a * 8 + b]));
    return bytes;
  };
  absl::StatusOr<DmTensor> out = pipeline().commit(m("B"), 0x800, SliceBitmap::Only({0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(slice_bytes(0, 0x800), row(0));
  EXPECT_EQ(slice_bytes(1, 0x800), std::vector<uint8_t>(8, 0));
  EXPECT_THAT(ctx_.program().ToText(), HasSubstr("slices: 1 of 256 [0]"));
  // With every slice enabled (the plain commit's behaviour) slice 1 receives its row.
  absl::StatusOr<DmTensor> all = pipeline().commit(m("B"), 0x900, SliceBitmap::All());
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(slice_bytes(1, 0x900), row(1));
  EXPECT_EQ(Read(*all, "A, B").ToBits(), in.ToBits());
  EXPECT_THAT(ctx_.program().ToText(), testing::Not(HasSubstr("slices: 256")));

  EXPECT_EQ(SliceBitmap::Only({0, 5}).ToString(), "slices: 2 of 256 [0, 5]");
  EXPECT_EQ(SliceBitmap::Only({1, 2, 3, 9}).ToString(), "slices: 4 of 256 [1-3, 9]");
  EXPECT_EQ(SliceBitmap::All().count(), 256);
  absl::StatusOr<DmTensor> bad = pipeline().commit(m("B"), 0x1000, SliceBitmap::Only({256}));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("Slice Bitmap: slice 256"));
}

TEST_F(TensorUnitTraceTest, TraceAndLaunchRecordTheSameProgram) {
  Use("A = 4, B = 8");
  HostTensor in = *HostTensor::Random(DType::kI8, m("A, B"), 23);
  Kernel kernel = [&](Context& ctx) -> absl::StatusOr<std::vector<DeviceTensor>> {
    absl::StatusOr<HbmTensor> hbm = in.to_hbm(ctx.pdma, 0, m("1"), m("A, B"));
    if (!hbm.ok()) return hbm.status();
    absl::StatusOr<DmTensor> dm = hbm->to_dm(ctx.tdma, 0, m("1 # 2"), m("1 # 256"), m("A, B"));
    if (!dm.ok()) return dm.status();
    absl::StatusOr<DmTensor> out = ctx.main.begin(dm->view())
                                       .fetch(DType::kI8, m("A"), m("B"))
                                       .collect(m("A"), m("B # 32"))
                                       .commit(m("A, B # 16"), 512);
    if (!out.ok()) return out.status();
    absl::StatusOr<HbmTensor> back = out->to_hbm(ctx.tdma, 0x1000, m("A, B"));
    if (!back.ok()) return back.status();
    return std::vector<DeviceTensor>{*back};
  };

  absl::StatusOr<Program> traced = Trace(kernel, 1);
  ASSERT_TRUE(traced.ok()) << traced.status();
  ASSERT_EQ(traced->ops.size(), 4u);

  Device device(1);
  interp::Interpreter interp;
  absl::StatusOr<LaunchResult> launched = Launch(device, interp, kernel);
  ASSERT_TRUE(launched.ok()) << launched.status();
  EXPECT_EQ(launched->program.ToText(), traced->ToText());
  EXPECT_EQ(launched->program.Hash(), traced->Hash());
  ASSERT_EQ(launched->outputs.size(), 1u);
  EXPECT_EQ(Read(launched->outputs[0], "A, B").ToBits(), in.ToBits());

  // A second launch on the same device starts from a fresh, empty Program.
  absl::StatusOr<LaunchResult> again = Launch(device, interp, kernel);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->program.ops.size(), 4u);

  // Errors pass through; a scratch device needs a valid chip count.
  Kernel failing = [](Context&) -> absl::StatusOr<std::vector<DeviceTensor>> {
    return absl::InvalidArgumentError("kernel rule");
  };
  EXPECT_THAT(Trace(failing, 1).status().message(), HasSubstr("kernel rule"));
  EXPECT_FALSE(Trace(kernel, 0).ok());
}

}  // namespace
}  // namespace visa
