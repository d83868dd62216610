// The DMA descriptors of a move: stream choice, the shared derivation, and the splits.
#include "dsl/dma_descriptor.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

// Entries kept unmerged while the stream is chosen: the pair is merged and split jointly below.
constexpr int kUnmergedEntries = 64;

absl::Status NoDescriptor(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("DMA descriptor: ", why, " (manual, \"DMA Engine\")"));
}

// A stream term: `axis / coef % live`.
struct Term {
  Axis axis;
  int64_t coef = 1;
  int64_t live = 1;
  Mapping mapping;
};

absl::StatusOr<Term> MakeTerm(const Axis& axis, int64_t coef, int64_t live) {
  ASSIGN_OR_RETURN(Mapping m, Mapping::Symbol(axis));
  if (coef > 1) m = m / coef;
  if (m.ok() && m.size() > live) m = m % live;
  RETURN_IF_ERROR(m.status());
  return Term{axis, coef, live, std::move(m)};
}

// The largest divisor of n that is at most `limit` (1 when none is larger).
int64_t LargestDivisorAtMost(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d) {
    if (n % d == 0) return d;
  }
  return 1;
}

// Splits a term into (outer, inner) with `inner` values in the inner one.
absl::StatusOr<std::pair<Term, Term>> SplitTerm(const Term& t, int64_t inner) {
  ASSIGN_OR_RETURN(Term outer_term, MakeTerm(t.axis, t.coef * inner, t.live / inner));
  ASSIGN_OR_RETURN(Term inner_term, MakeTerm(t.axis, t.coef, inner));
  return std::make_pair(std::move(outer_term), std::move(inner_term));
}

Mapping StreamOf(const std::vector<Term>& terms, size_t begin, size_t end) {
  std::vector<Mapping> parts;
  for (size_t i = begin; i < end; ++i) parts.push_back(terms[i].mapping);
  if (parts.empty()) return *Mapping::Broadcast(1);
  return Pair(parts);
}

// One entry of both sides.
struct JointEntry {
  int64_t size = 1;
  int64_t read = 0, write = 0;
  std::string label;
  bool packet = false;
};

// The axis and coefficient a projected mode steps. A destination digit of an axis the source
// lacks projects to a broadcast mode; it is still a stream term (read with stride 0), named by the
// destination digit it lies in. nullopt: a broadcast digit of the destination itself.
std::optional<std::pair<std::string, int64_t>> NamedDigit(const Layout& projected, const Layout& dst,
                                                          const LayoutMode& mode) {
  if (mode.axis >= 0) return std::make_pair(projected.axes()[mode.axis].name, mode.coef);
  for (const LayoutMode& m : dst.modes()) {
    if (m.axis < 0 || mode.weight < m.weight || mode.weight >= m.weight * m.extent || mode.weight % m.weight != 0) {
      continue;
    }
    return std::make_pair(dst.axes()[m.axis].name, m.coef * (mode.weight / m.weight));
  }
  return std::nullopt;
}

bool IsChipEntry(int64_t stride, int64_t span) { return stride != 0 && stride % span == 0; }

// Merges adjacent time entries both sides walk as one (manual: "when a configuration has more
// than 8 entries"), innermost pairs first.
void MergeJoint(std::vector<JointEntry>& entries) {
  for (size_t i = entries.size() - 1; i-- > 0 && entries.size() > kMaxSequencerEntries;) {
    JointEntry& outer = entries[i];
    const JointEntry& inner = entries[i + 1];
    if (outer.packet != inner.packet) continue;
    if (outer.read != inner.size * inner.read || outer.write != inner.size * inner.write) continue;
    outer.size *= inner.size;
    outer.read = inner.read;
    outer.write = inner.write;
    outer.label = absl::StrCat(outer.label, " * ", inner.label);
    entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  }
}

