// `visa check`: both backends on one sample, every op's result compared element by element.
#include "tools/check_command.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/scalar_convert.h"
#include "runtime/transfer.h"
#include "samples/sample.h"

namespace visa::cli {
namespace {

using Record = RecordingBackend::Record;

// What each backend call of a program's ops stands for, in call order: "op 2 (collect)".
std::vector<std::string> CallLabels(const Program& program) {
  std::vector<std::string> labels;
  for (size_t i = 0; i < program.ops.size(); ++i) {
    const Op& op = program.ops[i];
    if (const auto* dma = std::get_if<DmaOp>(&op.body)) {
      if (dma->src.handle) labels.push_back(absl::StrFormat("op %d (%s move)", i, dma->context));
      continue;
    }
    for (const Stage& stage : std::get<PipelineOp>(op.body).stages) {
      const char* name = std::visit(
          [](const auto& s) -> const char* {
            using S = std::decay_t<decltype(s)>;
            if constexpr (std::is_same_v<S, FetchStage>) return "fetch";
            if constexpr (std::is_same_v<S, SwitchStage>) return "switch";
            if constexpr (std::is_same_v<S, CollectStage>) return "collect";
            if constexpr (std::is_same_v<S, CastStage>) return "cast";
            if constexpr (std::is_same_v<S, TransposeStage>) return "transpose";
            if constexpr (std::is_same_v<S, AlignStage>) return "contraction";
            if constexpr (std::is_same_v<S, CommitStage>) return "commit";
            if constexpr (std::is_same_v<S, RegisterLoadStage>) return s.to_trf ? "to_trf" : "to_vrf";
            return nullptr;  // begin; contract and accumulate run with align as one call
          },
          stage);
      if (name != nullptr) labels.push_back(absl::StrFormat("op %d (%s)", i, name));
    }
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
  for (size_t k = 0; k < digits.size(); ++k) {
    absl::StrAppend(&text, k ? ", " : "", r.level_names[k], " ", digits[k]);
  }
  return text + ")";
}

std::string Value(DType type, uint32_t bits) {
  return absl::StrFormat("0x%x (%g)", bits, BitsToDouble(type, bits));
}

}  // namespace

absl::StatusOr<HostTensor> RecordingBackend::Keep(const char* call, const StreamShape& shape,
                                                  absl::StatusOr<HostTensor> out) {
  if (out.ok()) {
    records_.push_back({call, {"chip", "cluster", "slice", "time", "packet"},
                        {shape.chip.size(), shape.cluster.size(), shape.slice.size(), shape.time.size(),
                         shape.packet.size()},
                        *out});
  }
  return out;
}

void RecordingBackend::KeepTensor(const char* call, const DeviceTensor& tensor) {
  static const char* const kNames[][5] = {{"chip", "element"},
                                          {"chip", "cluster", "slice", "element"},
                                          {"chip", "cluster", "slice", "row", "element"}};
  Record r{call, {}, {}, std::nullopt};
  const std::vector<Mapping> levels = tensor.levels();
  const int names = levels.size() == 2 ? 0 : levels.size() == 4 ? 1 : 2;
  for (size_t k = 0; k < levels.size(); ++k) {
    r.level_names.push_back(k < 5 && kNames[names][k] ? kNames[names][k] : "level");
    r.level_sizes.push_back(levels[k].size());
  }
  absl::StatusOr<HostTensor> image = ReadAs(tensor, tensor.full_mapping());
  if (image.ok()) r.image = *std::move(image);
  records_.push_back(std::move(r));
}

absl::StatusOr<HostTensor> RecordingBackend::Fetch(const std::vector<DmTensor>& inputs, const BeginStage& begin,
                                                   const FetchStage& stage) {
  return Keep("Fetch", stage.out, inner_.Fetch(inputs, begin, stage));
}

absl::StatusOr<HostTensor> RecordingBackend::Rearrange(const HostTensor& stream, const StreamShape& out) {
  return Keep("Rearrange", out, inner_.Rearrange(stream, out));
}

absl::StatusOr<HostTensor> RecordingBackend::Cast(const HostTensor& stream, const CastStage& stage) {
  return Keep("Cast", stage.out, inner_.Cast(stream, stage));
}

absl::StatusOr<HostTensor> RecordingBackend::Contract(const HostTensor& stream, const TrfTensor& weights,
                                                      const AlignStage& align, const ContractStage& contract,
                                                      const AccumulateStage& accumulate) {
  return Keep("Contract", accumulate.out, inner_.Contract(stream, weights, align, contract, accumulate));
}

absl::StatusOr<DeviceTensor> RecordingBackend::Store(const HostTensor& stream, Device& device, Placement placement) {
  ASSIGN_OR_RETURN(DeviceTensor out, inner_.Store(stream, device, std::move(placement)));
  KeepTensor("Store", out);
  return out;
}

absl::Status RecordingBackend::StoreInto(const HostTensor& stream, const DmTensor& target, const SliceBitmap& slices) {
  RETURN_IF_ERROR(inner_.StoreInto(stream, target, slices));
  KeepTensor("StoreInto", target);
  return absl::OkStatus();
}

absl::StatusOr<DeviceTensor> RecordingBackend::Transfer(const DeviceTensor& src, Device& device, Placement dst,
                                                        TransferCheck check, TransferReport* report) {
  ASSIGN_OR_RETURN(DeviceTensor out, inner_.Transfer(src, device, std::move(dst), check, report));
  KeepTensor("Transfer", out);
  return out;
}

std::optional<std::string> FirstDifference(const Program& program, const std::vector<Record>& a, const char* a_name,
                                           const std::vector<Record>& b, const char* b_name) {
  const std::vector<std::string> labels = CallLabels(program);
  if (a.size() != b.size()) {
    return absl::StrFormat("%s made %d backend calls, %s made %d", a_name, a.size(), b_name, b.size());
  }
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string op = i < labels.size() ? labels[i] : absl::StrCat("call ", i, " (", a[i].call, ")");
    if (!a[i].image || !b[i].image) {
      if (a[i].image.has_value() != b[i].image.has_value()) return absl::StrCat(op, ": only one result is readable");
      continue;
    }
    const HostTensor& x = *a[i].image;
    const HostTensor& y = *b[i].image;
    if (x.dtype() != y.dtype() || x.size() != y.size()) {
      return absl::StrCat(op, ": the results differ in type or size");
    }
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

namespace {

// 0 identical, 1 different, 2 error.
int CheckOne(const samples::Sample& sample, jit::JitBackend& jit, std::ostream& out, std::ostream& err) {
  interp::Interpreter interpreter;
  RecordingBackend reference(interpreter), compiled(jit);
  absl::StatusOr<samples::SampleRun> want = sample.Run(reference);
  if (!want.ok()) {
    err << "error: " << sample.name << " on interp: " << want.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<samples::SampleRun> got = sample.Run(compiled);
  if (!got.ok()) {
    err << "error: " << sample.name << " on jit: " << got.status().message() << "\n";
    return 2;
  }
  std::optional<std::string> difference =
      FirstDifference(want->program, reference.records(), "interp", compiled.records(), "jit");
  if (difference) {
    out << sample.name << ": DIFFERENT at " << *difference << "\n";
    return 1;
  }
  out << sample.name << ": identical\n";
  return 0;
}

}  // namespace

int CheckSampleCommand(const CheckOptions& options, std::ostream& out, std::ostream& err) {
  std::vector<const samples::Sample*> chosen;
  if (options.all) {
    for (const samples::Sample& sample : samples::AllSamples()) chosen.push_back(&sample);
  } else {
    const samples::Sample* sample = samples::FindSample(options.sample);
    if (sample == nullptr) {
      err << "error: unknown sample `" << options.sample << "` (see `visa run --list`)\n";
      return 2;
    }
    chosen.push_back(sample);
  }
  absl::StatusOr<std::unique_ptr<jit::JitBackend>> jit = jit::JitBackend::Create();
  if (!jit.ok()) {
    err << "error: " << jit.status().message() << "\n";
    return 2;
  }
  int worst = 0;
  for (const samples::Sample* sample : chosen) worst = std::max(worst, CheckOne(*sample, **jit, out, err));
  return worst;
}

void AddCheckCommand(CLI::App& app, CheckOptions& options, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("check", "Run a sample on the interpreter and the JIT and compare every op");
  cmd->add_option("sample", options.sample, "Sample name (see `visa run --list`)");
  cmd->add_flag("--all", options.all, "Check every sample");
  cmd->callback([&options, &exit_code] {
    if (!options.all && options.sample.empty()) {
      std::cerr << "error: check needs a SAMPLE (or --all)\n";
      exit_code = 2;
      return;
    }
    exit_code = CheckSampleCommand(options, std::cout, std::cerr);
  });
}

}  // namespace visa::cli
