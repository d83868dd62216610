// The Fetch Sequencer's IndirectLoop: the rules of its place in the stream and its configuration.
#include "dsl/indirect_fetch.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/fetch_engine.h"
#include "dsl/sequencer.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

template <typename... Parts>
absl::Status IndirectError(const Parts&... parts) {
  return absl::InvalidArgumentError(absl::StrCat("Indirect Access: ", parts...));
}

// A mapping's top-level terms, major first (`K, V / 8` -> K, V / 8).
void Terms(const Mapping& m, std::vector<Mapping>& out) {
  if (m.kind() == Mapping::Kind::kPair) {
    Terms(m.major(), out);
    Terms(m.minor(), out);
    return;
  }
  out.push_back(m);
}

bool Names(const Mapping& m, const std::string& axis) {
  const std::vector<std::string> names = m.axis_names();
  return std::find(names.begin(), names.end(), axis) != names.end();
}

// Time's terms after the leading K, each free of K and W.
absl::StatusOr<std::vector<Mapping>> InnerTimeTerms(const Mapping& time, const Mapping& packet, const std::string& w,
                                                    const Axis& key) {
  std::vector<Mapping> terms;
  Terms(time, terms);
  const bool leads = !terms.empty() && terms[0].kind() == Mapping::Kind::kSymbol && terms[0].axis() == key;
  if (!leads) {
    return IndirectError("the IndirectLoop is the Fetch Sequencer's outermost entry: Time `", time.ToString(),
                         "` must start with the whole index axis `", key.name, "` (`", key.name, ", ...`)");
  }
  terms.erase(terms.begin());
  for (const Mapping& t : terms) {
    if (Names(t, key.name) || Names(t, w)) {
      return IndirectError("Time `", time.ToString(), "` holds `", t.ToString(), "`; `", key.name, "` and `", w,
                           "` are read only through the IndirectLoop (one `", key.name, "` term, outermost)");
    }
  }
  if (Names(packet, key.name) || Names(packet, w)) {
    return IndirectError("the Packet `", packet.ToString(), "` holds `", key.name, "` or `", w,
                         "`; the IndirectLoop is a Time entry (a packet reads within one row)");
  }
  return terms;
}

absl::StatusOr<Axis> RowAxis(const StreamShape& begin, const std::string& w) {
  for (const Mapping* level : {&begin.chip, &begin.cluster, &begin.slice}) {
    if (Names(*level, w)) {
      return IndirectError("the table's rows `", w, "` are spread over `", level->ToString(),
                           "`; each slice's Fetch Sequencer reads rows within its DM Element");
    }
  }
  for (const Axis& a : begin.packet.symbols()) {
    if (a.name == w && !a.skew && !a.shift) return a;
  }
  return IndirectError("the DM Element `", begin.packet.ToString(), "` has no axis `", w, "` to gather rows of");
}

// The configuration as the manual writes it, the IndirectLoop in place of the first entry.
std::string IndirectText(const SequencerConfig& config, const IndirectLoop& loop) {
  std::vector<std::string> entries;
  for (size_t i = 0; i < config.entries.size(); ++i) {
    const SequencerEntry& e = config.entries[i];
    entries.push_back(i == 0 ? absl::StrCat(loop.key_axis, " -> (", loop.limit, ", [index[", loop.key_axis, "] x ",
                                            loop.row_stride, "])")
                             : absl::StrCat(e.label, " -> ", e.size, " : ", e.stride));
  }
  std::string text = absl::StrCat("[", absl::StrJoin(entries, ", "), "] : ", config.packet_size);
  if (config.base_offset != 0) absl::StrAppend(&text, " @ base_addr = ", config.base_offset);
  return text;
}

