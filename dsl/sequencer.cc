// Sequencer derivation: every stream digit projected onto the buffer's layout and composed into
// (size : stride) entries by the layout algebra (dsl/layout.h), the sequencer's own rules around
// it (padding over-read, commit truncation, linear combinations, merging past the entry limit),
// the limits, and the fetch / commit / DMA access plans.
#include "dsl/sequencer.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/dma_packet.h"
#include "dsl/layout.h"
#include "dsl/left_padding.h"
#include "dsl/normal_form.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

absl::Status SequencerError(absl::string_view rule, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(rule, ": ", message));
}

// The stream's terms in order: the right spine of its pairs (`[A, B], C` has terms `[A, B]`, `C`).
void SpineTerms(const Mapping& m, std::vector<Mapping>& out) {
  if (m.kind() == Mapping::Kind::kPair) {
    out.push_back(m.major());
    SpineTerms(m.minor(), out);
  } else {
    out.push_back(m);
  }
}

const Mapping& Unpadded(const Mapping& m) { return m.kind() == Mapping::Kind::kPadding ? m.inner() : m; }

std::string DigitLabel(const Factor& f) { return NormalForm({f}).ToString(); }

int64_t RoundUp(int64_t n, int64_t granule) { return (n + granule - 1) / granule * granule; }

// Entries (innermost first) as the loop levels of the layout algebra: the stream positions they
// walk are contiguous by construction, so levels coalesce exactly where the buffer strides do.
std::vector<MoveLevel> LevelsOf(const std::vector<SequencerEntry>& innermost_first) {
  std::vector<MoveLevel> levels;
  int64_t position = 1;
  for (const SequencerEntry& e : innermost_first) {
    levels.push_back({e.size, position, e.stride});
    position *= e.size;
  }
  return levels;
}

// The buffer as the sequencer walks it: its digits as a layout, and its linear combinations
// (`$(H: 1, Fh: 1)`, the convolution's sliding windows). A combination holds sums of coordinates,
// which no digit describes, so the layout sees it as a broadcast of its size (no axis, and never
// merged into a neighbouring digit) and the sequencer walks it by its own rule: a stream digit of
// an axis only it names steps `coefficient` of its positions, and a stream term equal to the whole
// combination walks it position by position.
struct Element {
  struct Combination {
    Mapping mapping;  // without its padding
    int64_t stride;   // buffer positions per value
  };
  Layout layout;
  std::vector<Combination> combinations;
  std::string text;  // the buffer mapping, for messages

  // A live digit carries `axis`; stream digits of other axes read with stride 0 (broadcast).
  bool Holds(const std::string& axis) const {
    const int id = layout.AxisId(axis);
    return std::any_of(layout.modes().begin(), layout.modes().end(),
                       [id](const LayoutMode& m) { return id >= 0 && m.axis == id; });
  }
  const Combination* Find(const Mapping& m) const {
    for (const Combination& c : combinations) {
      if (c.mapping == m) return &c;
    }
    return nullptr;
  }
  // The combination with a term naming `axis` alone, and that term's coefficient.
  const Combination* Naming(const std::string& axis, int64_t* coefficient) const {
    for (const Combination& c : combinations) {
      for (const Mapping::LinearTerm& term : c.mapping.linear_terms()) {
        if (term.mapping.kind() == Mapping::Kind::kSymbol && term.mapping.axis().name == axis) {
          *coefficient = term.coefficient;
          return &c;
        }
      }
    }
    return nullptr;
  }
};

absl::StatusOr<Element> ElementOf(const Mapping& buffer) {
  Element element;
  element.text = buffer.ToString();
  // Terms that are (possibly padded) linear combinations become broadcasts of their size.
  std::vector<Mapping> terms;
  SpineTerms(buffer, terms);
  int64_t inner = 1;
  for (size_t t = terms.size(); t-- > 0;) {
    const int64_t size = terms[t].size();
    if (!Layout::Of(terms[t]).affine()) {
      if (Unpadded(terms[t]).kind() != Mapping::Kind::kLinear) {
        return SequencerError("Incompatible Shapes", absl::StrCat(
            "the buffer `", element.text, "` has no digit form a sequencer can walk"));
      }
      element.combinations.push_back({Unpadded(terms[t]), inner});
      terms[t] = *Mapping::Broadcast(size);
    }
    inner *= size;
  }
  element.layout = Layout::Of(Pair(terms));
  // An axis held in two places adds up their coordinates: its smallest holder is no digit's.
  std::set<std::string> named;
  for (const Element::Combination& c : element.combinations) {
    for (const std::string& axis : c.mapping.axis_names()) {
      if (element.Holds(axis) || !named.insert(axis).second) {
        return SequencerError("Incompatible Shapes", absl::StrCat(
            "the buffer `", element.text, "` holds ", axis, " in a linear combination and elsewhere; ",
            "no sequencer entry walks their sum"));
      }
    }
  }
  return element;
}

