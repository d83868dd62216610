// WriteIntoWindow: a host image written into an existing tensor or a view of one (only the live
// positions of the view's window change; the bytes between them keep what memory holds). What a
// distributed run (mpi/mpi_backend.h) needs to bring another rank's chip into a chip view.
// Defined in transfer.cc beside WriteInto, whose staging it shares.
#pragma once

#include "absl/status/status.h"
#include "runtime/host_tensor.h"
#include "runtime/tensor.h"

namespace visa {

absl::Status WriteIntoWindow(const HostTensor& src, const DeviceTensor& dst);

}  // namespace visa
