// Tests of `visa seq`: output formats for fetch, commit (--write) and DMA, and error reporting, driven in process.
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "CLI/CLI.hpp"
#include "tools/seq_command.h"


namespace visa::cli {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Result {
  int code;
  std::string out, err;
};

Result RunVisaSeq(const SeqOptions& options) {
  std::ostringstream out, err;
  int code = RunSeq(options, out, err);
  return {code, out.str(), err.str()};
}

std::string Access(const std::string& config, int contiguous, int access, int cycles) {
  return "config: " + config + "\ncontiguous_bytes: " + std::to_string(contiguous) +
         "\naccess_bytes: " + std::to_string(access) + "\ncycles: " + std::to_string(cycles) + "\n";
}

// ---------------------------------------------------------------------------------------------
// Fetch (the default).

TEST(SeqCommand, FetchPrintsConfigAccessSizesAndCycles) {
  // The manual's "Rearranging Axes" example.
  Result r = RunVisaSeq({.axes = "A=8,B=8,C=8", .buf = "A, B, C # 32", .time = "B, A", .packet = "C # 16"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out,
            "config: [8 : 32, 8 : 256, 16 : 1] : 16\n"
            "contiguous_bytes: 16\n"
            "access_bytes: 16\n"
            "cycles: 64\n");
}

TEST(SeqCommand, LabelsNameTheStreamDigitOfEveryEntry) {
  Result r = RunVisaSeq({.axes = "A=8,B=8,C=8", .buf = "A, B, C # 32", .time = "B, A", .packet = "C # 16",
                         .labels = true});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, Access("[B -> 8 : 32, A -> 8 : 256, C # 16 -> 16 : 1] : 16", 16, 16, 64));
}

TEST(SeqCommand, TimeAndPacketDefaultToOne) {
  // Packet defaults to `1`: single-element packets, one fetch per time step.
  Result r = RunVisaSeq({.axes = "A=8", .buf = "A", .time = "A"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, Access("[8 : 1] : 1", 8, 1, 8));
}

TEST(SeqCommand, MergingExample) {
  Result r = RunVisaSeq({.axes = "N=8,C=8,H=8,W=32", .buf = "N, C, H, W",
                         .time = "W / 16, H % 2, H / 2, C / 2, C % 2, N / 2, N % 2, W / 8 % 2",
                         .packet = "W % 8"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, Access("[2 : 16, 2 : 32, 4 : 64, 8 : 256, 8 : 2048, 16 : 1] : 16", 16, 16, 1024));
}

TEST(SeqCommand, DtypeScalesBytes) {
  // bf16 axis reordering: single-element packets of 2 bytes, 768 time steps.
  Result bf16 = RunVisaSeq({.axes = "N=4,C=3,H=8,W=8", .buf = "N, C, H, W", .time = "W, H, C, N",
                            .dtype = "bf16"});
  EXPECT_EQ(bf16.out, Access("[8 : 1, 8 : 8, 3 : 64, 4 : 192] : 1", 2, 2, 768));
  // i4 batching (W = 16, the notes' re-check of the manual's example): 96-byte packets fetched
  // as 3 x 32 bytes.
  Result i4 = RunVisaSeq({.axes = "N=4,C=3,H=4,W=16", .buf = "N, C, H, W", .time = "N",
                          .packet = "C, H, W", .dtype = "i4"});
  EXPECT_EQ(i4.code, 0);
  EXPECT_EQ(i4.out, Access("[4 : 192, 3 : 64, 4 : 16, 16 : 1] : 192", 384, 32, 12));
  // f8e4m3 padding packets: 15, 3 and 1 cycles.
  Result c = RunVisaSeq({.axes = "A=3,B=5,C=2", .buf = "A, B, C", .time = "A, B", .packet = "C",
                         .dtype = "f8e4m3"});
  EXPECT_THAT(c.out, EndsWith("cycles: 15\n"));
  Result bc = RunVisaSeq({.axes = "A=3,B=5,C=2", .buf = "A, B, C", .time = "A",
                          .packet = "[B, C] # 16", .dtype = "f8e4m3"});
  EXPECT_THAT(bc.out, EndsWith("access_bytes: 16\ncycles: 3\n"));
  Result abc = RunVisaSeq({.axes = "A=3,B=5,C=2", .buf = "A, B, C", .packet = "[A, B, C] # 32",
                           .dtype = "f8e4m3"});
  EXPECT_EQ(abc.out, Access("[32 : 1] : 32", 32, 32, 1));
}

TEST(SeqCommand, SubContextFetchesEightBytes) {
  Result r = RunVisaSeq({.axes = "N=4,C=3,H=4,W=8", .buf = "N, C, H, W", .time = "N, C", .packet = "H, W",
                         .context = "sub"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, Access("[4 : 96, 3 : 32, 4 : 8, 8 : 1] : 32", 384, 8, 48));
  Result main = RunVisaSeq({.axes = "N=4,C=3,H=4,W=8", .buf = "N, C, H, W", .time = "N, C",
                            .packet = "H, W", .context = "main"});
  EXPECT_EQ(main.out, Access("[4 : 96, 3 : 32, 4 : 8, 8 : 1] : 32", 384, 32, 12));
}

// ---------------------------------------------------------------------------------------------
// Commit (--write). The manual prints commit_size after the colon; `visa seq` prints the
// (truncated) packet size in elements there and commit_size as access_bytes.

TEST(SeqCommand, WriteIsACommit) {
  Result chunking = RunVisaSeq({.axes = "M=4,K=2,W=8", .buf = "K, M, W # 16", .time = "K",
                                .packet = "M, W", .write = true});
  EXPECT_EQ(chunking.code, 0);
  EXPECT_EQ(chunking.err, "");
  EXPECT_EQ(chunking.out,
            "config: [2 : 64, 4 : 16, 8 : 1] : 32\n"
            "contiguous_bytes: 8\n"
            "access_bytes: 8\n"
            "cycles: 8\n");
  // no_transpose: the 32-element packet is truncated to the 8 elements the buffer holds.
  Result truncated = RunVisaSeq({.axes = "M=4,K=2,W=8", .buf = "M, K, W", .time = "M, K",
                                 .packet = "W # 32", .write = true});
  EXPECT_EQ(truncated.out, Access("[4 : 16, 2 : 8, 8 : 1] : 8", 64, 8, 8));
  // transpose (f32) and transpose_with_truncation (bf16).
  Result f32 = RunVisaSeq({.axes = "M=4,K=2,W=8", .buf = "K, M, W", .time = "M, K", .packet = "W",
                           .dtype = "f32", .write = true});
  EXPECT_EQ(f32.out, Access("[4 : 8, 2 : 32, 8 : 1] : 8", 32, 32, 8));
  Result bf16 = RunVisaSeq({.axes = "M=4,K=2,N=16", .buf = "K, M, N = 8", .time = "M, K", .packet = "N",
                            .dtype = "bf16", .write = true});
  EXPECT_EQ(bf16.out, Access("[4 : 8, 2 : 32, 8 : 1] : 8", 16, 16, 8));
}

TEST(SeqCommand, WriteInTheSubContextCommitsEightBytes) {
  Result r = RunVisaSeq({.axes = "M=4,K=2,W=8", .buf = "K, M, W", .time = "M, K", .packet = "W",
                         .dtype = "f32", .context = "sub", .write = true});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, Access("[4 : 8, 2 : 32, 8 : 1] : 8", 32, 8, 32));
}

// ---------------------------------------------------------------------------------------------
// DMA (--dma).

TEST(SeqCommand, DmaPrintsBothSequencersAndThePacketBytes) {
  Result r = RunVisaSeq({.axes = "A=8,B=8,C=256", .time = "A, B", .packet = "C", .dma = true,
                         .src = "A, B, C", .dst = "B, A, C"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out,
            "read: [8 : 2048, 8 : 256, 256 : 1] : 256\n"
            "write: [8 : 256, 8 : 2048, 256 : 1] : 256\n"
            "packet_bytes: 256\n");
}

TEST(SeqCommand, DmaWithLabelsAndTiers) {
  Result r = RunVisaSeq({.axes = "A=256,B=256,C=256", .time = "B, A % 4, A / 4 % 32, A / 128",
                         .packet = "C", .dma = true, .src = "B, A, C", .dst = "A / 4, A % 4, B, C",
                         .src_tier = "HBM", .dst_tier = "dm", .labels = true});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out,
            "read: [B -> 256 : 65536, A % 4 -> 4 : 256, A / 4 % 32 -> 32 : 1024, A / 128 -> 2 : 32768, "
            "C -> 256 : 1] : 256\n"
            "write: [B -> 256 : 256, A % 4 -> 4 : 65536, A / 4 % 32 -> 32 : 262144, "
            "A / 128 -> 2 : 8388608, C -> 256 : 1] : 256\n"
            "packet_bytes: 256\n");
}

TEST(SeqCommand, DmaPacketBytesFollowTheDtype) {
  Result r = RunVisaSeq({.axes = "A=4,B=16", .time = "A", .packet = "B", .dtype = "bf16", .dma = true,
                         .src = "A, B", .dst = "A, B", .dst_tier = "spm"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "read: [4 : 16, 16 : 1] : 16\nwrite: [4 : 16, 16 : 1] : 16\npacket_bytes: 32\n");
}

// ---------------------------------------------------------------------------------------------
// Errors: one line `error: <rule>: <why>` on stderr, nothing on stdout, exit code 2.

struct ErrorCase {
  const char* name;
  SeqOptions options;
  const char* prefix;  // what stderr starts with
};

TEST(SeqCommand, ErrorsGoToStderrWithExitTwo) {
  const std::vector<ErrorCase> cases = {
      {"unknown axis", {.axes = "A=8", .buf = "A, Q"},
       "error: mapping parse error at column 4 of `A, Q`: unknown axis `Q`"},
      {"unknown axis in the stream", {.axes = "A=8", .buf = "A", .time = "Z"},
       "error: mapping parse error at column 1 of `Z`: unknown axis `Z`"},
      {"bad dtype", {.axes = "A=8", .buf = "A", .dtype = "i7"}, "error: unknown element type \"i7\""},
      {"bad axes", {.axes = "A=", .buf = "A"}, "error: axes: "},
      {"Insufficient Input", {.axes = "N=2048", .buf = "N % 512", .time = "N / 512", .packet = "N % 512"},
       "error: Insufficient Input: "},
      {"Incompatible Shapes", {.axes = "A=15", .buf = "A % 5, A / 5", .packet = "A % 3, A / 3"},
       "error: Incompatible Shapes: "},
      {"Entry limit",
       {.axes = "A=2,B=2,C=2,D=2,E=2,F=2,G=2,H=2,I=2", .buf = "A, B, C, D, E, F, G, H, I",
        .time = "I, H, G, F, E, D, C, B, A"},
       "error: Entry limit: "},
      {"Iteration limit", {.axes = "A=131072", .buf = "A", .time = "A"}, "error: Iteration limit: "},
      {"Packet fetch", {.axes = "A=512,B=8", .buf = "A, B", .time = "A / 32, B", .packet = "A % 32"},
       "error: Packet fetch: "},
      {"sub-context fetch_size", {.axes = "A=4", .buf = "A", .packet = "A", .context = "sub"},
       "error: fetch_size: "},
      {"commit_in_size", {.axes = "A=12", .buf = "A", .packet = "A", .write = true},
       "error: commit_in_size: "},
      {"unknown context", {.axes = "A=8", .buf = "A", .context = "both"}, "error: unknown context `both`"},
      {"missing --buf", {.axes = "A=8", .time = "A"}, "error: --buf is required"},
      {"--dma without --dst", {.axes = "A=8", .dma = true, .src = "A"}, "error: --dma needs --src and --dst"},
      {"unknown tier", {.axes = "A=8", .dma = true, .src = "A", .dst = "A", .dst_tier = "l2"},
       "error: unknown memory tier `l2`"},
      {"DMA packet size", {.axes = "A=8192", .packet = "A", .dma = true, .src = "A", .dst = "A"},
       "error: DMA packet size: "},
      {"DMA alignment (DM write)",
       {.axes = "A=4,B=4", .time = "A", .packet = "B", .dma = true, .src = "A, B", .dst = "A, B",
        .dst_tier = "dm"},
       "error: DMA alignment: a write into DM needs 8-byte packets"},
      {"DMA alignment (HBM to DM)",
       {.axes = "A=4,C=8", .time = "A", .packet = "C", .dma = true, .src = "A, C # 12", .dst = "A, C",
        .dst_tier = "dm"},
       "error: DMA alignment: an HBM-to-DM transfer needs 8-byte aligned addresses"},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    Result r = RunVisaSeq(c.options);
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(r.err, StartsWith(c.prefix));
    EXPECT_THAT(r.err, EndsWith("\n"));
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  }
}

TEST(SeqCommand, ErrorsExplainWhy) {
  Result insufficient =
      RunVisaSeq({.axes = "N=2048", .buf = "N % 512", .time = "N / 512", .packet = "N % 512"});
  EXPECT_THAT(insufficient.err, HasSubstr("`N / 512`"));
  EXPECT_THAT(insufficient.err, HasSubstr("`N % 512`"));
  Result dtype = RunVisaSeq({.axes = "A=8", .buf = "A", .dtype = "i7"});
  EXPECT_THAT(dtype.err, HasSubstr("f8e4m3"));  // lists the valid names
  Result axis = RunVisaSeq({.axes = "A=8", .buf = "A, Q"});
  EXPECT_THAT(axis.err, HasSubstr("declared: A"));
}

// ---------------------------------------------------------------------------------------------
// The command-line wiring (flags to options), as `visa seq ...` parses it.

TEST(SeqCommand, CommandLineFlagsReachTheOptions) {
  CLI::App app{"visa"};
  app.require_subcommand(1);
  SeqOptions options;
  int exit_code = -1;
  AddSeqCommand(app, options, exit_code);
  testing::internal::CaptureStdout();
  app.parse(R"(seq --axes A=8,B=8,C=8 --buf "A, B, C # 32" --time "B, A" --packet "C # 16" --dtype i8)",
            false);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(exit_code, 0);
  EXPECT_EQ(options.buf, "A, B, C # 32");
  EXPECT_EQ(options.time, "B, A");
  EXPECT_FALSE(options.write);
  EXPECT_EQ(out, Access("[8 : 32, 8 : 256, 16 : 1] : 16", 16, 16, 64));
}

TEST(SeqCommand, CommandLineWriteDmaAndLabelFlags) {
  CLI::App app{"visa"};
  SeqOptions options;
  int exit_code = -1;
  AddSeqCommand(app, options, exit_code);
  testing::internal::CaptureStdout();
  app.parse(R"(seq --axes A=8,B=8,C=256 --dma --src "A, B, C" --dst "B, A, C" --src-tier hbm )"
            R"(--dst-tier hbm --time "A, B" --packet C --labels)",
            false);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(exit_code, 0);
  EXPECT_TRUE(options.dma);
  EXPECT_TRUE(options.labels);
  EXPECT_EQ(out,
            "read: [A -> 8 : 2048, B -> 8 : 256, C -> 256 : 1] : 256\n"
            "write: [A -> 8 : 256, B -> 8 : 2048, C -> 256 : 1] : 256\n"
            "packet_bytes: 256\n");

  CLI::App app2{"visa"};
  SeqOptions commit;
  int commit_code = -1;
  AddSeqCommand(app2, commit, commit_code);
  testing::internal::CaptureStdout();
  app2.parse(R"(seq --axes M=4,K=2,W=8 --buf "K, M, W # 16" --time K --packet "M, W" --write)", false);
  std::string commit_out = testing::internal::GetCapturedStdout();
  EXPECT_TRUE(commit.write);
  EXPECT_EQ(commit_code, 0);
  EXPECT_EQ(commit_out, Access("[2 : 64, 4 : 16, 8 : 1] : 32", 8, 8, 8));
}

TEST(SeqCommand, CommandLineErrorExitCode) {
  CLI::App app{"visa"};
  SeqOptions options;
  int exit_code = -1;
  AddSeqCommand(app, options, exit_code);
  testing::internal::CaptureStderr();
  app.parse(R"(seq --axes N=2048 --buf "N % 512" --time "N / 512" --packet "N % 512")", false);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(exit_code, 2);
  EXPECT_THAT(err, StartsWith("error: Insufficient Input: "));
}

}  // namespace
}  // namespace visa::cli

namespace visa::cli {
namespace {

TEST(SeqCommand, StagingTypesNeverSitInMemory) {
  Result r = RunVisaSeq({.axes = "A=8", .buf = "A", .packet = "A", .dtype = "i5"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("Scalar Type: i5 is a staging type"));
}

}  // namespace
}  // namespace visa::cli
