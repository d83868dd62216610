// RecordingBackend and the op-by-op comparison of two recordings.
#include "runtime/recording_backend.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "dsl/status_macros.h"
#include "runtime/scalar_convert.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

using Record = RecordingBackend::Record;

// The final stage's name: what the pipeline's output is.
std::string PipelineLabel(const PipelineOp& op) {
  const Stage& last = op.stages.back();
  if (const auto* load = std::get_if<RegisterLoadStage>(&last)) return load->to_trf ? "to_trf" : "to_vrf";
  return "commit";
}

// Labels of the ops a backend ran, in order (host transfers do not reach a backend).
std::vector<std::string> RunLabels(const Program& program) {
  std::vector<std::string> labels;
  for (size_t i = 0; i < program.ops.size(); ++i) {
    const Op& op = program.ops[i];
    if (const auto* dma = std::get_if<DmaOp>(&op.body)) {
      if (dma->src.handle && dma->dst.handle) labels.push_back(absl::StrFormat("op %d (%s move)", i, ContextName(dma->context)));
      continue;
    }
    labels.push_back(absl::StrFormat("op %d (%s)", i, PipelineLabel(std::get<PipelineOp>(op.body))));
  }
  return labels;
}

std::string Position(const Record& r, int64_t p) {
  std::vector<int64_t> digits(r.level_sizes.size());
  for (size_t k = r.level_sizes.size(); k-- > 0;) {
    digits[k] = p % r.level_sizes[k];
    p /= r.level_sizes[k];
  }
  std::string text = "(";
  for (size_t k = 0; k < digits.size(); ++k) absl::StrAppend(&text, k ? ", " : "", r.level_names[k], " ", digits[k]);
  return text + ")";
}

std::string Value(DType type, uint32_t bits) { return absl::StrFormat("0x%x (%g)", bits, BitsToDouble(type, bits)); }

}  // namespace

void RecordingBackend::Keep(std::string op, const DeviceTensor& written) {
  static const char* const kNames[][5] = {{"chip", "element"},
                                          {"chip", "cluster", "slice", "element"},
                                          {"chip", "cluster", "slice", "row", "element"}};
  Record r{std::move(op), {}, {}, std::nullopt};
  const std::vector<Mapping> levels = written.levels();
  const int names = levels.size() == 2 ? 0 : levels.size() == 4 ? 1 : 2;
  for (size_t k = 0; k < levels.size(); ++k) {
    r.level_names.push_back(k < 5 && kNames[names][k] ? kNames[names][k] : "level");
    r.level_sizes.push_back(levels[k].size());
  }
  absl::StatusOr<HostTensor> image = ReadImage(written, written.full_mapping());
  if (image.ok()) r.image = *std::move(image);
  records_.push_back(std::move(r));
}

absl::Status RecordingBackend::Run(const PipelineOp& op, const PipelineTensors& tensors) {
  RETURN_IF_ERROR(inner_.Run(op, tensors));
  Keep(PipelineLabel(op), tensors.output);
  return absl::OkStatus();
}

absl::Status RecordingBackend::Run(const DmaOp& op, const DmaTensors& tensors) {
  RETURN_IF_ERROR(inner_.Run(op, tensors));
  Keep(absl::StrCat(ContextName(op.context), " move"), tensors.dst);
  return absl::OkStatus();
}

std::optional<std::string> FirstDifference(const Program& program, const std::vector<Record>& a, const char* a_name,
                                           const std::vector<Record>& b, const char* b_name) {
  const std::vector<std::string> labels = RunLabels(program);
  if (a.size() != b.size()) {
    return absl::StrFormat("%s ran %d ops, %s ran %d", a_name, a.size(), b_name, b.size());
  }
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string op = i < labels.size() ? labels[i] : absl::StrCat("run ", i, " (", a[i].op, ")");
    if (!a[i].image || !b[i].image) {
      if (a[i].image.has_value() != b[i].image.has_value()) return absl::StrCat(op, ": only one result is readable");
      continue;
    }
    const HostTensor& x = *a[i].image;
    const HostTensor& y = *b[i].image;
    if (x.dtype() != y.dtype() || x.size() != y.size()) return absl::StrCat(op, ": the results differ in type or size");
    if (x.bytes() == y.bytes()) continue;
    const std::vector<uint32_t> xs = x.ToBits(), ys = y.ToBits();
    for (int64_t p = 0; p < x.size(); ++p) {
      if (xs[p] == ys[p]) continue;
      Cell cell = x.mapping().map(p);
      return absl::StrCat(op, ": position ", Position(a[i], p), " index ",
                          cell.live() ? cell.index.ToString() : std::string("padding"), ": ", a_name, " ",
                          Value(x.dtype(), xs[p]), ", ", b_name, " ", Value(y.dtype(), ys[p]));
    }
  }
  return std::nullopt;
}

}  // namespace visa
