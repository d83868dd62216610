// Chip parts of a device tensor, from its Chip level and its full image's size.
#include "mpi/chip_parts.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "runtime/device.h"
#include "dsl/dtype.h"

namespace visa::mpi {

std::vector<int> ChipsOf(const DeviceTensor& tensor) {
  std::vector<int> chips;
  if (tensor.tier() == Tier::kHost) return chips;
  const Mapping chip_level = tensor.levels().front();
  const int64_t positions = std::min<int64_t>(chip_level.size(), tensor.device().chips());
  for (int64_t p = 0; p < positions; ++p) {
    if (chip_level.map(p).live()) chips.push_back(static_cast<int>(p));
  }
  return chips;
}

absl::StatusOr<int64_t> ChipBlockBytes(const DeviceTensor& tensor) {
  const int64_t chips = tensor.levels().front().size();
  const int64_t positions = tensor.full_mapping().size();
  const int64_t total = StorageBytes(tensor.dtype(), positions);
  if (chips <= 1) return total;
  if (positions % chips != 0 || StorageBytes(tensor.dtype(), positions / chips) * chips != total) {
    return absl::UnimplementedError(absl::StrCat("MPI: the chip parts of ", tensor.ToString(),
                                                 " do not start on whole bytes; they cannot be exchanged"));
  }
  return total / chips;
}

}  // namespace visa::mpi
