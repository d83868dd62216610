// Recursive-descent parser for the manual's mapping grammar (the text inside `m![...]`).
//
//   mapping  := sum (',' mapping)? ','?              pairs are right-associative, left is major
//   sum      := (pad number '+')? postfix ('+' pad number)*   left / right padding `# n + A + # m`
//   postfix  := primary (op number)*                 `/ % = # #{*} #{0} #{!}`, left to right
//   pad      := '#' | '#{*}' | '#{0}' | '#{!}'
//   primary  := AXIS | NUMBER | '{' DEF '}' | '(' mapping ')' | '[' mapping ']'
//             | '$(' postfix ':' number (',' postfix ':' number)* ')'
//   number   := NUMBER | '{' NAME '}' | '{' NAME '::SIZE' '}'   (an axis's or a def's size)
#include "dsl/mapping_parser.h"

#include <cctype>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/status_macros.h"
#include "dsl/text_excerpt.h"

namespace visa {
namespace {

class Parser {
 public:
  Parser(absl::string_view text, const Axes& axes, const MappingDefs& defs)
      : text_(text), axes_(axes), defs_(defs) {}

  absl::StatusOr<Mapping> ParseAll() {
    SkipSpace();
    if (AtEnd()) return Error("empty mapping (write `1` for the identity)");
    ASSIGN_OR_RETURN(Mapping m, ParseMappingList());
    SkipSpace();
    if (!AtEnd()) return Error(absl::StrCat("unexpected `", CharacterAt(text_, pos_), "`"));
    return m;
  }

 private:
  // Parses `postfix (, postfix)*` iteratively and pairs right to left.
  absl::StatusOr<Mapping> ParseMappingList() {
    std::vector<Mapping> parts;
    std::vector<size_t> columns;
    while (true) {
      columns.push_back(pos_);
      ASSIGN_OR_RETURN(Mapping part, ParseSum());
      parts.push_back(std::move(part));
      SkipSpace();
      if (!Consume(',')) break;
      SkipSpace();
      if (AtEnd() || Peek() == ')' || Peek() == ']') break;  // trailing comma
    }
    Mapping result = parts.back();
    for (size_t i = parts.size() - 1; i-- > 0;) {
      absl::StatusOr<Mapping> pair = Mapping::MakePair(parts[i], result);
      if (!pair.ok()) return ErrorAt(columns[i], pair.status().message());
      result = *std::move(pair);
    }
    return result;
  }

  // `# n + E + # m` (manual, "Masking Configuration"): a left pad of n before E, then a right pad
  // of m after it (`E + # m` is `E # (|E| + m)`).
  absl::StatusOr<Mapping> ParseSum() {
    SkipSpace();
    std::optional<std::pair<int64_t, PadKind>> left;
    size_t left_column = pos_;
    if (!AtEnd() && Peek() == '#') {
      ++pos_;
      PadKind kind = ParsePadKind();
      SkipSpace();
      ASSIGN_OR_RETURN(int64_t n, ParseNumber());
      SkipSpace();
      if (!Consume('+')) return Error("expected `+` after a left padding `# n` (as in `# 2 + A + # 4`)");
      left.emplace(n, kind);
    }
    ASSIGN_OR_RETURN(Mapping m, ParsePostfix());
    if (left) {
      absl::StatusOr<Mapping> padded = Mapping::MakeLeftPad(m, left->first, left->second);
      if (!padded.ok()) return ErrorAt(left_column, padded.status().message());
      m = *std::move(padded);
    }
    while (true) {
      SkipSpace();
      if (AtEnd() || Peek() != '+') return m;
      size_t op_column = pos_;
      ++pos_;
      SkipSpace();
      if (!Consume('#')) return Error("expected a right padding `# m` after `+` (as in `A + # 4`)");
      PadKind kind = ParsePadKind();
      SkipSpace();
      ASSIGN_OR_RETURN(int64_t n, ParseNumber());
      absl::StatusOr<Mapping> next = n > kMaxMappingSize - m.size()
                                         ? absl::InvalidArgumentError("padding: the right pad is too large")
                                         : Mapping::MakePadding(m, m.size() + n, kind);
      if (!next.ok()) return ErrorAt(op_column, next.status().message());
      m = *std::move(next);
    }
  }

