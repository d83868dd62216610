// The uninitialized-read check of one op's device reads, before it runs, for backends that do not
// read through the interpreter's engines (the JIT): the same reads the interpreter checks as it
// walks the op (uninitialized_reads.h), the same rule and message, in the same order.
#pragma once

#include "absl/status/status.h"
#include "runtime/backend.h"
#include "runtime/program.h"

namespace visa::interp {

// A pipeline's fetch (its sources; an indirect fetch checks its own index and rows) and its
// contraction's TRF weights.
absl::Status CheckOpReads(const PipelineOp& op, const PipelineTensors& tensors);
// A move's source (a gather: its index and the rows it names; a scatter: its index too); a memset
// reads nothing.
absl::Status CheckOpReads(const DmaOp& op, const DmaTensors& tensors);

}  // namespace visa::interp
