// Collect Engine rules: the expected Time2 / Packet2 after padding and flit splitting.
#include "dsl/collect_engine.h"

#include "absl/strings/str_cat.h"
#include "dsl/engine_errors.h"
#include "dsl/equivalence.h"
#include "dsl/normal_form.h"
#include "dsl/status_macros.h"

namespace visa {

int64_t FlitElements(DType dtype) { return kFlitBytes * 8 / WireBits(dtype); }

std::string CollectStage::Describe() const {
  return absl::StrCat("collect time [", out.time.ToString(), "] packet [", out.packet.ToString(),
                      "] flits_per_packet ", flits_per_packet);
}

absl::StatusOr<CollectStage> PlanCollect(const StreamShape& in, const Mapping& time2,
                                         const Mapping& packet2) {
  RETURN_IF_ERROR(time2.status());
  RETURN_IF_ERROR(packet2.status());
  int64_t flit = FlitElements(in.dtype);
  if (packet2.size() != flit) {
    return EngineError("Collect", "Collect output packet must be exactly 32 bytes (one flit): `",
                       packet2.ToString(), "` has ", packet2.size(), " elements of ", Name(in.dtype),
                       ", a flit holds ", flit);
  }
  int64_t flits = (in.packet.size() + flit - 1) / flit;
  Mapping padded = in.packet.pad(flits * flit);
  Mapping expected_packet = padded % flit;
  Mapping expected_time = flits == 1 ? in.time : Pair({in.time, padded / flit});
  ASSIGN_OR_RETURN(bool packet_ok, Equivalent(packet2, expected_packet));
  if (!packet_ok) {
    return EngineError("Collect", "Collect packet mismatch. Expected: `",
                       expected_packet.normal_form().ToString(), "`, got: `", packet2.ToString(), "`");
  }
  ASSIGN_OR_RETURN(bool time_ok, Equivalent(time2, expected_time));
  if (!time_ok) {
    return EngineError("Collect", "Collect time mismatch. Expected: `",
                       expected_time.normal_form().ToString(), "`, got: `", time2.ToString(), "`");
  }
  CollectStage stage;
  stage.out = in;
  stage.out.time = time2;
  stage.out.packet = packet2;
  stage.flits_per_packet = flits;
  return stage;
}

}  // namespace visa
