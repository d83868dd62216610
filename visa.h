// visa.h: everything a kernel program includes. Mappings (parsing, equivalence, sequencer
// derivation), tensors at every level and their layouts, the Context with its Tensor Units and DMA
// engines, DMA moves and host transfers, gather / scatter (indirect DMA; the Fetch Engine's
// indirect fetch is `fetch_indirect` on a stream), memset, parallel copy and asymmetric slice,
// chip views and chip shuffle, Launch / Trace and the backends that plan (TraceBackend), record
// (RecordingBackend) or time (TimingBackend) a run, both backends (interpreter, JIT), `Describe`
// (an op's cycles and bytes) and the scheduler, weights files (.safetensors, .npy), the samples'
// Sample type with its input values, and the `visa::cli` entry. The status macros
// (ASSIGN_OR_RETURN, RETURN_IF_ERROR) stay in dsl/status_macros.h, so they clash with no one's own.
// tests/visa_header_test.cc uses each through this header alone.
#pragma once

#include "dsl/axes.h"
#include "dsl/equivalence.h"
#include "dsl/mapping.h"
#include "dsl/mapping_parser.h"
#include "dsl/sequencer.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/chip_shuffle.h"
#include "runtime/chip_view.h"
#include "runtime/device.h"
#include "runtime/dma.h"
#include "runtime/host_tensor.h"
#include "runtime/indirect_dma.h"
#include "runtime/launch.h"
#include "runtime/memset.h"
#include "runtime/npy.h"
#include "runtime/op_description.h"
#include "runtime/parallel_copy.h"
#include "runtime/recording_backend.h"
#include "runtime/safetensors.h"
#include "runtime/scheduler.h"
#include "runtime/tensor.h"
#include "runtime/tensor_unit.h"
#include "runtime/timing_backend.h"
#include "runtime/trace_backend.h"
#include "runtime/transfer.h"
#include "samples/input_values.h"
#include "samples/sample.h"
#include "tools/cli_main.h"
