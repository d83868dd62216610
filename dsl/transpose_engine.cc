// The Transpose Engine's rules (manual, "Transpose Engine"; notes/engine-semantics.md 3.8 and
// notes/mapping-algebra.md 4.9) and the search for the configuration that produces the output.
#include "dsl/transpose_engine.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/equivalence.h"
#include "dsl/normal_form.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

constexpr int64_t kFlitBits = kFlitBytes * 8;
// packets_per_col is searched beyond the valid in_cols so that a transpose needing wider rows is
// reported as the in_cols rule it breaks rather than as a shapeless mismatch.
constexpr int64_t kMaxSearchedPacketsPerCol = 16;

constexpr char kConstraints[] = " (manual, Transpose Engine, \"Constraints\")";
constexpr char kStages[] = " (manual, Transpose Engine, \"Conceptual Operation\")";

std::string TypeName(DType type) { return std::string(Name(type)); }
std::string Given(const Mapping& m) { return absl::StrCat("[", m.ToString(), "]"); }
// Derived mappings print in canonical form: `[1, E # 32 = 8]` reads better as `[E]`.
std::string Derived(const Mapping& m) { return absl::StrCat("[", m.normal_form().ToString(), "]"); }

// The first position at or after `from` that holds a tensor element, if any.
std::optional<int64_t> FirstLiveFrom(const Mapping& m, int64_t from) {
  for (int64_t i = from; i < m.size(); ++i) {
    if (m.map(i).live()) return i;
  }
  return std::nullopt;
}

absl::Status CheckMappingsValid(const StreamShape& in, const Mapping& out_time,
                                const Mapping& out_packet) {
  for (const Mapping* m :
       {&in.chip, &in.cluster, &in.slice, &in.time, &in.packet, &out_time, &out_packet}) {
    RETURN_IF_ERROR(m->status());
  }
  return absl::OkStatus();
}

absl::Status CheckOneFlit(absl::string_view which, const Mapping& packet, DType type) {
  if (packet.size() * Bits(type) == kFlitBits) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Transpose ", which, " packet must be 32 bytes (one flit), got ", packet.size(),
      " elements of ", TypeName(type), " = ", packet.size() * Bits(type) / 8.0, " bytes (expected ",
      kFlitBits / Bits(type), " elements) in ", Given(packet), kConstraints));
}

// Unpack keeps only the first elements_per_packet elements of each packet; anything live beyond
// them would be silently lost.
absl::Status CheckUnpackDropsOnlyPadding(const Mapping& packet, const TransposeLimits& limits) {
  std::optional<int64_t> live = FirstLiveFrom(packet, limits.elements_per_packet);
  if (!live.has_value()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Transpose: input packet beyond elements_per_packet (", limits.elements_per_packet,
      ") must be padding, since the Unpack stage keeps only the first ", limits.elements_per_packet,
      " elements of each packet; got ", Given(packet), ", whose position ", *live, " holds ",
      packet.map(*live).ToString(), kStages));
}

// An output row holds in_rows <= max_in_rows elements; the rest of the flit is alignment padding.
absl::Status CheckRowsFit(const Mapping& out_packet, DType type, const TransposeLimits& limits) {
  std::optional<int64_t> live = FirstLiveFrom(out_packet, limits.max_in_rows);
  if (!live.has_value()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Transpose: output packet beyond max in_rows (", limits.max_in_rows, " for ", Bits(type),
      "-bit types) must be padding; got ", Given(out_packet), ", whose position ", *live, " holds ",
      out_packet.map(*live).ToString(), ": at most ", limits.max_in_rows,
      " Time steps can be transposed into one packet", kConstraints));
}

// How far a candidate configuration got before it failed; the furthest failure is reported.
enum class Reached { kShape, kPacket, kOutRows, kTime, kTrim, kInCols, kAccepted };

struct Attempt {
  Reached reached = Reached::kShape;
  std::string error;     // why it failed (empty when accepted)
  TransposeStage stage;  // when accepted
};

// One reading of the input: Time = [outer, rows (in_rows), row packets (packets_per_col)].
struct Candidate {
  int64_t in_rows, packets_per_col, iterations;
};