// The manual's failure for a stream digit the buffer's digits cannot walk, by cause.
absl::Status DigitError(const Factor& digit, const ProjectionFailure& why, const Element& buf) {
  const std::string label = DigitLabel(digit);
  switch (why.cause) {
    case ProjectionFailure::Cause::kUnheld:
      return SequencerError("Insufficient Input", absl::StrCat(
          "the stream's `", label, "` iterates over ", digit.axis, " coordinates from ", why.coef,
          " on, which the buffer `", buf.text, "` does not hold"));
    case ProjectionFailure::Cause::kMisaligned:
      return SequencerError("Incompatible Shapes", absl::StrCat(
          "the stream's `", label, "` and the buffer `", buf.text, "` split ", digit.axis,
          " at boundaries that do not divide each other (", why.coef, " inside a digit of step ",
          why.src_coef, "), so no factorization into common digits exists"));
    case ProjectionFailure::Cause::kNoAffineForm:
      return SequencerError("Incompatible Shapes", absl::StrCat(
          "the buffer `", buf.text, "` has no digit form a sequencer can walk"));
    case ProjectionFailure::Cause::kCarry:
    case ProjectionFailure::Cause::kRangeRule:
      return SequencerError("Incompatible Shapes", absl::StrCat(
          "the stream's `", label, "` cannot be walked over the digits of the buffer `", buf.text,
          "` without carrying between them"));
    case ProjectionFailure::Cause::kUneven:
      return SequencerError("Incompatible Shapes", absl::StrCat(
          "the stream's `", label, "` crosses a digit boundary of the buffer `", buf.text,
          "` that it cannot be split at"));
  }
  return absl::InternalError("unknown projection failure");
}

// The first coordinate of a digit's live values that the buffer does not hold (by axis).
std::optional<int64_t> FirstUnheld(const Factor& digit, const Element& buf) {
  const int axis = buf.layout.AxisId(digit.axis);
  for (int64_t v = 0; v < digit.live; ++v) {
    if (buf.layout.Offset(axis, v * digit.coef, MatchRule::kByAxis) < 0) return v * digit.coef;
  }
  return std::nullopt;
}

// A failed projection is Insufficient Input when the digit reads a coordinate the buffer does not
// hold, and Incompatible Shapes when the buffer holds every one but in digits it cannot follow.
absl::Status ProjectionError(const Factor& digit, const ProjectionFailure& why, const Element& buf) {
  if (why.cause != ProjectionFailure::Cause::kNoAffineForm) {
    if (const std::optional<int64_t> unheld = FirstUnheld(digit, buf)) {
      return DigitError(digit, {ProjectionFailure::Cause::kUnheld, why.mode, *unheld}, buf);
    }
  }
  return DigitError(digit, why, buf);
}

// Entries (innermost first) of a stream digit whose axis the buffer's digits hold: the digit's
// own layout projected onto the buffer's (by axis: a coordinate the buffer lacks is Insufficient
// Input) and composed, one entry per piece. The projection covers the digit's live values; its
// padding is over-read (the manual's `C # 32 -> 32 : 1`), so the outermost piece grows to cover
// the whole extent, which must then be a whole number of the inner pieces.
absl::StatusOr<std::vector<SequencerEntry>> ProjectedDigit(const Factor& digit, const Element& buf) {
  const Layout own = Layout::Of(NormalForm({digit}).ToMapping());
  ProjectionFailure why;
  const std::optional<Layout> projected = Project(own, buf.layout, MatchRule::kByAxis, &why);
  if (!projected) return ProjectionError(digit, why, buf);
  const std::optional<std::vector<MoveLevel>> levels = Compose(buf.layout, *projected);
  VISA_CHECK(levels.has_value(), "a projection does not compose with its source");
  const std::string label = DigitLabel(digit);
  std::vector<SequencerEntry> entries;
  int64_t inner = 1;  // values of the pieces inside the outermost
  for (const MoveLevel& level : *levels) {
    inner *= entries.empty() ? 1 : entries.back().size;
    entries.push_back({level.count, level.src_stride, label});
  }
  if (digit.count % inner != 0) return ProjectionError(digit, {ProjectionFailure::Cause::kUneven}, buf);
  entries.back().size = digit.count / inner;
  return entries;
}

