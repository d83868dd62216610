// The Llama-style model's weights in a `.safetensors` file (llama_weights_file.h).
#include "samples/models/llama_weights_file.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "runtime/safetensors.h"

namespace visa::models {
namespace {

// Every tensor of the file: its name, its axes (a MappingScope over the configuration's sizes,
// major first) and the LlamaWeights member holding it.
struct Entry {
  std::string name;
  std::string axes;
  std::vector<float>* values;
};

std::vector<Entry> Entries(LlamaWeights& w) {
  std::vector<Entry> e = {{"model.embed_tokens.weight", "V, D", &w.embedding},
                          {"model.norm.weight", "D", &w.final_norm},
                          {"lm_head.weight", "V, D", &w.lm_head}};
  for (size_t l = 0; l < w.layers.size(); ++l) {
    LlamaLayerWeights& x = w.layers[l];
    const std::string at = absl::StrCat("model.layers.", l, ".");
    e.push_back({at + "input_layernorm.weight", "D", &x.attn_norm});
    e.push_back({at + "self_attn.q_proj.weight", "Q, D", &x.wq});
    e.push_back({at + "self_attn.k_proj.weight", "R, D", &x.wk});
    e.push_back({at + "self_attn.v_proj.weight", "R, D", &x.wv});
    e.push_back({at + "self_attn.o_proj.weight", "D, Q", &x.wo});
    e.push_back({at + "post_attention_layernorm.weight", "D", &x.ffn_norm});
    e.push_back({at + "mlp.gate_proj.weight", "F, D", &x.gate});
    e.push_back({at + "mlp.up_proj.weight", "F, D", &x.up});
    e.push_back({at + "mlp.down_proj.weight", "D, F", &x.down});
  }
  return e;
}

// The configuration's axes and the checkpoint's flat head dimensions: Q = h_q * d_k (q_proj's
// rows, [G, H, C] in LlamaWeights, the same order), R = h_kv * d_k.
absl::StatusOr<MappingScope> FileScope(const LlamaConfig& c) {
  return MappingScope::Parse(absl::StrCat(c.Axes(1), ", Q = ", c.q_heads() * c.head_dim, ", R = ", c.kv_heads * c.head_dim));
}

}  // namespace

absl::Status WriteLlamaWeightsFile(const LlamaConfig& c, const LlamaWeights& weights, const std::string& path) {
  ASSIGN_OR_RETURN(MappingScope m, FileScope(c));
  LlamaWeights w = weights;  // Entries() points into a mutable copy
  SafetensorsWriter writer;
  for (const Entry& e : Entries(w)) {
    ASSIGN_OR_RETURN(HostTensor host, HostTensor::FromValues(DType::kBF16, m.m(e.axes),
                                                             std::vector<double>(e.values->begin(), e.values->end())));
    RETURN_IF_ERROR(writer.Add(e.name, std::move(host), m.m(e.axes)));
  }
  RETURN_IF_ERROR(writer.SetMetadata("format", "visa llama (samples/models/llama_weights_file.h)"));
  return writer.Write(path);
}

absl::StatusOr<LlamaWeights> ReadLlamaWeightsFile(const LlamaConfig& c, const std::string& path) {
  ASSIGN_OR_RETURN(MappingScope m, FileScope(c));
  ASSIGN_OR_RETURN(SafetensorsFile file, SafetensorsFile::Open(path));
  LlamaWeights w;
  w.layers.resize(static_cast<size_t>(c.layers));
  for (const Entry& e : Entries(w)) {
    ASSIGN_OR_RETURN(HostTensor host, file.ToHost(e.name, m.m(e.axes)));
    for (double v : host.ToValues()) e.values->push_back(RoundBf16(static_cast<float>(v)));
  }
  w.rope = MakeRopeTable(c);
  return w;
}

}  // namespace visa::models
