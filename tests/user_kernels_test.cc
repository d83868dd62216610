// A program's own kernels on the command line: samples::RegisterSamples and its rules, the
// commands finding a registered kernel, and the progress pieces of long runs.
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interp/interpreter.h"
#include "runtime/trace_options.h"
#include "runtime/tensor_unit.h"
#include "runtime/trace_backend.h"
#include "nlohmann/json.hpp"
#include "samples/sample.h"
#include "tools/cli_main.h"
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

// [I, A, B] = a stacked on b: two i8 inputs of their own values fetched interleaved along I.
samples::Sample StackKernel(std::string name) {
  samples::Sample sample;
  sample.name = std::move(name);
  sample.description = "two inputs stacked";
  sample.axes = "I = 2, A = 4, B = 32";
  sample.inputs = {{.name = "a", .host = "A, B", .element = "A, B", .values = samples::InputValues::Uniform(-3, 3),
                    .seed = 5, .address = 0},
                   {.name = "b", .host = "A, B", .element = "A, B", .values = samples::InputValues::Constant(7),
                    .address = 0x100}};
  sample.inputs_kernel = [](Context& ctx, const std::vector<DmTensor>& in,
                            const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
    absl::StatusOr<DmTensor> out = ctx.main.begin_interleaved(s.m("I"), in[0].view(), in[1].view())
                                       .fetch(DType::kI8, s.m("I, A"), s.m("B"))
                                       .collect(s.m("I, A"), s.m("B"))
                                       .commit(s.m("I, A, B"), 0x1000);
    if (!out.ok()) return out.status();
    return *out;
  };
  sample.readback = "I, A, B";
  sample.inputs_reference = [](const Index& at, const std::vector<HostTensor>& in) {
    return *in[at["I"]].Get(at["A"] * 32 + at["B"]);
  };
  return sample;
}

// visa::cli::Main over `kernels` with `args`, its standard output captured.
int RunMain(std::vector<std::string> args, std::vector<samples::Sample> kernels, std::string& out) {
  args.insert(args.begin(), "my_kernels");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  ::testing::internal::CaptureStdout();
  const int code = cli::Main(static_cast<int>(argv.size()), argv.data(), std::move(kernels), {.name = "my_kernels"});
  out = ::testing::internal::GetCapturedStdout();
  return code;
}

TEST(SampleInputsTest, EachInputHasItsOwnValuesAndTheReferenceSeesThem) {
  samples::Sample stack = StackKernel("stack");
  interp::Interpreter interpreter;
  absl::StatusOr<samples::SampleRun> run = stack.Run(interpreter);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->elements, 256);
  EXPECT_FALSE(run->mismatch) << *run->mismatch;
  // The fetch's stream over every slice position: 2 clusters x 256 slices x [I, A, B] = 256.
  EXPECT_EQ(run->stream_elements, 2 * 256 * 256);
  // A reference that ignores input b's constant 7 finds the kernel's output wrong.
  stack.inputs_reference = [](const Index& at, const std::vector<HostTensor>& in) { return *in[0].Get(at["A"] * 32 + at["B"]); };
  absl::StatusOr<samples::SampleRun> wrong = stack.Run(interpreter);
  ASSERT_TRUE(wrong.ok()) << wrong.status();
  ASSERT_TRUE(wrong->mismatch);
  EXPECT_THAT(*wrong->mismatch, HasSubstr("got 7"));
}

TEST(SampleInputsTest, RunCheckAndBenchThroughTheEntryAUserCalls) {
  std::string out;
  ASSERT_EQ(RunMain({"run", "stack", "--time"}, {StackKernel("stack")}, out), 0) << out;
  EXPECT_THAT(out, HasSubstr("stack: ok (256 elements, max error 0)\n"));
  EXPECT_THAT(out, HasSubstr(", 131072 stream elements fetched,"));  // 2 clusters x 256 slices x 256
  ASSERT_EQ(RunMain({"run", "stack", "--backend", "jit"}, {StackKernel("stack")}, out), 0) << out;
  EXPECT_EQ(out, "stack: ok (256 elements, max error 0)\n");
  ASSERT_EQ(RunMain({"check", "stack"}, {StackKernel("stack")}, out), 0) << out;
  EXPECT_EQ(out, "stack: identical\n");
  ASSERT_EQ(RunMain({"bench", "stack", "--repeat", "1", "--threads", "1", "--json"}, {StackKernel("stack")}, out), 0)
      << out;
  const nlohmann::json bench = nlohmann::json::parse(out);
  EXPECT_TRUE(bench["host_reference_skipped"].is_null()) << bench["host_reference_skipped"];
  EXPECT_GT(bench["host_reference_s"].get<double>(), 0);
}

TEST(SampleInputsTest, ARunnersStreamElementsAreCountedForIt) {
  samples::Sample hand_written;
  hand_written.name = "by_hand";
  hand_written.runner = [](Backend& backend, const DeviceOptions& options) -> absl::StatusOr<samples::SampleRun> {
    absl::StatusOr<samples::SampleRun> run = CopyKernel("inner").Run(backend, options);
    if (run.ok()) run->stream_elements = 0;  // what a hand-written runner leaves
    return run;
  };
  interp::Interpreter interpreter;
  absl::StatusOr<samples::SampleRun> run = hand_written.Run(interpreter);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->stream_elements, 2 * 256 * 128);  // 2 clusters x 256 slices x [A, B]
}

TEST(SampleInputsTest, MistakesNameTheFieldOrTheInput) {
  samples::Sample both = StackKernel("both");
  both.kernel = CopyKernel("x").kernel;
  EXPECT_THAT(samples::RegisterSamples({both}).message(), HasSubstr("both `kernel` (one input) and `inputs_kernel`"));
  samples::Sample none = StackKernel("none");
  none.inputs.clear();
  EXPECT_THAT(samples::RegisterSamples({none}).message(), HasSubstr("`inputs_kernel` needs `inputs`"));
  samples::Sample single = CopyKernel("single");
  single.inputs = StackKernel("s").inputs;
  EXPECT_THAT(samples::RegisterSamples({single}).message(), HasSubstr("`inputs` go with `inputs_kernel`"));
  samples::Sample mixed = StackKernel("mixed");
  mixed.reference = [](const Index&, const HostTensor&) { return 0.0; };
  EXPECT_THAT(samples::RegisterSamples({mixed}).message(), HasSubstr("checks with `inputs_reference`"));

  interp::Interpreter interpreter;
  samples::Sample typo = StackKernel("typo");
  typo.inputs[1].element = "A, Z";
  EXPECT_THAT(typo.Run(interpreter).status().message(), HasSubstr("input `b`: "));
  samples::Sample range = StackKernel("range");
  range.inputs[0].values = samples::InputValues::Uniform(200, 300);
  EXPECT_THAT(range.Run(interpreter).status().message(), HasSubstr("input `a`: input values uniform [200, 300] for i8: no integer"));
  samples::Sample overlap = StackKernel("overlap");
  overlap.inputs[1].address = 0x40;  // inside a's 128 bytes
  EXPECT_THAT(overlap.Run(interpreter).status().message(), HasSubstr("Address Collision"));
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
