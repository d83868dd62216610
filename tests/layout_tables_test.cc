// Tables of layouts kept by content (jit/layout_tables.h): each equals the table computed
// directly, a second request with an equal layout (made anew, as an eager run records it) is the
// same kept table, and layouts that differ only in an axis's size get their own tables.
#include "jit/layout_tables.h"

#include "gtest/gtest.h"
#include "dsl/mapping_parser.h"
#include "dsl/vector_branch_ids.h"
#include "dsl/vector_tags.h"

namespace visa {
namespace {

TEST(LayoutTables, AxisToggleTagsAreKeptByContent) {
  MappingScope scope(*Axes::Parse("T = 4, N = 16"));
  const Mapping layout = Pair({scope.m("1 # 2"), scope.m("T # 8"), scope.m("N")});
  absl::StatusOr<std::vector<uint8_t>> direct = AxisToggleTags(layout, "T");
  ASSERT_TRUE(direct.ok()) << direct.status();
  auto first = jit::KeptAxisToggleTags(layout, "T");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(**first, *direct);
  MappingScope again(*Axes::Parse("T = 4, N = 16"));
  auto second = jit::KeptAxisToggleTags(Pair({again.m("1 # 2"), again.m("T # 8"), again.m("N")}), "T");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first->get(), second->get()) << "an equal layout made anew finds the kept table";

  MappingScope wider(*Axes::Parse("T = 6, N = 16"));
  const Mapping other = Pair({wider.m("1 # 2"), wider.m("T # 8"), wider.m("N")});
  auto third = jit::KeptAxisToggleTags(other, "T");
  ASSERT_TRUE(third.ok());
  EXPECT_NE(first->get(), third->get()) << "T = 6 is another layout under the same text";
  EXPECT_EQ(**third, *AxisToggleTags(other, "T"));
}

TEST(LayoutTables, ZipPositionsAreKeptByContent) {
  MappingScope scope(*Axes::Parse("I = 2, A = 16"));
  const Mapping paired = Pair({scope.m("1 # 4"), scope.m("I"), scope.m("A")});
  const Mapping out = Pair({scope.m("1 # 4"), scope.m("A")});
  absl::StatusOr<std::vector<int64_t>> direct = ZipPositions(paired, out, "I");
  ASSERT_TRUE(direct.ok()) << direct.status();
  auto kept = jit::KeptZipPositions(paired, out, "I");
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(**kept, *direct);
  auto again = jit::KeptZipPositions(paired, out, "I");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(kept->get(), again->get());
}

TEST(LayoutTables, ValidCountIdsAreKeptByContent) {
  MappingScope scope(*Axes::Parse("A = 4, R = 13"));
  StreamShape shape;
  shape.dtype = DType::kF32;
  shape.chip = scope.m("1");
  shape.cluster = scope.m("1 # 2");
  shape.slice = scope.m("A / 2 # 256");
  shape.time = scope.m("A % 2, R # 16 / 8");
  shape.packet = scope.m("R # 16 % 8");
  absl::StatusOr<std::vector<uint8_t>> direct = ValidCountIds(shape, "R");
  ASSERT_TRUE(direct.ok()) << direct.status();
  auto kept = jit::KeptValidCountIds(shape, "R");
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(**kept, *direct);
  auto again = jit::KeptValidCountIds(shape, "R");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(kept->get(), again->get());
}

}  // namespace
}  // namespace visa
