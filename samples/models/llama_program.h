// The Llama-style model on the device: the weights and KV caches in HBM, and the program of one
// forward pass over S tokens (S = s_in for the prefill, 1 for a decode step), traced once and
// launched again with new inputs while the device's memory (weights, caches) persists.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/backend.h"
#include "runtime/device.h"
#include "runtime/program.h"
#include "runtime/tensor.h"
#include "samples/models/llama_config.h"

namespace visa::models {

// The device's resident tensors: weights (never written by a program) and the per-layer caches
// (written in place by each launch's KV-cache scatter).
struct LlamaDeviceState {
  std::unique_ptr<Device> device;
  std::vector<DeviceTensor> weights;  // embedding, rope, final_norm, lm_head, then 9 per layer
  std::vector<DeviceTensor> caches;   // per layer: K cache [H, T, E], V cache [H, T, E]
};

// Uploads the weights (bf16) and zeroed caches to a new device of config.chips chips: on several
// chips each chip gets its share of every layer (llama_chip_split.h) and a copy of the rest.
absl::StatusOr<LlamaDeviceState> UploadModel(const LlamaConfig& config, const LlamaWeights& weights,
                                            const DeviceOptions& options = {});

// One phase's traced program and the per-launch input tensors it reads (tokens, positions, the
// attention mask's branch ids, the last row's index), at fixed HBM addresses.
struct LlamaPhase {
  int64_t tokens = 0;  // S
  Program program;
  std::vector<DeviceTensor> step_inputs;  // tokens [S], positions [S], mask [S, T], last [L]
};

// Traces the forward pass over `tokens` positions on `state`'s device. Tracing reserves the
// program's outputs on the device, the caches (written in place) among them, which takes their
// bytes from the live caches: so the caches are cleared (zeros, a fresh handle) after tracing, and
// every phase must be traced before the first launch.
absl::StatusOr<LlamaPhase> TracePhase(const LlamaConfig& config, LlamaDeviceState& state, int64_t tokens);

// Zeroes the caches in place (fresh handles owning their bytes).
absl::Status ClearCaches(const LlamaConfig& config, LlamaDeviceState& state);

// Writes the step inputs for tokens at positions start .. start + n - 1, launches the phase on
// `backend`, takes the updated caches into `state` and returns the last position's logits [V].
absl::StatusOr<std::vector<float>> RunPhase(const LlamaConfig& config, LlamaDeviceState& state, LlamaPhase& phase,
                                            Backend& backend, const std::vector<int32_t>& tokens, int64_t start);

// Prefill of `prompt` then `steps` greedy decode steps; the generated ids (the prefill's token
// first) and the seconds each launch took.
struct Generation {
  std::vector<int32_t> tokens;
  double prefill_seconds = 0;
  std::vector<double> decode_seconds;
  Program prefill_program, decode_program;
  std::vector<std::vector<float>> logits;  // per generated token
  int64_t device_resident_bytes = 0;      // the device pages committed at the end (Device::resident_bytes)
};
// `after_launch`, when set, is called after the prefill's launch and after each decode launch (a
// bench takes per-launch figures there, e.g. mpi_llama_bench's exchanges per decode launch).
absl::StatusOr<Generation> Generate(const LlamaConfig& config, const LlamaWeights& weights, Backend& backend,
                                    const std::vector<int32_t>& prompt, int64_t steps,
                                    const DeviceOptions& options = {},
                                    const std::function<void()>& after_launch = {});

}  // namespace visa::models
