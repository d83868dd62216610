// Property: a derived sequencer walks the addresses of the mapping inverse. For random element and
// stream mappings (tests/random_mappings.h), every live stream position must read the element's
// smallest position holding the stream's index restricted to the axes the element steps through
// (axes it does not step through broadcast); stream padding may be over-read (any address). The
// oracle is brute force over Mapping::map / Mapping::inverse, never the layout algebra the
// derivation stands on. Rejections must name an allowed rule, and an Insufficient Input must be
// real: some live stream index is not held. The test counts derived and rejected cases (by rule)
// and asserts that enough of each ran. Rerun one case with
//   VISA_PROPERTY_SEED=<seed> VISA_PROPERTY_CASES=1 build/tests/sequencer_property_test
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/index.h"
#include "dsl/mapping.h"
#include "dsl/sequencer.h"
#include "gtest/gtest.h"
#include "tests/random_mappings.h"

namespace visa {
namespace {

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

// One random sequencer problem: an element and a stream cut into Time and Packet at a term.
struct Problem {
  Mapping element, time, packet;
  std::string what;
};

void SpineTerms(const Mapping& m, std::vector<Mapping>& out) {
  if (m.kind() == Mapping::Kind::kPair) {
    out.push_back(m.major());
    SpineTerms(m.minor(), out);
  } else {
    out.push_back(m);
  }
}

Mapping PairOrIdentity(const std::vector<Mapping>& terms) { return terms.empty() ? Mapping() : Pair(terms); }

// Left padding (`# l + X + # r`, dsl/left_padding.h) on a quarter of the draws, from a generator
// of its own so the other draws stay as they were: a stream term that is a whole axis X becomes
// `# l + X + # r` (or its two digits `/ d` and `% d`), and the element's own whole X term usually
// gets the room past X's end the shifted walk reads (`X # (|X| + l + r)`).
void LeftPad(uint64_t seed, Mapping& element, std::vector<Mapping>& stream_terms) {
  Rng rng(seed ^ 0x9e3779b97f4a7c15ull);
  if (!Chance(rng, 0.25)) return;
  // A left padding does not join a one-to-many stream (a linear combination): a rule of its own.
  for (const Mapping& term : stream_terms) {
    if (!term.is_one_to_one()) return;
  }
  for (size_t t = 0; t < stream_terms.size(); ++t) {
    const Mapping term = stream_terms[t];
    if (term.kind() != Mapping::Kind::kSymbol || term.axis().skew) continue;
    const int64_t l = Uniform(rng, 1, 3), r = Uniform(rng, 0, 3);
    const int64_t size = term.size() + l + r;
    const Mapping padded = term.left_pad(l).pad(size);
    const int64_t d = Pick(rng, Divisors(size));
    if (d == 1 || d == size || Chance(rng, 0.4)) {
      stream_terms[t] = padded;
    } else {
      stream_terms[t] = padded % d;
      stream_terms.insert(stream_terms.begin() + static_cast<std::ptrdiff_t>(t), padded / d);
    }
    if (Chance(rng, 0.8)) {
      std::vector<Mapping> element_terms;
      SpineTerms(element, element_terms);
      for (Mapping& e : element_terms) {
        if (e == term) e = term.pad(size + Uniform(rng, 0, 2));
      }
      element = PairOrIdentity(element_terms);
    }
    return;
  }
}

std::optional<Problem> Draw(uint64_t seed) {
  Rng rng(seed);
  const World w = RandomWorld(rng);
  const Term element = RandomMapping(rng, w, /*source=*/true);
  const Term stream = RandomMapping(rng, w, /*source=*/false);
  absl::StatusOr<Mapping> e = ParseMapping(element.text, w.declared);
  absl::StatusOr<Mapping> s = ParseMapping(stream.text, w.declared);
  if (!e.ok() || !s.ok() || e->size() > 2048 || s->size() > 2048) return std::nullopt;
  std::vector<Mapping> terms;
  SpineTerms(*s, terms);
  Mapping buffer = *e;
  LeftPad(seed, buffer, terms);
  const size_t cut = static_cast<size_t>(Uniform(rng, 0, static_cast<int64_t>(terms.size())));
  Problem p{buffer, PairOrIdentity({terms.begin(), terms.begin() + cut}),
            PairOrIdentity({terms.begin() + cut, terms.end()}), ""};
  p.what = absl::StrCat("seed ", seed, ": element `", element.text, "` time `", p.time.ToString(),
                        "` packet `", p.packet.ToString(), "`");
  return p;
}

// The axes some element position holds a nonzero coordinate of (brute force).
std::set<std::string> SteppedAxes(const Mapping& element) {
  std::set<std::string> axes;
  for (int64_t q = 0; q < element.size(); ++q) {
    for (const Cell& cell : element.maps(q)) {
      if (!cell.live()) continue;
      for (const auto& [axis, value] : cell.index.coords()) {
        if (value != 0) axes.insert(axis);
      }
    }
  }
  return axes;
}

Index Restricted(const Index& index, const std::set<std::string>& axes) {
  Index out;
  for (const auto& [axis, value] : index.coords()) {
    if (axes.count(axis)) out.Set(axis, value);
  }
  return out;
}

// "" when every live stream position reads the mapping inverse, else the first violation.
std::string CheckWalk(const Problem& p, const SequencerConfig& config) {
  const Mapping stream = Pair({p.time, p.packet});
  if (config.stream_size() != stream.size()) {
    return absl::StrCat("the configuration ", config.ToLabeledString(), " walks ", config.stream_size(),
                        " positions, the stream has ", stream.size());
  }
  const std::set<std::string> stepped = SteppedAxes(p.element);
  const std::vector<int64_t> offsets = config.Offsets();
  for (int64_t s = 0; s < stream.size(); ++s) {
    const Cell cell = stream.map(s);
    if (!cell.live()) continue;  // stream padding: over-read
    const Index wanted = Restricted(cell.index, stepped);
    const std::optional<int64_t> q = p.element.inverse(wanted);
    if (q != std::optional<int64_t>(offsets[s])) {
      return absl::StrCat("stream position ", s, " holds ", cell.index.ToString(), ": the inverse of ",
                          wanted.ToString(), " is ", q ? absl::StrCat(*q) : "none", ", the configuration ",
                          config.ToLabeledString(), " reads ", offsets[s]);
    }
  }
  return "";
}

// Whether some live stream index, restricted to the stepped axes, has no holder in the element.
bool SomeIndexUnheld(const Problem& p) {
  const Mapping stream = Pair({p.time, p.packet});
  const std::set<std::string> stepped = SteppedAxes(p.element);
  for (int64_t s = 0; s < stream.size(); ++s) {
    const Cell cell = stream.map(s);
    if (cell.live() && !p.element.inverse(Restricted(cell.index, stepped))) return true;
  }
  return false;
}

TEST(SequencerProperty, TheOracleTellsRightFromWrong) {
  // The manual's "Rearranging Axes" configuration passes; one wrong stride does not.
  const Fixture f = With("A = 8, B = 8, C = 8");
  const Problem p{f.m("A, B, C # 32"), f.m("B, A"), f.m("C # 16"), "rearranging axes"};
  absl::StatusOr<SequencerConfig> config = DeriveSequencer(p.element, p.time, p.packet, SequencerMode::kRead);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->ToString(), "[8 : 32, 8 : 256, 16 : 1] : 16");
  EXPECT_EQ(CheckWalk(p, *config), "");
  config->entries[0].stride = 64;
  EXPECT_NE(CheckWalk(p, *config), "");
}

TEST(SequencerProperty, WalksTheMappingInverse) {
  const int cases = EnvInt("VISA_PROPERTY_CASES", 4000);
  const uint64_t first = static_cast<uint64_t>(EnvInt("VISA_PROPERTY_SEED", 1));
  const std::set<std::string> allowed = {"Incompatible Shapes", "Insufficient Input", "Entry limit",
                                         "Iteration limit", "Packet fetch", "Left padding"};
  int drawn = 0, derived = 0, positions = 0, shifted = 0;
  std::map<std::string, int> rejected;
  for (int c = 0; c < cases; ++c) {
    const std::optional<Problem> p = Draw(first + static_cast<uint64_t>(c));
    if (!p) continue;
    ++drawn;
    const absl::StatusOr<SequencerConfig> config =
        DeriveSequencer(p->element, p->time, p->packet, SequencerMode::kRead);
    if (!config.ok()) {
      const std::string message(config.status().message());
      const std::string rule = message.substr(0, message.find(':'));
      ++rejected[rule];
      ASSERT_TRUE(allowed.count(rule)) << p->what << ": " << config.status();
      if (rule == "Insufficient Input") {
        ASSERT_TRUE(SomeIndexUnheld(*p)) << p->what << ": every index is held, yet " << config.status();
      }
      continue;
    }
    ++derived;
    if (config->base_offset != 0) ++shifted;
    positions += static_cast<int>(config->stream_size());
    ASSERT_EQ(CheckWalk(*p, *config), "") << p->what;
  }
  std::string summary = absl::StrCat("drawn ", drawn, " (", cases - drawn, " redrawn): derived ", derived,
                                     " configurations walking ", positions, " positions; rejected");
  for (const auto& [rule, count] : rejected) absl::StrAppend(&summary, " ", count, " ", rule, ",");
  absl::StrAppend(&summary, " left-padded walks (base moved) ", shifted);
  std::printf("%s\n", summary.c_str());
  RecordProperty("summary", summary);
  if (cases >= 1000) {
    EXPECT_GT(drawn, cases / 2);
    EXPECT_GT(derived, drawn / 3);
    EXPECT_GT(rejected["Insufficient Input"], 10);
    EXPECT_GT(rejected["Incompatible Shapes"], 10);
    EXPECT_GT(shifted, 10);  // left-padded streams were derived and walked
  }
}

}  // namespace
}  // namespace visa