bool ValidInCols(const TransposeLimits& limits, const Candidate& c) {
  const std::vector<int64_t>& valid = limits.valid_in_cols;
  return std::find(valid.begin(), valid.end(), c.packets_per_col * limits.elements_per_packet) !=
         valid.end();
}

std::string ConfigText(const Candidate& c, int64_t elements_per_packet) {
  return absl::StrCat("in_rows ", c.in_rows, ", packets_per_col ", c.packets_per_col, " (in_cols ",
                      c.packets_per_col * elements_per_packet, ")");
}

// The columns of the input matrix: packets_per_col time steps, each contributing the packet's
// first elements_per_packet elements. They become the output rows.
Mapping Columns(const StreamShape& in, const Candidate& c, const TransposeLimits& limits) {
  return Pair({in.time % c.packets_per_col, in.packet.resize(limits.elements_per_packet)});
}

// Trim may only drop padded rows: dropping a live one would lose data.
std::optional<std::string> TrimLosesData(const Mapping& columns, int64_t out_rows) {
  std::optional<int64_t> live = FirstLiveFrom(columns, out_rows);
  if (!live.has_value()) return std::nullopt;
  return absl::StrCat("Transpose: the Trim stage may only remove padded rows, but out_rows ",
                      out_rows, " of in_cols ", columns.size(), " drops row ", *live,
                      ", which holds ", columns.map(*live).ToString(), kStages);
}

// The output packet must be the candidate's rows (one input row per Time step) padded to a flit.
std::optional<Attempt> RowsMismatch(const StreamShape& in, const Mapping& out_packet,
                                    const TransposeLimits& limits, const Candidate& c) {
  Mapping rows = (in.time / c.packets_per_col) % c.in_rows;
  Mapping expected = rows.pad(limits.output_alignment, PadKind::kTop);
  absl::StatusOr<bool> same = Equivalent(out_packet, expected);
  if (!same.ok()) return Attempt{Reached::kShape, std::string(same.status().message()), {}};
  if (*same) return std::nullopt;
  return Attempt{Reached::kPacket,
                 absl::StrCat("e.g. ", ConfigText(c, limits.elements_per_packet), " gives ",
                              Derived(expected)),
                 {}};
}

// OutTime must be the Time outside the matrix followed by the first out_rows input columns.
std::optional<Attempt> TimeMismatch(const StreamShape& in, const Mapping& out_time,
                                    const Mapping& columns, const TransposeLimits& limits,
                                    const Candidate& c, int64_t out_rows) {
  Mapping outer = in.time / (c.packets_per_col * c.in_rows);
  Mapping expected = Pair({outer, columns.resize(out_rows)});
  absl::StatusOr<std::optional<Difference>> diff = FirstDifference(expected, out_time);
  if (!diff.ok()) return Attempt{Reached::kShape, std::string(diff.status().message()), {}};
  if (!diff->has_value()) return std::nullopt;
  return Attempt{
      Reached::kTime,
      absl::StrCat("Transpose time mismatch: with ", ConfigText(c, limits.elements_per_packet),
                   " and out_rows ", out_rows,
                   ", OutTime must be [the Time outside the matrix, the first out_rows input "
                   "columns]. Expected: ",
                   Derived(expected), ", got: ", Given(out_time), " (they differ at ",
                   (*diff)->ToString(), ")", kStages),
      {}};
}

Attempt OutRowsTooMany(const Mapping& out_time, const TransposeLimits& limits, const Candidate& c,
                       int64_t out_rows) {
  return {Reached::kOutRows,
          absl::StrCat("Transpose: out_rows (", out_rows, ") must be <= in_cols (",
                       c.packets_per_col * limits.elements_per_packet, "): with ",
                       ConfigText(c, limits.elements_per_packet), " there are n = ", c.iterations,
                       " iterations, so OutTime ", Given(out_time), " of size ", out_time.size(),
                       " asks for ", out_rows, " output rows each", kConstraints),
          {}};
}

