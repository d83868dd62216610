// The primitive samples as `visa explain` shows them: the masking configuration of the left- and
// right-padded fetch, the IndirectLoop entries of the gather and the scatter (with the derived
// sequencer configuration), the commit cast and the memset.
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
  EXPECT_THAT(Explain("embedding_lookup"), HasSubstr("sequencer [K -> (8, [index[K] x 32]), V -> 32 : 1] : 32"));
  const std::string scatter = Explain("kv_cache_append");
  EXPECT_THAT(scatter, HasSubstr("sequencer [K -> (2, [index[K] x 32]), V -> 32 : 1] : 32"));
  EXPECT_THAT(scatter, HasSubstr("scatters rows of K into W = 16"));
  EXPECT_THAT(scatter, HasSubstr("into DmTensor<i8"));
}

TEST(PrimitiveSamplesExplain, CommitCastAndMemsetShowTheirConfiguration) {
  const std::string cast = Explain("commit_cast_relu");
  EXPECT_THAT(cast, HasSubstr("commit_cast_relu f32 -> bf16: packet [B % 8] (8 x f32 = 32 B -> 16 B)"));
  EXPECT_THAT(cast, HasSubstr("commit_in_size 16 B"));
  const std::string memset = Explain("memset_rows");
  EXPECT_THAT(memset, HasSubstr("memset sub DmTensor<i8"));
  EXPECT_THAT(memset, HasSubstr("memset i8 = -7 (pattern 0xf9, ITOS word 0xf9f9f9f9): 64 words per slice x 1 slices"));
  // Generate Mode's cost: one ITOS write per cycle, 64 words in the one slice.
  EXPECT_THAT(memset, HasSubstr("sub memset: 64 cycles"));
  EXPECT_THAT(memset, HasSubstr("derived: the manual gives no ITOS throughput"));
}

}  // namespace
}  // namespace visa
