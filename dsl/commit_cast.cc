// The commit cast's rules and its element function (notes 2.3, 3.9; mapping-algebra 4.4).
#include "dsl/commit_cast.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/engine_errors.h"
#include "dsl/scalar_convert.h"
#include "dsl/status_macros.h"

namespace visa {
namespace {

constexpr char kRule[] = " (notes 2.3 / 3.9, Commit Adapter `commit_cast`)";

const char* CallName(bool relu) { return relu ? "commit_cast_relu" : "commit_cast"; }

}  // namespace

uint32_t CommitCastRelu(uint32_t f32_bits) {
  const bool nan = (f32_bits & 0x7fffffffu) > 0x7f800000u;
  return (f32_bits >> 31) != 0 && !nan ? 0u : f32_bits;
}

absl::StatusOr<uint32_t> ConvertByCastStage(const CastStage& stage, uint32_t bits) {
  switch (stage.kind) {
    case CastKind::kEngine: return Convert(ConversionStage::kCastEngine, stage.from, stage.to, bits);
    case CastKind::kCommit: return Convert(ConversionStage::kCommitCast, stage.from, stage.to, bits);
    case CastKind::kCommitRelu:
      return Convert(ConversionStage::kCommitCast, stage.from, stage.to, CommitCastRelu(bits));
  }
  return absl::InternalError("unknown cast kind");
}

absl::StatusOr<CastStage> PlanCommitCast(const StreamShape& in, ContextKind context, DType to, bool relu) {
  for (const Mapping* m : {&in.chip, &in.cluster, &in.slice, &in.time, &in.packet}) RETURN_IF_ERROR(m->status());
  if (context != ContextKind::kMain) {
    return EngineError("Commit Adapter", CallName(relu),
                       " runs on the main context only: the sub context's Commit Engine has no cast stage "
                       "(manual, Commit Engine > Sub-Context Operations: its commits can only follow fetch)",
                       kRule);
  }
  absl::Status pair = CheckConversion(ConversionStage::kCommitCast, in.dtype, to);
  if (!pair.ok()) return EngineError("Commit Adapter", CallName(relu), ": ", pair.message());
  const int64_t packet_bits = in.packet.size() * Bits(in.dtype);
  if (packet_bits != kFlitBytes * 8) {
    return EngineError("Commit Adapter", CallName(relu), ": the input packet must be one 32-byte flit of f32, got ",
                       in.packet.size(), " elements = ", packet_bits / 8, " bytes in packet [",
                       in.packet.ToString(), "]", kRule);
  }
  CastStage stage;
  stage.kind = relu ? CastKind::kCommitRelu : CastKind::kCommit;
  stage.from = in.dtype;
  stage.to = to;
  stage.out = in;
  stage.out.dtype = to;  // the packet mapping is unchanged: 8 f32 (32 B) become 8 bf16 (16 B)
  stage.cycles = in.time.size();
  return stage;
}

absl::Status CheckCommitCastPacket(int64_t commit_in_f32_bytes) {
  if (commit_in_f32_bytes % kCommitCastUnitBytes == 0) return absl::OkStatus();
  std::vector<int64_t> legal;
  for (int64_t bytes : {8, 16, 24, 32}) {
    if (bytes % kCommitCastUnitBytes == 0) legal.push_back(bytes);
  }
  return EngineError("Commit Adapter", "commit_cast input packet is ", commit_in_f32_bytes,
                     " B, not a multiple of ", kCommitCastUnitBytes, " B; re-trim it to one of [",
                     absl::StrJoin(legal, ", "), "] B", kRule);
}

}  // namespace visa