SequencerConfig SideOf(const std::vector<JointEntry>& entries, bool read) {
  SequencerConfig config;
  for (const JointEntry& e : entries) {
    config.entries.push_back({e.size, read ? e.read : e.write, e.label});
    if (e.packet) {
      ++config.packet_entries;
      config.packet_size *= e.size;
    }
  }
  return config;
}

std::string Media(MemoryTier tier, int64_t chip, int64_t address) {
  return absl::StrCat(MemoryTierName(tier), "(chip ", chip, ")@", address);
}

// `chip` without its left pad and the pad's size: `# c + E + # m` is (`E # (size - c)`, c).
std::pair<Mapping, int64_t> WithoutLeftPad(const Mapping& chip) {
  if (chip.kind() == Mapping::Kind::kLeftPad) {
    return {chip.inner().pad(chip.size() - chip.argument()), chip.argument()};
  }
  if (chip.kind() == Mapping::Kind::kPadding && chip.inner().kind() == Mapping::Kind::kLeftPad) {
    const Mapping& left = chip.inner();
    return {left.inner().pad(chip.size() - left.argument(), chip.pad_kind()), left.argument()};
  }
  return {chip, 0};
}

}  // namespace

absl::StatusOr<DmaSide> MakeDmaSide(MemoryTier tier, const Mapping& chip, const Mapping& below, int64_t base_bytes) {
  RETURN_IF_ERROR(chip.status());
  RETURN_IF_ERROR(below.status());
  auto [from_first, left] = WithoutLeftPad(chip);
  DmaSide side;
  side.tier = tier;
  side.layout = Pair({from_first, below});
  RETURN_IF_ERROR(side.layout.status());
  side.chip_span = below.size();
  side.base_bytes = base_bytes;
  side.first_position = left * side.chip_span;
  return side;
}

int64_t DmaDescriptors::count() const {
  int64_t n = 1;
  for (const DmaLoop& loop : loops) n *= loop.size;
  return n;
}

std::vector<MoveLevel> DmaDescriptors::Levels() const {
  std::vector<MoveLevel> levels;
  for (size_t i = body.read.entries.size(); i-- > 0;) {
    levels.push_back({body.read.entries[i].size, body.write.entries[i].stride, body.read.entries[i].stride});
  }
  for (size_t i = loops.size(); i-- > 0;) levels.push_back({loops[i].size, loops[i].write_stride, loops[i].read_stride});
  if (levels.empty()) levels.push_back({1, 0, 0});
  return levels;
}

std::string DmaDescriptors::ToText(const std::string& indent) const {
  std::string text = absl::StrCat(indent, "dma stream time [", time, "] packet [", packet, "], stride0 ",
                                  body.packet_bytes, " B, ", count(), count() == 1 ? " descriptor" : " descriptors", "\n");
  absl::StrAppend(&text, indent, "  read ", body.read.ToLabeledString(), " ",
                  Media(src_tier, src_first_position / src_chip_span, src_base_bytes), "\n");
  absl::StrAppend(&text, indent, "  write ", body.write.ToLabeledString(), " ",
                  Media(dst_tier, dst_first_position / dst_chip_span, dst_base_bytes), "\n");
  for (const DmaLoop& loop : loops) {
    absl::StrAppend(&text, indent, "  x", loop.size, " over ", loop.label, " (read +", loop.read_stride, ", write +",
                    loop.write_stride, "): ", loop.why, "\n");
  }
  for (const std::string& note : notes) absl::StrAppend(&text, indent, "  note: ", note, "\n");
  return text;
}

