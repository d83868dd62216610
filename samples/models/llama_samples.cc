// The Llama-style model as samples: `llama_tiny_prefill` (the prefill program, its logits against
// the host reference), `llama_tiny_decode` (prefill then 8 decode launches of one traced program,
// the greedy tokens against the reference's) and `llama_tiny_generate` (the same, printing the
// tokens and the time per token on the backend and on the host reference).
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dsl/status_macros.h"
#include "runtime/scheduler.h"
#include "samples/models/llama70b_chip_split.h"
#include "samples/models/llama70b_layer.h"
#include "samples/models/llama_check.h"
#include "samples/models/llama_weights_file.h"
#include "samples/models/llama_program.h"
#include "samples/models/llama_reference.h"
#include "samples/sample.h"

namespace visa::models {

LogitsComparison CompareLogits(const LlamaConfig& c, const LlamaWeights& w, const std::vector<float>& device,
                               const std::vector<float>& reference, const std::vector<float>& hidden) {
  LogitsComparison out;
  for (int64_t v = 0; v < c.vocab; ++v) {
    double magnitude = 0, largest = 0;
    for (int64_t d = 0; d < c.hidden; ++d) {
      const double term = std::fabs(static_cast<double>(hidden[d]) * w.lm_head[v * c.hidden + d]);
      magnitude += term;
      largest = std::max(largest, term);
    }
    const double bound = static_cast<double>(c.hidden) * std::ldexp(magnitude, -24) + kHiddenFlips * std::ldexp(largest, -8);
    const double error = std::fabs(static_cast<double>(device[v]) - reference[v]);
    out.max_error = std::max(out.max_error, error);
    out.max_bound = std::max(out.max_bound, bound);
    if (!(error <= bound) && !out.mismatch) {
      out.mismatch = absl::StrFormat("logit %d: got %g, want %g (bound %g)", v, device[v], reference[v], bound);
    }
  }
  if (!out.mismatch && Argmax(device) != Argmax(reference)) {
    out.mismatch = absl::StrCat("greedy token ", Argmax(device), ", the reference's ", Argmax(reference));
  }
  return out;
}

namespace {

using samples::Sample;
using samples::SampleRun;

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The tiny model's weights: from the `.safetensors` file VISA_LLAMA_WEIGHTS names when it is set
// (llama_weights_file.h), else the seeded ones.
absl::StatusOr<std::shared_ptr<const LlamaWeights>> TinyWeights() {
  static const auto* seeded = new std::shared_ptr<const LlamaWeights>(std::make_shared<LlamaWeights>(MakeWeights(LlamaConfig{})));
  const char* path = std::getenv("VISA_LLAMA_WEIGHTS");
  if (path == nullptr || *path == '\0') return *seeded;
  ASSIGN_OR_RETURN(LlamaWeights read, ReadLlamaWeightsFile(LlamaConfig{}, path));
  return std::make_shared<const LlamaWeights>(std::move(read));
}

// The variant the interpreter runs in the time of a test: 8 prompt tokens, a cache of 32
// positions, every other shape as the tiny model.
LlamaConfig SmallConfig() {
  LlamaConfig c;
  c.prompt = 8;
  c.max_positions = 32;
  return c;
}

// The same split over `chips` chips, tensor parallel (llama_chip_split.h): the same weights.
LlamaConfig OnChips(LlamaConfig c, int64_t chips) {
  c.chips = chips;
  return c;
}

// One layer at half the tiny model's widths (D = 128, F = 256, d_k = 32, V = 256; 8 prompt tokens,
// 32 cache positions, 2 KV heads x 2 groups as the tiny model): what the interpreter runs on 4
// chips, on 4 ranks each executing every chip's ops, in the time of a test.
LlamaConfig OneLayerConfig() {
  LlamaConfig c = SmallConfig();
  c.layers = 1;
  c.hidden = 128;
  c.ffn = 256;
  c.head_dim = 32;
  c.vocab = 256;
  return c;
}

absl::StatusOr<SampleRun> PrefillRun(Backend& backend, const DeviceOptions& options, const LlamaConfig& c,
                                     const LlamaWeights& w) {
  const std::vector<int32_t> prompt = MakePrompt(c, kPromptSeed);
  ASSIGN_OR_RETURN(LlamaDeviceState state, UploadModel(c, w, options));
  ASSIGN_OR_RETURN(LlamaPhase phase, TracePhase(c, state, c.prompt));
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::vector<float> logits, RunPhase(c, state, phase, backend, prompt, 0));
  SampleRun run;
  run.kernel_seconds = Since(start);
  run.program = phase.program;
  run.device_resident_bytes = state.device->resident_bytes();
  LlamaReference reference(c, w);
  const std::vector<float> want = reference.Forward(prompt, 0);
  const LogitsComparison compared = CompareLogits(c, w, logits, want, reference.last_hidden());
  run.elements = c.vocab;
  run.max_error = compared.max_error;
  run.mismatch = compared.mismatch;
  run.note = absl::StrFormat("%slogits of the last of %d prompt tokens, bound %g (D f32 roundings of sum|h*w| + %g bf16 "
                             "ulps of max|h*w|), greedy token %d; f32 host reference",
                             c.chips > 1 ? absl::StrCat(c.chips, " chips, tensor parallel: ") : "", c.prompt,
                             compared.max_bound, kHiddenFlips, Argmax(logits));
  return run;
}

absl::StatusOr<SampleRun> GenerateRun(Backend& backend, const DeviceOptions& options, const LlamaConfig& c,
                                      const LlamaWeights& w, int64_t kSteps, bool print_times) {
  const std::vector<int32_t> prompt = MakePrompt(c, kPromptSeed);
  ASSIGN_OR_RETURN(Generation g, Generate(c, w, backend, prompt, kSteps, options));
  // The reference generates from its own logits (its own greedy choices and cache).
  LlamaReference reference(c, w);
  std::vector<int32_t> want;
  std::vector<std::vector<float>> want_logits, hidden;
  auto start = std::chrono::steady_clock::now();
  want_logits.push_back(reference.Forward(prompt, 0));
  const double reference_prefill = Since(start);
  hidden.push_back(reference.last_hidden());
  want.push_back(Argmax(want_logits.back()));
  start = std::chrono::steady_clock::now();
  for (int64_t s = 0; s < kSteps; ++s) {
    want_logits.push_back(reference.Forward({want.back()}, c.prompt + s));
    hidden.push_back(reference.last_hidden());
    want.push_back(Argmax(want_logits.back()));
  }
  const double reference_decode = Since(start) / kSteps;
  SampleRun run;
  run.program = g.decode_program;
  for (double s : g.decode_seconds) run.kernel_seconds += s;
  for (size_t i = 0; i < g.tokens.size(); ++i) {
    const LogitsComparison compared = CompareLogits(c, w, g.logits[i], want_logits[i], hidden[i]);
    run.elements += c.vocab;
    run.max_error = std::max(run.max_error, compared.max_error);
    if (compared.mismatch && !run.mismatch) run.mismatch = absl::StrCat("token ", i, ": ", *compared.mismatch);
  }
  if (!run.mismatch && g.tokens != want) {
    run.mismatch = absl::StrCat("tokens [", absl::StrJoin(g.tokens, " "), "], the reference's [",
                                absl::StrJoin(want, " "), "]");
  }
  run.note = absl::StrCat(c.chips > 1 ? absl::StrCat(c.chips, " chips, tensor parallel: ") : "", "tokens [",
                          absl::StrJoin(g.tokens, " "), "] = the host reference's greedy tokens");
  if (print_times) {
    // The first decode launch also compiles (JIT) what the prefill did not; the later ones are
    // the steady time per token.
    double later = 0;
    for (size_t i = 1; i < g.decode_seconds.size(); ++i) later += g.decode_seconds[i];
    absl::StrAppendFormat(&run.note,
                          "; %s: prefill %.1f ms, first decode launch %.1f ms, then %.2f ms/token; host reference "
                          "(f32 loops): prefill %.1f ms, decode %.2f ms/token",
                          backend.name(), g.prefill_seconds * 1e3, g.decode_seconds[0] * 1e3,
                          later / static_cast<double>(kSteps - 1) * 1e3, reference_prefill * 1e3,
                          reference_decode * 1e3);
  }
  return run;
}

// Peak resident memory of this process so far (bytes).
int64_t PeakRss() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

// The cycle model's time of a program (visa schedule's makespan) and each engine's busy share of
// it: main-context pipelines by the engine that dominates them (a contraction, a transpose, else
// the Vector Engine or a plain fetch-commit), the sub context's TRF / VRF loads, the DMA engine.
std::string CycleShares(const Program& program) {
  const Schedule schedule = MakeSchedule(program);
  std::map<std::string, int64_t> busy;
  for (const ScheduledOp& op : schedule.ops) {
    std::string engine = "DMA";
    if (op.resource == Resource::kSub) {
      engine = "sub (TRF/VRF loads)";
    } else if (op.resource == Resource::kMain) {
      engine = absl::StrContains(op.label, "contract")    ? "Contraction Engine"
               : absl::StrContains(op.label, "transpose") ? "Transpose Engine"
               : absl::StrContains(op.label, "vector")    ? "Vector Engine"
                                                          : "main fetch-commit";
    }
    busy[engine] += op.cycles();
  }
  std::string out = absl::StrFormat("device %d cycles (%d ops)", schedule.makespan, schedule.ops.size());
  for (const auto& [engine, cycles] : busy) {
    absl::StrAppendFormat(&out, ", %s %.1f%%", engine,
                          100.0 * static_cast<double>(cycles) / static_cast<double>(std::max<int64_t>(1, schedule.makespan)));
  }
  return out;
}

// One 70B-shaped layer's decode step on the backend against the host reference.
absl::StatusOr<SampleRun> Layer70bRun(Backend& backend, const DeviceOptions& options, const Llama70bConfig& c) {
  auto start = std::chrono::steady_clock::now();
  const char* path = std::getenv("VISA_LLAMA70B_WEIGHTS");
  Llama70bWeights w;
  if (path != nullptr && *path != '\0') {
    ASSIGN_OR_RETURN(w, ReadLlama70bWeightsFile(c, path));
  } else {
    w = MakeLlama70bWeights(c);
  }
  const double make_seconds = Since(start);
  ASSIGN_OR_RETURN(Llama70bRun got, RunLlama70bDecode(c, w, backend, options));
  const Llama70bReference want = ReferenceDecode(c, w);
  SampleRun run;
  run.program = got.program;
  run.kernel_seconds = got.launch_seconds;
  run.device_resident_bytes = got.device_resident_bytes;
  run.elements = c.hidden;
  double worst_ratio = 0, magnitude = 0;
  for (size_t i = 0; i < want.out.size(); ++i) {
    const double error = std::fabs(static_cast<double>(got.out[i]) - want.out[i]);
    run.max_error = std::max(run.max_error, error);
    worst_ratio = std::max(worst_ratio, error / want.bound[i]);
    magnitude = std::max(magnitude, static_cast<double>(std::fabs(want.out[i])));
    if (!(error <= want.bound[i]) && !run.mismatch) {
      run.mismatch = absl::StrFormat("%d: got %g, want %g (bound %g)", i, got.out[i], want.out[i], want.bound[i]);
    }
  }
  run.note = absl::StrFormat(
      "D %d, F %d, %d query / %d KV heads, d_k %d, position %d of a %d-row cache; max |error| %.3g (%.2f of its "
      "bound at worst, max |out| %.3g); %s launch %.2f s (trace %.2f s, upload %.2f s, weights made in %.2f s); host "
      "reference (double sums, 1 thread) %.2f s; weights %.2f GB, peak RSS %.2f GB",
      c.hidden, c.ffn, c.kv_heads * c.groups, c.kv_heads, c.head_dim, c.position, c.max_positions, run.max_error,
      worst_ratio, magnitude, backend.name(), got.launch_seconds, got.trace_seconds, got.upload_seconds, make_seconds,
      want.seconds, static_cast<double>(w.weight_bytes()) / 1e9, static_cast<double>(PeakRss()) / 1e9);
  absl::StrAppend(&run.note, "; ", CycleShares(got.program));
  return run;
}

// `slow`: the manual's full shapes, run by `visa run` and `visa check` only (a test that runs the
// 70B layer on both backends took 20 GB and was killed); also the tiny model split over 4 chips
// (llama_tiny_prefill_4chip: 97 s on the interpreter, the decode several minutes), which the
// sample tests would run on both backends: llama_tiny_layer_4chip runs the same code at 14 s,
// and tests/llama_tensor_parallel_test.cc runs the tiny model on 4 chips on the JIT.
Sample ModelSample(std::string name, std::string description,
                   std::function<absl::StatusOr<SampleRun>(Backend&, const DeviceOptions&)> runner, bool slow = false) {
  Sample s;
  s.name = std::move(name);
  s.description = std::move(description);
  s.runner = std::move(runner);
  s.slow = slow;
  return s;
}

}  // namespace
}  // namespace visa::models