// The commit adapter's truncation of the packet's innermost digit, which the algebra has no
// operation for: it keeps the leading values that fit the buffer digit holding the digit's first
// step, that digit's padding too (writing stream padding onto buffer padding is harmless, and
// keeps writes whole), in whole granules; the rest of the packet is dropped, never walked on.
absl::StatusOr<SequencerEntry> TruncatedDigit(const Factor& digit, const Element& buf, int64_t granule) {
  const int64_t live = RoundUp(digit.live, granule);
  if (digit.axis.empty()) return SequencerEntry{std::min(digit.count, live), 1, DigitLabel(digit)};
  const std::optional<LayoutMode> b = buf.layout.DigitHolding(buf.layout.AxisId(digit.axis), digit.coef);
  if (!b) return DigitError(digit, {ProjectionFailure::Cause::kUnheld, 0, digit.coef}, buf);
  if (digit.coef % b->coef != 0) {
    return DigitError(digit, {ProjectionFailure::Cause::kMisaligned, 0, digit.coef, b->coef}, buf);
  }
  const int64_t step = digit.coef / b->coef;  // buffer digit values per stream digit value
  const int64_t fits = (b->extent + step - 1) / step;
  return SequencerEntry{std::min({digit.count, fits, live}), step * b->weight, DigitLabel(digit)};
}

// Entries (innermost first) that realize one stream digit.
absl::StatusOr<std::vector<SequencerEntry>> DigitEntries(const Factor& digit, const Element& buf,
                                                         bool truncate, int64_t granule) {
  const bool held = !digit.axis.empty() && buf.Holds(digit.axis);
  // A padded packet digit with no axis (`1 # 8`) commits its live part to consecutive positions.
  if (truncate && (held || (digit.axis.empty() && digit.live < digit.count))) {
    ASSIGN_OR_RETURN(SequencerEntry kept, TruncatedDigit(digit, buf, granule));
    return std::vector<SequencerEntry>{kept};
  }
  if (held) return ProjectedDigit(digit, buf);
  int64_t coefficient = 0;
  const Element::Combination* c = digit.axis.empty() ? nullptr : buf.Naming(digit.axis, &coefficient);
  const int64_t stride = c == nullptr ? 0 : coefficient * digit.coef * c->stride;  // 0: broadcast
  return std::vector<SequencerEntry>{{digit.count, stride, DigitLabel(digit)}};
}

// A padded group (`[B, C] # 16`) reads its live part as one contiguous run and over-reads the
// padding: the entries of its digits must coalesce into one loop of stride 0 or 1.
absl::Status OverReadGroup(const Mapping& term, const Element& buf, int64_t block,
                           std::vector<SequencerEntry>& entries) {
  const std::vector<MoveLevel> run = Coalesce(LevelsOf(entries));
  if (entries.empty() || run.size() != 1 || run[0].src_stride > 1) {
    return SequencerError("Incompatible Shapes", absl::StrCat(
        "the padded stream term `", term.ToString(), "` needs its live part contiguous in the buffer `",
        buf.text, "`"));
  }
  entries.assign(1, {block, run[0].src_stride, term.ToString()});
  return absl::OkStatus();
}

// Entries for one stream term (innermost first).
absl::StatusOr<std::vector<SequencerEntry>> TermEntries(const Mapping& term, const Element& buf,
                                                        bool truncate_innermost, int64_t granule) {
  if (const Element::Combination* c = buf.Find(Unpadded(term))) {
    // A (padded) linear combination the buffer holds whole: walk it, over-reading its padding.
    return std::vector<SequencerEntry>{{term.size(), c->stride, term.ToString()}};
  }
  const std::vector<Factor>& factors = term.normal_form().factors();
  std::vector<SequencerEntry> entries;
  for (size_t k = 0; k < factors.size(); ++k) {
    const Factor& f = factors[k];
    if (f.kind == Factor::Kind::kComposite) {
      const Element::Combination* c = buf.Find(*f.composite);
      if (c == nullptr) {
        return SequencerError("Incompatible Shapes", absl::StrCat(
            "the stream term `", term.ToString(), "` has no digit form a sequencer can walk"));
      }
      entries.push_back({f.composite->size(), c->stride, f.composite->ToString()});
    } else if (f.kind == Factor::Kind::kBlockPad) {
      if (truncate_innermost) continue;  // committing writes only the live part
      RETURN_IF_ERROR(OverReadGroup(term, buf, f.block, entries));
    } else {
      ASSIGN_OR_RETURN(std::vector<SequencerEntry> more,
                       DigitEntries(f, buf, truncate_innermost && k == 0, granule));
      entries.insert(entries.end(), more.begin(), more.end());
    }
  }
  return entries;
}

