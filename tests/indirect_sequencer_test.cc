// The IndirectLoop entry in a derived sequencer configuration (manual, Sequencer > Indirect Access:
// "(limit, stride) becomes (limit, [offset0, offset1, ...])"): W's entry of the table's row-by-row
// configuration replaced by (|K|, [index[K] x row stride]), and the tables whose rows are not one
// entry refused with the rule's name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dsl/indirect_access.h"
#include "dsl/mapping_parser.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

IndirectLoop Loop() { return IndirectLoop{"W", 16, "K", 8, 32, false, ""}; }

TEST(IndirectSequencerTest, RowMajorTableReadsOneRowPerStep) {
  MappingScope s(*Axes::Parse("W = 16, V = 32"));
  absl::StatusOr<std::string> text = DeriveIndirectSequencer(s.m("W, V"), Loop());
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "[K -> (8, [index[K] x 32]), V -> 32 : 1] : 32");
}

TEST(IndirectSequencerTest, PaddedRowsKeepTheirStride) {
  MappingScope s(*Axes::Parse("W = 16, V = 24"));
  IndirectLoop loop = Loop();
  absl::StatusOr<std::string> text = DeriveIndirectSequencer(s.m("W, V # 32"), loop);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("K -> (8, [index[K] x 32])"));
}

TEST(IndirectSequencerTest, RowsSplitOverTwoEntriesAreRefused) {
  MappingScope s(*Axes::Parse("W = 16, V = 32"));
  absl::StatusOr<std::string> text = DeriveIndirectSequencer(s.m("W % 4, W / 4, V"), Loop());
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(std::string(text.status().message()), HasSubstr("Indirect Access: the rows `W` are not one sequencer entry"));
}

TEST(IndirectSequencerTest, AnElementWithoutTheRowsIsRefused) {
  MappingScope s(*Axes::Parse("W = 16, V = 32"));
  absl::StatusOr<std::string> text = DeriveIndirectSequencer(s.m("V"), Loop());
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(std::string(text.status().message()), HasSubstr("Indirect Access: the Element `V` does not hold the rows `W`"));
}

}  // namespace
}  // namespace visa
