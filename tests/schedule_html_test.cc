// Tests of the schedule viewer's page (tools/schedule_html.h) and what it is built from: the
// critical path, the engine of a label, the kernel's span without host transfers, the Vector
// Engine pass labels; then `visa schedule SAMPLE --html` on the GEMM, the double-buffered GEMM and
// a transformer layer, with the embedded JSON checked against `visa schedule --json` (computed
// separately) and the page checked to need no network. tests/schedule_viewer_browser_test.sh
// loads the same pages in Chromium.
#include "tools/schedule_html.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/common/schedule_test_helpers.h"

#include "tools/kernel_span.h"
#include "tools/schedule_command.h"

namespace visa::cli {
namespace {

using schedule_test::Op;
using schedule_test::RunSchedule;
using Result = schedule_test::ScheduleResult;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using nlohmann::json;


TEST(ScheduleHtmlTest, CriticalPathFollowsWhatEachOpWaitedOnFromTheLastOp) {
  using K = WaitReason::Kind;
  Schedule s;
  s.ops = {Op(0, "tdma hbm#1 -> dm#2", Resource::kDma, 0, 10),
           Op(1, "fetch > collect > to_trf -> trf#3", Resource::kSub, 10, 20, K::kHazard, 0),
           Op(2, "tdma hbm#4 -> dm#5", Resource::kDma, 10, 15, K::kResource, 0),  // off the path
           Op(3, "fetch > collect > align > contract -> dm#6", Resource::kMain, 20, 30, K::kHazard, 1)};
  s.makespan = 30;
  EXPECT_THAT(CriticalPath(s), ElementsAre(3, 1, 0));
  EXPECT_TRUE(CriticalPath(Schedule{}).empty());
}

TEST(ScheduleHtmlTest, EngineComesFromTheStageChain) {
  EXPECT_EQ(EngineOf("Q projection [g0 k0] operands: tdma hbm#1 -> dm#2"), "dma");
  EXPECT_EQ(EngineOf("pdma host -> hbm#1"), "dma");
  EXPECT_EQ(EngineOf("fetch > collect > align > contract > accumulate > vector > commit -> dm#3"), "contract");
  EXPECT_EQ(EngineOf("softmax: fetch > collect > vector > commit -> dm#3"), "vector");
  EXPECT_EQ(EngineOf("fetch > collect > to_vrf -> vrf#4"), "load");
  EXPECT_EQ(EngineOf("fetch > collect > commit -> dm#3"), "move");
  EXPECT_EQ(StepOfLabel("Q projection [g0 k1] operands: tdma hbm#1 -> dm#2"), "Q projection");
  EXPECT_EQ(StepOfLabel("tdma hbm#1 -> dm#2"), "");
}

TEST(ScheduleHtmlTest, KernelSpanLeavesTheHostTransfersOut) {
  Schedule s;
  s.ops = {Op(0, "pdma host -> hbm#1", Resource::kDma, 0, 100), Op(1, "tdma hbm#1 -> dm#2", Resource::kDma, 100, 150),
           Op(2, "fetch > collect > commit -> dm#3", Resource::kMain, 150, 160),
           Op(3, "pdma hbm#1 -> host", Resource::kDma, 160, 400)};
  s.makespan = 400;
  EXPECT_TRUE(IsHostTransfer(s.ops[0].label));
  EXPECT_TRUE(IsHostTransfer(s.ops[3].label));
  EXPECT_FALSE(IsHostTransfer(s.ops[1].label));
  const CycleSpan span = KernelSpan(s);
  EXPECT_EQ(span.from, 100);
  EXPECT_EQ(span.to, 160);
  s.ops = {s.ops[0]};  // host transfers only: the whole schedule
  EXPECT_EQ(KernelSpan(s).from, 0);
  EXPECT_EQ(KernelSpan(s).to, 400);
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}


// The JSON the page embeds.
json EmbeddedJson(const std::string& page) {
  const std::string open = "<script id=\"schedule-data\" type=\"application/json\">";
  const size_t begin = page.find(open);
  if (begin == std::string::npos) return nullptr;
  const size_t end = page.find("</script>", begin);
  return json::parse(page.substr(begin + open.size(), end - begin - open.size()));
}

// The page of SAMPLE checked against `visa schedule SAMPLE --json`; returns the embedded JSON.
json CheckPage(const std::string& sample) {
  const std::string path = ::testing::TempDir() + "/viewer_" + sample + ".html";
  Result r = RunSchedule({.sample = sample, .html_path = path});
  EXPECT_EQ(r.code, 0) << r.err;
  const std::string page = ReadFile(path);
  EXPECT_THAT(page, StartsWith("<!DOCTYPE html>"));
  // Self-contained: no external script, style sheet, image or font.
  EXPECT_THAT(page, Not(HasSubstr("src=")));
  EXPECT_THAT(page, Not(HasSubstr("href=\"http")));
  EXPECT_THAT(page, Not(HasSubstr("@import")));
  EXPECT_THAT(page, Not(HasSubstr("url(http")));
  EXPECT_THAT(page, Not(HasSubstr("fetch(")));
  const json viewer = EmbeddedJson(page);
  const json table = json::parse(RunSchedule({.sample = sample, .json = true}).out);
  EXPECT_EQ(viewer["makespan"], table["makespan"]);
  EXPECT_EQ(viewer["ops"].size(), table["ops"].size());
  std::map<std::string, int64_t> busy;
  for (size_t i = 0; i < table["ops"].size(); ++i) {
    const json& v = viewer["ops"][i];
    const json& t = table["ops"][i];
    EXPECT_EQ(v["start"], t["start"]) << i;
    EXPECT_EQ(v["end"], t["end"]) << i;
    EXPECT_EQ(v["resource"], t["resource"]) << i;
    EXPECT_EQ(v["waited_on"]["text"], t["waited_on"]["text"]) << i;
    EXPECT_THAT(v["explain"].get<std::string>(), StartsWith("op " + std::to_string(i) + ": ")) << i;
    EXPECT_THAT(v["explain"].get<std::string>(), HasSubstr(" cycles")) << i;
    busy[t["resource"]] += t["cycles"].get<int64_t>();
  }
  const double makespan = table["makespan"].get<double>();
  for (const auto& [resource, cycles] : busy) {
    EXPECT_DOUBLE_EQ(viewer["busy"][resource].get<double>(), static_cast<double>(cycles) / makespan) << resource;
  }
  // The critical path starts at an op ending at the makespan and steps to what each waited on.
  const json& path_ops = viewer["critical_path"];
  EXPECT_FALSE(path_ops.empty());
  if (!path_ops.empty()) {
    EXPECT_EQ(table["ops"][path_ops[0].get<int>()]["end"], table["makespan"]);
  }
  for (size_t i = 0; i + 1 < path_ops.size(); ++i) {
    EXPECT_EQ(table["ops"][path_ops[i].get<int>()]["waited_on"]["op"], path_ops[i + 1]);
  }
  // Every tensor rectangle lies within the schedule and within its addresses.
  EXPECT_FALSE(viewer["tensors"].empty());
  for (const json& t : viewer["tensors"]) {
    EXPECT_LT(t["begin"].get<int64_t>(), t["end"].get<int64_t>()) << t.dump();
    EXPECT_LE(t["first"].get<int64_t>(), t["last"].get<int64_t>()) << t.dump();
    EXPECT_LE(t["last"].get<int64_t>(), table["makespan"].get<int64_t>()) << t.dump();
  }
  EXPECT_EQ(viewer["lanes"].size(), 3u);
  return viewer;
}

TEST(ScheduleHtmlTest, GemmPage) {
  const json viewer = CheckPage("gemm");
  // The host transfers (ops 0 and 1) are folded out of the first view.
  EXPECT_EQ(viewer["kernel_span"][0], viewer["ops"][2]["start"]);
  EXPECT_EQ(viewer["ops"][0]["host"], true);
  EXPECT_EQ(viewer["ops"][5]["engine"], "contract");
  std::set<std::string> tiers;
  for (const json& t : viewer["tensors"]) tiers.insert(t["tier"]);
  EXPECT_THAT(tiers, ElementsAre("DM", "HBM", "TRF"));
}

TEST(ScheduleHtmlTest, DoubleBufferedGemmPage) {
  const json viewer = CheckPage("gemm_double_buffered");
  // The second TRF load (sub, op 6) runs while main contracts (op 5): both lanes drawn at once.
  EXPECT_LT(viewer["ops"][6]["start"].get<int64_t>(), viewer["ops"][5]["end"].get<int64_t>());
  EXPECT_EQ(viewer["ops"][6]["resource"], "sub");
}

TEST(ScheduleHtmlTest, TransformerLayerPageIsLabelledByStep) {
  const json viewer = CheckPage("llama70b_reduced_layer_decode");
  std::set<std::string> steps;
  for (const json& op : viewer["ops"]) steps.insert(op["step"].get<std::string>());
  for (const char* step : {"attn RMSNorm", "Q projection", "K projection", "V projection"}) {
    EXPECT_TRUE(steps.contains(step)) << step;
  }
  EXPECT_EQ(viewer["ops"][16]["name"], "Q projection [g0 k0]");
}

// Four chips: main, sub and DMA lanes per chip; each op in the lane of its resource on the first
// chip it writes, DMA ops found on every chip (the ChipShuffle steps write each chip's HBM).
TEST(ScheduleHtmlTest, SeveralChipsGetLanesEach) {
  const std::string path = ::testing::TempDir() + "/viewer_all_reduce.html";
  ASSERT_EQ(RunSchedule({.sample = "all_reduce_4chip", .html_path = path}).code, 0);
  const json viewer = EmbeddedJson(ReadFile(path));
  EXPECT_EQ(viewer["chips"], 4);
  ASSERT_EQ(viewer["lanes"].size(), 12u);
  EXPECT_EQ(viewer["lanes"][4]["name"], "chip 1 sub");
  std::set<int64_t> dma_chips;
  for (const json& op : viewer["ops"]) {
    const json& lane = viewer["lanes"][op["lane"].get<int>()];
    EXPECT_EQ(lane["resource"], op["resource"]) << op["label"];
    EXPECT_EQ(lane["chip"], op["chips"][0]) << op["label"];
    if (op["resource"] == "dma") dma_chips.insert(op["chip"].get<int64_t>());
  }
  EXPECT_EQ(dma_chips, (std::set<int64_t>{0, 1, 2, 3}));
}

// The ops a bank-starvation warning names are flagged for the page (dashed red outline, the warning
// in their details).
TEST(ScheduleHtmlTest, StarvingOpsAreFlagged) {
  const std::string path = ::testing::TempDir() + "/viewer_column_walk.html";
  ASSERT_EQ(RunSchedule({.sample = "column_walk_during_dma", .html_path = path}).code, 0);
  const json viewer = EmbeddedJson(ReadFile(path));
  ASSERT_EQ(viewer["warnings"].size(), 1u);
  EXPECT_THAT(viewer["warnings"][0]["message"].get<std::string>(), HasSubstr("bank starvation: op 3"));
  std::vector<int> starving;
  for (const json& op : viewer["ops"]) {
    if (op["starving"].get<bool>()) starving.push_back(op["op"]);
  }
  EXPECT_THAT(starving, ElementsAre(2, 3));  // the DMA and the walk
}

TEST(ScheduleHtmlTest, VectorPassesAreLabelledByWhatTheyCompute) {
  const std::string path = ::testing::TempDir() + "/viewer_softmax.html";
  ASSERT_EQ(RunSchedule({.sample = "vector_row_softmax", .html_path = path}).code, 0);
  const json viewer = EmbeddedJson(ReadFile(path));
  EXPECT_EQ(viewer["ops"][2]["label"], "fetch > collect > vector[Max reduce] > commit -> dm#3");
  EXPECT_EQ(viewer["ops"][4]["label"], "fetch > collect > vector[SubF Exp Add reduce] > commit -> dm#5");
  EXPECT_EQ(viewer["ops"][6]["label"], "fetch > collect > vector[SubF Exp DivF] > commit -> dm#7");
  // The SVG too; the table keeps the scheduler's labels.
  const std::string svg = ::testing::TempDir() + "/softmax.svg";
  Result r = RunSchedule({.sample = "vector_row_softmax", .svg_path = svg});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(ReadFile(svg), HasSubstr("vector[SubF Exp Add reduce]"));
  EXPECT_THAT(r.out, HasSubstr("fetch > collect > vector > commit -> dm#5"));
}

TEST(ScheduleHtmlTest, JitTimesEveryOp) {
  const std::string path = ::testing::TempDir() + "/viewer_dot_jit.html";
  Result r = RunSchedule({.sample = "dot", .html_path = path, .jit_times = true});
  ASSERT_EQ(r.code, 0) << r.err;
  const json viewer = EmbeddedJson(ReadFile(path));
  EXPECT_EQ(viewer["host_measured"], true);
  // Every device op timed; the host moves (pdma host -> HBM) run outside the backend: no time.
  int timed = 0;
  for (const json& op : viewer["ops"]) {
    const bool host_move = op["label"].get<std::string>().find("host") != std::string::npos;
    EXPECT_EQ(op.contains("host_s"), !host_move) << op["label"];
    if (!host_move) {
      EXPECT_GT(op["host_s"].get<double>(), 0) << op["op"];
    }
    timed += op.contains("host_s");
  }
  EXPECT_GT(timed, 0);
}

TEST(ScheduleHtmlTest, Errors) {
  Result jit_alone = RunSchedule({.sample = "gemm", .jit_times = true});
  EXPECT_EQ(jit_alone.code, 2);
  EXPECT_EQ(jit_alone.err, "error: --jit measures the host's time per op for the viewer; add --html FILE\n");
  Result unwritable = RunSchedule({.sample = "gemm", .html_path = "/nonexistent-dir/x.html"});
  EXPECT_EQ(unwritable.code, 2);
  EXPECT_THAT(unwritable.err, HasSubstr("error: --html: cannot write"));
}

}  // namespace
}  // namespace visa::cli
