// The branch-mode and filter samples (samples/vector_branch_samples.cc): each matches its host loop
// on both backends, `visa check` finds the backends identical, and `visa explain` shows the
// branch mode, the guarded slots and the filter they configure.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "samples/sample.h"
#include "tools/check_command.h"
#include "tools/run_command.h"

namespace visa::samples {
namespace {

using ::testing::HasSubstr;

const char* const kNames[] = {"vector_validcount_exp_row_sum", "vector_vrf_column_ops", "vector_filter_relu"};

TEST(VectorBranchSamples, MatchTheirHostLoopsOnBothBackends) {
  for (const char* name : kNames) {
    const Sample* sample = FindSample(name);
    ASSERT_NE(sample, nullptr) << name;
    interp::Interpreter interp;
    std::unique_ptr<jit::JitBackend> jit = *jit::JitBackend::Create({.threads = 2});
    for (Backend* backend : {static_cast<Backend*>(&interp), static_cast<Backend*>(jit.get())}) {
      absl::StatusOr<SampleRun> run = sample->Run(*backend);
      ASSERT_TRUE(run.ok()) << name << ": " << run.status();
      EXPECT_FALSE(run->mismatch.has_value()) << run->Summary(name);
      EXPECT_GT(run->elements, 0) << name;
      EXPECT_EQ(run->max_error, 0) << name;
    }
    std::ostringstream out, err;
    EXPECT_EQ(cli::CheckSampleCommand({.sample = name, .progress = false}, out, err), 0) << out.str() << err.str();
    EXPECT_THAT(out.str(), HasSubstr("identical"));
  }
}

std::string Explain(const std::string& name) {
  std::ostringstream out, err;
  EXPECT_EQ(cli::ExplainSampleCommand(name, out, err), 0) << err.str();
  return out.str();
}

TEST(VectorBranchSamples, ExplainShowsTheirConfiguration) {
  const std::string exp_sum = Explain("vector_validcount_exp_row_sum");
  EXPECT_THAT(exp_sum, HasSubstr("vector f32 branch ValidCount(R)"));
  EXPECT_THAT(exp_sum, HasSubstr("vector_fp_binary MulF Mode01 [bits[0..3]=0___: 0] on FpMul0"));
  EXPECT_THAT(exp_sum, HasSubstr("padding by identity padding"));
  const std::string columns = Explain("vector_vrf_column_ops");
  EXPECT_THAT(columns, HasSubstr("vector i32 branch Vrf(vrf#0)"));
  EXPECT_THAT(columns, HasSubstr("vector_fxp MulInt Mode01 [bits[0..3]=1100: -3] on FxpMul"));
  EXPECT_THAT(columns, HasSubstr("vrf#0 VrfTensor<i32, [1], [1 # 2], [B], [C]>"));
  const std::string relu = Explain("vector_filter_relu");
  EXPECT_THAT(relu, HasSubstr("branch Comparison([Greater(0), False, False, False])"));
  EXPECT_THAT(relu, HasSubstr("Filter: vector_filter FilterOut guard not bits[0..3]=1___"));
}

}  // namespace
}  // namespace visa::samples
