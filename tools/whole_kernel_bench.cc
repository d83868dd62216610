// MeasureWholeKernel: the runs behind `visa bench`, and their text.
#include "tools/whole_kernel_bench.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

#include <sys/mman.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "jit/streaming_move.h"
#include "runtime/op_description.h"
#include "runtime/timing_backend.h"
#include "runtime/trace_backend.h"
#include "tools/deadline_backend.h"
#include "tools/warm_relaunch_backend.h"
#include "runtime/trace_options.h"

namespace visa::cli {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A host move (a tensor from or to host memory) runs outside every backend: not a device op.
bool IsDeviceOp(const Op& op) {
  const auto* dma = std::get_if<DmaOp>(&op.body);
  return dma == nullptr || (dma->src.handle && dma->dst.handle);
}

// Where the program's ops begin among the ops a run timed: 0 when the run is one launch of the
// program; for a run that launches its program several times after other ops (a decode loop after
// its prefill), the last launch, when its ops are the program's kinds in order.
absl::StatusOr<size_t> LastLaunchOf(const std::vector<OpFigures>& ops, const std::vector<TimingBackend::OpTime>& timed) {
  const auto mismatch = [&] {
    return absl::InternalError(absl::StrCat("the JIT ran ", timed.size(), " ops, the trace recorded ", ops.size(),
                                            " and they are not the run's last ", ops.size()));
  };
  if (timed.size() < ops.size()) return mismatch();
  const size_t first = timed.size() - ops.size();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (timed[first + i].kind != ops[i].kind) return mismatch();
  }
  return first;
}

// memcpy of `bytes` between two buffers already touched (no page faults): the floor a move of
// those bytes is held to. Small copies are repeated in a loop so the clock's cost vanishes.
double MemcpySeconds(int64_t bytes, int repeat) {
  if (bytes <= 0) return 0;
  std::vector<uint8_t> from(bytes, 1), to(bytes, 0);
  const int64_t loops = std::clamp<int64_t>((int64_t{1} << 22) / bytes, 1, 10000);
  std::vector<double> times;
  uint64_t sink = 0;
  for (int r = 0; r <= repeat; ++r) {
    const auto start = Clock::now();
    for (int64_t i = 0; i < loops; ++i) {
      from[i % bytes] = static_cast<uint8_t>(i);  // each copy reads memory the loop just changed
      std::memcpy(to.data(), from.data(), bytes);
      sink += to[(i * 7919) % bytes];
    }
    if (r > 0) times.push_back(Since(start) / loops);  // the first pass warms the caches
  }
  volatile uint64_t keep = sink;
  (void)keep;
  return Median(times);
}

// memcpy of `bytes` as an op of a warm relaunch finds its buffers: the source just written (by the
// op before it, or the host's restore of an input) and the destination, which the op wrote a whole
// relaunch ago, out of the core's caches. Before each copy four times the core's level-2 cache of
// other bytes are written (so the destination is at best in the shared level-3 cache), then every
// line of the source; one copy per timing. MemcpySeconds copies the same two buffers again and
// again, so at 1 MiB both stay in the level-2 cache, which no op of a relaunch finds them in:
// measured here, 1 MiB took 0.038 ms that way and 0.050 ms with the destination evicted.
double MemcpyColdDestinationSeconds(int64_t bytes, int repeat) {
  if (bytes <= 0) return 0;
  std::vector<uint8_t> from(bytes, 1), to(bytes, 0), evict(4 * jit::HostLevel2CacheBytes(), 0);
  std::vector<double> times;
  uint64_t sink = 0;
  for (int r = 0; r <= repeat; ++r) {
    for (size_t i = 0; i < evict.size(); i += 64) evict[i] += 1;
    for (size_t i = 0; i < from.size(); i += 64) from[i] += 1;
    const auto start = Clock::now();
    std::memcpy(to.data(), from.data(), bytes);
    const double seconds = Since(start);
    sink += to[(r * 7919) % bytes];
    if (r > 0) times.push_back(seconds);  // the first pass maps the pages
  }
  volatile uint64_t keep = sink;
  (void)keep;
  return Median(times);
}

// memcpy of `bytes` from a warm buffer into a fresh anonymous mapping (page faults included, no
// huge pages): the floor of a move on a fresh device, whose first writes fault each page in.
double MemcpyFreshSeconds(int64_t bytes, int repeat) {
  if (bytes <= 0) return 0;
  std::vector<uint8_t> from(bytes, 1);
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    void* to = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    VISA_CHECK(to != MAP_FAILED, "mapping the fresh memcpy's destination");
    const auto start = Clock::now();
    std::memcpy(to, from.data(), bytes);
    times.push_back(Since(start));
    munmap(to, bytes);
  }
  return Median(times);
}

