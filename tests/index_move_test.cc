// MoveByIndex (compiled) against MoveByIndexReference (the oracle): a property test over random
// (source mapping, destination mapping, policy, dtype) moves, plus concrete cases for each path.
//
// Every random case must agree exactly: both succeed with the same bytes, or both fail with the same
// status. Rerun one case with
//   VISA_PROPERTY_SEED=<seed> VISA_PROPERTY_CASES=1 build/tests/index_move_test
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/axes.h"
#include "dsl/dtype.h"
#include "dsl/mapping.h"
#include "dsl/mapping_parser.h"
#include "gtest/gtest.h"
#include "interp/index_move.h"
#include "runtime/host_tensor.h"
#include "tests/random_mappings.h"

namespace visa::interp {
namespace {

DType RandomDType(Rng& rng) {
  static const std::vector<DType> types = {DType::kI4,  DType::kI8,   DType::kF8E4M3,
                                           DType::kI16, DType::kBF16, DType::kF32};
  return Pick(rng, types);
}

// Every position (padding too) holds random bits, so a wrong source position shows.
HostTensor RandomTensor(Rng& rng, DType dtype, const Mapping& mapping) {
  std::vector<uint32_t> bits(static_cast<size_t>(mapping.size()));
  const uint32_t mask = Bits(dtype) >= 32 ? 0xffffffffu : (1u << Bits(dtype)) - 1;
  for (uint32_t& b : bits) b = static_cast<uint32_t>(rng()) & mask;
  absl::StatusOr<HostTensor> t = HostTensor::FromBits(dtype, mapping, bits);
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

MovePolicy RandomPolicy(Rng& rng, DType dtype) {
  MovePolicy policy;
  policy.allow_drop = Chance(rng, 0.5);
  const double r = std::uniform_real_distribution<double>(0, 1)(rng);
  const uint32_t mask = Bits(dtype) >= 32 ? 0xffffffffu : (1u << Bits(dtype)) - 1;
  if (r < 0.4) {
    policy.pad_bits = static_cast<uint32_t>(rng()) & mask;
  } else if (r < 0.45 && Bits(dtype) < 32) {
    policy.pad_bits = mask + 1;  // does not fit: an error at the first padding position
  }
  return policy;
}

// Both succeed with the same tensor, or both fail with the same status.
void ExpectSame(const absl::StatusOr<HostTensor>& want, const absl::StatusOr<HostTensor>& got,
                const std::string& what) {
  ASSERT_EQ(want.ok(), got.ok()) << what << "\nreference: " << want.status()
                                 << "\ncompiled: " << got.status();
  if (!want.ok()) {
    EXPECT_EQ(want.status(), got.status()) << what;
    return;
  }
  EXPECT_EQ(want->dtype(), got->dtype()) << what;
  EXPECT_TRUE(want->mapping() == got->mapping()) << what;
  EXPECT_EQ(want->bytes(), got->bytes()) << what;
}

void ExpectSameMove(const HostTensor& src, const Mapping& dst, MovePolicy policy,
                    const std::string& what) {
  ExpectSame(MoveByIndexReference(src, dst, policy), MoveByIndex(src, dst, policy), what);
}

// Thresholds small enough that tiny moves take every branch: several threads with uneven chunks.
MoveLimits TinyLimits(Rng& rng) {
  MoveLimits limits;
  limits.min_parallel = Uniform(rng, 0, 64);
  limits.threads = static_cast<int>(Uniform(rng, 1, 5));
  return limits;
}

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

TEST(IndexMoveProperty, CompiledEqualsReference) {
  const int cases = EnvInt("VISA_PROPERTY_CASES", 3000);
  const uint64_t first_seed = static_cast<uint64_t>(EnvInt("VISA_PROPERTY_SEED", 1));
  int compiled_ok = 0, compiled_error = 0, reference_only = 0;
  for (int c = 0; c < cases; ++c) {
    const uint64_t seed = first_seed + static_cast<uint64_t>(c);
    Rng rng(seed);
    const World w = RandomWorld(rng);
    const Term src_term = RandomMapping(rng, w, /*source=*/true);
    const Term dst_term = RandomMapping(rng, w, /*source=*/false);
    absl::StatusOr<Mapping> src_map = ParseMapping(src_term.text, w.declared);
    absl::StatusOr<Mapping> dst_map = ParseMapping(dst_term.text, w.declared);
    if (!src_map.ok() || !dst_map.ok() || src_map->size() > 4096 || dst_map->size() > 4096) continue;
    const DType dtype = RandomDType(rng);
    const HostTensor src = RandomTensor(rng, dtype, *src_map);
    const MovePolicy policy = RandomPolicy(rng, dtype);
    const std::string what = absl::StrCat("seed ", seed, ": src `", src_term.text, "` dst `", dst_term.text,
                                          "` dtype ", Name(dtype), " allow_drop ", policy.allow_drop,
                                          " pad_bits ", policy.pad_bits);
    const absl::StatusOr<HostTensor> want = MoveByIndexReference(src, *dst_map, policy);
    ASSERT_NO_FATAL_FAILURE(ExpectSame(want, MoveByIndex(src, *dst_map, policy), what));
    MovePolicy tiny_policy = policy;
    tiny_policy.limits = TinyLimits(rng);
    const absl::StatusOr<HostTensor> tiny = MoveByIndex(src, *dst_map, tiny_policy);
    ASSERT_NO_FATAL_FAILURE(ExpectSame(want, tiny, absl::StrCat(what, " (tiny limits)")));
    if (!MoveByIndexIsCompiled(src, *dst_map, policy)) {
      ++reference_only;
    } else if (want.ok()) {
      ++compiled_ok;
    } else {
      ++compiled_error;
    }
  }
  std::printf("compiled ok %d, compiled error %d, reference only %d\n", compiled_ok, compiled_error,
              reference_only);
  if (cases >= 1000) {  // the generator must exercise the compiled path, successes and errors
    EXPECT_GT(compiled_ok, cases / 5);
    EXPECT_GT(compiled_error, cases / 20);
    EXPECT_GT(reference_only, 0);
  }
}

// ---------------------------------------------------------------------------------------------
// Concrete cases.


HostTensor Iota(DType dtype, const Mapping& m) { return *HostTensor::Iota(dtype, m); }

TEST(IndexMove, FetchLikeRelayoutIsCompiledAndExact) {
  Fixture f = With("A = 256, B = 64");
  HostTensor src = Iota(DType::kI32, f.m("A / 16, B, A % 16"));
  Mapping dst = f.m("B, A");
  EXPECT_TRUE(MoveByIndexIsCompiled(src, dst));
  ExpectSameMove(src, dst, {}, "relayout");
  absl::StatusOr<HostTensor> out = MoveByIndex(src, dst);
  ASSERT_TRUE(out.ok()) << out.status();
  Index index;
  index.Set("A", 37);
  index.Set("B", 5);
  EXPECT_EQ(*out->GetBits(index), *src.GetBits(index));
}

TEST(IndexMove, BroadcastAxisAbsentFromTheSource) {
  Fixture f = With("A = 8, B = 3");
  HostTensor src = Iota(DType::kI8, f.m("A"));
  Mapping dst = f.m("B, A");
  EXPECT_TRUE(MoveByIndexIsCompiled(src, dst));
  absl::StatusOr<HostTensor> out = MoveByIndex(src, dst);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int64_t p = 0; p < 24; ++p) EXPECT_EQ(*out->GetBits(p), static_cast<uint32_t>(p % 8));
}

TEST(IndexMove, LargeThreadedMovesWithPaddingAndNibbles) {
  Fixture f = With("A = 300, B = 250");
  for (DType dtype : {DType::kI4, DType::kBF16}) {
    HostTensor src = Iota(dtype, f.m("A, B"));
    for (const char* dst : {"B # 256, A # 320", "[A / 4, B, A % 4] # 80000", "B / 2, A, B % 2"}) {
      Mapping m = f.m(dst);
      EXPECT_TRUE(MoveByIndexIsCompiled(src, m, {.pad_bits = 5}));
      ExpectSameMove(src, m, {.pad_bits = 5}, dst);
      ExpectSameMove(src, m, {.allow_drop = true}, dst);
    }
  }
}

TEST(IndexMove, LargeMinorPartInClosedForm) {
  Fixture f = With("A = 40000, B = 2");
  HostTensor src = Iota(DType::kI16, f.m("A, B"));
  for (const char* dst : {"B, A", "B, A # 40003", "B, [A # 40010] / 2", "B, A = 39999"}) {
    Mapping m = f.m(dst);
    EXPECT_TRUE(MoveByIndexIsCompiled(src, m, {.allow_drop = true}));
    ExpectSameMove(src, m, {.allow_drop = true, .pad_bits = 7}, dst);
    ExpectSameMove(src, m, {}, dst);  // drops data unless every index is read
  }
}

TEST(IndexMove, DropErrorInALargeMove) {
  Fixture f = With("A = 300, B = 250");
  HostTensor src = Iota(DType::kI8, f.m("A, B"));
  Mapping dst = f.m("B = 249, A");
  absl::StatusOr<HostTensor> out = MoveByIndex(src, dst);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("would drop data"), std::string::npos) << out.status();
  ExpectSameMove(src, dst, {}, "drop");
  ExpectSameMove(src, dst, {.allow_drop = true}, "drop allowed");
}

// Matching is by digit: the source holds A / 2 only, so A's lowest digit broadcasts (odd A reads
// the even A below it), as the fetch sequencer reads it with stride 0.
TEST(IndexMove, DigitsTheSourceLacksBroadcast) {
  Fixture f = With("A = 8, B = 4");
  HostTensor src = Iota(DType::kF32, f.m("A / 2, B"));  // even A only
  Mapping dst = f.m("A, B");
  EXPECT_TRUE(MoveByIndexIsCompiled(src, dst));
  absl::StatusOr<HostTensor> out = MoveByIndex(src, dst);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 4; ++b) EXPECT_EQ(*out->Get(a * 4 + b), *src.Get((a / 2) * 4 + b)) << a << " " << b;
  }
  ExpectSameMove(src, dst, {}, "digit broadcast");
}

