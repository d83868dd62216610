// Keeps the C++ mapping example of docs/command-line.md ("Mappings from C++") true: the same code, compiled and checked.
#include <gtest/gtest.h>

#include "dsl/equivalence.h"
#include "dsl/mapping_parser.h"
#include "dsl/sequencer.h"

namespace visa {
namespace {

TEST(Readme, FirstLook) {
  visa::Axes axes = *visa::Axes::Parse("A = 8, B = 512");
  visa::MappingScope s(axes);
  visa::Mapping tiled = s.m("B / 64, B % 64");
  visa::Mapping same = axes["B"] / 64;
  bool eq = *visa::Equivalent(tiled, s.m("B"));
  visa::Cell c = s.m("A, B").map(519);
  auto config = visa::DeriveSequencer(s.m("A, B"), s.m("A, B / 32"), s.m("B % 32"),
                                      visa::SequencerMode::kRead);
  EXPECT_EQ(same, s.m("B / 64"));
  EXPECT_TRUE(eq);
  EXPECT_EQ(c.ToString(), "{A=1, B=7}");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->ToString(), "[8 : 512, 16 : 32, 32 : 1] : 32");
}

}  // namespace
}  // namespace visa
