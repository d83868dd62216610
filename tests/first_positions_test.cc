// FirstPositions (dsl/first_positions.h) against Mapping::inverse, the per-index search it stands
// in for: every index any position holds, indices none holds, on random mappings (many of them
// composite, where the table is built) and on the shapes the kernel-API fuzzer found slow.
#include "dsl/first_positions.h"

#include "gtest/gtest.h"
#include "dsl/normal_form.h"
#include "tests/random_mappings.h"

namespace visa {
namespace {

// Checks every held index and a few unheld ones; returns whether the mapping needed the table.
bool AgreesWithInverse(const Mapping& m, const std::string& what) {
  FirstPositions first(m);
  for (int64_t p = 0; p < m.size(); ++p) {
    for (const Cell& cell : m.maps(p)) {
      if (!cell.live()) continue;
      EXPECT_EQ(first(cell.index), m.inverse(cell.index)) << what << " " << cell.index.ToString();
    }
  }
  for (const Axis& axis : m.symbols()) {
    Index past;
    past.Set(axis.name, axis.size);  // one past the axis's end: held nowhere
    EXPECT_EQ(first(past), std::nullopt) << what << " " << past.ToString();
  }
  Index unnamed;
  unnamed.Set("Unnamed", 1);
  EXPECT_EQ(first(unnamed), std::nullopt) << what;
  return !m.normal_form().is_canonical();
}

TEST(FirstPositions, EqualsInverseOnRandomMappings) {
  Rng rng(30);
  int checked = 0, composite = 0;
  for (int i = 0; i < 800; ++i) {
    const World w = RandomWorld(rng);
    const Term t = i % 2 == 0 ? RandomTree(rng, w, 4) : RandomMapping(rng, w, /*source=*/true);
    absl::StatusOr<Mapping> m = ParseMapping(t.text, w.declared);
    if (!m.ok() || m->size() > 1024) continue;
    ++checked;
    composite += AgreesWithInverse(*m, t.text);
  }
  EXPECT_GT(checked, 500);
  EXPECT_GT(composite, 20) << "too few composite mappings: the table went untested";
}

// The kernel-API fuzzer's slow relayouts (tests/fuzz/findings/kernel_api-slow-relayout*): HBM
// mappings whose digits of one axis overlap or cut across a padding, moved to DM.
TEST(FirstPositions, EqualsInverseOnOverlappingAndPaddedDigits) {
  const Fixture f = With("A = 8, B = 16, C = 3, D = 5");
  for (const char* text : {"A, A", "B % 4, B / 2", "[A, B] / 4", "[B # 20] / 4, A", "[A, C] % 6, [B, D] / 8",
                           "[A = 5, B] % 8, C", "D, [A # 9] = 4, B / 8", "[A, C] # 30 / 5, B", "[C, D] = 7, [C, A] = 9"}) {
    std::printf("%s composite %d\n", text, AgreesWithInverse(f.m(text), text));
  }
}

}  // namespace
}  // namespace visa
