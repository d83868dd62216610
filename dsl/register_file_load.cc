// Rules of `to_trf` and `to_vrf`: sub context, collected streams, row split and capacity.
#include "dsl/register_file_load.h"

#include "absl/strings/str_cat.h"
#include "dsl/checked_math.h"
#include "dsl/engine_errors.h"
#include "dsl/equivalence.h"
#include "dsl/normal_form.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

absl::Status CheckSource(absl::string_view call, StreamPosition position, ContextKind context) {
  if (context != ContextKind::kSub) {
    return EngineError(call, "register files are loaded from the sub context (`ctx.sub`), "
                       "not `ctx.main`");
  }
  if (position != StreamPosition::kCollect) {
    return EngineError(call, "needs a collected stream (fetch, [switch,] collect), got one after ",
                       StreamPositionName(position));
  }
  return absl::OkStatus();
}

int64_t Bytes(int64_t elements, DType dtype) { return (elements * WireBits(dtype) + 7) / 8; }

}  // namespace

std::string RegisterLoadStage::Describe() const {
  if (to_trf) {
    return absl::StrCat("to_trf ", trf_mode, " row [", row.ToString(), "] element [",
                        element.ToString(), "]");
  }
  return absl::StrCat("to_vrf @ ", vrf_address, " element [", element.ToString(), "]");
}

absl::StatusOr<RegisterLoadStage> PlanToTrf(const StreamShape& in, StreamPosition position,
                                            ContextKind context, const Mapping& row,
                                            const Mapping& element, absl::string_view trf_mode,
                                            int64_t row_capacity) {
  RETURN_IF_ERROR(row.status());
  RETURN_IF_ERROR(element.status());
  RETURN_IF_ERROR(CheckSource("to_trf", position, context));
  int64_t rows = row.size();
  if (rows != 1 && rows != 2 && rows != 4 && rows != 8) {
    return EngineError("to_trf", "Row::SIZE must be 1, 2, 4, or 8, got ", rows, " (`", row.ToString(), "`)");
  }
  int64_t capacity = row_capacity;
  if (Bytes(element.size(), in.dtype) > capacity) {
    return EngineError("to_trf", "TRF data (", Bytes(element.size(), in.dtype), " bytes per row, `",
                       element.ToString(), "` of ", Name(in.dtype), ") exceeds the tensor register "
                       "file capacity (", capacity, " bytes per row for TrfAddress::", trf_mode, ")");
  }
  if (in.time.size() % rows != 0) {
    return EngineError("to_trf", "Row::SIZE (", rows, ") does not divide Time::SIZE (", in.time.size(), ")");
  }
  int64_t inner = in.time.size() / rows;
  Mapping outer_time = in.time / inner;
  Mapping inner_time = in.time % inner;
  ASSIGN_OR_RETURN(bool row_ok, Equivalent(outer_time, row));
  if (!row_ok) {
    return EngineError("to_trf", "`to_trf` row mismatch: the outer ", rows, " of Time `",
                       in.time.ToString(), "` are `", outer_time.normal_form().ToString(),
                       "`, not Row `", row.ToString(), "`");
  }
  Mapping expected = Pair({inner_time, in.packet});
  ASSIGN_OR_RETURN(bool element_ok, Equivalent(expected, element));
  if (!element_ok) {
    return EngineError("to_trf", "`to_trf` element mismatch: [time_inner, Packet] is `",
                       expected.normal_form().ToString(), "`, not Element `", element.ToString(), "`");
  }
  return RegisterLoadStage{true, row, element, std::string(trf_mode), 0};
}

absl::StatusOr<RegisterLoadStage> PlanToVrf(const StreamShape& in, StreamPosition position,
                                            ContextKind context, const Mapping& element,
                                            int64_t address) {
  RETURN_IF_ERROR(element.status());
  RETURN_IF_ERROR(CheckSource("to_vrf", position, context));
  if (in.dtype != DType::kI32 && in.dtype != DType::kF32) {
    return EngineError("to_vrf", "the VRF holds i32 or f32 elements (the Vector Engine's operands), got ",
                       Name(in.dtype), "; fetch with a cast to i32 or f32");
  }
  int64_t bytes = Bytes(element.size(), in.dtype);
  if (!RangeWithin(address, bytes, kVrfBytes)) {
    return EngineError("to_vrf", "VRF data (", bytes, " bytes at address ", address,
                       ") exceeds register file capacity (8192 bytes per slice)");
  }
  Mapping expected = Pair({in.time, in.packet});
  ASSIGN_OR_RETURN(bool element_ok, Equivalent(expected, element));
  if (!element_ok) {
    return EngineError("to_vrf", "`to_vrf` element mismatch: [Time, Packet] is `",
                       expected.normal_form().ToString(), "`, not Element `", element.ToString(), "`");
  }
  return RegisterLoadStage{false, Mapping(), element, "", address};
}

}  // namespace visa
