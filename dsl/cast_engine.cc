// The Cast Engine's rules (manual, "Cast Engine"; notes/mapping-algebra.md 4.6) and its plan.
#include "dsl/cast_engine.h"

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "dsl/equivalence.h"
#include "dsl/normal_form.h"
#include "dsl/status_macros.h"
#include "dsl/scalar_convert.h"

namespace visa {
namespace {

constexpr int64_t kFlitBits = kFlitBytes * 8;

// Where the rules come from, appended to every message so users can look them up.
constexpr char kPacketRule[] =
    " (manual, Cast Engine, \"Packet Transformation\": Packet = [P # (32 / sizeof(D1))] becomes "
    "[P # (32 / sizeof(D2))])";

std::string TypeName(DType type) { return std::string(Name(type)); }

// "8 elements = 32 bytes": bytes are whole for every Cast type (4-bit outputs come in pairs).
std::string PacketSize(const Mapping& packet, DType type) {
  int64_t bits = packet.size() * Bits(type);
  return absl::StrCat(packet.size(), " elements = ",
                      bits % 8 == 0 ? absl::StrCat(bits / 8) : absl::StrCat(bits, "/8"), " bytes");
}

absl::Status CheckInputFlit(const StreamShape& in) {
  if (in.packet.size() * Bits(in.dtype) == kFlitBits) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Cast input packet must be exactly 32 bytes (one flit): ", PacketSize(in.packet, in.dtype),
      " of ", TypeName(in.dtype), " in packet [", in.packet.ToString(),
      "]; the Collect Engine pads packets to one flit before the Cast Engine", kPacketRule));
}

absl::Status CheckOutputFlit(const Mapping& out_packet, DType to, const Mapping& expected) {
  if (out_packet.size() * Bits(to) == kFlitBits) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Cast output packet must be exactly 32 bytes (one flit): ", PacketSize(out_packet, to),
      " of ", TypeName(to), " in packet [", out_packet.ToString(), "]; expected [",
      expected.normal_form().ToString(), "]", kPacketRule));
}

// The output packet must hold the input packet's elements in the same order, padded (Top) to
// one flit of the narrower type: the engine converts in place and never reorders.
absl::Status CheckPacketMatches(const Mapping& out_packet, const Mapping& expected) {
  ASSIGN_OR_RETURN(std::optional<Difference> diff, FirstDifference(expected, out_packet));
  if (!diff.has_value()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Cast packet mismatch. Expected: [", expected.normal_form().ToString(), "], got: [",
      out_packet.ToString(), "] (they differ at ", diff->ToString(), ")", kPacketRule));
}

absl::Status CheckShapeValid(const StreamShape& in, const Mapping& out_packet) {
  for (const Mapping* m : {&in.chip, &in.cluster, &in.slice, &in.time, &in.packet, &out_packet}) {
    RETURN_IF_ERROR(m->status());
  }
  return absl::OkStatus();
}

}  // namespace

std::string CastStage::Describe() const {
  if (kind != CastKind::kEngine) {
    return absl::StrCat(kind == CastKind::kCommitRelu ? "commit_cast_relu " : "commit_cast ", TypeName(from),
                        " -> ", TypeName(to), ": packet [", out.packet.ToString(), "] (", out.packet.size(),
                        " x ", TypeName(from), " = ", out.packet.size() * Bits(from) / 8, " B -> ",
                        out.packet.size() * Bits(to) / 8, " B), time [", out.time.ToString(), "] unchanged",
                        kind == CastKind::kCommitRelu ? ", negative non-NaN values (and -0) to +0" : "");
  }
  return absl::StrCat("Cast ", TypeName(from), " -> ", TypeName(to), ": packet [",
                      out.packet.ToString(), "] (", out.packet.size(), " x ", TypeName(to),
                      "), time [", out.time.ToString(), "] unchanged, ", cycles, " cycles");
}

absl::StatusOr<CastStage> PlanCast(const StreamShape& in, DType to, const Mapping& out_packet) {
  RETURN_IF_ERROR(CheckShapeValid(in, out_packet));
  RETURN_IF_ERROR(CheckConversion(ConversionStage::kCastEngine, in.dtype, to));
  RETURN_IF_ERROR(CheckInputFlit(in));
  // Every supported cast narrows, so one output flit holds at least as many elements as the input.
  int64_t out_elements = kFlitBits / Bits(to);
  VISA_CHECK(out_elements >= in.packet.size(), "Cast Engine pairs must narrow");
  Mapping expected = in.packet.pad(out_elements, PadKind::kTop);
  RETURN_IF_ERROR(expected.status());
  RETURN_IF_ERROR(CheckOutputFlit(out_packet, to, expected));
  RETURN_IF_ERROR(CheckPacketMatches(out_packet, expected));

  CastStage stage;
  stage.from = in.dtype;
  stage.to = to;
  stage.out = in;
  stage.out.dtype = to;
  stage.out.packet = out_packet;
  // The manual gives no formula, only that the stage "is never the pipeline bottleneck": it
  // converts one flit per cycle, so a slice's stream takes one cycle per time step.
  stage.cycles = in.time.size();
  return stage;
}

}  // namespace visa
