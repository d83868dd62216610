// Test inputs written into DM without a DMA op.
#include "tests/common/dm_input.h"

#include <gtest/gtest.h>

#include "runtime/transfer.h"

namespace visa::test {

DmTensor WriteDm(Device& device, const HostTensor& host, const Mapping& cluster, const Mapping& slice,
                 const Mapping& element, int64_t address, Tier tier) {
  const MappingScope none(Axes{});
  absl::StatusOr<Placement> placement =
      Place(device, host.dtype(), tier, {none.m("1"), cluster, slice, element}, address);
  EXPECT_TRUE(placement.ok()) << placement.status();
  absl::StatusOr<DeviceTensor> written = WriteAs(host, device, *placement);
  EXPECT_TRUE(written.ok()) << written.status();
  return DmTensor(*written);
}

DmTensor WriteDm(Device& device, const HostTensor& host, const Mapping& element, int64_t address) {
  const MappingScope none(Axes{});
  return WriteDm(device, host, none.m("1 # 2"), none.m("1 # 256"), element, address);
}

}  // namespace visa::test
