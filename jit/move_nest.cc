// Move nests: the layout algebra's composition of a destination with its source, as JIT loops.
#include "jit/move_nest.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/layout.h"

namespace visa::jit {

int64_t MoveNest::elements() const {
  int64_t n = 1;
  for (const NestLevel& l : levels) n *= l.count;
  return n;
}

int64_t MoveNest::max_dst() const {
  int64_t m = 0;
  for (const NestLevel& l : levels) m += (l.count - 1) * l.dst_stride;
  return m;
}

int64_t MoveNest::max_src() const {
  int64_t m = 0;
  for (const NestLevel& l : levels) m += (l.count - 1) * l.src_stride;
  return m;
}

std::string MoveNest::ToString() const {
  return absl::StrCat("[", absl::StrJoin(levels, ", ", [](std::string* out, const NestLevel& l) {
                        absl::StrAppend(out, l.count, " : ", l.dst_stride, " <- ", l.src_stride);
                      }), "]");
}

std::optional<MoveNest> DeriveMoveNest(const Mapping& dst, const Mapping& src) {
  // Engine moves match by digit (dsl/index_matching.h), as the interpreter does.
  std::optional<std::vector<MoveLevel>> levels = MoveLevels(dst, src, MatchRule::kByDigit);
  if (!levels) return std::nullopt;
  return MoveNest{*std::move(levels)};
}

MoveNest Simplify(MoveNest nest, int threads) {
  nest.levels = SplitOuter(Coalesce(std::move(nest.levels)), threads);
  return nest;
}

}  // namespace visa::jit
