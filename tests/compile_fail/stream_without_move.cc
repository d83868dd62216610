// A chain split into named streams: without std::move the call must not compile, and the compiler
// must say why (runtime/tensor_unit.h, VISA_CONSUMED_STREAM_CALL). Built by ctest with
// -fsyntax-only, once as written (expected to fail with the remedy) and once with
// -DVISA_WITH_MOVE (expected to compile).
#include "dsl/mapping_parser.h"
#include "runtime/tensor_unit.h"

absl::StatusOr<visa::DmTensor> Kernel(visa::Context& ctx, const visa::DmTensor& input, const visa::MappingScope& s) {
  visa::Stream fetched = ctx.main.begin(input.view()).fetch(visa::DType::kI8, s.m("A"), s.m("B # 8"));
#ifdef VISA_WITH_MOVE
  visa::Stream collected = std::move(fetched).collect(s.m("A"), s.m("B # 32"));
#else
  visa::Stream collected = fetched.collect(s.m("A"), s.m("B # 32"));
#endif
  return std::move(collected).commit(s.m("A, B # 8"), 0x1000);
}