// Interpreter runs within the budget: the median of those that finished, or why none did.
absl::Status MeasureInterpreter(const samples::Sample& sample, const WholeKernelSettings& settings,
                                Progress& progress, SampleFigures& f) {
  if (settings.max_interp_seconds <= 0) {
    f.interp = Figure::Skipped("--max-interp-seconds 0");
    for (int r = 0; r < settings.repeat; ++r) progress.Step("interpreter skipped");
    return absl::OkStatus();
  }
  interp::Interpreter interpreter;
  std::vector<double> times;
  double spent = 0, last = 0;
  for (int r = 0; r < settings.repeat; ++r) {
    if (r > 0 && spent + last > settings.max_interp_seconds) {
      progress.Step("interpreter (budget spent)");
      continue;
    }
    DeadlineBackend bounded(interpreter, settings.max_interp_seconds - spent);
    const auto start = Clock::now();
    absl::StatusOr<samples::SampleRun> run = sample.Run(bounded);
    last = Since(start);
    spent += last;
    progress.Step("interpreter");
    if (absl::IsDeadlineExceeded(run.status())) {
      if (times.empty()) f.interp = Figure::Skipped(std::string(run.status().message()));
      break;
    }
    if (!run.ok()) return run.status();
    if (run->mismatch) return absl::InternalError(absl::StrCat("the interpreter's result is wrong: ", *run->mismatch));
    times.push_back(run->kernel_seconds);
  }
  if (!times.empty()) f.interp = Figure::Of(Median(times));
  f.interp_runs = static_cast<int>(times.size());
  return absl::OkStatus();
}

absl::Status MeasureCompile(const Program& program, const WholeKernelSettings& settings, Progress& progress,
                            SampleFigures& f) {
  std::vector<double> first, cached;
  for (int r = 0; r < std::min(settings.repeat, 3); ++r) {
    ASSIGN_OR_RETURN(std::unique_ptr<jit::JitBackend> jit, jit::JitBackend::Create({.threads = settings.threads}));
    ASSIGN_OR_RETURN(double seconds, jit->Prepare(program));
    first.push_back(seconds);
    const auto start = Clock::now();
    RETURN_IF_ERROR(jit->Prepare(program).status());
    cached.push_back(Since(start));
    progress.Step("jit compile");
  }
  f.compile_first = Median(first);
  f.compile_cached = Median(cached);
  return absl::OkStatus();
}

// Whole runs on a fresh device, without and with per-op timing.
absl::Status MeasureFresh(const samples::Sample& sample, jit::JitBackend& jit, int repeat, Progress& progress,
                          SampleFigures& f) {
  std::vector<double> whole;
  for (int r = 0; r < repeat; ++r) {
    ASSIGN_OR_RETURN(samples::SampleRun run, sample.Run(jit));
    if (run.mismatch) return absl::InternalError(absl::StrCat("the JIT's result is wrong: ", *run.mismatch));
    whole.push_back(run.kernel_seconds);
    progress.Step("jit fresh run");
  }
  f.jit_fresh = Median(whole);
  TimingBackend timed(jit);
  std::vector<std::vector<double>> per_op(f.ops.size()), faults(f.ops.size());
  for (int r = 0; r < repeat; ++r) {
    timed.Clear();
    ASSIGN_OR_RETURN(samples::SampleRun run, sample.Run(timed));
    if (run.mismatch) return absl::InternalError(absl::StrCat("the JIT's result is wrong: ", *run.mismatch));
    ASSIGN_OR_RETURN(const size_t first, LastLaunchOf(f.ops, timed.times()));
    for (size_t i = 0; i < f.ops.size(); ++i) {
      per_op[i].push_back(timed.times()[first + i].seconds);
      faults[i].push_back(static_cast<double>(timed.times()[first + i].page_faults));
    }
    progress.Step("jit fresh run, per op");
  }
  for (size_t i = 0; i < f.ops.size(); ++i) {
    f.ops[i].fresh_seconds = Median(per_op[i]);
    f.ops[i].fresh_page_faults = static_cast<int64_t>(Median(faults[i]));
  }
  return absl::OkStatus();
}