Attempt InColsInvalid(DType type, const TransposeLimits& limits, const Candidate& c) {
  return {Reached::kInCols,
          absl::StrCat("Transpose: in_cols (", c.packets_per_col * limits.elements_per_packet,
                       " = packets_per_col ", c.packets_per_col, " x elements_per_packet ",
                       limits.elements_per_packet, ") must be one of [",
                       absl::StrJoin(limits.valid_in_cols, ", "), "] for ", Bits(type),
                       "-bit types", kConstraints),
          {}};
}

TransposeStage Accepted(const StreamShape& in, const Mapping& out_time, const Mapping& out_packet,
                        const TransposeLimits& limits, const Candidate& c, int64_t out_rows) {
  TransposeStage stage;
  stage.out = in;
  stage.out.time = out_time;
  stage.out.packet = out_packet;
  stage.in_rows = c.in_rows;
  stage.packets_per_col = c.packets_per_col;
  stage.elements_per_packet = limits.elements_per_packet;
  stage.in_cols = c.packets_per_col * limits.elements_per_packet;
  stage.out_rows = out_rows;
  stage.output_alignment = limits.output_alignment;
  stage.iterations = c.iterations;
  stage.double_buffered = stage.in_cols <= kTransposeBufferCols;
  stage.cycles =
      TransposeCycles(c.in_rows, c.packets_per_col, out_rows, c.iterations, stage.double_buffered);
  return stage;
}

// Checks the rules in the order of the engine's stages for one candidate configuration.
Attempt Try(const StreamShape& in, const Mapping& out_time, const Mapping& out_packet,
            const TransposeLimits& limits, const Candidate& c) {
  if (out_time.size() % c.iterations != 0) return {Reached::kShape, "", {}};
  if (std::optional<Attempt> failed = RowsMismatch(in, out_packet, limits, c)) return *failed;
  const int64_t out_rows = out_time.size() / c.iterations;
  if (out_rows > c.packets_per_col * limits.elements_per_packet) {
    return OutRowsTooMany(out_time, limits, c, out_rows);
  }
  Mapping columns = Columns(in, c, limits);
  if (std::optional<Attempt> failed = TimeMismatch(in, out_time, columns, limits, c, out_rows)) {
    return *failed;
  }
  if (std::optional<std::string> loss = TrimLosesData(columns, out_rows)) {
    return {Reached::kTrim, *loss, {}};
  }
  if (!ValidInCols(limits, c)) return InColsInvalid(in.dtype, limits, c);
  return {Reached::kAccepted, "", Accepted(in, out_time, out_packet, limits, c, out_rows)};
}

// Every (packets_per_col, in_rows) that splits Time, in search order.
std::vector<Candidate> Candidates(int64_t time_size, const TransposeLimits& limits) {
  std::vector<Candidate> out;
  for (int64_t ppc = 1; ppc <= kMaxSearchedPacketsPerCol; ++ppc) {
    for (int64_t rows = 1; rows <= limits.max_in_rows; ++rows) {
      if (time_size % (ppc * rows) == 0) out.push_back({rows, ppc, time_size / (ppc * rows)});
    }
  }
  return out;
}

absl::Status NoConfiguration(const StreamShape& in, const Mapping& out_time,
                             const Mapping& out_packet, const TransposeLimits& limits,
                             const Attempt& best) {
  if (best.reached == Reached::kPacket) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Transpose row mismatch: OutPacket must be the input matrix's rows (in_rows <= ",
        limits.max_in_rows,
        " consecutive Time steps outside the packets_per_col steps of one "
        "row) padded to one flit of ",
        limits.output_alignment,
        " elements, but no in_rows and "
        "packets_per_col read Time ",
        Given(in.time), " as ", Given(out_packet), "; ", best.error, kStages));
  }
  if (best.reached != Reached::kShape) return absl::InvalidArgumentError(best.error);
  return absl::InvalidArgumentError(
      absl::StrCat("Transpose: no configuration fits Time ", Given(in.time), " (size ",
                   in.time.size(), ") and OutTime ", Given(out_time), " (size ", out_time.size(),
                   "): Time must split as [n, in_rows (<= ", limits.max_in_rows,
                   "), packets_per_col] and OutTime as [n, out_rows]", kStages,
                   best.error.empty() ? "" : absl::StrCat(": ", best.error)));
}

