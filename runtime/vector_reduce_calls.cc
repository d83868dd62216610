// The Vector Engine's reduction calls on a Stream: each plans one step of the open VectorChain
// (dsl/vector_reduce_chain.cc), with the manual's op enums converted to the shared VeReduceOp.
#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/tensor_unit.h"

namespace visa {
namespace {

// The op enum names the stream's type (IntraSliceReduceOpI32 on i32 ...).
absl::Status OpTypeMatches(const VectorChain& chain, const char* call, const char* op_enum, DType type) {
  if (chain.shape().dtype == type) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("Vector Engine data type: `", call, "` with ", op_enum, " takes ",
                                                 Name(type), " but the stream is ", Name(chain.shape().dtype)));
}

}  // namespace

Stream Stream::vector_intra_slice_reduce(const std::string& axis, const Mapping& out_time, const Mapping& out_packet,
                                         IntraSliceReduceOpI32 op, ReducePadding padding) && {
  return std::move(*this).Vector("vector_intra_slice_reduce", [&](VectorChain& chain) -> absl::Status {
    RETURN_IF_ERROR(OpTypeMatches(chain, "vector_intra_slice_reduce", "IntraSliceReduceOpI32", DType::kI32));
    return chain.IntraSliceReduce(axis, out_time, out_packet, ReduceOpOf(op), padding);
  });
}

Stream Stream::vector_intra_slice_reduce(const std::string& axis, const Mapping& out_time, const Mapping& out_packet,
                                         IntraSliceReduceOpF32 op, ReducePadding padding) && {
  return std::move(*this).Vector("vector_intra_slice_reduce", [&](VectorChain& chain) -> absl::Status {
    RETURN_IF_ERROR(OpTypeMatches(chain, "vector_intra_slice_reduce", "IntraSliceReduceOpF32", DType::kF32));
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
