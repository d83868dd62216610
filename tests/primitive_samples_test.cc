// The primitive samples as `visa explain` shows them: the masking configuration of the left- and
// right-padded fetch, and the IndirectLoop entries of the gather and the scatter.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "tools/run_command.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

std::string Explain(const std::string& sample) {
  std::ostringstream out, err;
  EXPECT_EQ(cli::ExplainSampleCommand(sample, out, err), 0) << err.str();
  return out.str();
}

TEST(PrimitiveSamplesExplain, MaskedFetchShowsBaseAddressAndMasking) {
  const std::string text = Explain("masked_fetch_left_right_pad");
  EXPECT_THAT(text, HasSubstr("[A -> 8 : 96, B' # 96 / 32 -> 3 : 32, B' = 32 -> 32 : 1] : 32 @ base_addr = -2"));
  EXPECT_THAT(text, HasSubstr("masking case 1, last_dim 1, lpad 2, last_dim_rightmost_valid_count [28], pad value 0"));
}

TEST(PrimitiveSamplesExplain, GatherAndScatterShowTheirIndirectLoops) {
  EXPECT_THAT(Explain("embedding_lookup"),
              HasSubstr("indirect IndirectLoop (limit 8, [offset0, offset1, ...] = index[K] x 32 elements) "
                        "gathers rows of W = 16 into K"));
  const std::string scatter = Explain("kv_cache_append");
  EXPECT_THAT(scatter, HasSubstr("scatters rows of K into W = 16"));
  EXPECT_THAT(scatter, HasSubstr("into DmTensor<i8"));
}

}  // namespace
}  // namespace visa
