// DMA descriptors of a move (dsl/dma_descriptor.h): the manual's DMA examples as configurations,
// the splits into several descriptors, and every descriptor walk checked against the move by index.
#include "dsl/dma_descriptor.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "dsl/index_matching.h"
#include "dsl/mapping_parser.h"
#include "gtest/gtest.h"

namespace visa {
namespace {

constexpr ElementBits kI8{8};

// One end with its chip level, its Element padded to `unit` positions.
struct End {
  std::string chip, element;
  MemoryTier tier = MemoryTier::kHbm;
  int64_t unit = 1 << 16;
  int64_t base = 0;
};

DmaSide SideOf(const MappingScope& s, const End& end) {
  DmaSide side;
  side.tier = end.tier;
  side.layout = Pair({s.m(end.chip), s.m(end.element).pad(end.unit)});
  side.chip_span = end.unit;
  side.base_bytes = end.base;
  return side;
}

struct Entry {
  int64_t size, stride;
};
std::vector<Entry> EntriesOf(const SequencerConfig& config) {
  std::vector<Entry> out;
  for (const SequencerEntry& e : config.entries) out.push_back({e.size, e.stride});
  return out;
}
bool operator==(const Entry& a, const Entry& b) { return a.size == b.size && a.stride == b.stride; }
std::ostream& operator<<(std::ostream& os, const Entry& e) { return os << e.size << " : " << e.stride; }

// Walks the descriptors' levels and checks, independently of the derivation, that every position
// written holds the index of the position read (the DMA rule, by axis), that no position is
// written twice and that every live destination position is written. "" or the first violation.
// The positions are the tier's: a side's first position (a chip view's chip) is added, and the
// layouts are those given (for a chip view, its full left-padded layout).
std::string CheckWalkOver(const DmaDescriptors& d, const Mapping& src_layout, const Mapping& dst_layout,
                          int64_t dst_live) {
  const std::vector<MoveLevel> levels = d.Levels();
  std::vector<int64_t> counter(levels.size(), 0);
  std::set<int64_t> written;
  while (true) {
    int64_t p = d.dst_first_position, q = d.src_first_position;
    for (size_t i = 0; i < levels.size(); ++i) {
      p += counter[i] * levels[i].dst_stride;
      q += counter[i] * levels[i].src_stride;
    }
    const Cell to = dst_layout.map(p);
    const Cell from = src_layout.map(q);
    if (!to.live()) return "writes destination padding at " + std::to_string(p);
    if (!from.live()) return "reads source padding at " + std::to_string(q);
    std::optional<Index> wanted = Match(to.index, src_layout, MatchRule::kByAxis);
    if (!wanted || !(*wanted == from.index)) {
      return "position " + std::to_string(p) + " holds " + to.ToString() + " but reads " + from.ToString();
    }
    if (!written.insert(p).second) return "writes " + std::to_string(p) + " twice";
    size_t i = 0;
    while (i < levels.size() && ++counter[i] == levels[i].count) counter[i++] = 0;
    if (i == levels.size()) break;
  }
  if (static_cast<int64_t>(written.size()) != dst_live) {
    return "writes " + std::to_string(written.size()) + " of " + std::to_string(dst_live) + " positions";
  }
  return "";
}
std::string CheckWalk(const DmaDescriptors& d, const DmaSide& src, const DmaSide& dst, int64_t dst_live) {
  return CheckWalkOver(d, src.layout, dst.layout, dst_live);
}

// Manual, "DMA Engine" > Example (Basic HBM-to-HBM Layout Transformation): NCHW at 1024 to HCNW at
// 2048, stream Time [H, C, N], Packet [W]; the pseudocode reads h * 8 + c * 64 + n * 192 and writes
// h * 96 + c * 32 + n * 8, packets of 8 bytes.
TEST(DmaDescriptor, ManualLayoutTransformation) {
  MappingScope s(*Axes::Parse("N = 4, C = 3, H = 8, W = 8"));
  const DmaSide src = SideOf(s, {"1", "N, C, H, W", MemoryTier::kHbm, 1 << 16, 1024});
  const DmaSide dst = SideOf(s, {"1", "H, C, N, W", MemoryTier::kHbm, 1 << 16, 2048});
  absl::StatusOr<DmaDescriptors> d = DeriveMoveDescriptors(src, dst, kI8);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->time, "H, C, N");
  EXPECT_EQ(d->packet, "W");
  EXPECT_EQ(EntriesOf(d->body.read), (std::vector<Entry>{{8, 8}, {3, 64}, {4, 192}, {8, 1}}));
  EXPECT_EQ(EntriesOf(d->body.write), (std::vector<Entry>{{8, 96}, {3, 32}, {4, 8}, {8, 1}}));
  EXPECT_EQ(d->body.packet_bytes, 8);
  EXPECT_EQ(d->count(), 1);
  EXPECT_TRUE(d->loops.empty());
  EXPECT_EQ(d->src_base_bytes, 1024);
  EXPECT_EQ(d->dst_base_bytes, 2048);
  const std::string text = d->ToText("");
  EXPECT_NE(text.find("read [H -> 8 : 8, C -> 3 : 64, N -> 4 : 192, W -> 8 : 1] : 8 HBM(chip 0)@1024"), std::string::npos)
      << text;
  EXPECT_NE(text.find("write [H -> 8 : 96, C -> 3 : 32, N -> 4 : 8, W -> 8 : 1] : 8 HBM(chip 0)@2048"), std::string::npos)
      << text;
  EXPECT_EQ(CheckWalk(*d, src, dst, 4 * 3 * 8 * 8), "");
}

// Manual, "DMA Engine" > Example 1 (HBM to HBM, [A, B, C] -> [B, A, C], C = 256 bytes): its table
// writes element (a, b, c) at 256 * a + 2048 * b + c. The stream chosen here walks the destination
// in order (Time [B, A]), so the read steps 256 and 2048 and the write 2048 and 256.
TEST(DmaDescriptor, ManualExample1WalksTheDestinationInOrder) {
  MappingScope s(*Axes::Parse("A = 8, B = 8, C = 256"));
  const DmaSide src = SideOf(s, {"1", "A, B, C", MemoryTier::kHbm, 1 << 16, 0});
  const DmaSide dst = SideOf(s, {"1", "B, A, C", MemoryTier::kHbm, 1 << 16, 16384});
  absl::StatusOr<DmaDescriptors> d = DeriveMoveDescriptors(src, dst, kI8);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->time, "B, A");
  EXPECT_EQ(d->packet, "C");
  EXPECT_EQ(EntriesOf(d->body.read), (std::vector<Entry>{{8, 256}, {8, 2048}, {256, 1}}));
  EXPECT_EQ(EntriesOf(d->body.write), (std::vector<Entry>{{8, 2048}, {8, 256}, {256, 1}}));
  EXPECT_EQ(d->body.packet_bytes, 256);
  EXPECT_EQ(CheckWalk(*d, src, dst, 8 * 8 * 256), "");
}

