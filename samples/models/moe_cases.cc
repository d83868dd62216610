// The Mixture of Experts kernel's input cases (moe_cases.h).
#include "samples/models/moe_cases.h"

#include <random>

namespace visa::models {
namespace {

size_t At(int64_t row, int64_t cols, int64_t col) { return static_cast<size_t>(row * cols + col); }

// The score table of the kWorstGrid case: the T*K assignments are expert e repeated c_e times
// with c_e = 1 (mod B) for every expert (the remainder of the T*K slots spread in whole blocks),
// token t taking slots t (score 4) and t + T (score 3); the others score -1 or -2.
std::vector<std::vector<int>> WorstGridScores(const MoeShape& shape) {
  const int64_t T = shape.tokens, E = shape.experts, K = shape.top_k, B = shape.block;
  std::vector<int64_t> count(static_cast<size_t>(E), 1);
  int64_t left = T * K - E;
  for (int64_t e = 0; left > 0; e = (e + 1) % E) {
    const int64_t take = std::min(left, B);
    count[static_cast<size_t>(e)] += take;
    left -= take;
  }
  std::vector<int64_t> slots;
  for (int64_t e = 0; e < E; ++e) slots.insert(slots.end(), static_cast<size_t>(count[static_cast<size_t>(e)]), e);
  std::vector<std::vector<int>> s(static_cast<size_t>(T), std::vector<int>(static_cast<size_t>(E)));
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t e = 0; e < E; ++e) s[static_cast<size_t>(t)][static_cast<size_t>(e)] = -1 - static_cast<int>(e % 2);
    s[static_cast<size_t>(t)][static_cast<size_t>(slots[static_cast<size_t>(t)])] = 4;
    s[static_cast<size_t>(t)][static_cast<size_t>(slots[static_cast<size_t>(t + T)])] = 3;
  }
  return s;
}

}  // namespace

const char* MoeCaseName(MoeCase c) {
  switch (c) {
    case MoeCase::kRandom: return "random";
    case MoeCase::kSkewed: return "skewed";
    case MoeCase::kTied: return "tied";
    case MoeCase::kWorstGrid: return "worst_grid";
  }
  return "?";
}

MoeInputs MakeMoeInputs(const MoeShape& shape, MoeCase c, uint64_t seed) {
  const int64_t T = shape.tokens, D = shape.hidden, E = shape.experts;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> sign(0, 1), small(-2, 2), mid(-4, 4);
  MoeInputs in;
  in.x.assign(static_cast<size_t>(T * D), 0.0);
  in.w_router.assign(static_cast<size_t>(D * E), 0.0);
  if (c == MoeCase::kRandom) {
    for (double& v : in.x) v = sign(rng) ? 1.0 : -1.0;
    for (double& v : in.w_router) v = small(rng);
    return in;
  }
  for (int64_t t = 0; t < T; ++t) in.x[At(t, D, t % D)] = 1.0;
  std::vector<std::vector<int>> table(static_cast<size_t>(D), std::vector<int>(static_cast<size_t>(E), 0));
  if (c == MoeCase::kWorstGrid) {
    table = WorstGridScores(shape);
    table.resize(static_cast<size_t>(D), std::vector<int>(static_cast<size_t>(E), 0));
  }
  for (int64_t d = 0; d < D; ++d) {
    for (int64_t e = 0; e < E; ++e) {
      int& v = table[static_cast<size_t>(d)][static_cast<size_t>(e)];
      if (c == MoeCase::kSkewed) v = e == 3 ? 5 : mid(rng);  // expert 3 first for every token
      // Even rows all tied (the highest ids win), odd rows a three-way tie at the top (e % 3 == 0)
      // and negative ties below it.
      if (c == MoeCase::kTied) v = d % 2 == 0 ? 1 : -static_cast<int>(e % 3);
    }
  }
  for (int64_t d = 0; d < D; ++d) {
    for (int64_t e = 0; e < E; ++e) in.w_router[At(d, E, e)] = table[static_cast<size_t>(d)][static_cast<size_t>(e)];
  }
  return in;
}

}  // namespace visa::models
