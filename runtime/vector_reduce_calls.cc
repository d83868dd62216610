// The Vector Engine's reduction calls on a Stream: each plans one step of the open VectorChain
// (dsl/vector_reduce_chain.cc), with the manual's op enums converted to the shared VeReduceOp.
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/program.h"
#include "runtime/tensor_unit.h"

namespace visa {
namespace {

// The op enum names the stream's type (IntraSliceReduceOpI32 on i32 ...).
absl::Status OpTypeMatches(const VectorChain& chain, const char* call, const char* op_enum, DType type) {
  if (chain.shape().dtype == type) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("Vector Engine data type: `", call, "` with ", op_enum, " takes ",
                                                 Name(type), " but the stream is ", Name(chain.shape().dtype)));
}

// The identity of the intra-slice reduce's op ("Padding Strategy" table), as a pad_value reads.
double IdentityOf(VeReduceOp op, DType dtype) {
  const bool f32 = dtype == DType::kF32;
  switch (op) {
    case VeReduceOp::kMax: return f32 ? -std::numeric_limits<double>::infinity() : std::numeric_limits<int32_t>::min();
    case VeReduceOp::kMin: return f32 ? std::numeric_limits<double>::infinity() : std::numeric_limits<int32_t>::max();
    default: return 0;
  }
}

// Identity-element padding holds only where the fetch adapter wrote the op's identity: with
// kLeftIdentity the op's fetch must mask (fetch_masked) with it as pad_value; with kIdentity a
// masking fetch must not pad with anything else.
absl::Status FetchPadsWithIdentity(const std::vector<Stage>& stages, VeReduceOp op, DType dtype,
                                   ReducePadding padding, const std::string& axis) {
  if (padding == ReducePadding::kValidCount) return absl::OkStatus();
  const FetchStage* fetch = nullptr;
  for (const Stage& stage : stages) {
    if (const auto* f = std::get_if<FetchStage>(&stage)) fetch = f;
  }
  const double identity = IdentityOf(op, dtype);
  const std::optional<double> pad = fetch != nullptr ? fetch->adapter.pad_value : std::nullopt;
  if (!pad && padding == ReducePadding::kIdentity) return absl::OkStatus();
  if (pad && *pad == identity) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Intra-Slice Reduce: Padding Strategy: ", ReducePaddingName(padding), " needs the op's identity (",
      VeReduceOpName(op), ": ", identity, ") in ", axis, "'s pad positions, but the fetch ",
      pad ? absl::StrCat("pads with ", *pad) : std::string("does not mask"),
      " (fetch with fetch_masked(..., ", identity, ", ...))"));
}

}  // namespace

Stream Stream::vector_intra_slice_reduce(const std::string& axis, const Mapping& out_time, const Mapping& out_packet,
                                         IntraSliceReduceOpI32 op, ReducePadding padding) && {
  const std::vector<Stage>& stages = op_.stages;
  return std::move(*this).Vector("vector_intra_slice_reduce", [&](VectorChain& chain) -> absl::Status {
    RETURN_IF_ERROR(OpTypeMatches(chain, "vector_intra_slice_reduce", "IntraSliceReduceOpI32", DType::kI32));
    RETURN_IF_ERROR(FetchPadsWithIdentity(stages, ReduceOpOf(op), DType::kI32, padding, axis));
    return chain.IntraSliceReduce(axis, out_time, out_packet, ReduceOpOf(op), padding);
  });
}

Stream Stream::vector_intra_slice_reduce(const std::string& axis, const Mapping& out_time, const Mapping& out_packet,
                                         IntraSliceReduceOpF32 op, ReducePadding padding) && {
  const std::vector<Stage>& stages = op_.stages;
  return std::move(*this).Vector("vector_intra_slice_reduce", [&](VectorChain& chain) -> absl::Status {
    RETURN_IF_ERROR(OpTypeMatches(chain, "vector_intra_slice_reduce", "IntraSliceReduceOpF32", DType::kF32));
    RETURN_IF_ERROR(FetchPadsWithIdentity(stages, ReduceOpOf(op), DType::kF32, padding, axis));
    return chain.IntraSliceReduce(axis, out_time, out_packet, ReduceOpOf(op), padding);
  });
}

Stream Stream::vector_inter_slice_reduce(const Mapping& out_slice, const Mapping& out_time,
                                         InterSliceReduceOpI32 op) && {
  return std::move(*this).Vector("vector_inter_slice_reduce", [&](VectorChain& chain) -> absl::Status {
    RETURN_IF_ERROR(OpTypeMatches(chain, "vector_inter_slice_reduce", "InterSliceReduceOpI32", DType::kI32));
    return chain.InterSliceReduce(out_slice, out_time, ReduceOpOf(op));
  });
}

Stream Stream::vector_inter_slice_reduce(const Mapping& out_slice, const Mapping& out_time,
                                         InterSliceReduceOpF32 op) && {
  return std::move(*this).Vector("vector_inter_slice_reduce", [&](VectorChain& chain) -> absl::Status {
    RETURN_IF_ERROR(OpTypeMatches(chain, "vector_inter_slice_reduce", "InterSliceReduceOpF32", DType::kF32));
    return chain.InterSliceReduce(out_slice, out_time, ReduceOpOf(op));
  });
}

}  // namespace visa