// Digits of one axis in several places of the stream (`A, [A, B] / 4`) add their coordinates;
// projected one by one, none sees the sum carry between buffer digits. So the stream's digits are
// projected together once more (the truncated commit digit aside: it keeps only what fits), each
// axis's digits adjacent and in order, so that an axis split across terms (`C / 4, B, C % 4`)
// reads as the one digit it is.
absl::Status CheckSums(const std::vector<Mapping>& terms, const Element& buf, bool commit,
                       absl::string_view stream) {
  std::vector<Factor> digits;
  for (size_t t = 0; t < terms.size(); ++t) {
    const std::vector<Factor>& factors = terms[t].normal_form().factors();
    for (size_t k = 0; k < factors.size(); ++k) {
      const Factor& f = factors[k];
      const bool truncated = commit && t + 1 == terms.size() && k == 0;
      if (f.kind == Factor::Kind::kDigit && !f.axis.empty() && buf.Holds(f.axis) && !truncated) digits.push_back(f);
    }
  }
  std::sort(digits.begin(), digits.end(), [](const Factor& a, const Factor& b) {
    return a.axis != b.axis ? a.axis < b.axis : a.coef < b.coef;  // innermost first
  });
  if (digits.empty()) return absl::OkStatus();
  ProjectionFailure why;
  const Mapping together = NormalForm(std::move(digits)).ToMapping();
  if (Project(Layout::Of(together), buf.layout, MatchRule::kByAxis, &why) ||
      why.cause == ProjectionFailure::Cause::kNoAffineForm) {
    return absl::OkStatus();  // no form to check beyond the digits' own projections
  }
  const std::vector<Factor>& merged = together.normal_form().factors();
  if (why.mode >= 0 && why.mode < static_cast<int>(merged.size()) && merged[why.mode].kind == Factor::Kind::kDigit) {
    return ProjectionError(merged[why.mode], why, buf);
  }
  return SequencerError("Incompatible Shapes", absl::StrCat(
      "the stream ", stream, " names an axis in digits whose coordinates add up across the digits of ",
      "the buffer `", buf.text, "`; no sequencer entry can carry between them"));
}

// Past the entry limit, adjacent entries that read as one loop merge (the algebra's Coalesce). A
// merged entry is labelled `[outer, inner]` and belongs to the packet when any of its parts does.
void MergeEntries(SequencerConfig& config) {
  const std::vector<SequencerEntry> entries = std::move(config.entries);
  const size_t time_entries = entries.size() - config.packet_entries;
  const std::vector<MoveLevel> merged = Coalesce(LevelsOf({entries.rbegin(), entries.rend()}));
  config.entries.clear();
  config.packet_entries = 0;
  config.packet_size = 1;
  size_t next = 0;  // the outermost entry not merged yet
  for (auto level = merged.rbegin(); level != merged.rend(); ++level) {
    SequencerEntry joined{entries[next].size, level->src_stride, entries[next].label};
    for (++next; joined.size < level->count; ++next) {
      joined.size *= entries[next].size;
      joined.label = absl::StrCat("[", joined.label, ", ", entries[next].label, "]");
    }
    config.entries.push_back(joined);
    if (next > time_entries) {  // its innermost part is a packet entry
      ++config.packet_entries;
      config.packet_size *= joined.size;
    }
  }
}

std::string BaseSuffix(int64_t base_offset) {
  return base_offset == 0 ? "" : absl::StrCat(" @ base_addr = ", base_offset);
}

}  // namespace

int64_t SequencerConfig::time_size() const {
  int64_t size = 1;
  for (size_t i = 0; i + packet_entries < entries.size(); ++i) size *= entries[i].size;
  return size;
}

int64_t SequencerConfig::stream_size() const {
  int64_t size = 1;
  for (const SequencerEntry& e : entries) size *= e.size;
  return size;
}

