// The command line refuses contradictory or meaningless flags, numeric flags out of range (naming
// the flag, the value and the range), reads long expressions from files or standard input, and
// echoes bounded excerpts of the input, whole UTF-8 characters included.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "dsl/text_excerpt.h"
#include "tools/bench_command.h"
#include "tools/check_command.h"
#include "tools/map_command.h"
#include "tools/run_command.h"
#include "tools/seq_command.h"

namespace visa::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Result {
  int code = 0;
  std::string out, err;
};

// Parses `args` (after the program name) with the commands registered as `visa` does; a parse
// error is what main prints.
std::string ParseError(std::vector<std::string> args) {
  CLI::App app;
  int exit_code = 0;
  SeqOptions seq;
  AddSeqCommand(app, seq, exit_code);
  BenchOptions bench;
  AddBenchCommand(app, bench, exit_code);
  std::vector<char*> argv = {const_cast<char*>("visa")};
  for (std::string& a : args) argv.push_back(a.data());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

Result Seq(const SeqOptions& options) {
  std::ostringstream out, err;
  int code = RunSeq(options, out, err);
  return {code, out.str(), err.str()};
}

TEST(CliHygiene, SeqRefusesFlagsThatMeanNothingForTheSequencerAsked) {
  EXPECT_EQ(Seq({.axes = "A=8", .buf = "A", .dma = true, .src = "A", .dst = "A"}).err,
            "error: --buf is the fetch / commit buffer; a DMA takes --src and --dst instead\n");
  EXPECT_THAT(Seq({.axes = "A=8", .write = true, .dma = true, .src = "A", .dst = "A"}).err,
              StartsWith("error: --write selects a commit"));
  EXPECT_THAT(Seq({.axes = "A=8", .context = "sub", .dma = true, .src = "A", .dst = "A"}).err,
              StartsWith("error: --context is a Tensor Unit context"));
  EXPECT_EQ(Seq({.axes = "A=8", .buf = "A", .src = "A"}).err, "error: --src describes a DMA; add --dma\n");
  EXPECT_EQ(Seq({.axes = "A=8", .buf = "A", .dst = "A"}).code, 2);
  EXPECT_THAT(Seq({.axes = "A=8", .buf = "A", .dst_tier = "dm"}).err, HasSubstr("describe a DMA; add --dma"));
  EXPECT_EQ(ParseError({"seq", "--axes", "A=8", "--buf", "A", "--src-tier", "hbm"}), "--src-tier requires --dma");
  // The sub context commits (manual, "Commit Engine" > sub-context): that combination stays.
  EXPECT_EQ(Seq({.axes = "A=8", .buf = "A", .packet = "A", .context = "sub", .write = true}).code, 0);
}

TEST(CliHygiene, NumericFlagsNameTheFlagTheValueAndTheRange) {
  EXPECT_EQ(ParseError({"bench", "gemm_k64", "--threads", "100000"}),
            "--threads: value `100000` is out of range: a whole number from 0 to 256");
  EXPECT_EQ(ParseError({"bench", "gemm_k64", "--threads", "99999999999999999999999"}),
            "--threads: value `99999999999999999999999` is out of range: a whole number from 0 to 256");
  EXPECT_EQ(ParseError({"bench", "gemm_k64", "--threads", "-1"}),
            "--threads: value `-1` is out of range: a whole number from 0 to 256");
  EXPECT_EQ(ParseError({"bench", "gemm_k64", "--repeat", "0"}),
            "--repeat: value `0` is out of range: a whole number from 1 to 10000");
  EXPECT_EQ(ParseError({"bench", "gemm_k64", "--repeat", "2x"}),
            "--repeat: value `2x` is out of range: a whole number from 1 to 10000");
  EXPECT_EQ(ParseError({"bench", "gemm_k64", "--repeat", "3", "--threads", "2"}), "");
}

TEST(CliHygiene, BenchChecksCountsBeforeMeasuring) {
  std::ostringstream out, err;
  EXPECT_EQ(BenchSampleCommand({.sample = "gemm_k64", .repeat = 0}, out, err), 2);
  EXPECT_EQ(err.str(), "error: --repeat: value `0` is out of range: a whole number from 1 to 10000\n");
  err.str("");
  EXPECT_EQ(BenchSampleCommand({.sample = "gemm_k64", .threads = 100000}, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("error: --threads: thread count: 0 (the host's) or 1 to 256 threads, got 100000"));
  EXPECT_EQ(out.str(), "");
}

TEST(CliHygiene, CheckAndRunRefuseContradictions) {
  std::ostringstream out, err;
  EXPECT_EQ(CheckSampleCommand({.sample = "gemm_k64", .all = true}, out, err), 2);
  EXPECT_EQ(err.str(), "error: check takes a SAMPLE or --all, not both (got --all and `gemm_k64`)\n");
  EXPECT_EQ(out.str(), "");
  err.str("");
  EXPECT_EQ(RunSampleCommand({.sample = "gemm_k64", .list = true}, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("--list takes no SAMPLE"));
  err.str("");
  EXPECT_EQ(RunSampleCommand({.list = true, .time = true}, out, err), 2);
  EXPECT_EQ(out.str(), "");
}

Result Map(const MapOptions& options, const std::string& stdin_text = "") {
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  int code = RunMap(options, in, out, err);
  return {code, out.str(), err.str()};
}

TEST(CliHygiene, ExpressionsComeFromAFileOrStandardInput) {
  const std::string path = ::testing::TempDir() + "/cli_hygiene_expr.txt";
  std::ofstream(path) << "B / 64, B % 64\n";
  EXPECT_EQ(Map({.expr = "@" + path, .axes = "B=512"}).out, "size: 512\nnormal: B\n");
  EXPECT_EQ(Map({.expr = "-", .axes = "B=512"}, "B / 64, B % 64\n").out, "size: 512\nnormal: B\n");
  EXPECT_EQ(Map({.expr = "B", .axes = "B=512", .equiv = "@" + path}).out, "equivalent\n");
  EXPECT_THAT(Map({.expr = "@/no/such/file", .axes = "B=512"}).err,
              HasSubstr("error: EXPR: cannot open `/no/such/file`"));
  EXPECT_THAT(Map({.expr = "-", .axes = "B=512", .equiv = "-"}).err, HasSubstr("cannot both come from standard input"));
  EXPECT_THAT(Map({.expr = "A", .axes = "A=2", .enumerate = true, .equiv = "A"}).err,
              HasSubstr("--enumerate and --equiv"));
}

TEST(CliHygiene, ErrorsEchoABoundedExcerptAndWholeCharacters) {
  Result accented = Map({.expr = "A, B, \xC3\xA9t\xC3\xA9", .axes = "A=2,B=3"});
  EXPECT_EQ(accented.err, "error: mapping parse error at column 7 of `A, B, \xC3\xA9t\xC3\xA9`: unexpected `\xC3\xA9`\n");
  std::string longer;
  for (int i = 0; i < 100000; ++i) longer += "A, ";
  longer += "\xE2\x82\xAC";  // a three-byte character at the end
  Result big = Map({.expr = longer, .axes = "A=2"});
  EXPECT_EQ(big.code, 2);
  EXPECT_LT(big.err.size(), 300u);
  EXPECT_THAT(big.err, HasSubstr("of `... A, A,"));
  EXPECT_THAT(big.err, HasSubstr("unexpected `\xE2\x82\xAC`"));
}

TEST(TextExcerpt, CutsAtCharacterBoundaries) {
  EXPECT_EQ(Excerpt("short", 2), "short");
  std::string text(100, 'x');
  text.replace(50, 0, "\xF0\x9F\x98\x80");  // four bytes
  for (size_t column = 0; column < text.size(); ++column) {
    const std::string e = Excerpt(text, column);
    EXPECT_LE(e.size(), 2 * kExcerptContextBytes + 4 + 6);
    // Every multi-byte sequence in the excerpt is whole.
    const size_t at = e.find('\xF0');
    if (at != std::string::npos) { EXPECT_EQ(e.substr(at, 4), "\xF0\x9F\x98\x80") << column; }
    EXPECT_NE(static_cast<unsigned char>(e.back()) & 0xC0, 0x80u) << column;
  }
  EXPECT_EQ(CharacterAt("a\xC3\xA9", 1), "\xC3\xA9");
  EXPECT_EQ(CharacterAt("\xC3(", 0), "\xC3");  // malformed: the byte alone
  EXPECT_EQ(CharacterAt("ab", 5), "");
}

}  // namespace
}  // namespace visa::cli
