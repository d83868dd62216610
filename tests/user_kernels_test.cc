// A program's own kernels on the command line: samples::RegisterSamples and its rules, the
// commands finding a registered kernel, and the progress pieces of long runs.
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interp/interpreter.h"
#include "runtime/trace_options.h"
#include "runtime/tensor_unit.h"
#include "runtime/trace_backend.h"
#include "samples/sample.h"
#include "tools/check_command.h"
#include "tools/progress.h"
#include "tools/progress_backend.h"
#include "tools/run_command.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

// A copy of [A, B] through fetch, collect and commit: the output holds the input.
samples::Sample CopyKernel(std::string name) {
  samples::Sample sample;
  sample.name = std::move(name);
  sample.description = "a user's copy";
  sample.axes = "A = 4, B = 32";
  sample.element = "A, B";
  sample.kernel = [](Context& ctx, const DmTensor& input, const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
    absl::StatusOr<DmTensor> out = ctx.main.begin(input.view())
                                       .fetch(DType::kI8, s.m("A"), s.m("B"))
                                       .collect(s.m("A"), s.m("B"))
                                       .commit(s.m("A, B"), 0x1000);
    if (!out.ok()) return out.status();
    return *out;
  };
  sample.readback = "A, B";
  return sample;
}

TEST(RegisterSamplesTest, RegisteredKernelsRunAndCheckFromTheCommands) {
  ASSERT_TRUE(samples::RegisterSamples({CopyKernel("user_copy")}).ok());
  ASSERT_NE(samples::FindSample("user_copy"), nullptr);
  EXPECT_NE(samples::FindSample("gemm"), nullptr);  // built-ins kept by default
  std::ostringstream out, err;
  EXPECT_EQ(cli::RunSampleCommand({.sample = "user_copy"}, out, err), 0) << err.str();
  EXPECT_EQ(out.str(), "user_copy: ok (128 elements, max error 0)\n");
  std::ostringstream checked;
  EXPECT_EQ(cli::CheckSampleCommand({.sample = "user_copy"}, checked, err), 0) << err.str();
  EXPECT_EQ(checked.str(), "user_copy: identical\n");
}

TEST(RegisterSamplesTest, OnlyTheUsersKernelsWhenAsked) {
  ASSERT_TRUE(samples::RegisterSamples({CopyKernel("mine")}, /*keep_builtin=*/false).ok());
  ASSERT_EQ(samples::AllSamples().size(), 1u);
  EXPECT_EQ(samples::FindSample("gemm"), nullptr);
}

TEST(RegisterSamplesTest, RefusesDuplicatesEmptyNamesAndMissingKernels) {
  ASSERT_TRUE(samples::RegisterSamples({CopyKernel("first")}).ok());
  EXPECT_THAT(samples::RegisterSamples({CopyKernel("first")}).message(), HasSubstr("`first` is already registered"));
  EXPECT_THAT(samples::RegisterSamples({CopyKernel("twice"), CopyKernel("twice")}).message(),
              HasSubstr("`twice` is already registered"));
  EXPECT_THAT(samples::RegisterSamples({CopyKernel("")}).message(), HasSubstr("needs a name"));
  samples::Sample empty = CopyKernel("empty");
  empty.kernel = nullptr;
  EXPECT_THAT(samples::RegisterSamples({empty}).message(), HasSubstr("neither a kernel nor a runner"));
  EXPECT_EQ(samples::FindSample("twice"), nullptr);  // a refused batch registers nothing
}

TEST(ProgressBackendTest, CountsTheOpsABackendRuns) {
  TraceBackend trace;
  absl::StatusOr<samples::SampleRun> planned = CopyKernel("count").Run(trace, TracingOptions());
  ASSERT_TRUE(planned.ok()) << planned.status();
  // The input's host -> HBM transfer is no device op; HBM -> DM and the pipeline are.
  EXPECT_EQ(cli::ProgressBackend::DeviceOps(planned->program), 2);
  std::ostringstream err;
  cli::Progress progress("count", 2, err, /*enabled=*/true);
  interp::Interpreter interpreter;
  cli::ProgressBackend counted(interpreter, progress);
  ASSERT_TRUE(CopyKernel("count").Run(counted).ok());
  EXPECT_EQ(progress.done(), 2);
  EXPECT_THAT(err.str(), HasSubstr("count: 2/2 pipeline"));
}

TEST(ProgressBackendTest, ShortWorkStaysQuiet) {
  std::ostringstream err;
  cli::Progress progress("quick", 3, err, /*enabled=*/true, /*quiet_seconds=*/60);
  progress.Step("a");
  progress.Finish();
  EXPECT_EQ(err.str(), "");
}

}  // namespace
}  // namespace visa