// Manual, "DMA Engine" > Example 3 (DM to DM, slices A / 4, [A % 4, B, C] -> [B, A % 4, C]): its
// write entries B -> 1024, A % 4 -> 256 and packet C = 256 bytes; its read steps B by 256 (the
// notes correct the manual's `1`) and A % 4 by 65536. Slices are whole units apart (512 KB here).
TEST(DmaDescriptor, ManualExample3DmToDm) {
  MappingScope s(*Axes::Parse("A = 256, B = 256, C = 256"));
  const int64_t slice = 512 * 1024;
  DmaSide src, dst;
  for (auto [side, element] : {std::pair{&src, "A % 4, B, C"}, std::pair{&dst, "B, A % 4, C"}}) {
    side->tier = MemoryTier::kDm;
    side->layout = Pair({s.m("1"), s.m("1 # 2"), s.m("A / 4 # 256"), s.m(element).pad(slice)});
    side->chip_span = 512 * slice;
  }
  dst.base_bytes = 4 * 256 * 256;
  absl::StatusOr<DmaDescriptors> d = DeriveMoveDescriptors(src, dst, kI8);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->time, "A / 4, B, A % 4");
  EXPECT_EQ(d->packet, "C");
  EXPECT_EQ(EntriesOf(d->body.read), (std::vector<Entry>{{64, slice}, {256, 256}, {4, 65536}, {256, 1}}));
  EXPECT_EQ(EntriesOf(d->body.write), (std::vector<Entry>{{64, slice}, {256, 1024}, {4, 256}, {256, 1}}));
  EXPECT_NE(d->ToText("").find("DM(chip 0)@262144"), std::string::npos);
}

