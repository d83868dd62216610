// Sequencer derivation: matching stream digits against buffer digits, merging, and the limits.
#include "dsl/sequencer.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/layout.h"
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

std::string DigitLabel(const Factor& f) { return NormalForm({f}).ToString(); }

// The buffer's digit factors with the number of buffer positions inside each (its stride), from
// the buffer's layout (dsl/layout.h). Linear combinations (`$(H: 1, Fh: 1)`, the convolution's sliding windows) stay composite
// factors: a stream digit of one of their axes steps `coefficient` positions of it, and a stream
// term equal to the whole combination walks it position by position.
struct BufferDigits {
  std::vector<Factor> factors;
  std::vector<int64_t> strides;
  std::string text;  // the buffer mapping, for messages

  bool HasAxis(const std::string& axis) const {
    return std::any_of(factors.begin(), factors.end(),
                       [&](const Factor& f) { return f.kind == Factor::Kind::kDigit && f.axis == axis; });
  }
  // The combination term naming `axis` alone: its coefficient and the combination's stride.
  bool LinearTerm(const std::string& axis, int64_t* coefficient, int64_t* stride) const {
    for (size_t k = 0; k < factors.size(); ++k) {
      if (factors[k].kind != Factor::Kind::kComposite) continue;
      const Mapping& m = *factors[k].composite;
      if (m.kind() != Mapping::Kind::kLinear) continue;
      for (const Mapping::LinearTerm& term : m.linear_terms()) {
        if (term.mapping.kind() == Mapping::Kind::kSymbol && term.mapping.axis().name == axis) {
          *coefficient = term.coefficient;
          *stride = strides[k];
          return true;
        }
      }
    }
    return false;
  }
  // The composite factor equal to `m`, with its stride.
  bool Composite(const Mapping& m, int64_t* stride) const {
    for (size_t k = 0; k < factors.size(); ++k) {
      if (factors[k].kind == Factor::Kind::kComposite && *factors[k].composite == m) {
        *stride = strides[k];
        return true;
      }
    }
    return false;
  }
  // The digit of `axis` whose coefficient range [coef, coef * count) contains `coef`.
  const Factor* Containing(const std::string& axis, int64_t coef, int64_t* stride) const {
    for (size_t k = 0; k < factors.size(); ++k) {
      const Factor& f = factors[k];
      // Only the live values hold coordinates; a padded digit's tail belongs to no coordinate.
      if (f.kind == Factor::Kind::kDigit && f.axis == axis && f.coef <= coef &&
          coef < f.coef * f.live) {
        *stride = strides[k];
        return &f;
      }
    }
    return nullptr;
  }
};

// Appends the modes of an affine layout as digit factors, `base` positions apart per weight.
void AppendModes(const Layout& layout, int64_t base, BufferDigits& digits) {
  for (const LayoutMode& m : layout.modes()) {
    Factor f;
    f.axis = m.axis < 0 ? "" : layout.axes()[m.axis].name;
    f.axis_size = m.axis < 0 ? 0 : layout.axes()[m.axis].limit;
    f.coef = m.coef;
    f.count = m.extent;
    f.live = m.live;
    digits.factors.push_back(f);
    digits.strides.push_back(base * m.weight);
  }
}

// The buffer's digit factors and strides: its layout's modes (dsl/layout.h). Linear combinations
// have no layout; the buffer's terms are then walked, each term's layout or a (possibly padded)
// combination kept whole as a composite factor.
absl::StatusOr<BufferDigits> DigitsOf(const Mapping& buffer) {
  BufferDigits digits;
  digits.text = buffer.ToString();
  const Layout layout = Layout::Of(buffer);
  if (layout.affine()) {
    AppendModes(layout, 1, digits);
    return digits;
  }
  std::vector<Mapping> terms;
  SpineTerms(buffer, terms);
  int64_t inner = 1;
  for (size_t t = terms.size(); t-- > 0;) {
    const Layout term = Layout::Of(terms[t]);
    const Mapping& core = terms[t].kind() == Mapping::Kind::kPadding ? terms[t].inner() : terms[t];
    if (term.affine()) {
      AppendModes(term, inner, digits);
    } else if (core.kind() == Mapping::Kind::kLinear) {
      Factor composite;
      composite.kind = Factor::Kind::kComposite;
      composite.composite = core;
      digits.factors.push_back(composite);
      digits.strides.push_back(inner);
    } else {
      return SequencerError("Incompatible Shapes",
                            absl::StrCat("the buffer `", digits.text, "` has no digit form a sequencer can walk"));
    }
    inner *= terms[t].size();
  }
  return digits;
}