TEST(IndexMove, GemmLikeStreamBroadcastsJ) {
  // A stream whose packet reads J in steps of 8 from a source holding J in steps of 32.
  Fixture f = With("I = 512, J = 512, K = 64");
  HostTensor src = Iota(DType::kBF16, f.m("1, 1 # 2, [I / 32, J / 32], I % 32, K"));
  Mapping dst = f.m("1, 1 # 2, [I / 32, J / 32], [I % 32, J / 8 % 4], K");
  EXPECT_TRUE(MoveByIndexIsCompiled(src, dst, {.allow_drop = true}));
  ExpectSameMove(src, dst, {.allow_drop = true}, "gemm-like");
  ExpectSameMove(src, dst, {}, "gemm-like, no drop");
}

TEST(IndexMove, PadBitsThatDoNotFit) {
  Fixture f = With("A = 5");
  HostTensor src = Iota(DType::kI8, f.m("A"));
  ExpectSameMove(src, f.m("A # 8"), {.pad_bits = 0x100}, "pad bits");
  EXPECT_FALSE(MoveByIndex(src, f.m("A # 8"), {.pad_bits = 0x100}).ok());
  ExpectSameMove(src, f.m("A"), {.pad_bits = 0x100}, "no padding: never stored");
}

TEST(IndexMove, InvalidDestination) {
  Fixture f = With("A = 6");
  HostTensor src = Iota(DType::kI8, f.m("A"));
  Mapping bad = f.m("A") / 4;
  ExpectSameMove(src, bad, {}, "invalid");
  EXPECT_FALSE(MoveByIndex(src, bad).ok());
}

