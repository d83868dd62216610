// ScheduleSvg: lanes, boxes, hazard waits and arrows, the cycle axis and the legend.
#include "tools/schedule_svg.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "tools/kernel_span.h"

namespace visa::cli {
namespace {

constexpr double kWidth = 1400, kLeft = 90, kRight = 40;
constexpr double kTop = 78, kLaneHeight = 74, kBoxHeight = 44;
constexpr double kCharWidth = 6.6;  // 11 px sans-serif, roughly
constexpr double kLegendLine = 17;
constexpr double kFoldWidth = 70;  // a folded band of host transfers
constexpr Resource kLanes[] = {Resource::kMain, Resource::kSub, Resource::kDma};

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// Lines of at most `width` characters, broken at spaces.
std::vector<std::string> Wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  for (absl::string_view word : absl::StrSplit(text, ' ')) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

int LaneOf(Resource r) { return r == Resource::kMain ? 0 : r == Resource::kSub ? 1 : 2; }
double LaneTop(Resource r) { return kTop + LaneOf(r) * kLaneHeight; }
double BoxTop(Resource r) { return LaneTop(r) + (kLaneHeight - kBoxHeight) / 2; }

const char* Fill(Resource r) {
  return r == Resource::kMain ? "#4e79a7" : r == Resource::kSub ? "#f28e2b" : "#59a14f";
}
const char* HazardColor(HazardKind k) {
  return k == HazardKind::kRaw ? "#d62728" : k == HazardKind::kWar ? "#9467bd" : "#8c564b";
}

// 1, 2 or 5 times a power of ten, about a tenth of the span.
int64_t TickStep(int64_t span) {
  const double raw = std::max<double>(1, static_cast<double>(span) / 10);
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * magnitude >= raw) return std::max<int64_t>(1, static_cast<int64_t>(m * magnitude));
  }
  return static_cast<int64_t>(10 * magnitude);
}

std::string Defs() {
  std::string d = "<defs>\n";
  absl::StrAppend(&d,
                  "  <pattern id=\"wait\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" "
                  "patternTransform=\"rotate(45)\"><rect width=\"8\" height=\"8\" fill=\"#eeeeee\"/>"
                  "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"8\" stroke=\"#b0b0b0\" stroke-width=\"3\"/></pattern>\n");
  for (HazardKind k : {HazardKind::kRaw, HazardKind::kWar, HazardKind::kWaw}) {
    absl::StrAppend(&d, "  <marker id=\"arrow-", HazardName(k),
                    "\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
                    "orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"",
                    HazardColor(k), "\"/></marker>\n");
  }
  absl::StrAppend(&d, "</defs>\n");
  return d;
}

std::string Key(double x, double y) {
  std::string k;
  auto swatch = [&](const std::string& fill, const std::string& name) {
    absl::StrAppend(&k, absl::StrFormat("<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"12\" fill=\"%s\" "
                                        "stroke=\"#555\" stroke-width=\"0.5\"/>",
                                        x, y - 10, fill),
                    absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"small\">%s</text>\n", x + 18, y, name));
    x += 26 + kCharWidth * static_cast<double>(name.size());
  };
  swatch(Fill(Resource::kMain), "main");
  swatch(Fill(Resource::kSub), "sub");
  swatch(Fill(Resource::kDma), "dma");
  swatch("url(#wait)", "waiting on a hazard");
  for (HazardKind h : {HazardKind::kRaw, HazardKind::kWar, HazardKind::kWaw}) {
    absl::StrAppend(&k, absl::StrFormat("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                                        "stroke-width=\"2\" marker-end=\"url(#arrow-%s)\"/>",
                                        x, y - 4, x + 22, y - 4, HazardColor(h), HazardName(h)),
                    absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"small\">%s</text>\n", x + 28, y, HazardName(h)));
    x += 70;
  }
  return k;
}