  absl::StatusOr<Mapping> ParsePostfix() {
    ASSIGN_OR_RETURN(Mapping m, ParsePrimary());
    while (true) {
      SkipSpace();
      if (AtEnd()) return m;
      char op = Peek();
      if (op != '/' && op != '%' && op != '=' && op != '#') return m;
      size_t op_column = pos_;
      ++pos_;
      PadKind kind = PadKind::kTop;
      if (op == '#') kind = ParsePadKind();
      SkipSpace();
      ASSIGN_OR_RETURN(int64_t n, ParseNumber());
      absl::StatusOr<Mapping> next = Apply(op, m, n, kind);
      if (!next.ok()) return ErrorAt(op_column, next.status().message());
      m = *std::move(next);
    }
  }

  static absl::StatusOr<Mapping> Apply(char op, const Mapping& m, int64_t n, PadKind kind) {
    switch (op) {
      case '/': return Mapping::MakeStride(m, n);
      case '%': return Mapping::MakeModulo(m, n);
      case '=': return Mapping::MakeResize(m, n);
      default: return Mapping::MakePadding(m, n, kind);
    }
  }

  // After '#': `{*}` (top), `{0}` (zero) or `{!}` (bottom); anything else leaves a plain `#`.
  PadKind ParsePadKind() {
    size_t save = pos_;
    SkipSpace();
    if (Consume('{')) {
      SkipSpace();
      if (!AtEnd()) {
        char marker = Peek();
        if (marker == '*' || marker == '!' || marker == '0') {
          ++pos_;
          SkipSpace();
          if (Consume('}')) {
            return marker == '0' ? PadKind::kZero : marker == '!' ? PadKind::kBottom : PadKind::kTop;
          }
        }
      }
    }
    pos_ = save;
    return PadKind::kTop;
  }

  absl::StatusOr<Mapping> ParsePrimary() {
    SkipSpace();
    if (AtEnd()) return Error("expected a mapping, found the end of the text");
    if (++depth_ > kMaxNesting) return Error("brackets nest too deeply");
    absl::StatusOr<Mapping> result = ParsePrimaryInner();
    --depth_;
    return result;
  }

  absl::StatusOr<Mapping> ParsePrimaryInner() {
    size_t column = pos_;
    char c = Peek();
    if (c == '(' || c == '[') {
      ++pos_;
      SkipSpace();
      if (!AtEnd() && (Peek() == ')' || Peek() == ']')) return Error("empty brackets");
      ASSIGN_OR_RETURN(Mapping m, ParseMappingList());
      SkipSpace();
      char close = c == '(' ? ')' : ']';
      if (!Consume(close)) {
        return Error(absl::StrCat("expected `", std::string(1, close), "` to close the `",
                                  std::string(1, c), "` at column ", column + 1));
      }
      return m;
    }
    if (c == '{') {
      ASSIGN_OR_RETURN(std::string name, ParseBraced());
      auto def = defs_.find(name);
      if (def == defs_.end()) {
        if (axes_.Find(name) != nullptr) return axes_[name];
        return ErrorAt(column, absl::StrCat("unknown mapping `{ ", name, " }`", DefsHint()));
      }
      return def->second;
    }
    if (c == '$') return ParseLinear();
    if (std::isdigit(static_cast<unsigned char>(c))) {
      ASSIGN_OR_RETURN(int64_t n, ParseNumber());
      absl::StatusOr<Mapping> m = Mapping::Broadcast(n);
      if (!m.ok()) return ErrorAt(column, m.status().message());
      return m;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::string name = ParseIdentifier();
      const Axis* axis = axes_.Find(name);
      if (axis == nullptr) {
        return ErrorAt(column, absl::StrCat("unknown axis `", name, "`", AxesHint()));
      }
      return axes_[name];
    }
    return Error(absl::StrCat("unexpected `", CharacterAt(text_, column), "`"));
  }

  absl::StatusOr<Mapping> ParseLinear() {
    ++pos_;  // '$'
    if (!Consume('(')) return Error("expected `(` after `$` (linear combination `$(E: n, ...)`)");
    std::vector<Mapping::LinearTerm> terms;
    size_t column = pos_;
    while (true) {
      ASSIGN_OR_RETURN(Mapping m, ParsePostfix());
      SkipSpace();
      if (!Consume(':')) return Error("expected `:` and a coefficient in a linear combination term");
      SkipSpace();
      ASSIGN_OR_RETURN(int64_t n, ParseNumber());
      terms.push_back({std::move(m), n});
      SkipSpace();
      if (Consume(')')) break;
      if (!Consume(',')) return Error("expected `,` or `)` in a linear combination");
      SkipSpace();
      if (Consume(')')) break;
    }
    absl::StatusOr<Mapping> m = Mapping::MakeLinear(std::move(terms));
    if (!m.ok()) return ErrorAt(column, m.status().message());
    return m;
  }