// The AXI limit: a contiguous run of 8192 bytes is two packets of 4096 (stride0 <= 4096).
TEST(DmaDescriptor, PacketsStayWithinTheAxiLimit) {
  MappingScope s(*Axes::Parse("A = 8192"));
  const DmaSide src = SideOf(s, {"1", "A", MemoryTier::kHbm, 1 << 16, 0});
  const DmaSide dst = SideOf(s, {"1", "A", MemoryTier::kDm, 1 << 16, 0});
  absl::StatusOr<DmaDescriptors> d = DeriveMoveDescriptors(src, dst, kI8);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->packet, "A % 4096");
  EXPECT_EQ(d->body.packet_bytes, kMaxDmaPacketBytes);
  EXPECT_EQ(EntriesOf(d->body.read), (std::vector<Entry>{{2, 4096}, {4096, 1}}));
  EXPECT_TRUE(d->notes.empty());
  EXPECT_EQ(CheckWalk(*d, src, dst, 8192), "");
}

// A descriptor's media is one chip per side: a move across chips is one descriptor per chip.
TEST(DmaDescriptor, ChipEntriesBecomeOneDescriptorPerChip) {
  MappingScope s(*Axes::Parse("A = 8, C = 16"));
  const DmaSide src = SideOf(s, {"A / 4", "A % 4, C", MemoryTier::kHbm, 1024, 0});
  const DmaSide dst = SideOf(s, {"A % 2", "A / 2, C", MemoryTier::kHbm, 1024, 0});
  absl::StatusOr<DmaDescriptors> d = DeriveMoveDescriptors(src, dst, kI8);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_FALSE(d->loops.empty());
  for (const DmaLoop& loop : d->loops) EXPECT_NE(loop.why.find("one chip"), std::string::npos) << loop.why;
  EXPECT_EQ(d->count(), 4);
  for (const SequencerEntry& e : d->body.read.entries) EXPECT_LT(e.stride, 1024) << e.label;
  for (const SequencerEntry& e : d->body.write.entries) EXPECT_LT(e.stride, 1024) << e.label;
  EXPECT_EQ(CheckWalk(*d, src, dst, 2 * 4 * 16), "");
}

// Nine entries that merge on neither side: the outermost is a loop of descriptors.
TEST(DmaDescriptor, TheEntryLimitSplitsTheOutermostEntry) {
  MappingScope s(*Axes::Parse("A = 2, B = 2, C = 2, D = 2, E = 2, F = 2, G = 2, H = 2, I = 2"));
  const DmaSide src = SideOf(s, {"1", "A, B, C, D, E, F, G, H, I", MemoryTier::kHbm, 1 << 16, 0});
  const DmaSide dst = SideOf(s, {"1", "I, H, G, F, E, D, C, B, A", MemoryTier::kHbm, 1 << 16, 0});
  absl::StatusOr<DmaDescriptors> d = DeriveMoveDescriptors(src, dst, kI8);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->body.read.entries.size(), kMaxSequencerEntries);
  ASSERT_EQ(d->loops.size(), 1u);
  EXPECT_NE(d->loops[0].why.find("8 entries"), std::string::npos);
  EXPECT_EQ(d->count(), 2);
  EXPECT_EQ(CheckWalk(*d, src, dst, 512), "");
}

