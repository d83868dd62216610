// visa.h brings the whole kernel API: this file includes nothing of visa's but visa.h and uses each
// part a kernel writer reaches for (gather / scatter, indirect fetch, memset, parallel copy and
// asymmetric slice, chip shuffle, Launch / Trace, the recording and timing backends, Describe and
// the scheduler, .npy / .safetensors loading, a sample's input values, the cli entry). A header
// left out of visa.h fails to compile here.
#include <gtest/gtest.h>

#include <memory>

#include "visa.h"

namespace visa {
namespace {

// The value of `result`, failing the test (and stopping it) when it is an error.
#define VALUE_OR_FAIL(lhs, expr)                           \
  auto lhs##_or = (expr);                                  \
  ASSERT_TRUE(lhs##_or.ok()) << #expr << ": " << lhs##_or.status(); \
  auto& lhs = *lhs##_or

class VisaHeaderTest : public ::testing::Test {
 protected:
  Mapping m(const std::string& text) { return s_.m(text); }
  // [W, V] i8 from a seed, in DM on slice 0.
  absl::StatusOr<DmTensor> Table(Context& ctx) {
    absl::StatusOr<HostTensor> host = HostTensor::Random(DType::kI8, m("W, V"), 5);
    if (!host.ok()) return host.status();
    absl::StatusOr<HbmTensor> hbm = host->to_hbm(ctx.pdma, 0, m("1"), m("W, V"));
    if (!hbm.ok()) return hbm.status();
    return hbm->to_dm(ctx.tdma, 0, m("1 # 2"), m("1 # 256"), m("W, V"));
  }
  absl::StatusOr<DmTensor> Rows(Context& ctx, std::vector<double> rows) {
    absl::StatusOr<HostTensor> host = HostTensor::FromValues(DType::kI32, m("K"), rows);
    if (!host.ok()) return host.status();
    absl::StatusOr<HbmTensor> hbm = host->to_hbm(ctx.pdma, 1 << 20, m("1"), m("K"));
    if (!hbm.ok()) return hbm.status();
    return hbm->to_dm(ctx.tdma, 1 << 15, m("1 # 2"), m("1 # 256"), m("K"));
  }

  MappingScope s_{*Axes::Parse("W = 6, V = 16, K = 4")};
  interp::Interpreter interp_;
};

TEST_F(VisaHeaderTest, GatherScatterAndIndirectFetch) {
  Device device(1);
  Context ctx(device, interp_);
  VALUE_OR_FAIL(table, Table(ctx));
  VALUE_OR_FAIL(index, Rows(ctx, {5, 0, 2, 3}));
  const Destination rows_out{Tier::kDm, Address(1 << 16), {m("1"), m("1 # 2"), m("1 # 256"), m("K, V")}};
  VALUE_OR_FAIL(gathered, Gather(ctx.tdma, table, index, "W", rows_out));
  const Destination table_out{Tier::kDm, Address(1 << 17), {m("1"), m("1 # 2"), m("1 # 256"), m("W, V")}};
  VALUE_OR_FAIL(scattered, Scatter(ctx.tdma, gathered, index, table, "W", table_out));
  VALUE_OR_FAIL(back, ReadAs(scattered, m("W, V")));
  VALUE_OR_FAIL(original, ReadAs(table, m("W, V")));
  EXPECT_EQ(back.ToBits(), original.ToBits());  // the gathered rows scattered back where they came from
  VALUE_OR_FAIL(fetched, ctx.main.begin(table.view())
                             .fetch_indirect(DType::kI8, index, "W", m("K, V / 8"), m("V % 8"))
                             .collect(m("K, V / 8"), m("V % 8 # 32"))
                             .commit(m("K, V"), 1 << 18));
  VALUE_OR_FAIL(by_fetch, ReadAs(fetched, m("K, V")));
  VALUE_OR_FAIL(by_dma, ReadAs(gathered, m("K, V")));
  EXPECT_EQ(by_fetch.ToBits(), by_dma.ToBits());
}

TEST_F(VisaHeaderTest, MemsetAndParallelCopy) {
  Device device(1);
  Context ctx(device, interp_);
  VALUE_OR_FAIL(table, Table(ctx));
  ASSERT_TRUE(ctx.sub.memset(table.view(), 3).ok());
  VALUE_OR_FAIL(copy, ParallelCopy(ctx.sub, table, m("V / 8, W, V % 8"), 1 << 16));
  VALUE_OR_FAIL(host, ReadAs(copy, m("W, V")));
  for (double value : host.ToValues()) EXPECT_EQ(value, 3);
}

TEST_F(VisaHeaderTest, AsymmetricSliceAndChipShuffleOverChips) {
  MappingScope s = *MappingScope::Parse("A = 4, B = 4");
  Device device(4);
  Context ctx(device, interp_);
  VALUE_OR_FAIL(host, HostTensor::Iota(DType::kI8, s.m("A, B")));
  VALUE_OR_FAIL(hbm, host.to_hbm(ctx.pdma, 0, s.m("A"), s.m("B, 1 # 8")));
  VALUE_OR_FAIL(dm, hbm.to_dm(ctx.tdma, 0, s.m("A"), s.m("1 # 2"), s.m("1 # 256"), s.m("B, 1 # 8")));
  VALUE_OR_FAIL(diagonal, AsymmetricSlice(ctx.sub, dm, SliceLevel::kChip, "B", s.m("1 # 8"), {0, 1, 2, 3}, 1 << 16));
  VALUE_OR_FAIL(shuffled, ChipShuffle(ctx.tdma, diagonal, {1, 2, 3, 0}, 1 << 17));
  VALUE_OR_FAIL(chip0, ChipView(shuffled, 0));
  EXPECT_EQ(chip0.dtype(), DType::kI8);
  VALUE_OR_FAIL(back, shuffled.to_host(ctx, s.m("A")));
  // Chip c held element [c, c]; after the shuffle chip t holds chip t + 1's.
  for (int64_t chip = 0; chip < 4; ++chip) EXPECT_EQ(*back.Get(chip), ((chip + 1) % 4) * 5) << chip;
}

TEST_F(VisaHeaderTest, TraceDescribeScheduleRecordAndTime) {
  const Kernel kernel = [this](Context& ctx) -> absl::StatusOr<std::vector<DeviceTensor>> {
    absl::StatusOr<DmTensor> table = Table(ctx);
    if (!table.ok()) return table.status();
    absl::StatusOr<DmTensor> out = ctx.main.begin(table->view())
                                       .fetch(DType::kI8, m("W"), m("V"))
                                       .collect(m("W"), m("V # 32"))
                                       .commit(m("W, V"), 1 << 16);
    if (!out.ok()) return out.status();
    return std::vector<DeviceTensor>{*out};
  };
  VALUE_OR_FAIL(program, Trace(kernel));
  ASSERT_FALSE(program.ops.empty());
  const OpDescription description = Describe(program.ops.back());
  EXPECT_GT(description.cycles.value_or(0), 0);
  const Schedule schedule = MakeSchedule(program);
  EXPECT_EQ(schedule.ops.size(), program.ops.size());

  Device device(1);
  RecordingBackend recording(interp_);
  TimingBackend timing(recording);
  VALUE_OR_FAIL(launched, Launch(device, timing, kernel));
  EXPECT_EQ(launched.program.ops.size(), program.ops.size());
  EXPECT_FALSE(recording.records().empty());
  EXPECT_EQ(timing.times().size(), recording.records().size());
}

TEST_F(VisaHeaderTest, WeightsFilesLoad) {
  VALUE_OR_FAIL(host, HostTensor::Iota(DType::kBF16, m("W, V")));
  SafetensorsWriter writer;
  ASSERT_TRUE(writer.Add("w", host, m("W, V")).ok());
  const std::vector<uint8_t> safetensors_bytes = writer.Bytes();
  VALUE_OR_FAIL(file, SafetensorsFile::Parse(safetensors_bytes, "in memory"));
  VALUE_OR_FAIL(loaded, file.ToHost("w", m("W, V")));
  EXPECT_EQ(loaded, host);
  VALUE_OR_FAIL(npy_bytes, NpyBytes(host, m("W, V")));
  VALUE_OR_FAIL(npy, NpyFile::Parse(npy_bytes, "in memory"));
  VALUE_OR_FAIL(from_npy, npy.ToHost(m("W, V"), {.dtype = DType::kBF16}));
  EXPECT_EQ(from_npy, host);
}

TEST_F(VisaHeaderTest, SampleInputsAndTheCommandLineEntry) {
  VALUE_OR_FAIL(uniform, samples::MakeInput(DType::kI8, m("W, V"), samples::InputValues::Uniform(-2, 2), 1));
  for (double value : uniform.ToValues()) {
    EXPECT_GE(value, -2);
    EXPECT_LE(value, 2);
  }
  samples::Sample sample;
  sample.inputs = {samples::SampleInput{.name = "x", .element = "W, V"}};
  EXPECT_TRUE(sample.inputs_kernel == nullptr);
  int (*entry)(int, char**, std::vector<samples::Sample>, const cli::MainOptions&) = &cli::Main;
  EXPECT_NE(entry, nullptr);
}

}  // namespace
}  // namespace visa