// Relaunches of the whole op sequence on the device of a finished run.
absl::Status MeasureWarm(const samples::Sample& sample, jit::JitBackend& jit, int repeat, Progress& progress,
                         SampleFigures& f) {
  WarmRelaunchBackend warm(jit, static_cast<int64_t>(f.ops.size()), repeat);
  // The relaunches may change what the run's output holds (warm_relaunch_backend.h): not checked.
  // Nor may a read-back after them succeed: a relaunch rewrites every op's output, and a tensor whose
  // address a later op reused (a runner's Address::Any() after a release) is then refused as
  // overwritten. Only a run that failed before its relaunches ran is an error.
  const absl::Status ran = sample.Run(warm).status();
  if (!ran.ok() && warm.relaunch_status().ok() && warm.relaunches().size() != static_cast<size_t>(repeat)) {
    return ran;
  }
  progress.Step("jit warm relaunches");
  auto skip = [&](const std::string& why) {
    f.jit_warm = f.warm_fastest_op = f.warm_outside_ops_per_op = Figure::Skipped(why);
    for (OpFigures& op : f.ops) op.warm = Figure::Skipped(why);
    return absl::OkStatus();
  };
  if (f.ops.empty()) return skip("the sample runs no device op");
  if (!warm.relaunch_status().ok()) return skip(std::string(warm.relaunch_status().message()));
  if (warm.relaunches().size() != static_cast<size_t>(repeat)) {
    return skip(absl::StrCat("the run had ", warm.ops_seen(), " ops, its trace ", f.ops.size()));
  }
  std::vector<double> whole;
  std::vector<std::vector<double>> per_op(f.ops.size());
  for (const WarmRelaunchBackend::Relaunch& relaunch : warm.relaunches()) {
    whole.push_back(relaunch.seconds);
    for (size_t i = 0; i < f.ops.size(); ++i) per_op[i].push_back(relaunch.op_seconds[i]);
  }
  f.jit_warm = Figure::Of(Median(whole));
  double ops_total = 0, fastest = 0;
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const double op = Median(per_op[i]);
    f.ops[i].warm = Figure::Of(op);
    ops_total += op;
    fastest = i == 0 ? op : std::min(fastest, op);
  }
  f.warm_fastest_op = Figure::Of(fastest);
  f.warm_outside_ops_per_op = Figure::Of(std::max(0.0, *f.jit_warm.seconds - ops_total) / f.ops.size());
  return absl::OkStatus();
}

absl::Status MeasureReferences(const samples::Sample& sample, int repeat, SampleFigures& f) {
  std::vector<double> times;
  std::string skipped;
  for (int r = 0; r < repeat && skipped.empty(); ++r) {
    absl::StatusOr<double> seconds = sample.TimeHostReference();
    if (absl::IsNotFound(seconds.status())) {
      skipped = std::string(seconds.status().message());
    } else if (!seconds.ok()) {
      return seconds.status();
    } else {
      times.push_back(*seconds);
    }
  }
  f.host_reference = times.empty() ? Figure::Skipped(skipped) : Figure::Of(Median(times));
  f.memcpy_written = MemcpySeconds(f.written_bytes, repeat);
  f.memcpy_written_fresh = MemcpyFreshSeconds(f.written_bytes, repeat);
  struct References {
    double warm, fresh, cold_dst;
  };
  std::map<int64_t, References> by_size;
  for (OpFigures& op : f.ops) {
    auto [it, first] = by_size.try_emplace(op.written_bytes);
    if (first) {
      it->second = {MemcpySeconds(op.written_bytes, repeat), MemcpyFreshSeconds(op.written_bytes, repeat),
                    MemcpyColdDestinationSeconds(op.written_bytes, repeat)};
    }
    op.memcpy_seconds = it->second.warm;
    op.memcpy_fresh_seconds = it->second.fresh;
    op.memcpy_cold_dst_seconds = it->second.cold_dst;
  }
  return absl::OkStatus();
}

std::string Ms(const Figure& f) { return f.seconds ? absl::StrFormat("%.3f", *f.seconds * 1e3) : "-"; }
std::string Ms(double s) { return absl::StrFormat("%.3f", s * 1e3); }
std::string Us(const Figure& f) { return f.seconds ? absl::StrFormat("%.1f", *f.seconds * 1e6) : "-"; }
std::string X(std::optional<double> r) { return r ? absl::StrFormat("%.3gx", *r) : "-"; }

std::string Bytes(int64_t b) {
  if (b >= (int64_t{1} << 20)) return absl::StrFormat("%.1f MiB", b / 1048576.0);
  if (b >= 1024) return absl::StrFormat("%.1f KiB", b / 1024.0);
  return absl::StrFormat("%d B", b);
}

}  // namespace

int64_t WholeKernelSteps(const WholeKernelSettings& settings) {
  return settings.repeat + std::min(settings.repeat, 3) + 2 * settings.repeat + 1;
}

