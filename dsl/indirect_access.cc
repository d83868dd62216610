// IndirectLoop's text for `visa explain`.
#include "dsl/indirect_access.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/sequencer.h"
#include "dsl/status_macros.h"

namespace visa {

std::string IndirectLoop::Describe() const {
  const std::string seq = sequencer.empty() ? "" : absl::StrCat("\n  sequencer ", sequencer);
  if (scatter) {
    return absl::StrCat("IndirectLoop (limit ", limit, ", [offset0, offset1, ...] = index[", key_axis, "] x ",
                        row_stride, " elements) scatters rows of ", key_axis, " into ", table_axis, " = ",
                        table_size, seq);
  }
  return absl::StrCat("IndirectLoop (limit ", limit, ", [offset0, offset1, ...] = index[", key_axis, "] x ",
                      row_stride, " elements) gathers rows of ", table_axis, " = ", table_size, " into ",
                      key_axis, seq);
}

absl::Status CheckRowsStartOnBytes(const IndirectLoop& loop, int element_bits, const std::string& element_type) {
  if (loop.row_stride * element_bits % 8 == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Indirect Access: the IndirectLoop's offsets index[", loop.key_axis, "] x ", loop.row_stride, " ",
      element_type, " elements start rows of ", loop.table_axis, " inside a byte (", loop.row_stride, " x ",
      element_bits, " bits); reads start on whole bytes (manual, Fetch Sequencer > Constraints: addresses "
      "must be 1-byte aligned): lay the rows out a whole number of bytes apart (e.g. pad them to an even "
      "number of elements)"));
}

absl::StatusOr<std::string> DeriveIndirectSequencer(const Mapping& table_element, const IndirectLoop& loop) {
  RETURN_IF_ERROR(table_element.status());
  std::vector<Mapping> rest;
  Mapping time;
  for (const Axis& a : table_element.symbols()) {
    ASSIGN_OR_RETURN(Mapping symbol, Mapping::Symbol(a));
    if (a.name == loop.table_axis) time = symbol;
    else rest.push_back(symbol);
  }
  if (time.size() != loop.table_size) {
    return absl::InvalidArgumentError(absl::StrCat("Indirect Access: the Element `", table_element.ToString(),
                                                   "` does not hold the rows `", loop.table_axis, "`"));
  }
  const Mapping packet = rest.empty() ? Mapping() : Pair(rest);
  ASSIGN_OR_RETURN(SequencerConfig config, DeriveSequencer(table_element, time, packet, SequencerMode::kRead));
  std::vector<std::string> entries;
  int rows = 0;
  for (const SequencerEntry& e : config.entries) {
    if (e.label == loop.table_axis && e.size == loop.table_size) {
      ++rows;
      entries.push_back(absl::StrCat(loop.key_axis, " -> (", loop.limit, ", [index[", loop.key_axis, "] x ",
                                     e.stride, "])"));
    } else {
      entries.push_back(absl::StrCat(e.label, " -> ", e.size, " : ", e.stride));
    }
  }
  if (rows != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Indirect Access: the rows `", loop.table_axis, "` are not one sequencer entry of ",
        config.ToLabeledString(), "; the IndirectLoop replaces one (limit, stride) entry"));
  }
  return absl::StrCat("[", absl::StrJoin(entries, ", "), "] : ", config.packet_size);
}

}  // namespace visa
