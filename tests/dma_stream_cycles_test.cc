// `visa seq --dma --cycles`: the cycle estimate of a DMA given as an explicit stream, on the
// manual's DMA examples ("DMA Engine" > Detailed Examples) and on a stream order that switches HBM
// rows ("Memory Performance" > Bank Conflict).
#include "runtime/dma_stream_cycles.h"

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tools/seq_command.h"

namespace visa::cli {
namespace {

using ::testing::HasSubstr;

struct Result {
  int code;
  std::string out, err;
};

Result Seq(SeqOptions options) {
  options.dma = true;
  options.cycles = true;
  std::ostringstream out, err;
  int code = RunSeq(options, out, err);
  return {code, out.str(), err.str()};
}

TEST(DmaStreamCycles, ExampleOneHbmToHbm) {
  // "approximately 128 cycles (64 read requests + 64 write requests) plus approximately 500".
  Result r = Seq({.axes = "A=8,B=8,C=256", .time = "A, B", .packet = "C", .src = "A, B, C", .dst = "B, A, C"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("requests: 64 (64 packets"));
  EXPECT_THAT(r.out, HasSubstr("cycles: 628 (500 start-up + read + write: one memory serves both)\n"));
  // "every read and write request targets a different HBM channel": no channel sees more than 2.
  EXPECT_THAT(r.out, HasSubstr("busiest 2 requests with 0 row switches"));
}

TEST(DmaStreamCycles, ExampleTwoHbmToDmInItsStreamOrder) {
  // Stream time [B, A % 4, A / 4 % 32, A / 128]: "max(65536, 65536) + 500 ≈ 66036 cycles"; B
  // outermost keeps each HBM row open for 32 values of B, so the channels are not the bound.
  Result r = Seq({.axes = "A=256,B=256,C=256", .time = "B, A % 4, A / 4 % 32, A / 128", .packet = "C",
                  .src = "B, A, C", .dst = "A / 4, A % 4, B, C", .src_tier = "hbm", .dst_tier = "dm"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("read_cycles: 65536 (HBM: 65536 requests; 32 of 32 channels"));
  EXPECT_THAT(r.out, HasSubstr("write_cycles: 65536 (DM: 65536 requests)"));
  EXPECT_THAT(r.out, HasSubstr("cycles: 66036 (500 start-up + max(read, write): the sides overlap)\n"));
}

TEST(DmaStreamCycles, TheDestinationsOrderSwitchesHbmRows) {
  // The same move in the destination's order (time [A / 4, A % 4, B]): B innermost walks HBM
  // bits 16-23, and the rows (bits 21 and up) change under every bank at each new A: 2048 requests
  // per channel, 2016 of them row switches at ~40 cycles: 32 x 16/3 + 2016 x 40 = 80811.
  Result r = Seq({.axes = "A=256,B=256,C=256", .time = "A / 4, A % 4, B", .packet = "C", .src = "B, A, C",
                  .dst = "A / 4, A % 4, B, C", .src_tier = "hbm", .dst_tier = "dm"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("busiest 2048 requests with 2016 row switches = 80811 cycles"));
  EXPECT_THAT(r.out, HasSubstr("cycles: 81311 "));
}

TEST(DmaStreamCycles, SmallPacketsAndSpm) {
  // 8-byte packets: one request each, however small ("If C were between 1-255, the cycle count
  // remains similar because the number of DMA requests determines execution time").
  Result small = Seq({.axes = "A=64,C=8", .time = "A", .packet = "C", .src = "A, C", .dst = "A, C",
                      .src_tier = "hbm", .dst_tier = "dm"});
  ASSERT_EQ(small.code, 0) << small.err;
  EXPECT_THAT(small.out, HasSubstr("requests: 64 (64 packets"));
  // The 64 requests read 512 bytes: only the stack bit (8) changes, so 2 channels serve 32 each at
  // 16/3 cycles: 171, slower than the 64 requests; + 500.
  EXPECT_THAT(small.out, HasSubstr("2 of 32 channels, busiest 32 requests with 0 row switches = 171 cycles"));
  EXPECT_THAT(small.out, HasSubstr("cycles: 671 "));
  // SPM moves 128 B per cycle: a 256-byte request takes two.
  Result spm = Seq({.axes = "A=4,C=256", .time = "A", .packet = "C", .src = "A, C", .dst = "A, C",
                    .src_tier = "dm", .dst_tier = "spm"});
  ASSERT_EQ(spm.code, 0) << spm.err;
  EXPECT_THAT(spm.out, HasSubstr("write_cycles: 8 (SPM: 4 requests)"));
  EXPECT_THAT(spm.out, HasSubstr("cycles: 508 "));
}

TEST(DmaStreamCycles, CyclesNeedsDma) {
  CLI::App app{"visa"};
  SeqOptions options;
  int exit_code = -1;
  AddSeqCommand(app, options, exit_code);
  EXPECT_THROW(app.parse(R"(seq --axes A=8 --buf A --cycles)", false), CLI::ParseError);
}

}  // namespace
}  // namespace visa::cli