// What the marks mean, under the key (the arrowheads are red triangles for RAW).
std::string KeyExplanation(double x, double y, bool warnings, bool folded) {
  std::string text =
      "arrow: the op at the head waited until the op at the tail ended (RAW read after write, WAR write after "
      "read, WAW write after write); hatched: the cycles it waited";
  if (warnings) absl::StrAppend(&text, "; red outline: bank-starvation warning");
  if (folded) absl::StrAppend(&text, "; grey bands: host transfers, folded (not to scale)");
  return absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"small\" id=\"key-explanation\">%s</text>\n", x, y,
                         Escape(text));
}

// The box's text: the op's number and its label (the `.named()` name leads when there is one).
std::string BoxText(const ScheduledOp& op) { return absl::StrCat("op ", op.index, ": ", op.label); }

// The model step an op belongs to: its operation name (what `.named(...)` or a
// ScopedDmaOperation gave it, before ": " in its label) up to a bracketed detail, so that
// "Q projection [g0 k3] operands" and "Q projection [g1 k0]" are one step "Q projection".
std::string StepOf(const std::string& label) {
  const size_t colon = label.find(": ");
  if (colon == std::string::npos) return "";
  const std::string name = label.substr(0, colon);
  return std::string(absl::StripTrailingAsciiWhitespace(name.substr(0, name.find(" ["))));
}

struct StepSpan {
  std::string step;
  int64_t start = 0, end = 0;
};

// Each step's span, from its first op's start to its last op's end, in order of first start.
std::vector<StepSpan> StepSpans(const Schedule& schedule) {
  std::vector<StepSpan> spans;
  std::map<std::string, size_t> index;
  for (const ScheduledOp& op : schedule.ops) {
    const std::string step = StepOf(op.label);
    if (step.empty()) continue;
    auto [it, added] = index.emplace(step, spans.size());
    if (added) {
      spans.push_back({step, op.start, op.end});
    } else {
      StepSpan& span = spans[it->second];
      span.start = std::min(span.start, op.start);
      span.end = std::max(span.end, op.end);
    }
  }
  return spans;
}

}  // namespace