// Consecutive steps of the IndirectLoop read unrelated rows, so a contiguous run (and a fetch)
// ends with the entries inside it; the cycles count |K| steps.
// The cycle estimate is the plain fetch formula (manual, "Fetch Engine" > Performance: packets x
// fetches per packet) over this shortened run. The manual gives no performance figure for
// indirect access (its "Indirect Access" section and "Indirect Sequencing", a TODO, say nothing of
// cost): no latency for reading the offsets from DM, none for a row change, so neither is added.
absl::Status LimitToOneRow(const SequencerConfig& config, DType in, ContextKind context, AccessPlan& access) {
  SequencerConfig inner = config;
  inner.entries.erase(inner.entries.begin());
  ASSIGN_OR_RETURN(AccessPlan row, PlanFetch(inner, ElementBits{Bits(in)}, context));
  access.contiguous_bytes = std::min(access.contiguous_bytes, row.contiguous_bytes);
  if (row.access_bytes < access.access_bytes) {
    access.access_bytes = row.access_bytes;
    access.accesses_per_packet = (access.packet_bytes + access.access_bytes - 1) / access.access_bytes;
  }
  access.cycles = config.time_size() * access.accesses_per_packet;
  return absl::OkStatus();
}

}  // namespace

std::string IndirectFetch::Describe() const {
  return absl::StrCat("IndirectLoop (limit ", loop.limit, ", [offset0, offset1, ...] = index[", loop.key_axis, "] x ",
                      loop.row_stride, " elements) gathers rows of ", loop.table_axis, " = ", loop.table_size,
                      " into ", loop.key_axis, ", index ", index);
}

absl::StatusOr<FetchStage> PlanIndirectFetchStage(const StreamShape& begin, ContextKind context, DType out_dtype,
                                                  const std::string& table_axis, const Axis& key,
                                                  const Mapping& time, const Mapping& packet,
                                                  std::optional<double> pad_value) {
  RETURN_IF_ERROR(time.status());
  RETURN_IF_ERROR(packet.status());
  ASSIGN_OR_RETURN(Axis w, RowAxis(begin, table_axis));
  ASSIGN_OR_RETURN(std::vector<Mapping> inner, InnerTimeTerms(time, packet, table_axis, key));
  if (key.size > kMaxSequencerIterations) {
    return IndirectError("Iteration limit: the IndirectLoop's limit |", key.name, "| = ", key.size,
                         " is over the ", kMaxSequencerIterations, " iterations of a sequencer entry");
  }
  ASSIGN_OR_RETURN(Mapping rows, Mapping::Symbol(w));
  std::vector<Mapping> seq_terms = {rows};
  seq_terms.insert(seq_terms.end(), inner.begin(), inner.end());
  // The sequencer over the rows themselves; the IndirectLoop then walks |K| of them, in index order.
  ASSIGN_OR_RETURN(FetchStage stage,
                   PlanFetchStage(begin, nullptr, context, out_dtype, Pair(seq_terms), packet,
                                                  FetchAdapter{{}, {}, pad_value}));
  std::vector<SequencerEntry>& entries = stage.sequencer.entries;
  const int64_t row_entries = std::count_if(entries.begin(), entries.end(),
                                            [&](const SequencerEntry& e) { return e.label == table_axis; });
  if (entries.empty() || entries[0].label != table_axis || entries[0].size != w.size || row_entries != 1) {
    return IndirectError("the rows `", table_axis, "` are not one sequencer entry of ",
                         stage.sequencer.ToLabeledString(), " (DM Element `", begin.packet.ToString(),
                         "`); the IndirectLoop replaces one (limit, stride) entry, the outermost");
  }
  IndirectLoop loop{table_axis, w.size, key.name, key.size, entries[0].stride, /*scatter=*/false, ""};
  RETURN_IF_ERROR(CheckRowsStartOnBytes(loop, Bits(stage.in_dtype), std::string(Name(stage.in_dtype))));
  entries[0].size = key.size;
  entries[0].label = key.name;
  RETURN_IF_ERROR(LimitToOneRow(stage.sequencer, stage.in_dtype, context, stage.access));
  stage.out.time = time;
  loop.sequencer = IndirectText(stage.sequencer, loop);
  stage.indirect = IndirectFetch{loop, ""};
  return stage;
}

}  // namespace visa
