// What sample tests share: a sample run on the interpreter against its own host reference, then
// `visa check` of it (every op's result identical on the two backends). Header-only: test common
// code links before the samples and the command-line library.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "interp/interpreter.h"
#include "samples/sample.h"
#include "tools/check_command.h"

namespace visa::sample_test {

inline void ExpectMatchesReferenceAndBackendsAgree(const char* name) {
  const samples::Sample* sample = samples::FindSample(name);
  ASSERT_NE(sample, nullptr) << name;
  interp::Interpreter interpreter;
  absl::StatusOr<samples::SampleRun> run = sample->Run(interpreter);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_FALSE(run->mismatch.has_value()) << run->Summary(name);
  EXPECT_GT(run->elements, 0);
  std::ostringstream out, err;
  EXPECT_EQ(cli::CheckSampleCommand({.sample = name, .progress = false}, out, err), 0) << out.str() << err.str();
  EXPECT_THAT(out.str(), ::testing::HasSubstr("identical"));
}

}  // namespace visa::sample_test