TEST(IndexMove, RangeRuleAcrossParts) {
  // [R # 16 / 4, R # 16 % 4] with R = 14: positions 14 and 15 sum past R's end and are padding.
  Fixture f = With("R = 14, C = 3");
  HostTensor src = Iota(DType::kI8, f.m("C, R"));
  Mapping dst = f.m("C, R # 16 / 4, R # 16 % 4");
  EXPECT_TRUE(MoveByIndexIsCompiled(src, dst));
  ExpectSameMove(src, dst, {.pad_bits = 9}, "range rule");
}

TEST(IndexMove, LinearCombinationDestinationsFallBack) {
  // A one-to-many position maps to its first live combination, which parts cannot compose.
  Fixture f = With("A = 3, B = 3");
  HostTensor src = Iota(DType::kI8, f.m("A, B"));
  for (const char* dst : {"$(A: 1, B: 2), 2", "$(A: 1, B: 1) / 5, $(A: 1, B: 1) % 5 # 6"}) {
    EXPECT_FALSE(MoveByIndexIsCompiled(src, f.m(dst), {.allow_drop = true}));
    ExpectSameMove(src, f.m(dst), {.allow_drop = true}, dst);
    ExpectSameMove(src, f.m(dst), {}, dst);
  }
  // A one-term combination is one-to-one, but its normal form keeps it composite: the layout
  // algebra has no modes for it, so the reference moves it.
  EXPECT_FALSE(MoveByIndexIsCompiled(src, f.m("$(A: 1), B"), {}));
  ExpectSameMove(src, f.m("$(A: 1), B"), {}, "one-term combination");
}

TEST(IndexMove, FallsBackForLinearSourcesAndSkews) {
  Fixture f = With("A = 3, B = 3, B' = B - A");
  HostTensor linear = Iota(DType::kI8, f.m("$(A: 1, B: 2)"));
  EXPECT_FALSE(MoveByIndexIsCompiled(linear, f.m("A, B"), {.allow_drop = true}));
  ExpectSameMove(linear, f.m("A, B"), {.allow_drop = true}, "linear source");
  HostTensor plain = Iota(DType::kI8, f.m("A, B"));
  EXPECT_FALSE(MoveByIndexIsCompiled(plain, f.m("A, B'")));
  ExpectSameMove(plain, f.m("A, B'"), {}, "skew destination");
}

TEST(IndexMove, OverlappingSourceDigitsFallBack) {
  // `A / 2, A % 4` reads A twice with overlapping digits: the normal form cannot invert it alone.
  Fixture f = With("A = 8");
  HostTensor src = Iota(DType::kI8, f.m("A / 2, A % 4"));
  ExpectSameMove(src, f.m("A"), {.allow_drop = true}, "overlap");
}

}  // namespace
}  // namespace visa::interp