// Among failures, the one from the configuration that got furthest explains the problem best;
// among packet mismatches, the one whose in_rows matches the output's live rows is the most
// telling example.
bool Better(const Attempt& a, const Attempt& best, const Candidate& c, int64_t live_rows) {
  if (a.reached != best.reached) return a.reached > best.reached;
  return a.reached == Reached::kPacket && c.in_rows == live_rows && c.packets_per_col == 1;
}

int64_t LiveRows(const Mapping& out_packet) {
  for (int64_t i = out_packet.size(); i > 0; --i) {
    if (out_packet.map(i - 1).live()) return i;
  }
  return 0;
}

}  // namespace

absl::StatusOr<TransposeLimits> TransposeLimitsFor(DType type) {
  if (IsStaging(type)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Transpose: element type ", TypeName(type),
        " is not supported: the engine takes 4-, 8-, 16- and 32-bit storage types; ",
        TypeName(type), " is a zero-point staging type that only the Contraction Engine consumes",
        kConstraints));
  }
  switch (Bits(type)) {
    case 4:
      return TransposeLimits{16, 64, 16, {16, 32}};
    case 8:
      return TransposeLimits{8, 32, 8, {8, 16, 32}};
    case 16:
      return TransposeLimits{8, 16, 4, {8, 16, 32}};
    case 32:
      return TransposeLimits{8, 8, 2, {8, 16, 32}};
  }
  return absl::InvalidArgumentError(absl::StrCat("Transpose: element_bits (", Bits(type),
                                                 ") must be one of [4, 8, 16, 32]", kConstraints));
}

int64_t TransposeCycles(int64_t in_rows, int64_t packets_per_col, int64_t out_rows,
                        int64_t iterations, bool double_buffered) {
  const int64_t input_flits = in_rows * packets_per_col;
  const int64_t output_flits = out_rows;
  if (double_buffered) {
    // Fill the first buffer, overlap the middle iterations, drain the last buffer.
    return input_flits + (iterations - 1) * std::max(input_flits, output_flits) + output_flits;
  }
  return iterations * (input_flits + output_flits);
}

std::string TransposeStage::Describe() const {
  return absl::StrCat("Transpose ", TypeName(out.dtype), ": in_rows ", in_rows, ", in_cols ",
                      in_cols, " (", packets_per_col, " packets x ", elements_per_packet,
                      "), out_rows ", out_rows, ", alignment ", output_alignment, ", n ",
                      iterations, ", ", double_buffered ? "double" : "single", " buffering, ",
                      cycles, " cycles; time [", out.time.ToString(), "] packet [",
                      out.packet.ToString(), "]");
}

absl::StatusOr<TransposeStage> PlanTranspose(const StreamShape& in, const Mapping& out_time,
                                             const Mapping& out_packet) {
  RETURN_IF_ERROR(CheckMappingsValid(in, out_time, out_packet));
  ASSIGN_OR_RETURN(TransposeLimits limits, TransposeLimitsFor(in.dtype));
  RETURN_IF_ERROR(CheckOneFlit("input", in.packet, in.dtype));
  RETURN_IF_ERROR(CheckOneFlit("output", out_packet, in.dtype));
  RETURN_IF_ERROR(CheckUnpackDropsOnlyPadding(in.packet, limits));
  RETURN_IF_ERROR(CheckRowsFit(out_packet, in.dtype, limits));

  const int64_t live_rows = LiveRows(out_packet);
  std::optional<TransposeStage> chosen;
  Attempt best;
  for (const Candidate& c : Candidates(in.time.size(), limits)) {
    Attempt a = Try(in, out_time, out_packet, limits, c);
    // A width the hardware lacks only explains a failure when it is the sole thing wrong.
    if (a.reached < Reached::kInCols && !ValidInCols(limits, c)) a = Attempt{};
    if (a.reached == Reached::kAccepted) {
      if (!chosen.has_value() || a.stage.cycles < chosen->cycles) chosen = a.stage;
    } else if (Better(a, best, c, live_rows)) {
      best = std::move(a);
    }
  }
  if (chosen.has_value()) return *chosen;
  return NoConfiguration(in, out_time, out_packet, limits, best);
}

}  // namespace visa
