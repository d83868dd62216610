// A test's input written straight into DM: a host tensor placed on chip 0 by its cluster, slice
// and element mappings at an address, with no DMA op recorded (the op under test is the only one
// in the program). A placement the device refuses fails the test, naming the rule.
#pragma once

#include <cstdint>
#include <string>

#include "dsl/mapping_parser.h"
#include "runtime/device.h"
#include "runtime/host_tensor.h"
#include "runtime/tensor.h"

namespace visa::test {

DmTensor WriteDm(Device& device, const HostTensor& host, const Mapping& cluster, const Mapping& slice,
                 const Mapping& element, int64_t address, Tier tier = Tier::kDm);

// On cluster `1 # 2` and one slice (`1 # 256`).
DmTensor WriteDm(Device& device, const HostTensor& host, const Mapping& element, int64_t address);

}  // namespace visa::test
