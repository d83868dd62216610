// visa.h: everything a kernel program includes (mappings, tensors, the Context and its engines,
// DMA, Launch / Trace, both backends, weights files (.safetensors, .npy), the samples' Sample type
// and the `visa::cli` entry).
#pragma once

#include "dsl/axes.h"
#include "dsl/mapping.h"
#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/device.h"
#include "runtime/dma.h"
#include "runtime/host_tensor.h"
#include "runtime/launch.h"
#include "runtime/npy.h"
#include "runtime/safetensors.h"
#include "runtime/tensor.h"
#include "runtime/tensor_unit.h"
#include "samples/sample.h"
#include "tools/cli_main.h"