std::optional<double> Ratio(const Figure& a, const Figure& b) {
  if (!a.seconds || !b.seconds || *b.seconds <= 0) return std::nullopt;
  return *a.seconds / *b.seconds;
}

// The compute engines of an op, in stage order, read off its cycle model's terms (which already
// name each stage kind): none for a DMA op or a plain fetch-commit.
std::vector<std::string> EnginesOf(const OpDescription& description) {
  static const std::vector<std::pair<std::string, std::string>> kEngineOfTerm = {
      {"contract", "contraction"}, {"vector", "vector"}, {"transpose", "transpose"}};
  std::vector<std::string> engines;
  for (const CycleTerm& term : description.terms) {
    for (const auto& [stage, engine] : kEngineOfTerm) {
      if (term.stage == stage && std::find(engines.begin(), engines.end(), engine) == engines.end()) {
        engines.push_back(engine);
      }
    }
  }
  return engines;
}

absl::StatusOr<SampleFigures> MeasureWholeKernel(const samples::Sample& sample, const WholeKernelSettings& settings,
                                                 Progress& progress) {
  SampleFigures f;
  f.sample = sample.name;
  f.repeat = settings.repeat;
  RETURN_IF_ERROR(MeasureInterpreter(sample, settings, progress, f));
  // The program as `visa run --backend jit` prepares it (tools/prepared_sample_run.h).
  Program program;
  {
    TraceBackend trace;
    ASSIGN_OR_RETURN(samples::SampleRun traced, sample.Run(trace, TracingOptions()));
    program = std::move(traced.program);
  }
  for (const Op& op : program.ops) {
    if (!IsDeviceOp(op)) continue;
    OpDescription description = Describe(op);
    OpFigures figures;
    figures.kind = TimingBackend::KindOf(op);
    figures.resource = ResourceName(description.resource);
    figures.engines = EnginesOf(description);
    for (const MemoryRange& range : description.reads) figures.read_bytes += range.total_bytes();
    for (const MemoryRange& range : description.writes) figures.written_bytes += range.total_bytes();
    f.read_bytes += figures.read_bytes;
    f.written_bytes += figures.written_bytes;
    f.ops.push_back(std::move(figures));
  }
  RETURN_IF_ERROR(MeasureCompile(program, settings, progress, f));
  ASSIGN_OR_RETURN(std::unique_ptr<jit::JitBackend> jit, jit::JitBackend::Create({.threads = settings.threads}));
  f.threads = jit->threads();
  f.target = jit->target();
  RETURN_IF_ERROR(jit->Prepare(program).status());
  RETURN_IF_ERROR(MeasureFresh(sample, *jit, settings.repeat, progress, f));
  RETURN_IF_ERROR(MeasureWarm(sample, *jit, settings.repeat, progress, f));
  RETURN_IF_ERROR(MeasureReferences(sample, settings.repeat, f));
  return f;
}

