// A test helper: one launch of a program on a backend under test, checked against the same launch
// on the interpreter over a device of its own (the relaunch tests' oracle).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "interp/interpreter.h"
#include "runtime/launch.h"
#include "runtime/transfer.h"

namespace visa {

// Launches `program` on `device` with `backend` and on a fresh one-chip device with the
// interpreter, each over the inputs `inputs` writes for `seed`, and expects equal outputs.
inline void ExpectLaunchMatchesInterpreter(const Program& program, Device& device, Backend& backend,
                                           const std::function<std::vector<DeviceTensor>(Device&)>& inputs,
                                           uint64_t seed) {
  absl::StatusOr<std::vector<DeviceTensor>> got = Launch(program, device, backend, inputs(device));
  ASSERT_TRUE(got.ok()) << got.status();
  Device reference_device(1);
  interp::Interpreter interpreter;
  absl::StatusOr<std::vector<DeviceTensor>> want = Launch(program, reference_device, interpreter,
                                                          inputs(reference_device));
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_EQ(got->size(), want->size());
  for (size_t k = 0; k < want->size(); ++k) {
    const Mapping full = (*want)[k].full_mapping();
    EXPECT_EQ(*ReadAs((*got)[k], full), *ReadAs((*want)[k], full)) << "output " << k << ", input seed " << seed;
  }
}

}  // namespace visa