// Entries, innermost first, that realize one stream digit.
absl::StatusOr<std::vector<SequencerEntry>> MatchDigit(const Factor& digit, const BufferDigits& buf,
                                                       bool truncate, int64_t granule) {
  std::string label = DigitLabel(digit);
  if (truncate && digit.axis.empty() && digit.live < digit.count) {
    // A padded packet with no axis (`1 # 8`): the commit writes its live part, in whole granules,
    // to consecutive positions.
    int64_t kept = std::min(digit.count, (digit.live + granule - 1) / granule * granule);
    return std::vector<SequencerEntry>{{kept, 1, label}};
  }
  int64_t coefficient = 0, linear_stride = 0;
  if (!digit.axis.empty() && !buf.HasAxis(digit.axis) && buf.LinearTerm(digit.axis, &coefficient, &linear_stride)) {
    return std::vector<SequencerEntry>{{digit.count, coefficient * digit.coef * linear_stride, label}};
  }
  if (digit.axis.empty() || !buf.HasAxis(digit.axis)) {
    return std::vector<SequencerEntry>{{digit.count, 0, label}};  // broadcast
  }
  std::vector<SequencerEntry> entries;
  int64_t coef = digit.coef, count = digit.count, live = digit.live;
  while (true) {
    int64_t stride = 0;
    const Factor* b = buf.Containing(digit.axis, coef, &stride);
    if (b == nullptr) {
      return SequencerError("Insufficient Input", absl::StrCat(
          "the stream's `", label, "` iterates over ", digit.axis, " coordinates from ", coef,
          " on, which the buffer `", buf.text, "` does not hold"));
    }
    if (coef % b->coef != 0) {
      return SequencerError("Incompatible Shapes", absl::StrCat(
          "the stream's `", label, "` and the buffer `", buf.text, "` split ", digit.axis,
          " at boundaries that do not divide each other (", coef, " inside a digit of step ", b->coef,
          "), so no factorization into common digits exists"));
    }
    int64_t step = coef / b->coef;  // buffer digit values per stream digit value
    stride *= step;
    // The commit adapter keeps the leading values that fit the buffer digit (its padding too:
    // writing stream padding onto buffer padding is harmless, and keeps writes whole).
    int64_t fits = (b->count + step - 1) / step;
    int64_t kept = std::min({count, fits, (live + granule - 1) / granule * granule});
    if (step * (live - 1) < b->live) {  // every live value falls inside this buffer digit
      entries.push_back({truncate ? kept : count, stride, label});
      return entries;
    }
    if (truncate) {
      entries.push_back({kept, stride, label});
      return entries;
    }
    // The digit runs past this buffer digit: split it where the buffer digit's live values end.
    int64_t values = b->live / step;
    if (b->live % step != 0 || count % values != 0) {
      return SequencerError("Incompatible Shapes", absl::StrCat(
          "the stream's `", label, "` crosses a digit boundary of the buffer `", buf.text,
          "` that it cannot be split at"));
    }
    entries.push_back({values, stride, label});
    coef *= values;
    count /= values;
    live = (live + values - 1) / values;
  }
}