std::string WholeKernelText(const SampleFigures& f) {
  const Figure fresh = Figure::Of(f.jit_fresh), memcpy = Figure::Of(f.memcpy_written);
  std::string text = absl::StrFormat("%s (median of %d, JIT on %d threads, %s)\n", f.sample, f.repeat, f.threads,
                                     f.target);
  auto line = [&](absl::string_view what, const std::string& value, const std::string& note = "") {
    absl::StrAppend(&text, absl::StrFormat("  %-28s %12s ms%s\n", what, value, note.empty() ? "" : "  " + note));
  };
  line("interpreter", Ms(f.interp),
       f.interp.seconds ? absl::StrFormat("(%d runs)", f.interp_runs) : "skipped: " + f.interp.skipped);
  line("jit compile first", Ms(f.compile_first));
  line("jit compile cached", Ms(f.compile_cached));
  line("jit run, fresh device", Ms(f.jit_fresh));
  line("jit relaunch, warm device", Ms(f.jit_warm), f.jit_warm.seconds ? "" : "skipped: " + f.jit_warm.skipped);
  line("host reference", Ms(f.host_reference),
       f.host_reference.seconds ? "" : "skipped: " + f.host_reference.skipped);
  line("memcpy of the bytes written", Ms(f.memcpy_written),
       absl::StrFormat("(%s written, %s read)", Bytes(f.written_bytes), Bytes(f.read_bytes)));
  line("the same into fresh pages", Ms(f.memcpy_written_fresh), "(page faults included)");
  absl::StrAppend(&text, absl::StrFormat("  interp / jit: fresh %s, warm %s; jit / host reference: fresh %s, warm %s; "
                                         "jit / memcpy: fresh %s (into fresh pages %s), warm %s\n",
                                         X(Ratio(f.interp, fresh)), X(Ratio(f.interp, f.jit_warm)),
                                         X(Ratio(fresh, f.host_reference)), X(Ratio(f.jit_warm, f.host_reference)),
                                         X(Ratio(fresh, memcpy)), X(Ratio(fresh, Figure::Of(f.memcpy_written_fresh))),
                                         X(Ratio(f.jit_warm, memcpy))));
  absl::StrAppend(&text, absl::StrFormat("  warm relaunch per op: fastest op %s us, outside the ops %s us\n",
                                         Us(f.warm_fastest_op), Us(f.warm_outside_ops_per_op)));
  // fresh/fcp: the op on a fresh device over memcpy into fresh pages; warm/cp: relaunched over memcpy
  // (both buffers in the cache); warm/ccp: over memcpy into a destination out of the core's caches.
  absl::StrAppend(&text, absl::StrFormat("  %4s %-18s %-5s %10s %10s %11s %7s %11s %11s %11s %11s %9s %9s %9s\n",
                                         "op", "kind", "res", "read", "written", "fresh ms", "faults", "warm ms",
                                         "memcpy ms", "cold cp ms", "fresh cp ms", "fresh/fcp", "warm/cp",
                                         "warm/ccp"));
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const OpFigures& op = f.ops[i];
    const Figure cp = Figure::Of(op.memcpy_seconds), fresh_cp = Figure::Of(op.memcpy_fresh_seconds);
    absl::StrAppend(&text, absl::StrFormat("  %4d %-18s %-5s %10s %10s %11s %7d %11s %11s %11s %11s %9s %9s %9s\n",
                                           static_cast<int>(i), op.kind, op.resource, Bytes(op.read_bytes),
                                           Bytes(op.written_bytes), Ms(op.fresh_seconds), op.fresh_page_faults,
                                           Ms(op.warm), Ms(op.memcpy_seconds), Ms(op.memcpy_cold_dst_seconds),
                                           Ms(op.memcpy_fresh_seconds),
                                           X(Ratio(Figure::Of(op.fresh_seconds), fresh_cp)), X(Ratio(op.warm, cp)),
                                           X(Ratio(op.warm, Figure::Of(op.memcpy_cold_dst_seconds)))));
  }
  return text;
}

std::string WholeKernelTable(const std::vector<SampleFigures>& all) {
  std::string text = absl::StrFormat(
      "%-38s %4s %10s %8s %9s %9s %9s %9s %9s %9s %8s %8s %8s %8s %8s\n", "sample", "ops", "interp", "compile",
      "fresh", "warm", "host ref", "memcpy", "int/fresh", "int/warm", "fr/ref", "wa/ref", "fr/cp", "wa/cp",
      "op us");
  absl::StrAppend(&text, absl::StrFormat("%-38s %4s %10s %8s %9s %9s %9s %9s\n", "", "", "ms", "ms", "ms", "ms",
                                         "ms", "ms"));
  std::vector<std::string> notes;
  for (const SampleFigures& f : all) {
    const Figure fresh = Figure::Of(f.jit_fresh), memcpy = Figure::Of(f.memcpy_written);
    absl::StrAppend(&text, absl::StrFormat("%-38s %4d %10s %8s %9s %9s %9s %9s %9s %9s %8s %8s %8s %8s %8s\n",
                                           f.sample, static_cast<int>(f.ops.size()), Ms(f.interp),
                                           Ms(f.compile_first), Ms(f.jit_fresh), Ms(f.jit_warm),
                                           Ms(f.host_reference), Ms(f.memcpy_written), X(Ratio(f.interp, fresh)),
                                           X(Ratio(f.interp, f.jit_warm)), X(Ratio(fresh, f.host_reference)),
                                           X(Ratio(f.jit_warm, f.host_reference)), X(Ratio(fresh, memcpy)),
                                           X(Ratio(f.jit_warm, memcpy)), Us(f.warm_fastest_op)));
    for (const auto& [what, figure] : {std::pair<const char*, const Figure*>{"interpreter", &f.interp},
                                       {"warm relaunch", &f.jit_warm},
                                       {"host reference", &f.host_reference}}) {
      if (!figure->seconds) notes.push_back(absl::StrCat(f.sample, ": ", what, " skipped: ", figure->skipped));
    }
  }
  if (!notes.empty()) absl::StrAppend(&text, "\n", absl::StrJoin(notes, "\n"), "\n");
  return text;
}

}  // namespace visa::cli
