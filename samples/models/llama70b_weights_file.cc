// The 70B layer's weights in a `.safetensors` file (llama70b_layer.h).
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "runtime/safetensors.h"
#include "samples/models/llama70b_layer.h"

namespace visa::models {
namespace {

struct Entry {
  std::string name;
  int64_t rows, cols;
  std::vector<uint16_t>* bits;
};

std::vector<Entry> Entries(const Llama70bConfig& c, Llama70bWeights& w) {
  const std::string at = "model.layers.0.";
  return {{at + "input_layernorm.weight", c.hidden, 1, &w.attn_norm},
          {at + "post_attention_layernorm.weight", c.hidden, 1, &w.ffn_norm},
          {at + "self_attn.q_proj.weight", c.q_cols(), c.hidden, &w.wq},
          {at + "self_attn.k_proj.weight", c.kv_cols(), c.hidden, &w.wk},
          {at + "self_attn.v_proj.weight", c.kv_cols(), c.hidden, &w.wv},
          {at + "self_attn.o_proj.weight", c.hidden, c.q_cols(), &w.wo},
          {at + "mlp.gate_proj.weight", c.ffn, c.hidden, &w.gate},
          {at + "mlp.up_proj.weight", c.ffn, c.hidden, &w.up},
          {at + "mlp.down_proj.weight", c.hidden, c.ffn, &w.down}};
}

std::vector<int64_t> Shape(const Entry& e) {
  return e.cols == 1 ? std::vector<int64_t>{e.rows} : std::vector<int64_t>{e.rows, e.cols};
}

}  // namespace

absl::Status WriteLlama70bWeightsFile(const Llama70bConfig& c, const Llama70bWeights& weights, const std::string& path) {
  Llama70bWeights w = weights;  // Entries() points into a mutable copy
  SafetensorsWriter writer;
  for (const Entry& e : Entries(c, w)) {
    ASSIGN_OR_RETURN(MappingScope m, MappingScope::Parse(absl::StrCat("A = ", e.rows, ", B = ", e.cols)));
    const std::string axes = e.cols == 1 ? "A" : "A, B";
    std::vector<uint8_t> bytes(e.bits->size() * 2);
    std::memcpy(bytes.data(), e.bits->data(), bytes.size());
    ASSIGN_OR_RETURN(HostTensor host, HostTensor::FromBytes(DType::kBF16, m.m(axes), std::move(bytes)));
    RETURN_IF_ERROR(writer.Add(e.name, std::move(host), m.m(axes)));
  }
  return writer.Write(path);
}

absl::StatusOr<Llama70bWeights> ReadLlama70bWeightsFile(const Llama70bConfig& c, const std::string& path) {
  ASSIGN_OR_RETURN(SafetensorsFile file, SafetensorsFile::Open(path));
  Llama70bWeights w = MakeLlama70bWeights(c);
  for (const Entry& e : Entries(c, w)) {
    ASSIGN_OR_RETURN(ArrayImage image, file.Image(e.name));
    if (image.dtype != DType::kBF16 || image.shape != Shape(e)) {
      return absl::InvalidArgumentError(absl::StrCat(image.what, " must be BF16 [", absl::StrJoin(Shape(e), ", "),
                                                     "] for this configuration, not ", Name(image.dtype), " [",
                                                     absl::StrJoin(image.shape, ", "), "]"));
    }
    std::memcpy(e.bits->data(), image.bytes.data(), e.bits->size() * 2);
  }
  return w;
}

}  // namespace visa::models