// Entries for one stream term (innermost first).
absl::StatusOr<std::vector<SequencerEntry>> MatchTerm(const Mapping& term, const BufferDigits& buf,
                                                      bool truncate_innermost, int64_t granule) {
  const NormalForm& form = term.normal_form();
  std::vector<SequencerEntry> entries;
  int64_t whole_stride = 0;
  const Mapping& core = term.kind() == Mapping::Kind::kPadding ? term.inner() : term;
  if (core.kind() == Mapping::Kind::kLinear && buf.Composite(core, &whole_stride)) {
    // A (padded) linear combination the buffer holds whole: walk it, over-reading its padding.
    entries.push_back({term.size(), whole_stride, term.ToString()});
    return entries;
  }
  for (size_t k = 0; k < form.factors().size(); ++k) {
    const Factor& f = form.factors()[k];
    int64_t composite_stride = 0;
    if (f.kind == Factor::Kind::kComposite && buf.Composite(*f.composite, &composite_stride)) {
      entries.push_back({f.composite->size(), composite_stride, f.composite->ToString()});
      continue;
    }
    if (f.kind == Factor::Kind::kComposite) {
      return SequencerError("Incompatible Shapes", absl::StrCat(
          "the stream term `", term.ToString(), "` has no digit form a sequencer can walk"));
    }
    if (f.kind == Factor::Kind::kBlockPad) {
      // A padded group: read its live part as one contiguous run and over-read the padding.
      if (truncate_innermost) continue;  // committing writes only the live part
      bool contiguous = !entries.empty() && entries.front().stride <= 1;
      for (size_t i = 1; i < entries.size() && contiguous; ++i) {
        contiguous = entries[i].stride == entries[i - 1].stride * entries[i - 1].size;
      }
      if (!contiguous) {
        return SequencerError("Incompatible Shapes", absl::StrCat(
            "the padded stream term `", term.ToString(), "` needs its live part contiguous in the buffer `",
            buf.text, "`"));
      }
      int64_t stride = entries.front().stride;
      entries.assign(1, {f.block, stride, term.ToString()});
      continue;
    }
    bool truncate = truncate_innermost && k == 0;
    ASSIGN_OR_RETURN(std::vector<SequencerEntry> more, MatchDigit(f, buf, truncate, granule));
    entries.insert(entries.end(), more.begin(), more.end());
  }
  return entries;
}

// Merges adjacent contiguous entries until none merges (only used past the entry limit).
void MergeEntries(SequencerConfig& config) {
  bool merged = true;
  while (merged) {
    merged = false;
    auto& e = config.entries;
    int time_entries = static_cast<int>(e.size()) - config.packet_entries;
    for (size_t i = 0; i + 1 < e.size(); ++i) {
      if (e[i].stride != e[i + 1].size * e[i + 1].stride) continue;
      bool joins_packet = static_cast<int>(i) == time_entries - 1;
      SequencerEntry joined{e[i].size * e[i + 1].size, e[i + 1].stride,
                            absl::StrCat("[", e[i].label, ", ", e[i + 1].label, "]")};
      if (joins_packet) {
        config.packet_size *= e[i].size;  // a time entry joins the packet
      } else if (static_cast<int>(i) >= time_entries) {
        --config.packet_entries;  // two packet entries become one
      }
      e[i] = joined;
      e.erase(e.begin() + i + 1);
      merged = true;
      break;
    }
  }
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
    offsets[p] = offset;
  }
  return offsets;
}

std::string SequencerConfig::ToString() const {
  std::vector<std::string> parts;
  for (const SequencerEntry& e : entries) parts.push_back(absl::StrCat(e.size, " : ", e.stride));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "] : ", packet_size);
}

std::string SequencerConfig::ToLabeledString() const {
  std::vector<std::string> parts;
  for (const SequencerEntry& e : entries) {
    parts.push_back(absl::StrCat(e.label, " -> ", e.size, " : ", e.stride));
  }
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "] : ", packet_size);
}