// A destination that holds copies along a digit of no axis: one descriptor per copy, reading the
// same source; a destination digit of an axis the source lacks is a stream term read with stride 0.
TEST(DmaDescriptor, DestinationBroadcasts) {
  MappingScope s(*Axes::Parse("A = 64, J = 4"));
  const DmaSide src = SideOf(s, {"1", "A", MemoryTier::kHbm, 1 << 16, 0});
  const DmaSide copies = SideOf(s, {"1", "4, A", MemoryTier::kDm, 1 << 16, 0});
  absl::StatusOr<DmaDescriptors> d = DeriveMoveDescriptors(src, copies, kI8);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->loops.size(), 1u);
  EXPECT_EQ(d->loops[0].read_stride, 0);
  EXPECT_EQ(d->loops[0].write_stride, 64);
  EXPECT_EQ(CheckWalk(*d, src, copies, 256), "");

  const DmaSide by_axis = SideOf(s, {"1", "J, A", MemoryTier::kDm, 1 << 16, 0});
  d = DeriveMoveDescriptors(src, by_axis, kI8);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->loops.empty());
  EXPECT_EQ(d->time, "J");
  EXPECT_EQ(EntriesOf(d->body.read), (std::vector<Entry>{{4, 0}, {64, 1}}));
  EXPECT_EQ(CheckWalk(*d, src, by_axis, 256), "");
}

// Live packets smaller than the 8-byte unit are described, with a note saying so (the runtime
// checks the rule on packets grown through the destination's padding).
TEST(DmaDescriptor, ShortPacketsIntoDmAreNoted) {
  MappingScope s(*Axes::Parse("A = 8, B = 3"));
  const DmaSide src = SideOf(s, {"1", "A, B", MemoryTier::kHbm, 1 << 16, 0});
  const DmaSide dst = SideOf(s, {"1", "A, B # 8", MemoryTier::kDm, 1 << 16, 0});
  absl::StatusOr<DmaDescriptors> d = DeriveMoveDescriptors(src, dst, kI8);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->packet, "B");
  ASSERT_EQ(d->notes.size(), 1u);
  EXPECT_NE(d->notes[0].find("8-byte"), std::string::npos) << d->notes[0];
  EXPECT_EQ(CheckWalk(*d, src, dst, 24), "");
}

// A layout without a digit form (a linear combination) has no descriptor; the error names the
// rule and the move runs element by element.
TEST(DmaDescriptor, NoDescriptorWithoutADigitForm) {
  MappingScope s(*Axes::Parse("A = 4, B = 4"));
  const DmaSide src = SideOf(s, {"1", "A, B", MemoryTier::kHbm, 1 << 16, 0});
  const DmaSide dst = SideOf(s, {"1", "$(A: 3, B: 1)", MemoryTier::kHbm, 1 << 16, 0});
  absl::StatusOr<DmaDescriptors> d = DeriveMoveDescriptors(src, dst, kI8);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("DMA descriptor"), std::string::npos) << d.status();
  EXPECT_NE(d.status().message().find("no digit form"), std::string::npos) << d.status();
}

// A chip view (runtime/chip_view.h): chip c of a 4-chip tensor, `# c + Chip + # (3 - c)` over one
// chip's positions. Its left pad has no digit form; the side starts c chips in instead.
struct ChipViewEnd {
  Mapping full;  // the view's layout over the tier's positions, the left pad included
  DmaSide side;
};
ChipViewEnd ChipViewOf(const MappingScope& s, int64_t chip, const std::string& below, MemoryTier tier, int64_t base) {
  const Mapping one = s.m("Chip").left_pad(chip).pad(4);
  const Mapping under = s.m(below);
  absl::StatusOr<DmaSide> side = MakeDmaSide(tier, one, under, base);
  EXPECT_TRUE(side.ok()) << side.status();
  return {Pair({one, under}), *side};
}

