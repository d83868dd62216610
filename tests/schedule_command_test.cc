// Tests of `visa schedule`: the table, the JSON loaded back, the Chrome trace's structure, the
// SVG (well-formed: rsvg-convert renders it to PNG; one box per op) and the errors, driven in
// process on the GEMM and on the double-buffered GEMM whose sub-context TRF load overlaps main.
#include "tools/schedule_command.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/common/schedule_test_helpers.h"

#include "nlohmann/json.hpp"

namespace visa::cli {
namespace {

using schedule_test::RunSchedule;
using Result = schedule_test::ScheduleResult;

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using nlohmann::json;


std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ScheduleCommand, TablePrintsEveryOpAndTheMakespan) {
  Result r = RunSchedule({.sample = "gemm_double_buffered"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("# gemm_double_buffered: "));
  EXPECT_THAT(r.out, HasSubstr("op   resource      start        end     cycles  waited on"));
  EXPECT_THAT(r.out, HasSubstr("RAW on op 4 (trf#6)"));  // the first contraction waits for its load
  EXPECT_THAT(r.out, HasSubstr("makespan: "));
  EXPECT_EQ(r.err, "");
}

TEST(ScheduleCommand, JsonLoadsBackWithOneEntryPerOp) {
  Result r = RunSchedule({.sample = "gemm_double_buffered", .json = true});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["sample"], "gemm_double_buffered");
  ASSERT_TRUE(j["ops"].is_array());
  ASSERT_EQ(j["ops"].size(), 9u);  // 2 uploads, 2 loads to DM, 2 TRF loads, 2 contractions, 1 download
  int64_t latest = 0;
  std::map<std::string, int> per_resource;
  for (size_t i = 0; i < j["ops"].size(); ++i) {
    const json& op = j["ops"][i];
    EXPECT_EQ(op["op"], i);
    EXPECT_TRUE(op["label"].is_string());
    ++per_resource[op["resource"].get<std::string>()];
    EXPECT_EQ(op["cycles"].get<int64_t>(), op["end"].get<int64_t>() - op["start"].get<int64_t>());
    EXPECT_TRUE(op["waited_on"]["kind"].is_string());
    EXPECT_TRUE(op["hazards"].is_array());
    latest = std::max(latest, op["end"].get<int64_t>());
  }
  EXPECT_EQ(j["makespan"].get<int64_t>(), latest);
  EXPECT_EQ(per_resource, (std::map<std::string, int>{{"dma", 5}, {"main", 2}, {"sub", 2}}));
  // The second TRF load (sub, op 6) runs while the first contraction (main, op 5) does.
  const json& main = j["ops"][5];
  const json& sub = j["ops"][6];
  ASSERT_EQ(main["resource"], "main");
  ASSERT_EQ(sub["resource"], "sub");
  EXPECT_LT(sub["start"].get<int64_t>(), main["end"].get<int64_t>());
  EXPECT_LT(main["start"].get<int64_t>(), sub["end"].get<int64_t>());
  // The contraction waited for the load it reads (RAW on the TRF).
  EXPECT_EQ(main["waited_on"]["kind"], "hazard");
  EXPECT_EQ(main["waited_on"]["hazard"], "RAW");
  EXPECT_EQ(main["waited_on"]["op"], 4);
  EXPECT_TRUE(j["warnings"].is_array());
}

TEST(ScheduleCommand, TraceHasATrackPerResourceAnEventPerOpAndFlowsForHazards) {
  const std::string path = ::testing::TempDir() + "/schedule_gemm_trace.json";
  Result r = RunSchedule({.sample = "gemm", .trace_path = path});
  ASSERT_EQ(r.code, 0) << r.err;
  json trace = json::parse(ReadFile(path));
  ASSERT_TRUE(trace["traceEvents"].is_array());
  std::set<std::string> tracks;
  int complete = 0;
  std::map<int, std::string> flow_phases;
  for (const json& e : trace["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M" && e["name"] == "thread_name") tracks.insert(e["args"]["name"].get<std::string>());
    if (ph == "X") {
      ++complete;
      EXPECT_TRUE(e["ts"].is_number_integer());
      EXPECT_TRUE(e["dur"].is_number_integer());
      EXPECT_THAT(e["args"]["configuration"].get<std::string>(), StartsWith("op "));
      EXPECT_TRUE(e["args"]["cycle_terms"].is_array());
    }
    if (ph == "s" || ph == "f") flow_phases[e["id"].get<int>()] += ph;
  }
  EXPECT_EQ(tracks, (std::set<std::string>{"main", "sub", "dma"}));
  EXPECT_EQ(complete, 7);  // the GEMM's ops
  EXPECT_FALSE(flow_phases.empty());
  for (const auto& [id, phases] : flow_phases) EXPECT_EQ(phases, "sf") << "flow " << id;
}

// The SVG renders (rsvg-convert parses it as XML and fails on a malformed file) and holds one box
// per op.
void ExpectRendersWithBoxes(const std::string& svg_path, int boxes) {
  const std::string svg = ReadFile(svg_path);
  EXPECT_THAT(svg, StartsWith("<?xml"));
  EXPECT_EQ(Count(svg, "class=\"op-box\""), boxes);
  const std::string png = svg_path + ".png";
  const std::string command = "rsvg-convert '" + svg_path + "' -o '" + png + "' 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0)
      << command << " failed (rsvg-convert comes with Debian's librsvg2-bin, which scripts/setup.sh installs)";
  EXPECT_EQ(ReadFile(png).substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

TEST(ScheduleCommand, SvgOfTheGemmHasOneBoxPerOp) {
  const std::string path = ::testing::TempDir() + "/schedule_gemm.svg";
  Result r = RunSchedule({.sample = "gemm", .svg_path = path});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectRendersWithBoxes(path, 7);
  const std::string svg = ReadFile(path);
  for (int op = 0; op < 7; ++op) EXPECT_THAT(svg, HasSubstr("data-op=\"" + std::to_string(op) + "\""));
  EXPECT_THAT(svg, HasSubstr("class=\"hazard\""));  // the contraction's RAW on the TRF load, at least
}

// By default the host transfers (ops 0 and 1, pdma host -> HBM) are folded into a narrow band so
// the kernel's ops get the width; the key says what arrows, hatching and bands mean.
TEST(ScheduleCommand, SvgFoldsHostTransfersAndExplainsItsMarks) {
  const std::string path = ::testing::TempDir() + "/schedule_gemm_folded.svg";
  Result r = RunSchedule({.sample = "gemm", .svg_path = path});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(RunSchedule({.sample = "gemm", .json = true}).out);
  const std::string svg = ReadFile(path);
  EXPECT_THAT(svg, HasSubstr("<title>host transfers, cycles 0 to " + j["ops"][2]["start"].dump() +
                             ", folded (not to scale)</title>"));
  EXPECT_THAT(svg, HasSubstr("host transfers folded (--window 0:" + j["makespan"].dump() + " draws them to scale)"));
  EXPECT_THAT(svg, HasSubstr("arrow: the op at the head waited until the op at the tail ended (RAW read after write"));
  // The folded band is 70 px of the 1270 px of lanes: op 3 (the kernel's B load) gets most of the rest.
  const size_t box = svg.find("data-op=\"3\" x=\"");
  ASSERT_NE(box, std::string::npos);
  const double width = std::stod(svg.substr(svg.find("width=\"", box) + 7));
  EXPECT_GT(width, 900);
  // An explicit window draws to scale, no band.
  const std::string scaled = ::testing::TempDir() + "/schedule_gemm_scaled.svg";
  ASSERT_EQ(RunSchedule({.sample = "gemm", .svg_path = scaled, .svg_window = "0:" + j["makespan"].dump()}).code, 0);
  EXPECT_THAT(ReadFile(scaled), Not(HasSubstr("class=\"fold\"")));
}

TEST(ScheduleCommand, SvgWindowDrawsOnlyTheOpsInside) {
  // From the first TRF load's start to the download's start: the loads and contractions (ops 4-7);
  // op 3 ends where the window begins and op 8 starts where it ends.
  json j = json::parse(RunSchedule({.sample = "gemm_double_buffered", .json = true}).out);
  const int64_t from = j["ops"][4]["start"], to = j["ops"][8]["start"];
  ASSERT_EQ(j["ops"][3]["end"].get<int64_t>(), from);
  const std::string window = std::to_string(from) + ":" + std::to_string(to);
  const std::string path = ::testing::TempDir() + "/schedule_double_buffered.svg";
  Result r = RunSchedule({.sample = "gemm_double_buffered", .svg_path = path, .svg_window = window});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectRendersWithBoxes(path, 4);
  const std::string svg = ReadFile(path);
  for (int op = 4; op <= 7; ++op) EXPECT_THAT(svg, HasSubstr("data-op=\"" + std::to_string(op) + "\""));
  EXPECT_THAT(svg, HasSubstr("(cycles " + std::to_string(from) + " to " + std::to_string(to) + " shown)"));
}

// A window reaching the int64 limit is cut at the makespan: it ends (no tick loop stepping past the
// limit) and every tick label is a cycle of the schedule, none negative.
TEST(ScheduleCommand, AWindowToTheInt64LimitIsCutAtTheMakespan) {
  const std::string path = ::testing::TempDir() + "/schedule_huge_window.svg";
  Result r = RunSchedule({.sample = "gemm", .svg_path = path, .svg_window = "0:9223372036854775807"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string svg = ReadFile(path);
  EXPECT_THAT(svg, Not(HasSubstr(">-")));  // no wrapped, negative tick label
  EXPECT_THAT(svg, Not(HasSubstr("9223372036854775807")));
  EXPECT_GT(Count(svg, "text-anchor=\"middle\""), 1);  // ticks were drawn
}

// An empty file name or window is refused at parsing, not taken as "not given".
TEST(ScheduleCommand, EmptyFlagValuesAreRefused) {
  for (const char* flag : {"--svg", "--trace", "--window", "--html"}) {
    CLI::App app{"visa"};
    ScheduleOptions options;
    int exit_code = -1;
    AddScheduleCommand(app, options, exit_code);
    std::vector<std::string> reversed_args{"", flag, "gemm", "schedule"};  // CLI11 reads it back to front
    try {
      app.parse(reversed_args);
      ADD_FAILURE() << flag << " \"\" parsed";
    } catch (const CLI::ValidationError& e) {
      EXPECT_THAT(std::string(e.what()), HasSubstr(std::string(flag) + ": the value is empty")) << flag;
    }
    EXPECT_EQ(exit_code, -1) << flag;
  }
}

TEST(ScheduleCommand, ColumnWalkDuringDmaWarnsOfBankStarvation) {
  // Its table: op 2 copies dm#2 to HBM while op 3 fetches dm#2 down its columns; both only read
  // dm#2, so both start when the load (op 1) ends.
  Result r = RunSchedule({.sample = "column_walk_during_dma"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("warning: bank starvation: op 3 makes 128 consecutive accesses to DM bank 0 "
                               "while DMA op 2 is active"));
  EXPECT_EQ(r.err, "");
  Result j = RunSchedule({.sample = "column_walk_during_dma", .json = true});
  ASSERT_EQ(j.code, 0) << j.err;
  json warnings = json::parse(j.out)["warnings"];
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0]["ops"], json::array({3}));
  EXPECT_EQ(warnings[0]["dma_op"], 2);
  EXPECT_EQ(warnings[0]["accesses"], 128);
  EXPECT_THAT(j.err, HasSubstr("warning: bank starvation: op 3"));  // JSON on stdout, the warning on stderr
  // The picture outlines the walk in red.
  const std::string path = ::testing::TempDir() + "/schedule_column_walk.svg";
  ASSERT_EQ(RunSchedule({.sample = "column_walk_during_dma", .svg_path = path}).code, 0);
  ExpectRendersWithBoxes(path, 4);
  EXPECT_THAT(ReadFile(path), HasSubstr("data-op=\"3\" x="));
  EXPECT_THAT(ReadFile(path), HasSubstr("stroke=\"#e00000\""));
}

TEST(ScheduleCommand, AvoidStarvationRunsTheWalkAfterTheDma) {
  Result r = RunSchedule({.sample = "column_walk_during_dma", .json = true, .avoid_starvation = true});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_TRUE(j["warnings"].empty());
  EXPECT_EQ(j["ops"][3]["start"], j["ops"][2]["end"]);
  EXPECT_EQ(j["ops"][3]["waited_on"]["kind"], "resource");
  EXPECT_EQ(j["ops"][3]["waited_on"]["op"], 2);
  EXPECT_EQ(j["ops"][3]["holds_dma"], true);
}

TEST(ScheduleCommand, Errors) {
  Result unknown = RunSchedule({.sample = "no_such_sample"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("error: unknown sample `no_such_sample`"));
  for (const char* window : {"5", "10:5", "-1:4", "a:b"}) {
    Result bad = RunSchedule({.sample = "gemm", .svg_path = ::testing::TempDir() + "/w.svg", .svg_window = window});
    EXPECT_EQ(bad.code, 2) << window;
    EXPECT_THAT(bad.err, HasSubstr("error: --window: expected FROM:TO")) << window;
    EXPECT_THAT(bad.err, HasSubstr("; the schedule spans cycles 0 to ")) << window;
  }
  Result window_alone = RunSchedule({.sample = "gemm", .svg_window = "0:10"});
  EXPECT_EQ(window_alone.code, 2);
  EXPECT_EQ(window_alone.err, "error: --window says which cycles the SVG draws; add --svg FILE\n");
  // A window past the schedule draws nothing: refused, naming the makespan.
  json j = json::parse(RunSchedule({.sample = "gemm", .json = true}).out);
  const int64_t makespan = j["makespan"];
  Result past = RunSchedule({.sample = "gemm", .svg_path = ::testing::TempDir() + "/w.svg",
                          .svg_window = std::to_string(makespan) + ":" + std::to_string(makespan + 10)});
  EXPECT_EQ(past.code, 2);
  EXPECT_THAT(past.err, HasSubstr("error: --window: FROM " + std::to_string(makespan) +
                                  " is at or past the schedule's makespan of " + std::to_string(makespan)));
  EXPECT_THAT(past.err, HasSubstr("the schedule spans cycles 0 to " + std::to_string(makespan)));
  Result unwritable = RunSchedule({.sample = "gemm", .svg_path = "/nonexistent-dir/x.svg"});
  EXPECT_EQ(unwritable.code, 2);
  EXPECT_THAT(unwritable.err, HasSubstr("error: --svg: cannot write"));
}

}  // namespace
}  // namespace visa::cli
