// Inter-Slice Block rules: data types and ops, 8-way flits, the reduced part innermost in Slice,
// the Output Mapping Rule (dummy, broadcast, promotion from Time), and the combination table.
#include "dsl/inter_slice_reduce.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/engine_errors.h"
#include "dsl/equivalence.h"
#include "dsl/normal_form.h"
#include "dsl/status_macros.h"
#include "dsl/valid_count.h"

namespace visa {
namespace {

constexpr const char* kInter = "Inter-Slice Reduce";

std::string Bracket(const Mapping& m) { return absl::StrCat("[", m.ToString(), "]"); }

std::string FactorText(const Factor& f) { return NormalForm(std::vector<Factor>{f}).ToString(); }

absl::Status CheckOp(DType dtype, VeReduceOp op) {
  if (dtype == DType::kI32) {
    if (op != VeReduceOp::kMul) return absl::OkStatus();
    return EngineError(kInter, "InterSliceReduceOpI32 is Add, AddSat, Max or Min, got Mul");
  }
  if (dtype == DType::kF32) {
    if (op != VeReduceOp::kAddSat) return absl::OkStatus();
    return EngineError(kInter, "InterSliceReduceOpF32 is Add, Max, Min or Mul, got AddSat");
  }
  return EngineError(kInter, "Data types: i32 and f32 only, got ", std::string(Name(dtype)));
}

std::set<std::string> AxesOf(const Mapping& m) {
  std::vector<std::string> names = m.axis_names();
  return {names.begin(), names.end()};
}

bool SameDigit(const Factor& a, const Factor& b) {
  return a.kind == Factor::Kind::kDigit && b.kind == Factor::Kind::kDigit && a.axis == b.axis && a.coef == b.coef &&
         a.count == b.count && a.live == b.live;
}

Index Restrict(const Index& index, const std::set<std::string>& axes) {
  Index kept;
  for (const auto& [name, value] : index.coords()) {
    if (axes.count(name)) kept.Set(name, value);
  }
  return kept;
}

// The innermost Slice factors whose axes the output no longer names: their positions (r) and
// axes. They must be a prefix of Slice's factors (stride 1 through r).
absl::Status FindReduced(const StreamShape& in, const std::set<std::string>& out_axes, int64_t& ratio,
                         std::set<std::string>& reduced_axes) {
  const std::vector<Factor>& factors = in.slice.normal_form().factors();
  size_t prefix = 0;
  ratio = 1;
  auto is_reduced = [&](const Factor& f) {
    if (f.kind == Factor::Kind::kComposite) {
      std::set<std::string> axes = AxesOf(*f.composite);
      return std::none_of(axes.begin(), axes.end(), [&](const std::string& a) { return out_axes.count(a) > 0; });
    }
    return f.kind == Factor::Kind::kDigit && !f.axis.empty() && out_axes.count(f.axis) == 0;
  };
  while (prefix < factors.size() && is_reduced(factors[prefix])) {
    if (factors[prefix].kind == Factor::Kind::kComposite) {
      for (const std::string& a : AxesOf(*factors[prefix].composite)) reduced_axes.insert(a);
      ratio *= factors[prefix].composite->size();
    } else {
      reduced_axes.insert(factors[prefix].axis);
      ratio *= factors[prefix].count;
    }
    ++prefix;
  }
  for (size_t k = prefix; k < factors.size(); ++k) {
    if (is_reduced(factors[k])) {
      return EngineError(kInter, "the reduced part of Slice must be its innermost factors (stride 1 through the ",
                         "reduction ratio), but ", FactorText(factors[k]), " of Slice ", Bracket(in.slice),
                         " disappears from the output while ", k == 0 ? "nothing" : FactorText(factors[k - 1]),
                         " inside it stays");
    }
  }
  if (prefix == 0) {
    return EngineError(kInter, "nothing to reduce: every axis of Slice ", Bracket(in.slice),
                       " is still in the output (the reduced Slice factor must disappear from SliceOut and TimeOut)");
  }
  return absl::OkStatus();
}

// SliceOut % r fills the reduced positions: dummy padding, a new (broadcast) axis, or a factor
// promoted from Time. Returns the promoted Time factors.
absl::StatusOr<std::vector<Factor>> CheckFill(const StreamShape& in, const Mapping& fill, std::vector<std::string>& fills) {
  const std::set<std::string> input_axes = AxesOf(Pair({in.chip, in.cluster, in.slice, in.time, in.packet}));
  const std::vector<Factor>& time_factors = in.time.normal_form().factors();
  std::vector<Factor> promoted;
  for (const Factor& f : fill.normal_form().factors()) {
    if (f.kind == Factor::Kind::kDigit && f.axis.empty()) {
      fills.push_back(absl::StrCat("dummy [", FactorText(f), "]"));
      continue;
    }
    if (f.kind == Factor::Kind::kDigit && input_axes.count(f.axis) == 0) {
      fills.push_back(absl::StrCat("broadcast [", FactorText(f), "]"));
      continue;
    }
    auto it = std::find_if(time_factors.begin(), time_factors.end(), [&](const Factor& t) { return SameDigit(t, f); });
    if (it != time_factors.end()) {
      fills.push_back(absl::StrCat("promotion [", FactorText(f), "] from Time"));
      promoted.push_back(f);
      continue;
    }
    return EngineError(kInter, "Output Mapping Rule: each reduced Slice position in SliceOut is filled by a ",
                       "dummy (1 # n), a new axis (broadcast) or a factor promoted from Time [", in.time.ToString(),
                       "]; ", f.kind == Factor::Kind::kDigit ? FactorText(f) : fill.ToString(), " is none of these");
  }
  return promoted;
}

// For every output position, the input positions holding the same index on the kept axes.
void BuildSources(const StreamShape& in, const std::set<std::string>& reduced_axes, InterSliceReduceStage& stage) {
  const Mapping in_st = Pair({in.slice, in.time});
  const Mapping out_st = Pair({stage.out.slice, stage.out.time});
  std::set<std::string> kept_axes = AxesOf(in_st);
  for (const std::string& a : reduced_axes) kept_axes.erase(a);
  std::map<Index, std::vector<int64_t>> by_index;
  for (int64_t p = 0; p < in_st.size(); ++p) {  // slice-major: sources come in slice order
    const Cell cell = in_st.map(p);
    if (cell.live()) by_index[Restrict(cell.index, kept_axes)].push_back(p);
  }
  stage.sources.assign(out_st.size(), {});
  for (int64_t q = 0; q < out_st.size(); ++q) {
    const Cell cell = out_st.map(q);
    if (!cell.live()) continue;
    auto it = by_index.find(Restrict(cell.index, kept_axes));
    if (it != by_index.end()) stage.sources[q] = it->second;
  }
}

}  // namespace

absl::StatusOr<InterSliceReduceStage> PlanInterSliceReduce(const StreamShape& in, const Mapping& out_slice,
                                                           const Mapping& out_time, VeReduceOp op) {
  for (const Mapping* m : {&in.chip, &in.cluster, &in.slice, &in.time, &in.packet, &out_slice, &out_time}) {
    RETURN_IF_ERROR(m->status());
  }
  RETURN_IF_ERROR(CheckOp(in.dtype, op));
  if (in.packet.size() != kVeLanes) {
    return EngineError(kInter, "the Inter-Slice Block works on 8-way flits: Packet ", Bracket(in.packet), " has ",
                       in.packet.size(), " lanes (Packet does not change across inter-slice reduction)");
  }
  if (in.slice.size() > kSlicesPerCluster) {
    return EngineError(kInter, "Scope: reduction happens within one 256-slice cluster, but Slice ", Bracket(in.slice),
                       " has ", in.slice.size(), " positions");
  }
  if (out_slice.size() != in.slice.size()) {
    return EngineError(kInter, "Scope: reduction happens within one cluster, so SliceOut ", Bracket(out_slice),
                       " must span the same ", in.slice.size(), " slices as Slice ", Bracket(in.slice), ", not ",
                       out_slice.size());
  }
  InterSliceReduceStage stage;
  stage.in = in;
  stage.op = op;
  std::set<std::string> out_axes = AxesOf(out_slice);
  for (const std::string& a : AxesOf(out_time)) out_axes.insert(a);
  std::set<std::string> reduced_axes;
  RETURN_IF_ERROR(FindReduced(in, out_axes, stage.ratio, reduced_axes));
  stage.reduced = in.slice % stage.ratio;
  RETURN_IF_ERROR(stage.reduced.status());

  // The kept Slice factors stay where they were, outside the reduced positions.
  const Mapping kept_in = in.slice / stage.ratio;
  const Mapping kept_out = out_slice / stage.ratio;
  RETURN_IF_ERROR(kept_in.status());
  if (!kept_out.ok()) {
    return EngineError(kInter, "Output Mapping Rule: SliceOut ", Bracket(out_slice), " must keep Slice's outer ",
                       "factors and fill the ", stage.ratio, " reduced positions innermost (", kept_out.status().message(), ")");
  }
  ASSIGN_OR_RETURN(bool kept_same, Equivalent(kept_in, kept_out));
  if (!kept_same) {
    return EngineError(kInter, "Output Mapping Rule: SliceOut ", Bracket(out_slice), " must keep Slice ",
                       Bracket(in.slice), "'s factors outside the reduced [", stage.reduced.normal_form().ToString(), "] in place: ",
                       "expected [", kept_in.ToString(), "] outside ", stage.ratio, " positions, got [",
                       kept_out.ToString(), "]");
  }
  ASSIGN_OR_RETURN(std::vector<Factor> promoted, CheckFill(in, out_slice % stage.ratio, stage.fills));

  // TimeOut is Time without the promoted factors, in order.
  std::vector<Factor> kept_time;
  for (const Factor& f : in.time.normal_form().factors()) {
    if (std::none_of(promoted.begin(), promoted.end(), [&](const Factor& p) { return SameDigit(p, f); })) {
      kept_time.push_back(f);
    }
  }
  const Mapping want_time = NormalForm(kept_time).ToMapping();
  ASSIGN_OR_RETURN(bool time_ok, Equivalent(out_time, want_time));
  if (!time_ok) {
    return EngineError(kInter, "Output Mapping Rule: TimeOut must be Time ", Bracket(in.time),
                       " without the factors promoted into SliceOut, in their order: expected ", Bracket(want_time),
                       ", got ", Bracket(out_time), " (inter-slice reduce reduces Slice factors only)");
  }
  stage.out = in;
  stage.out.slice = out_slice;
  stage.out.time = out_time;
  BuildSources(in, reduced_axes, stage);
  return stage;
}

std::string InterSliceReduceStage::Describe() const {
  return absl::StrCat("inter_slice_reduce ", VeReduceOpName(op), " ", std::string(Name(in.dtype)), ": slice [",
                      in.slice.ToString(), "] -> [", out.slice.ToString(), "], time [", in.time.ToString(), "] -> [",
                      out.time.ToString(), "], reduced [", reduced.normal_form().ToString(), "] (ratio ", ratio, "), fill ",
                      absl::StrJoin(fills, ", "), ", combined in slice order");
}

}  // namespace visa
