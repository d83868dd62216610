// Moves between chip views (runtime/chip_view.h) as run lists: a chip view's Chip level is
// `# c + Chip + # (chips - 1 - c)`, a left pad the normal form cannot invert; ForEachRun peels
// that outer padding (dsl/layout.cc) instead of walking every position of the device and building
// a per-index table of the source (which made the first chip shuffle of 1 MiB per chip take a
// minute). Checked against the per-position reference (Mapping::map / inverse), and guarded by
// FirstPositions::positions_swept: a chip shuffle sweeps no position on either backend.
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

#include "dsl/first_positions.h"
#include "dsl/index_matching.h"
#include "dsl/layout.h"
#include "dsl/mapping_parser.h"
#include "gtest/gtest.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/chip_shuffle.h"
#include "runtime/chip_view.h"
#include "runtime/device.h"
#include "runtime/host_tensor.h"
#include "runtime/tensor_unit.h"

namespace visa {
namespace {

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

// dst <- src position pairs from the run list.
Pairs RunPairs(const Mapping& dst, const Mapping& src, MatchRule rule, std::optional<int64_t>* unheld) {
  Pairs got;
  *unheld = ForEachRun(dst, src, rule, [&](absl::Span<const MoveRun> runs) {
    for (const MoveRun& r : runs) {
      for (int64_t i = 0; i < r.length; ++i) got.push_back({r.dst + i, r.src + i * r.src_stride});
    }
  });
  return got;
}

// The same, position by position: each live destination position reads the smallest source
// position holding its (matched) index.
Pairs ReferencePairs(const Mapping& dst, const Mapping& src, MatchRule rule, std::optional<int64_t>* unheld) {
  Pairs want;
  *unheld = std::nullopt;
  for (int64_t p = 0; p < dst.size(); ++p) {
    const Cell cell = dst.map(p);
    if (!cell.live()) continue;
    const std::optional<Index> matched = Match(cell.index, src, rule);
    const std::optional<int64_t> q = matched ? src.inverse(*matched) : std::nullopt;
    if (!q) {
      *unheld = p;
      return want;
    }
    want.push_back({p, *q});
  }
  return want;
}

TEST(ChipViewRuns, EqualThePerPositionReference) {
  MappingScope s = *MappingScope::Parse("A = 4, B = 24, C = 3");
  Device device(4);
  for (const char* element : {"B", "C, B / 3", "B # 32"}) {
    HbmTensor tensor = *HbmTensor::Create(device, DType::kI8, s.m("A"), s.m(element), 0);
    for (int64_t to = 0; to < 4; ++to) {
      for (int64_t from = 0; from < 4; ++from) {
        const Mapping dst = ChipView(tensor, to)->full_mapping();
        const Mapping src = ChipView(tensor, from)->full_mapping();
        for (MatchRule rule : {MatchRule::kByAxis, MatchRule::kByDigit}) {
          std::optional<int64_t> got_unheld, want_unheld;
          const Pairs got = RunPairs(dst, src, rule, &got_unheld);
          const Pairs want = ReferencePairs(dst, src, rule, &want_unheld);
          EXPECT_EQ(got, want) << element << ": chip " << from << " -> chip " << to;
          EXPECT_EQ(got_unheld, std::nullopt) << element;
          EXPECT_EQ(want_unheld, std::nullopt) << element;
          ASSERT_EQ(got.size(), 24u) << element;
          // Chip `to`'s block of the device reads chip `from`'s.
          const int64_t block = dst.size() / 4;
          EXPECT_EQ(got.front().first / block, to) << element;
          EXPECT_EQ(got.front().second / block, from) << element;
        }
        // Nothing read: the first position dropped is the view's first live one, chip `from`'s.
        const std::optional<int64_t> dropped = FirstDropped(src, [](int64_t) { return false; });
        ASSERT_TRUE(dropped.has_value());
        EXPECT_EQ(*dropped / (src.size() / 4), from) << element;
        EXPECT_TRUE(src.map(*dropped).live()) << element;
      }
    }
    tensor.Release();
  }
}

// A view whose indices the source does not hold stops where the reference stops, inside the
// destination chip's block (the peeled offset added back).
TEST(ChipViewRuns, AnUnheldIndexIsNamedAtItsDevicePosition) {
  MappingScope s = *MappingScope::Parse("A = 4, B = 24");
  Device device(4);
  HbmTensor every = *HbmTensor::Create(device, DType::kI8, s.m("A"), s.m("B"), 0);
  HbmTensor even = *HbmTensor::Create(device, DType::kI8, s.m("A"), s.m("B / 2"), 0x1000);  // B = 0, 2, ...
  const Mapping dst = ChipView(every, 2)->full_mapping();
  const Mapping src = ChipView(even, 1)->full_mapping();
  std::optional<int64_t> got_unheld, want_unheld;
  const Pairs got = RunPairs(dst, src, MatchRule::kByAxis, &got_unheld);
  const Pairs want = ReferencePairs(dst, src, MatchRule::kByAxis, &want_unheld);
  EXPECT_EQ(got, want);
  ASSERT_TRUE(want_unheld.has_value());
  EXPECT_EQ(got_unheld, want_unheld);
  EXPECT_EQ(*got_unheld, 2 * 24 + 1) << "B = 1 of chip 2's block, which the even source does not hold";
}

// A pipeline's part on one chip (mpi/chip_range_pipeline.h) has streams whose Chip level is the
// chip view's `# c + Chip + # n`, and the JIT groups a stream's chip, cluster and slice as its
// units, so the padded level sits inside a nested pair: `[[# c + Chip + # n], 1 # 2, ...], rest`.
// The peel descends the majors: the runs equal the reference, in both directions against the
// one-chip form (`Chip, ...`, what the JIT's contraction images hold), and no position is swept
// into a per-index table (before, such a move evaluated every position of the padded mapping, 95 %
// of a rank's CPU under mpirun with pipelines split by chip).
TEST(ChipViewRuns, NestedUnitsWithAPaddedChipLevelEqualTheReference) {
  MappingScope s = *MappingScope::Parse("Chip = 1, B = 64, E = 4");
  for (int64_t c = 0; c < 4; ++c) {
    const std::string chip = absl::StrCat("# ", c, " + Chip + # ", 3 - c);
    const Mapping units = s.m(absl::StrCat("[[", chip, "], 1 # 2, [E, B / 8] # 256], B % 8"));
    const Mapping one_chip = s.m("Chip, 1 # 2, [E, B / 8] # 256, B / 2 % 4, B % 2");
    const Mapping broadcast = s.m(absl::StrCat("[[", chip, "], 1 # 2, [B / 8] # 256], E, B % 8"));
    ASSERT_TRUE(units.ok() && one_chip.ok() && broadcast.ok()) << units.status() << one_chip.status();
    const std::pair<Mapping, Mapping> moves[] = {{units, one_chip}, {one_chip, units}, {broadcast, one_chip}};
    for (const auto& [dst, src] : moves) {
      for (MatchRule rule : {MatchRule::kByAxis, MatchRule::kByDigit}) {
        const int64_t swept = FirstPositions::positions_swept();
        std::optional<int64_t> got_unheld, want_unheld;
        const Pairs got = RunPairs(dst, src, rule, &got_unheld);
        EXPECT_EQ(FirstPositions::positions_swept(), swept) << "chip " << c << ": " << dst.ToString();
        const Pairs want = ReferencePairs(dst, src, rule, &want_unheld);
        EXPECT_EQ(got, want) << "chip " << c << ": " << dst.ToString() << " <- " << src.ToString();
        EXPECT_EQ(got_unheld, want_unheld) << "chip " << c;
        EXPECT_FALSE(got.empty()) << "chip " << c;
      }
    }
  }
}

// The regression guard: a chip shuffle's moves are planned from the views' digits, not from a
// table of every position (before the peel, each move swept the whole device's positions).
void ShuffleSweepsNoPosition(Backend& backend) {
  MappingScope s = *MappingScope::Parse("A = 4, B = 65536");
  Device device(4);
  Context ctx(device, backend);
  HostTensor host = *HostTensor::Random(DType::kI8, s.m("A, B"), 5);
  HbmTensor in = *host.to_hbm(ctx.pdma, 0, s.m("A"), s.m("B"));
  const int64_t swept = FirstPositions::positions_swept();
  absl::StatusOr<HbmTensor> out = ChipShuffle(ctx.tdma, in, {3, 0, 1, 2}, Address::Any());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(FirstPositions::positions_swept(), swept) << backend.name();
  HostTensor back = *out->to_host(ctx.pdma, s.m("A, B"));
  const std::vector<int64_t> pattern = {3, 0, 1, 2};
  for (int64_t target = 0; target < 4; ++target) {
    for (int64_t b = 0; b < 65536; b += 4099) {
      ASSERT_EQ(*back.Get(target * 65536 + b), *host.Get(pattern[target] * 65536 + b)) << backend.name();
    }
  }
}

TEST(ChipViewRuns, ShuffleSweepsNoPositionOnTheInterpreter) {
  interp::Interpreter interpreter;
  ShuffleSweepsNoPosition(interpreter);
}

TEST(ChipViewRuns, ShuffleSweepsNoPositionOnTheJit) {
  std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create({.threads = 1});
  ShuffleSweepsNoPosition(*jit);
}

}  // namespace
}  // namespace visa