namespace visa::samples {

std::vector<Sample> ModelSamples() {
  using namespace visa::models;
  return {
      ModelSample("llama_tiny_prefill",
                  "Llama-style decoder (2 layers, D = 256, GQA 4 query / 2 KV heads, d_k = 64, F = 512, V = 512): "
                  "prefill of 32 tokens, the last token's logits against an f32 host reference",
                  [](Backend& b, const DeviceOptions& o) -> absl::StatusOr<SampleRun> {
                    ASSIGN_OR_RETURN(std::shared_ptr<const LlamaWeights> w, TinyWeights());
                    return PrefillRun(b, o, LlamaConfig{}, *w);
                  }),
      ModelSample("llama_tiny_decode",
                  "Llama-style decoder: prefill, then 8 launches of the traced decode program over the KV cache; "
                  "the greedy tokens against the host reference's",
                  [](Backend& b, const DeviceOptions& o) -> absl::StatusOr<SampleRun> {
                    ASSIGN_OR_RETURN(std::shared_ptr<const LlamaWeights> w, TinyWeights());
                    return GenerateRun(b, o, LlamaConfig{}, *w, 8, false);
                  }),
      ModelSample("llama_tiny_generate",
                  "Llama-style decoder: the generated tokens with the time per token on this backend and on the "
                  "host reference",
                  [](Backend& b, const DeviceOptions& o) -> absl::StatusOr<SampleRun> {
                    ASSIGN_OR_RETURN(std::shared_ptr<const LlamaWeights> w, TinyWeights());
                    return GenerateRun(b, o, LlamaConfig{}, *w, 8, true);
                  }),
      ModelSample("llama_small_generate",
                  "Llama-style decoder, the small variant for the interpreter (8 prompt tokens, 32 cache positions): "
                  "prefill and 2 decode launches, the tokens and times against the host reference",
                  [](Backend& b, const DeviceOptions& o) {
                    static const LlamaWeights* weights = new LlamaWeights(MakeWeights(SmallConfig()));
                    return GenerateRun(b, o, SmallConfig(), *weights, 2, true);
                  }),
      ModelSample("llama_tiny_prefill_4chip",
                  "llama_tiny_prefill's model split over 4 chips, tensor parallel: each chip one query head (and "
                  "its KV head) and 128 of F; Q/K/V, gate, up split by columns, output and down projections by rows, "
                  "an AllReduce (chip shuffle butterfly + Vector Engine add) after attention and after the MLP; "
                  "the logits against the same host reference and bound",
                  [](Backend& b, const DeviceOptions& o) -> absl::StatusOr<SampleRun> {
                    ASSIGN_OR_RETURN(std::shared_ptr<const LlamaWeights> w, TinyWeights());
                    return PrefillRun(b, o, OnChips(LlamaConfig{}, 4), *w);
                  },
                  /*slow=*/true),
      ModelSample("llama_tiny_layer_4chip",
                  "One Llama layer split over 4 chips, tensor parallel (D = 128, F = 256, 4 query / 2 KV heads, "
                  "d_k = 32, V = 256, 8 prompt tokens, 32 cache positions): prefill and one decode launch, each logit against the host reference within "
                  "llama_tiny_prefill's bound, the greedy tokens the reference's (sized for the interpreter, "
                  "visa check and mpirun)",
                  [](Backend& b, const DeviceOptions& o) {
                    static const LlamaConfig config = OneLayerConfig();
                    static const LlamaWeights* weights = new LlamaWeights(MakeWeights(config));
                    return GenerateRun(b, o, OnChips(config, 4), *weights, 1, false);
                  }),
      ModelSample("llama_tiny_decode_4chip",
                  "llama_tiny_decode split over 4 chips, tensor parallel (the KV caches split by heads): prefill, "
                  "then 8 decode launches; the greedy tokens against the host reference's",
                  [](Backend& b, const DeviceOptions& o) -> absl::StatusOr<SampleRun> {
                    ASSIGN_OR_RETURN(std::shared_ptr<const LlamaWeights> w, TinyWeights());
                    return GenerateRun(b, o, OnChips(LlamaConfig{}, 4), *w, 8, false);
                  },
                  /*slow=*/true),
      ModelSample("llama70b_layer_decode",
                  "One Llama 3 70B layer's decode step at the manual's shapes (D = 8192, F = 28672, 64 query / 8 KV "
                  "heads, d_k = 128, position 1023 of a 1024-row KV cache), weights streamed HBM -> DM tile by tile; "
                  "against the f32 host reference (JIT: 1.7 GB of weights)",
                  [](Backend& b, const DeviceOptions& o) { return Layer70bRun(b, o, Llama70bConfig{}); },
                  /*slow=*/true),
      ModelSample("llama70b_reduced_layer_decode",
                  "The 70B layer's decode step at a reduced configuration with the same tiling (D = 2048, F = 3072, "
                  "16 query / 2 KV heads, d_k = 128, 64 cache rows): small enough for the interpreter and visa check",
                  [](Backend& b, const DeviceOptions& o) { return Layer70bRun(b, o, ReducedLlama70b()); }),
      ModelSample("llama70b_reduced_layer_decode_4chip",
                  "The reduced 70B layer's decode step split over 4 chips, tensor parallel (D = 2048, F = 4096, 32 "
                  "query / 4 KV heads, d_k = 128, 64 cache rows): each chip one KV head with its 8 query heads and "
                  "1024 of F, AllReduces after the output and down projections; against the 70B host reference",
                  [](Backend& b, const DeviceOptions& o) { return Layer70bRun(b, o, ReducedLlama70bOnChips(4)); },
                  /*slow=*/true),  // visa check: 115 s, nearly all on the interpreter
  };
}

}  // namespace visa::samples