int64_t SequencerConfig::contiguous_elements() const {
  if (entries.empty()) return 1;
  const SequencerEntry& innermost = entries.back();
  if (innermost.stride > 1) return 1;
  int64_t run = innermost.size;
  for (size_t i = entries.size() - 1; i-- > 0;) {
    if (entries[i].stride != entries[i + 1].size * entries[i + 1].stride) break;
    run *= entries[i].size;
  }
  return run;
}

std::vector<int64_t> SequencerConfig::Offsets() const {
  std::vector<int64_t> offsets(stream_size());
  for (int64_t p = 0; p < static_cast<int64_t>(offsets.size()); ++p) {
    int64_t rest = p, offset = 0;
    for (size_t i = entries.size(); i-- > 0;) {
      offset += (rest % entries[i].size) * entries[i].stride;
      rest /= entries[i].size;
    }
    offsets[p] = base_offset + offset;
  }
  return offsets;
}

std::string SequencerConfig::ToString() const {
  std::vector<std::string> parts;
  for (const SequencerEntry& e : entries) parts.push_back(absl::StrCat(e.size, " : ", e.stride));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "] : ", packet_size, BaseSuffix(base_offset));
}

std::string SequencerConfig::ToLabeledString() const {
  std::vector<std::string> parts;
  for (const SequencerEntry& e : entries) {
    parts.push_back(absl::StrCat(e.label, " -> ", e.size, " : ", e.stride));
  }
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "] : ", packet_size, BaseSuffix(base_offset));
}

absl::StatusOr<SequencerConfig> DeriveSequencer(const Mapping& buffer, const Mapping& time,
                                                const Mapping& packet, SequencerMode mode,
                                                int64_t commit_granule, int max_entries) {
  RETURN_IF_ERROR(buffer.status());
  RETURN_IF_ERROR(time.status());
  RETURN_IF_ERROR(packet.status());
  if (HasLeftPadding(time) || HasLeftPadding(packet)) {
    ASSIGN_OR_RETURN(ShiftedStream shifted, ShiftLeftPadding(buffer, time, packet));
    if (mode != SequencerMode::kRead && shifted.base_offset != 0) {
      return SequencerError("Left padding", absl::StrCat(
          "Time `", time.ToString(), "`, Packet `", packet.ToString(), "` left-pads a stream written to `",
          buffer.ToString(), "`; only a read (fetch, a DMA's source) is masked, a write would land before "
          "the buffer (write into a buffer left-padded the same way)"));
    }
    ASSIGN_OR_RETURN(SequencerConfig config,
                     DeriveSequencer(shifted.buffer, shifted.time, shifted.packet, mode, commit_granule, max_entries));
    config.base_offset = shifted.base_offset;
    return config;
  }
  ASSIGN_OR_RETURN(Element buf, ElementOf(buffer));

  SequencerConfig config;
  std::vector<Mapping> terms;  // Time's, then Packet's
  SpineTerms(time, terms);
  const size_t time_terms = terms.size();
  SpineTerms(packet, terms);
  const bool commit = mode == SequencerMode::kCommit;
  for (size_t t = 0; t < terms.size(); ++t) {
    ASSIGN_OR_RETURN(std::vector<SequencerEntry> entries,
                     TermEntries(terms[t], buf, commit && t + 1 == terms.size(), std::max<int64_t>(commit_granule, 1)));
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
      if (it->size == 1) continue;  // a loop of one iteration is no loop
      config.entries.push_back(*it);
      if (t >= time_terms) ++config.packet_entries;
    }
  }
  RETURN_IF_ERROR(CheckSums(terms, buf, commit,
                            absl::StrCat("(Time `", time.ToString(), "`, Packet `", packet.ToString(), "`)")));
  config.packet_size = 1;
  for (size_t i = config.entries.size() - config.packet_entries; i < config.entries.size(); ++i) {
    config.packet_size *= config.entries[i].size;
  }
  if (static_cast<int>(config.entries.size()) > max_entries) MergeEntries(config);
  if (static_cast<int>(config.entries.size()) > max_entries) {
    return SequencerError("Entry limit", absl::StrCat(
        "streaming `", buf.text, "` as Time `", time.ToString(), "` and Packet `", packet.ToString(),
        "` needs ", config.entries.size(), " entries after merging contiguous ones (",
        config.ToString(), "); the sequencer has ", kMaxSequencerEntries,
        ". Hint: make adjacent stream terms contiguous in the buffer so they merge"));
  }
  for (const SequencerEntry& e : config.entries) {
    if (e.size > kMaxSequencerIterations) {
      return SequencerError("Iteration limit", absl::StrCat(
          "entry `", e.label, " -> ", e.size, " : ", e.stride, "` iterates more than ",
          kMaxSequencerIterations, " times; split it with `/` and `%`"));
    }
  }
  if (config.packet_size > 1 && !config.entries.empty() && config.entries.back().stride > 1) {
    return SequencerError("Packet fetch", absl::StrCat(
        "the innermost entry `", config.entries.back().label, " -> ", config.entries.back().size,
        " : ", config.entries.back().stride, "` of a packet of ", config.packet_size,
        " elements must be contiguous (stride 0 or 1); put an axis that is contiguous in `", buf.text,
        "` innermost in the Packet"));
  }
  return config;
}

namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The sizes both access plans start from; `packet_bits` and `contiguous_bits` keep 4-bit exact.
struct Sizes {
  int64_t packet_bits, contiguous_bits;
};

Sizes StartPlan(const SequencerConfig& config, ElementBits element, AccessPlan& plan) {
  Sizes sizes{config.packet_size * element.bits, config.contiguous_elements() * element.bits};
  plan.packet_bytes = sizes.packet_bits / 8;
  plan.contiguous_bytes = sizes.contiguous_bits / 8;
  return sizes;
}

}  // namespace

absl::StatusOr<AccessPlan> PlanFetch(const SequencerConfig& config, ElementBits element,
                                     ContextKind context) {
  AccessPlan plan;
  auto [packet_bits, contiguous_bits] = StartPlan(config, element, plan);
  int64_t common = std::gcd(packet_bits, contiguous_bits);
  if (context == ContextKind::kSub) {
    if (common % 64 != 0) {
      return SequencerError("fetch_size", absl::StrCat(
          "the sub context fetches 8 bytes at a time, but the packet (", packet_bits / 8.0,
          " bytes) and the contiguous run (", contiguous_bits / 8.0, " bytes) share only ",
          common / 8.0, " bytes"));
    }
    plan.access_bytes = 8;
  } else {
    for (int64_t bytes : {32, 16, 8, 4, 2, 1}) {
      if (common % (bytes * 8) == 0) {
        plan.access_bytes = bytes;
        break;
      }
    }
    if (plan.access_bytes == 0) {
      return SequencerError("fetch_size", absl::StrCat(
          "no fetch size of 1, 2, 4, 8, 16 or 32 bytes divides both the packet (", packet_bits / 8.0,
          " bytes) and the contiguous run (", contiguous_bits / 8.0, " bytes)"));
    }
  }
  if (packet_bits % 8 != 0) {
    return SequencerError("Packet size", absl::StrCat("a packet of ", packet_bits, " bits is not whole bytes"));
  }
  plan.accesses_per_packet = CeilDiv(plan.packet_bytes, plan.access_bytes);
  plan.cycles = config.time_size() * plan.accesses_per_packet;
  return plan;
}

absl::StatusOr<AccessPlan> PlanCommit(const SequencerConfig& config, ElementBits element,
                                      ContextKind context) {
  AccessPlan plan;
  auto [packet_bits, contiguous_bits] = StartPlan(config, element, plan);
  if (packet_bits % 64 != 0 || plan.packet_bytes < 8 || plan.packet_bytes > 32) {
    return SequencerError("commit_in_size", absl::StrCat(
        "the committed packet is ", packet_bits / 8.0,
        " bytes; commit_in_size must be 8, 16, 24 or 32 bytes (pad or trim the Packet)"));
  }
  int64_t commit = std::gcd(plan.contiguous_bytes, plan.packet_bytes);
  if (context == ContextKind::kSub) {
    if (commit % 8 != 0) {
      return SequencerError("commit_size", absl::StrCat(
          "the sub context commits 8 bytes at a time, but the contiguous run is ",
          contiguous_bits / 8.0, " bytes"));
    }
    commit = 8;
  } else if (commit % 8 != 0) {
    return SequencerError("commit_size", absl::StrCat(
        "commit_size = gcd(contiguous ", plan.contiguous_bytes, " B, commit_in_size ",
        plan.packet_bytes, " B) = ", commit, " B; it must be 8, 16, 24 or 32 bytes"));
  }
  // Each write covers the contiguous run; only the entries that move between writes must step
  // by whole 8-byte units.
  int64_t run = 1;
  size_t outer_entries = config.entries.size();
  while (outer_entries > 0 && run < config.contiguous_elements()) {
    run *= config.entries[--outer_entries].size;
  }
  for (size_t i = 0; i < outer_entries; ++i) {
    const SequencerEntry& e = config.entries[i];
    if (e.stride != 0 && (e.stride * element.bits) % 64 != 0) {
      return SequencerError("Commit stride", absl::StrCat(
          "entry `", e.label, " -> ", e.size, " : ", e.stride, "` steps ", e.stride * element.bits / 8.0,
          " bytes; commit sequencer strides must be multiples of 8 bytes"));
    }
  }
  plan.access_bytes = commit;
  plan.accesses_per_packet = plan.packet_bytes / commit;
  plan.cycles = config.time_size() * CeilDiv(plan.packet_bytes, plan.access_bytes);
  return plan;
}