std::string ScheduleSvg(const Schedule& schedule, const std::string& title, const SvgWindow& window) {
  const int64_t from = window.from;
  const int64_t to = std::max(from + 1, window.to.value_or(schedule.makespan));
  // The part drawn to scale: the whole window, or the kernel's own ops with the host transfers
  // before and after folded into bands of kFoldWidth.
  int64_t scaled_from = from, scaled_to = to;
  if (window.fold_host_transfers && !window.to && from == 0) {
    const CycleSpan kernel = KernelSpan(schedule);
    scaled_from = std::max(from, kernel.from);
    scaled_to = std::min(to, std::max(kernel.to, scaled_from + 1));
  }
  const bool fold_left = scaled_from > from, fold_right = scaled_to < to;
  const double scaled_left = kLeft + (fold_left ? kFoldWidth : 0);
  const double scaled_right = kWidth - kRight - (fold_right ? kFoldWidth : 0);
  const int64_t span = scaled_to - scaled_from;
  const double scale = (scaled_right - scaled_left) / static_cast<double>(span);
  auto x_of = [&](int64_t cycle) {
    const int64_t c = std::clamp(cycle, from, to);
    if (c < scaled_from) return kLeft + static_cast<double>(c - from) / static_cast<double>(scaled_from - from) * kFoldWidth;
    if (c > scaled_to) {
      return scaled_right + static_cast<double>(c - scaled_to) / static_cast<double>(to - scaled_to) * kFoldWidth;
    }
    return scaled_left + static_cast<double>(c - scaled_from) * scale;
  };
  // Drawn: what overlaps the window (an op of no cycles: what lies in it, edges included).
  auto shown = [&](int64_t start, int64_t end) {
    return start == end ? start >= from && start <= to : start < to && end > from;
  };
  std::set<int> starving;
  for (const StarvationWarning& w : schedule.warnings) {
    starving.insert(w.tensor_unit_ops.begin(), w.tensor_unit_ops.end());
  }

  std::vector<std::string> warning_lines;
  for (const StarvationWarning& w : schedule.warnings) {
    for (std::string& line : Wrap(w.ToString(), 180)) warning_lines.push_back(std::move(line));
  }
  const double axis_y = kTop + 3 * kLaneHeight;
  // A band of the model steps below the axis, when the ops are named (two rows, alternating, as
  // steps overlap where one step's moves are issued ahead of the previous step's work).
  const std::vector<StepSpan> steps = StepSpans(schedule);
  constexpr double kStepRow = 18;
  const double steps_top = axis_y + 44;
  const double legend_top = axis_y + 58 + (steps.empty() ? 0 : 2 * kStepRow + 16);
  const double height =
      legend_top + kLegendLine * static_cast<double>(schedule.ops.size() + 2 + warning_lines.size()) + 16;
  std::string svg = absl::StrFormat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
      "font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"11\">\n",
      kWidth, height, kWidth, height);
  absl::StrAppend(&svg, "<style>.small{font-size:11px;fill:#222}.mono{font-family:'DejaVu Sans Mono',monospace;"
                        "font-size:11px;fill:#222}.box-label{font-size:11px;fill:#fff}</style>\n");
  absl::StrAppend(&svg, Defs());
  absl::StrAppend(&svg, absl::StrFormat("<rect width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", kWidth, height));
  absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.1f\" y=\"26\" font-size=\"16\" font-weight=\"bold\">%s</text>\n",
                                        kLeft, Escape(title)));
  std::string cropped =
      from > 0 || to < schedule.makespan ? absl::StrCat(" (cycles ", from, " to ", to, " shown)") : "";
  if (fold_left || fold_right) {
    absl::StrAppend(&cropped, "; host transfers folded (--window 0:", schedule.makespan, " draws them to scale)");
  }
  absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.1f\" y=\"46\" class=\"small\">makespan %d cycles, %d ops%s"
                                        "%s</text>\n",
                                        kLeft, schedule.makespan, schedule.ops.size(), cropped,
                                        schedule.warnings.empty() ? "" : ", bank-starvation warnings (red outline)"));
  absl::StrAppend(&svg, Key(kWidth - 640, 46));
  absl::StrAppend(&svg, KeyExplanation(kLeft, 64, !schedule.warnings.empty(), fold_left || fold_right));

  // Lanes.
  for (Resource r : kLanes) {
    const double top = LaneTop(r);
    absl::StrAppend(&svg, absl::StrFormat("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
                                          kLeft, top, kWidth - kLeft - kRight, kLaneHeight,
                                          LaneOf(r) % 2 == 0 ? "#f7f7f7" : "#ffffff"));
    absl::StrAppend(&svg, absl::StrFormat("<text x=\"12\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\">%s</text>\n",
                                          top + kLaneHeight / 2 + 4, ResourceName(r)));
  }

  // Folded bands: grey, labelled with the cycles they hold.
  auto band = [&](int64_t band_from, int64_t band_to) {
    const double x = x_of(band_from), w = x_of(band_to) - x;
    absl::StrAppend(&svg, absl::StrFormat("<rect class=\"fold\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                                          "fill=\"#d9d9d9\" fill-opacity=\"0.6\"><title>host transfers, cycles %d to "
                                          "%d, folded (not to scale)</title></rect>\n",
                                          x, kTop, w, 3 * kLaneHeight, band_from, band_to));
    absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"small\" text-anchor=\"middle\">host</text>"
                                          "<text x=\"%.1f\" y=\"%.1f\" class=\"small\" text-anchor=\"middle\">%d-%d</text>\n",
                                          x + w / 2, kTop + 3 * kLaneHeight + 18, x + w / 2,
                                          kTop + 3 * kLaneHeight + 31, band_from, band_to));
  };
  if (fold_left) band(from, scaled_from);
  if (fold_right) band(scaled_to, to);

  // Cycle axis with a grid.
  const int64_t step = TickStep(span);
  absl::StrAppend(&svg, absl::StrFormat("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
                                        kLeft, axis_y, kWidth - kRight, axis_y));
  // Ticks counted, not stepped past `to`: `t += step` beyond a window near the int64 limit wraps.
  const int64_t first_tick = scaled_from % step == 0 ? scaled_from : scaled_from + (step - scaled_from % step);
  const int64_t ticks = first_tick > scaled_to ? 0 : (scaled_to - first_tick) / step + 1;
  for (int64_t i = 0; i < ticks; ++i) {
    const int64_t t = first_tick + i * step;
    const double x = x_of(t);
    absl::StrAppend(&svg, absl::StrFormat("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>"
                                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>"
                                          "<text x=\"%.1f\" y=\"%.1f\" class=\"small\" text-anchor=\"middle\">%d</text>\n",
                                          x, kTop, x, axis_y, x, axis_y, x, axis_y + 5, x, axis_y + 18, t));
  }
  absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"small\" text-anchor=\"end\">cycles</text>\n",
                                        kWidth - kRight, axis_y + 34));

  if (!steps.empty()) {
    absl::StrAppend(&svg, absl::StrFormat("<text x=\"12\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\">steps</text>\n",
                                          steps_top + kStepRow));
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepSpan& span = steps[i];
    if (!shown(span.start, span.end)) continue;
    const double x = x_of(span.start), w = std::max(1.5, x_of(span.end) - x);
    const double y = steps_top + static_cast<double>(i % 2) * kStepRow;
    absl::StrAppend(&svg, absl::StrFormat("<g class=\"step\"><title>%s: [%d, %d) %d cycles</title><rect x=\"%.1f\" "
                                          "y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" stroke=\"#ffffff\"/>",
                                          Escape(span.step), span.start, span.end, span.end - span.start, x, y, w,
                                          kStepRow - 2, i % 4 < 2 ? "#6b7f99" : "#8f9fb5"));
    const size_t fits = static_cast<size_t>(std::max(0.0, (w - 6) / kCharWidth));
    if (fits >= 3) {
      const std::string text = span.step.size() <= fits ? span.step : span.step.substr(0, fits - 1) + "\u2026";
      absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"box-label\">%s</text>", x + 3,
                                            y + kStepRow - 6, Escape(text)));
    }
    absl::StrAppend(&svg, "</g>\n");
  }

  // Hazard waits, then boxes, then arrows on top.
  for (const ScheduledOp& op : schedule.ops) {
    if (op.waited_on.kind != WaitReason::Kind::kHazard || op.start <= op.ready || !shown(op.ready, op.start)) continue;
    const double x = x_of(op.ready), w = x_of(op.start) - x;
    absl::StrAppend(&svg, absl::StrFormat("<rect class=\"wait\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                                          "fill=\"url(#wait)\"><title>op %d waits %d cycles: %s</title></rect>\n",
                                          x, BoxTop(op.resource) + 8, w, kBoxHeight - 16, op.index, op.start - op.ready,
                                          Escape(op.waited_on.ToString())));
  }
  // Per lane, where the numbers of thin boxes end, above (0) and below (1) the boxes.
  std::array<std::array<double, 2>, 3> number_edges{};
  for (const ScheduledOp& op : schedule.ops) {
    if (!shown(op.start, op.end)) continue;
    const double x = x_of(op.start);
    const double w = std::max(1.5, x_of(op.end) - x);
    const double y = BoxTop(op.resource);
    const bool starves = starving.contains(op.index);
    absl::StrAppend(&svg, absl::StrFormat("<g class=\"op\"><title>op %d %s: [%d, %d) %d cycles; waited on %s</title>",
                                          op.index, Escape(op.label), op.start, op.end, op.cycles(),
                                          Escape(op.waited_on.ToString())));
    absl::StrAppend(&svg, absl::StrFormat("<rect class=\"op-box\" data-op=\"%d\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                                          "height=\"%.1f\" rx=\"3\" fill=\"%s\" fill-opacity=\"0.9\" stroke=\"%s\" "
                                          "stroke-width=\"%s\"/>",
                                          op.index, x, y, w, kBoxHeight, Fill(op.resource),
                                          starves ? "#e00000" : "#333333", starves ? "3" : "0.8"));
    const std::string full = BoxText(op);
    const std::string number = absl::StrCat(op.index);
    if (w >= kCharWidth * static_cast<double>(full.size()) + 8) {
      absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"box-label\">%s</text>", x + 4,
                                            y + kBoxHeight / 2 + 4, Escape(full)));
    } else if (const size_t fits = static_cast<size_t>((w - 8) / kCharWidth); fits >= number.size() + 8) {
      // As much of the label as fits, cut with an ellipsis.
      absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"box-label\">%s</text>", x + 4,
                                            y + kBoxHeight / 2 + 4, Escape(full.substr(0, fits - 1) + "\u2026")));
    } else if (w >= kCharWidth * static_cast<double>(number.size()) + 6) {
      absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"box-label\" text-anchor=\"middle\">%s</text>",
                                            x + w / 2, y + kBoxHeight / 2 + 4, number));
    } else {  // too thin for any text: the number above the box, or below when that is taken
      const double half = kCharWidth * static_cast<double>(number.size()) / 2 + 1;
      std::array<double, 2>& taken = number_edges[LaneOf(op.resource)];
      for (int level = 0; level < 2; ++level) {
        if (x + w / 2 - half < taken[level]) continue;
        taken[level] = x + w / 2 + half;
        absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"small\" text-anchor=\"middle\">%s</text>",
                                              x + w / 2, level == 0 ? y - 3 : y + kBoxHeight + 11, number));
        break;
      }
    }
    absl::StrAppend(&svg, "</g>\n");
  }
  for (const ScheduledOp& op : schedule.ops) {
    if (op.waited_on.kind != WaitReason::Kind::kHazard) continue;
    const ScheduledOp& from_op = schedule.ops[op.waited_on.on];
    if (!shown(from_op.end, op.start)) continue;
    const HazardKind kind = op.waited_on.hazard.kind;
    const double x1 = x_of(from_op.end), x2 = x_of(op.start);
    std::string path;
    if (from_op.resource == op.resource) {  // same lane: an arc over the boxes
      const double y = BoxTop(op.resource);
      path = absl::StrFormat("M %.1f %.1f C %.1f %.1f, %.1f %.1f, %.1f %.1f", x1, y, x1, y - 14, x2, y - 14, x2, y);
    } else {
      const double y1 = BoxTop(from_op.resource) + kBoxHeight / 2;
      const double y2 = BoxTop(op.resource) + kBoxHeight / 2;
      const double dx = std::max(12.0, (x2 - x1) / 2);
      path = absl::StrFormat("M %.1f %.1f C %.1f %.1f, %.1f %.1f, %.1f %.1f", x1, y1, x1 + dx, y1, x2 - dx, y2, x2, y2);
    }
    absl::StrAppend(&svg, absl::StrFormat("<path class=\"hazard\" d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                                          "marker-end=\"url(#arrow-%s)\"><title>%s</title></path>\n",
                                          path, HazardColor(kind), HazardName(kind),
                                          Escape(absl::StrCat("op ", op.index, ": ", op.waited_on.ToString()))));
  }

  // Legend: every op as a table row, then the warnings.
  double y = legend_top;
  absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"mono\" font-weight=\"bold\" xml:space=\"preserve\">%s</text>\n",
                                        kLeft, y, Escape(absl::StrFormat("%-4s %-5s %9s %9s %8s  %-26s %s", "op", "res",
                                                                         "start", "end", "cycles", "waited on", "what"))));
  for (const ScheduledOp& op : schedule.ops) {
    y += kLegendLine;
    const std::string row = absl::StrFormat("%-4d %-5s %9d %9d %8s  %-26s %s", op.index, ResourceName(op.resource),
                                            op.start, op.end, op.estimated ? absl::StrCat(op.cycles()) : "?",
                                            op.waited_on.ToString(), op.label);
    absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"mono\" xml:space=\"preserve\">%s</text>\n",
                                          kLeft, y, Escape(row)));
  }
  for (const std::string& line : warning_lines) {
    y += kLegendLine;
    absl::StrAppend(&svg, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" class=\"mono\" style=\"fill:#c00000\">%s</text>\n",
                                          kLeft, y, Escape(line)));
  }
  absl::StrAppend(&svg, "</svg>\n");
  return svg;
}

}  // namespace visa::cli