absl::StatusOr<DmaDescriptors> DeriveMoveDescriptors(const DmaSide& src, const DmaSide& dst, ElementBits element) {
  RETURN_IF_ERROR(src.layout.status());
  RETURN_IF_ERROR(dst.layout.status());
  const Layout dst_layout = Layout::Of(dst.layout);
  const Layout src_layout = Layout::Of(src.layout);
  if (!dst_layout.affine() || !src_layout.invertible()) {
    return NoDescriptor(absl::StrCat("the move `", src.layout.ToString(), "` -> `", dst.layout.ToString(),
                                     "` has no digit form (a sequencer walks digits); it runs element by element"));
  }
  std::optional<Layout> projected = Project(dst_layout, src_layout, MatchRule::kByAxis);
  if (!projected) {
    return NoDescriptor(absl::StrCat("the destination `", dst.layout.ToString(), "` splits a digit of the source `",
                                     src.layout.ToString(), "` so that no stream term is one entry of both"));
  }
  DmaDescriptors d;
  d.src_tier = src.tier;
  d.dst_tier = dst.tier;
  d.bits = element.bits;
  d.src_chip_span = src.chip_span;
  d.dst_chip_span = dst.chip_span;
  d.src_base_bytes = src.base_bytes;
  d.dst_base_bytes = dst.base_bytes;
  d.src_first_position = src.first_position;
  d.dst_first_position = dst.first_position;

  // The stream: the projected destination digits, outermost first; digits that hold copies and
  // name no axis cannot be a stream term (the write sequencer steps 0 over an axis its buffer
  // lacks), so each copy is a descriptor of its own.
  std::vector<Axis> axes = src.layout.symbols();
  for (const Axis& a : dst.layout.symbols()) {
    if (std::find_if(axes.begin(), axes.end(), [&](const Axis& b) { return b.name == a.name; }) == axes.end()) {
      axes.push_back(a);
    }
  }
  std::vector<Term> terms;
  const std::vector<LayoutMode>& modes = projected->modes();
  for (auto it = modes.rbegin(); it != modes.rend(); ++it) {
    if (it->live <= 1) continue;
    std::optional<std::pair<std::string, int64_t>> named = NamedDigit(*projected, dst_layout, *it);
    if (!named) {
      d.loops.push_back({it->live, 0, it->weight, absl::StrCat("broadcast ", it->live),
                         "the destination holds copies along a digit no stream term names"});
      continue;
    }
    auto axis = std::find_if(axes.begin(), axes.end(), [&](const Axis& a) { return a.name == named->first; });
    VISA_CHECK(axis != axes.end(), "a projected axis is named by a side");
    ASSIGN_OR_RETURN(Term term, MakeTerm(*axis, named->second, it->live));
    if (term.live > kMaxSequencerIterations) {
      const int64_t inner = LargestDivisorAtMost(term.live, kMaxSequencerIterations);
      if (inner == 1 || term.live / inner > kMaxSequencerIterations) {
        return NoDescriptor(absl::StrCat("the stream term `", term.mapping.ToString(), "` iterates ", term.live,
                                         " times and splits into no two entries of at most ", kMaxSequencerIterations));
      }
      ASSIGN_OR_RETURN(auto halves, SplitTerm(term, inner));
      terms.push_back(std::move(halves.first));
      terms.push_back(std::move(halves.second));
      continue;
    }
    terms.push_back(std::move(term));
  }

  // The Packet: the most innermost terms both sides hold contiguously, within 4,096 bytes.
  const int64_t max_packet_elements = kMaxDmaPacketBytes * 8 / element.bits;
  std::optional<DmaConfig> pair;
  absl::Status last = absl::OkStatus();
  for (size_t k = terms.size() + 1; k-- > 0 && !pair;) {
    std::vector<Term> candidate = terms;
    const size_t first = terms.size() - k;
    int64_t elements = 1;
    for (size_t i = first + 1; i < terms.size(); ++i) elements *= terms[i].live;
    if (k > 0 && elements * terms[first].live > max_packet_elements) {
      if (elements > max_packet_elements) continue;
      const int64_t inner = LargestDivisorAtMost(terms[first].live, max_packet_elements / elements);
      if (inner == 1) continue;
      ASSIGN_OR_RETURN(auto halves, SplitTerm(terms[first], inner));
      candidate[first] = std::move(halves.second);
      candidate.insert(candidate.begin() + static_cast<std::ptrdiff_t>(first), std::move(halves.first));
    }
    const size_t packet_begin = candidate.size() - k;
    const Mapping time = StreamOf(candidate, 0, packet_begin);
    const Mapping packet = StreamOf(candidate, packet_begin, candidate.size());
    absl::StatusOr<DmaConfig> derived = DeriveDmaPair(src.layout, dst.layout, time, packet, element, kUnmergedEntries);
    if (!derived.ok()) {
      last = derived.status();
      continue;
    }
    if ((derived->packet_elements * element.bits) % 8 != 0) continue;  // stride0 counts whole bytes
    pair = *std::move(derived);
    d.time = time.ToString();
    d.packet = packet.ToString();
  }
  if (!pair) return NoDescriptor(absl::StrCat("no stream derives a pair: ", last.message()));
  if (pair->read.entries.size() != pair->write.entries.size()) {
    return NoDescriptor(absl::StrCat("the stream [", d.time, "], [", d.packet, "] walks the source as ",
                                     pair->read.ToString(), " and the destination as ", pair->write.ToString()));
  }
  std::vector<JointEntry> entries;
  for (size_t i = 0; i < pair->read.entries.size(); ++i) {
    const SequencerEntry& r = pair->read.entries[i];
    const SequencerEntry& w = pair->write.entries[i];
    if (r.size != w.size) {
      return NoDescriptor(absl::StrCat("entry ", i, " iterates ", r.size, " times on the source and ", w.size,
                                       " on the destination"));
    }
    const bool packet = i + pair->read.packet_entries >= pair->read.entries.size();
    entries.push_back({r.size, r.stride, w.stride, r.label, packet});
  }

  // Splits: chips, then the entry limit.
  std::vector<JointEntry> body;
  for (const JointEntry& e : entries) {
    if (IsChipEntry(e.read, src.chip_span) || IsChipEntry(e.write, dst.chip_span)) {
      if (e.packet) return NoDescriptor(absl::StrCat("the packet entry `", e.label, "` crosses chips"));
      d.loops.push_back({e.size, e.read, e.write, e.label, "a descriptor reads one chip and writes one chip"});
    } else {
      body.push_back(e);
    }
  }
  if (static_cast<int>(body.size()) > kMaxSequencerEntries) MergeJoint(body);
  while (static_cast<int>(body.size()) > kMaxSequencerEntries && !body.front().packet) {
    const JointEntry& e = body.front();
    d.loops.push_back({e.size, e.read, e.write, e.label, "a sequencer has 8 entries"});
    body.erase(body.begin());
  }
  if (static_cast<int>(body.size()) > kMaxSequencerEntries) {
    return NoDescriptor(absl::StrCat("the packet alone needs ", body.size(), " entries"));
  }
  // A descriptor stays on its chips.
  int64_t read_reach = 0, write_reach = 0;
  for (const JointEntry& e : body) {
    read_reach += (e.size - 1) * e.read;
    write_reach += (e.size - 1) * e.write;
  }
  if (read_reach >= src.chip_span || write_reach >= dst.chip_span) {
    return NoDescriptor("an entry crosses a chip boundary inside one descriptor");
  }
  d.body.read = SideOf(body, /*read=*/true);
  d.body.write = SideOf(body, /*read=*/false);
  d.body.packet_elements = pair->packet_elements;
  d.body.packet_bytes = pair->packet_bytes;
  // The runtime checks the 8-byte rule on the move's own packets (dsl/dma_packet.h), which grow
  // through the destination's padding; the configuration shows live elements only.
  absl::Status aligned = CheckDmaAlignment(d.body, src.tier, dst.tier, element);
  if (!aligned.ok()) {
    d.notes.push_back(absl::StrCat("the live packets break the 8-byte rule (", aligned.message(),
                                   "): the engine's packets grow through the destination's padding, or the "
                                   "device relaxes the rule"));
  }
  return d;
}

}  // namespace visa
