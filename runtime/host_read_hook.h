// HostReadHook: what runs before a host read-back of a device tensor (ReadAs, a DMA to_host).
// A single process needs nothing; under mpirun (mpi/mpi_backend.h) the chips a tensor lies on
// may belong to other ranks, whose bytes this process never computed: the hook gathers them from
// their owners first, so every rank reads what one process would. Unset, it does nothing.
#pragma once

#include <functional>

#include "absl/status/status.h"
#include "runtime/tensor.h"

namespace visa {

using HostReadHook = std::function<absl::Status(const DeviceTensor& src)>;

// Replaces the process's hook (an empty function removes it).
void SetHostReadHook(HostReadHook hook);
// Runs the hook on `src`; OK when none is set.
absl::Status BeforeHostRead(const DeviceTensor& src);

}  // namespace visa