const char* MemoryTierName(MemoryTier tier) {
  switch (tier) {
    case MemoryTier::kHbm: return "HBM";
    case MemoryTier::kDm: return "DM";
    case MemoryTier::kSpm: return "SPM";
  }
  return "?";
}

absl::StatusOr<DmaConfig> DeriveDma(const Mapping& src, MemoryTier src_tier, const Mapping& dst,
                                    MemoryTier dst_tier, const Mapping& time, const Mapping& packet,
                                    ElementBits element) {
  ASSIGN_OR_RETURN(DmaConfig dma, DeriveDmaPair(src, dst, time, packet, element));
  RETURN_IF_ERROR(CheckDmaAlignment(dma, src_tier, dst_tier, element));
  return dma;
}

absl::StatusOr<DmaConfig> DeriveDmaPair(const Mapping& src, const Mapping& dst, const Mapping& time,
                                        const Mapping& packet, ElementBits element, int max_entries) {
  DmaConfig dma;
  ASSIGN_OR_RETURN(dma.read, DeriveSequencer(src, time, packet, SequencerMode::kRead, 1, max_entries));
  ASSIGN_OR_RETURN(dma.write, DeriveSequencer(dst, time, packet, SequencerMode::kWrite, 1, max_entries));
  dma.packet_elements = packet.size();
  dma.packet_bytes = dma.packet_elements * element.bits / 8;
  if (dma.packet_bytes > kMaxDmaPacketBytes) {
    return SequencerError("DMA packet size", absl::StrCat(
        "a packet of ", dma.packet_bytes, " bytes exceeds the AXI limit of ", kMaxDmaPacketBytes,
        " bytes (stride0); move more of the Packet into Time"));
  }
  for (const SequencerConfig* side : {&dma.read, &dma.write}) {
    if (side->contiguous_elements() < side->packet_size || (side->packet_size > 1 && side->entries.back().stride == 0)) {
      return SequencerError("DMA packet", absl::StrCat(
          "a DMA packet is one contiguous run, but Packet `", packet.ToString(), "` walks the ",
          side == &dma.read ? "source" : "destination", " as ", side->ToString()));
    }
  }
  return dma;
}

absl::Status CheckDmaAlignment(const DmaConfig& dma, MemoryTier src_tier, MemoryTier dst_tier,
                               ElementBits element) {
  // The 8-byte rule, shared with the runtime's moves (dsl/dma_packet.h).
  const int64_t packet_bits = dma.packet_elements * element.bits;
  const DmaAlignedSides sides = AlignedSides(src_tier, dst_tier);
  auto check_aligned = [&](const SequencerConfig& side, absl::string_view what) -> absl::Status {
    RETURN_IF_ERROR(CheckDmaPacketBits(packet_bits, what));
    for (size_t i = 0; i + side.packet_entries < side.entries.size(); ++i) {
      const SequencerEntry& e = side.entries[i];
      RETURN_IF_ERROR(CheckDmaStepBits(e.stride * element.bits, what,
                                       absl::StrCat("entry `", e.label, " -> ", e.size, " : ", e.stride, "`")));
    }
    return absl::OkStatus();
  };
  if (sides.write) RETURN_IF_ERROR(check_aligned(dma.write, WriteRuleName(dst_tier)));
  if (sides.read) RETURN_IF_ERROR(check_aligned(dma.read, kReadRuleName));
  return absl::OkStatus();
}

}  // namespace visa