absl::StatusOr<SequencerConfig> DeriveSequencer(const Mapping& buffer, const Mapping& time,
                                                const Mapping& packet, SequencerMode mode,
                                                int64_t commit_granule) {
  RETURN_IF_ERROR(buffer.status());
  RETURN_IF_ERROR(time.status());
  RETURN_IF_ERROR(packet.status());
  ASSIGN_OR_RETURN(BufferDigits buf, DigitsOf(buffer));

  SequencerConfig config;
  std::vector<Mapping> time_terms, packet_terms;
  SpineTerms(time, time_terms);
  SpineTerms(packet, packet_terms);
  for (size_t t = 0; t < time_terms.size() + packet_terms.size(); ++t) {
    bool in_packet = t >= time_terms.size();
    const Mapping& term = in_packet ? packet_terms[t - time_terms.size()] : time_terms[t];
    bool truncate = mode == SequencerMode::kCommit && t + 1 == time_terms.size() + packet_terms.size();
    ASSIGN_OR_RETURN(std::vector<SequencerEntry> entries,
                     MatchTerm(term, buf, truncate, std::max<int64_t>(commit_granule, 1)));
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
      if (it->size == 1) continue;  // a loop of one iteration is no loop
      config.entries.push_back(*it);
      if (in_packet) ++config.packet_entries;
    }
  }
  config.packet_size = 1;
  for (size_t i = config.entries.size() - config.packet_entries; i < config.entries.size(); ++i) {
    config.packet_size *= config.entries[i].size;
  }
  if (static_cast<int>(config.entries.size()) > kMaxSequencerEntries) MergeEntries(config);
  if (static_cast<int>(config.entries.size()) > kMaxSequencerEntries) {
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
                                     TensorUnitContext context) {
  AccessPlan plan;
  auto [packet_bits, contiguous_bits] = StartPlan(config, element, plan);
  int64_t common = std::gcd(packet_bits, contiguous_bits);
  if (context == TensorUnitContext::kSub) {
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
                                      TensorUnitContext context) {
  AccessPlan plan;
  auto [packet_bits, contiguous_bits] = StartPlan(config, element, plan);
  if (packet_bits % 64 != 0 || plan.packet_bytes < 8 || plan.packet_bytes > 32) {
    return SequencerError("commit_in_size", absl::StrCat(
        "the committed packet is ", packet_bits / 8.0,
        " bytes; commit_in_size must be 8, 16, 24 or 32 bytes (pad or trim the Packet)"));
  }
  int64_t commit = std::gcd(plan.contiguous_bytes, plan.packet_bytes);
  if (context == TensorUnitContext::kSub) {
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
  DmaConfig dma;
  ASSIGN_OR_RETURN(dma.read, DeriveSequencer(src, time, packet, SequencerMode::kRead));
  ASSIGN_OR_RETURN(dma.write, DeriveSequencer(dst, time, packet, SequencerMode::kWrite));
  int64_t packet_bits = packet.size() * element.bits;
  dma.packet_bytes = packet_bits / 8;
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
  bool sram_write = dst_tier != MemoryTier::kHbm;
  bool hbm_to_dm = src_tier == MemoryTier::kHbm && dst_tier == MemoryTier::kDm;
  auto check_aligned = [&](const SequencerConfig& side, absl::string_view what) -> absl::Status {
    if (packet_bits % 64 != 0) {
      return SequencerError("DMA alignment", absl::StrCat(
          what, " needs 8-byte packets, but the packet is ", packet_bits / 8.0, " bytes"));
    }
    for (size_t i = 0; i + side.packet_entries < side.entries.size(); ++i) {
      const SequencerEntry& e = side.entries[i];
      if ((e.stride * element.bits) % 64 != 0) {
        return SequencerError("DMA alignment", absl::StrCat(
            what, " needs 8-byte aligned addresses, but entry `", e.label, " -> ", e.size, " : ",
            e.stride, "` steps ", e.stride * element.bits / 8.0, " bytes"));
      }
    }
    return absl::OkStatus();
  };
  if (sram_write) {
    RETURN_IF_ERROR(check_aligned(dma.write, absl::StrCat("a write into ", MemoryTierName(dst_tier))));
  }
  if (hbm_to_dm) RETURN_IF_ERROR(check_aligned(dma.read, "an HBM-to-DM transfer"));
  return dma;
}

}  // namespace visa
