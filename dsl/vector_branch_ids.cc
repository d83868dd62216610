// ValidCount and Vrf execution ids by position.
#include "dsl/vector_branch_ids.h"

#include "absl/strings/str_cat.h"
#include "dsl/index.h"
#include "dsl/status_macros.h"
#include "dsl/valid_count.h"

namespace visa {

absl::StatusOr<std::vector<uint8_t>> ValidCountIds(const StreamShape& in, const std::string& axis) {
  if (axis.empty()) {
    return absl::InvalidArgumentError(
        "Branch: BranchMode::ValidCount names the padded axis whose valid count the Valid Count Generator gives "
        "(BranchMode::ValidCount(\"R\"))");
  }
  absl::StatusOr<ValidCountConfig> config = PlanValidCount(in, axis);
  if (!config.ok()) {
    return absl::Status(config.status().code(),
                        absl::StrCat("Branch: BranchMode::ValidCount(", axis, "): ", config.status().message()));
  }
  const Mapping layout = in.Full();
  const int64_t lanes = in.packet.size();
  const int64_t times = in.time.size() * (in.row ? in.row->size() : 1);
  std::vector<uint8_t> ids(static_cast<size_t>(layout.size()), 0);
  for (int64_t p = 0; p < layout.size(); ++p) {
    if (!layout.map(p).live()) continue;
    const int64_t flit = p / lanes;
    const int64_t t = flit % in.time.size();
    const int64_t slice = (flit / times) % in.slice.size();
    ids[p] = p % lanes < ValidCount(*config, slice, t) ? 1 : 0;
  }
  return ids;
}

absl::StatusOr<std::vector<uint8_t>> VrfIds(absl::Span<const uint32_t> values, const Mapping& layout,
                                            const std::string& vrf_text) {
  std::vector<uint8_t> ids(values.size(), 0);
  for (size_t p = 0; p < values.size(); ++p) {
    if (values[p] > 15) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Branch: BranchMode::Vrf loads 4-bit ExecutionIds (0-15, \"ExecutionId range\"), but the VRF tensor ",
          vrf_text, " holds ", static_cast<int32_t>(values[p]), " at ", layout.map(static_cast<int64_t>(p)).index.ToString()));
    }
    ids[p] = static_cast<uint8_t>(values[p]);
  }
  return ids;
}

}  // namespace visa