// The chip shuffle's moves: chip p's HBM part into chip t's, for every pair of chips; the
// descriptors address the two chips and the walk, from each side's first position, copies chip
// p's elements into chip t's positions.
TEST(DmaDescriptor, ChipViewsStartAtTheirChip) {
  MappingScope s(*Axes::Parse("Chip = 1, B = 16"));
  for (int64_t from = 0; from < 4; ++from) {
    for (int64_t to = 0; to < 4; ++to) {
      SCOPED_TRACE(testing::Message() << "chip " << from << " -> chip " << to);
      const ChipViewEnd src = ChipViewOf(s, from, "B # 65536", MemoryTier::kHbm, 0);
      const ChipViewEnd dst = ChipViewOf(s, to, "B # 65536", MemoryTier::kHbm, 0x8000);
      EXPECT_EQ(src.side.first_position, from * 65536);
      absl::StatusOr<DmaDescriptors> d = DeriveMoveDescriptors(src.side, dst.side, kI8);
      ASSERT_TRUE(d.ok()) << d.status();
      EXPECT_EQ(d->count(), 1);
      EXPECT_EQ(d->packet, "B");
      EXPECT_EQ(d->src_first_position, from * 65536);
      EXPECT_EQ(d->dst_first_position, to * 65536);
      const std::string text = d->ToText("");
      EXPECT_NE(text.find(absl::StrCat("HBM(chip ", from, ")@0")), std::string::npos) << text;
      EXPECT_NE(text.find(absl::StrCat("HBM(chip ", to, ")@32768")), std::string::npos) << text;
      EXPECT_EQ(CheckWalkOver(*d, src.full, dst.full, 16), "");
    }
  }
}

// A DM chip view (the asymmetric slice's and the shuffle's staging moves): Cluster and Slice
// below the Chip, the word of slice 0 of cluster 0 of chip 2 to chip 2's HBM and back.
TEST(DmaDescriptor, DmChipViewsToAndFromHbm) {
  MappingScope s(*Axes::Parse("Chip = 1, B = 8"));
  const int64_t unit = 512 * 1024;
  const ChipViewEnd dm = ChipViewOf(s, 2, absl::StrCat("1 # 2, 1 # 256, B # ", unit), MemoryTier::kDm, 0x1000);
  const ChipViewEnd hbm = ChipViewOf(s, 2, "B # 65536", MemoryTier::kHbm, 0);
  EXPECT_EQ(dm.side.first_position, 2 * 512 * unit);
  absl::StatusOr<DmaDescriptors> out = DeriveMoveDescriptors(dm.side, hbm.side, kI8);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NE(out->ToText("").find("DM(chip 2)@4096"), std::string::npos) << out->ToText("");
  EXPECT_EQ(CheckWalkOver(*out, dm.full, hbm.full, 8), "");
  absl::StatusOr<DmaDescriptors> back = DeriveMoveDescriptors(hbm.side, dm.side, kI8);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(CheckWalkOver(*back, hbm.full, dm.full, 8), "");
}

// The last chip's view has no right pad (`# 3 + Chip`): the same start.
TEST(DmaDescriptor, TheLastChipsViewHasOnlyALeftPad) {
  MappingScope s(*Axes::Parse("Chip = 1, B = 16"));
  const Mapping last = s.m("Chip").left_pad(3);
  ASSERT_EQ(last.size(), 4);
  absl::StatusOr<DmaSide> side = MakeDmaSide(MemoryTier::kHbm, last, s.m("B # 65536"), 0);
  ASSERT_TRUE(side.ok()) << side.status();
  EXPECT_EQ(side->first_position, 3 * 65536);
  const ChipViewEnd first = ChipViewOf(s, 0, "B # 65536", MemoryTier::kHbm, 0x8000);
  absl::StatusOr<DmaDescriptors> d = DeriveMoveDescriptors(*side, first.side, kI8);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(CheckWalkOver(*d, Pair({last, s.m("B # 65536")}), first.full, 16), "");
}

}  // namespace
}  // namespace visa