  absl::StatusOr<int64_t> ParseNumber() {
    SkipSpace();
    if (AtEnd()) return Error("expected a number, found the end of the text");
    size_t column = pos_;
    if (Peek() == '{') {
      ASSIGN_OR_RETURN(std::string name, ParseBraced());
      absl::string_view base = name;
      if (base.size() > 6 && base.substr(base.size() - 6) == "::SIZE") base.remove_suffix(6);
      if (auto def = defs_.find(base); def != defs_.end()) return def->second.size();
      if (const Axis* axis = axes_.Find(base)) return axis->size;
      return ErrorAt(column, absl::StrCat("unknown constant `{ ", name, " }` (a def or an axis)"));
    }
    size_t start = pos_;
    while (!AtEnd() && std::isdigit(static_cast<unsigned char>(Peek()))) ++pos_;
    if (start == pos_) return Error(absl::StrCat("expected a number, found `", std::string(1, Peek()), "`"));
    if (!AtEnd() && (std::isalpha(static_cast<unsigned char>(Peek())) || Peek() == '_')) {
      return ErrorAt(start, "a number must be a plain decimal literal");
    }
    int64_t n = 0;
    if (!absl::SimpleAtoi(text_.substr(start, pos_ - start), &n) || n > kMaxMappingSize) {
      return ErrorAt(start, absl::StrCat("number too large (at most ", kMaxMappingSize, ")"));
    }
    return n;
  }

  // `{ NAME }` or `{ NAME::SIZE }`; returns the text inside, trimmed.
  absl::StatusOr<std::string> ParseBraced() {
    ++pos_;  // '{'
    SkipSpace();
    size_t start = pos_;
    while (!AtEnd() && Peek() != '}') ++pos_;
    if (AtEnd()) return ErrorAt(start - 1, "unclosed `{`");
    size_t end = pos_;
    while (end > start && std::isspace(static_cast<unsigned char>(text_[end - 1]))) --end;
    ++pos_;  // '}'
    std::string name(text_.substr(start, end - start));
    if (name.empty()) return ErrorAt(start - 1, "empty escape `{ }`");
    return name;
  }

  std::string ParseIdentifier() {
    size_t start = pos_;
    while (!AtEnd() && (std::isalnum(static_cast<unsigned char>(Peek())) || Peek() == '_')) ++pos_;
    if (!AtEnd() && Peek() == '\'') ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  std::string AxesHint() const {
    std::vector<std::string> names;
    for (const Axis& axis : axes_.all()) names.push_back(axis.name);
    if (names.empty()) return " (no axes are declared)";
    return absl::StrCat(" (declared: ", absl::StrJoin(names, ", "), ")");
  }

  std::string DefsHint() const {
    std::vector<std::string> names;
    for (const auto& [name, m] : defs_) names.push_back(name);
    if (names.empty()) return " (no mappings are defined)";
    return absl::StrCat(" (defined: ", absl::StrJoin(names, ", "), ")");
  }

  absl::Status Error(absl::string_view message) const { return ErrorAt(pos_, message); }
  absl::Status ErrorAt(size_t pos, absl::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat("mapping parse error at column ", pos + 1, " of `", Excerpt(text_, pos), "`: ", message));
  }

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }
  bool Consume(char c) {
    if (AtEnd() || Peek() != c) return false;
    ++pos_;
    return true;
  }
  void SkipSpace() {
    while (!AtEnd() && std::isspace(static_cast<unsigned char>(Peek()))) ++pos_;
  }

  static constexpr int kMaxNesting = 200;
  absl::string_view text_;
  const Axes& axes_;
  const MappingDefs& defs_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

absl::StatusOr<Mapping> ParseMapping(absl::string_view text, const Axes& axes,
                                     const MappingDefs& defs) {
  return Parser(text, axes, defs).ParseAll();
}

absl::StatusOr<MappingScope> MappingScope::Parse(absl::string_view axes) {
  absl::StatusOr<Axes> parsed = Axes::Parse(axes);
  if (!parsed.ok()) {
    return absl::Status(parsed.status().code(),
                        absl::StrCat("MappingScope::Parse: ", parsed.status().message()));
  }
  return MappingScope(*std::move(parsed));
}

Mapping MappingScope::m(absl::string_view text) const {
  absl::StatusOr<Mapping> parsed = ParseMapping(text, axes_, defs_);
  return parsed.ok() ? *std::move(parsed) : Mapping::Invalid(parsed.status());
}

absl::Status MappingScope::Define(std::string name, absl::string_view text) {
  ASSIGN_OR_RETURN(Mapping m, ParseMapping(text, axes_, defs_));
  defs_[std::move(name)] = std::move(m);
  return absl::OkStatus();
}

}  // namespace visa
