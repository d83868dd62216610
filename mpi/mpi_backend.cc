// MpiBackend: per-op program agreement and the point-to-point exchange of cross-rank chip moves.
#include "mpi/mpi_backend.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/device.h"
#include "runtime/host_tensor.h"
#include "runtime/transfer.h"

namespace visa::mpi {
namespace {

// The one chip a device tensor's positions live on, or nullopt when it is host memory or spans
// several chips (such a move runs where it is, on every rank).
std::optional<int> SingleChip(const DeviceTensor& tensor) {
  if (tensor.tier() == Tier::kHost) return std::nullopt;
  const Mapping chip_level = tensor.levels().front();
  const int64_t positions = std::min<int64_t>(chip_level.size(), tensor.device().chips());
  std::optional<int> only;
  for (int64_t p = 0; p < positions; ++p) {
    if (!chip_level.map(p).live()) continue;
    if (only) return std::nullopt;
    only = static_cast<int>(p);
  }
  return only;
}

// The positions of a one-chip tensor's own chip: its Chip level without the padding that places
// it among the device's chips (a chip view's `# c + Chip + # (chips - 1 - c)` is `Chip`).
Mapping OwnChipLayout(const DeviceTensor& tensor) {
  std::vector<Mapping> levels = tensor.levels();
  while (levels.front().kind() == Mapping::Kind::kPadding || levels.front().kind() == Mapping::Kind::kLeftPad) {
    levels.front() = levels.front().inner();
  }
  return Pair(levels);
}

// "op 12 (tdma move ...)": the op's first text line names it in errors.
std::string OpName(int64_t index, const std::string& text) {
  const size_t end = text.find('\n');
  return absl::StrCat("op ", index, " (", text.substr(0, std::min<size_t>(end, 160)), ")");
}

}  // namespace

absl::Status MpiBackend::AgreeOn(const std::string& text) {
  return session_.Agree(TextHash(text), OpName(ops_, text));
}

absl::Status MpiBackend::Run(const PipelineOp& op, const PipelineTensors& tensors) {
  const std::string text = OpText(Op{op}, static_cast<size_t>(ops_));
  RETURN_IF_ERROR(AgreeOn(text));
  ++ops_;
  RETURN_IF_ERROR(inner_.Run(op, tensors));
  return Digest(tensors.output);
}

absl::Status MpiBackend::Run(const DmaOp& op, const DmaTensors& tensors) {
  const std::string text = OpText(Op{op}, static_cast<size_t>(ops_));
  RETURN_IF_ERROR(AgreeOn(text));
  RETURN_IF_ERROR(Exchange(op, tensors, OpName(ops_, text)));
  ++ops_;
  RETURN_IF_ERROR(inner_.Run(op, tensors));
  return Digest(tensors.dst);
}

absl::Status MpiBackend::Digest(const DeviceTensor& output) {
  if (!session_.reporting() || !inner_.executes()) return absl::OkStatus();
  ASSIGN_OR_RETURN(HostTensor image, ReadImage(output, output.full_mapping()));
  ExchangeStats& stats = session_.stats();
  stats.output_digest = FoldHash(stats.output_digest, image.bytes());
  return absl::OkStatus();
}

absl::Status MpiBackend::Exchange(const DmaOp& op, const DmaTensors& tensors, const std::string& what) {
  if (op.fill() != nullptr || op.index() != nullptr || !inner_.executes()) return absl::OkStatus();
  const std::optional<int> from_chip = SingleChip(tensors.src);
  const std::optional<int> to_chip = SingleChip(tensors.dst);
  if (!from_chip || !to_chip || *from_chip == *to_chip) return absl::OkStatus();
  const int chips = tensors.src.device().chips();
  const int sender = OwnerOf(*from_chip, session_.ranks(), chips);
  const int receiver = OwnerOf(*to_chip, session_.ranks(), chips);
  if (sender == receiver) return absl::OkStatus();
  const Mapping layout = OwnChipLayout(tensors.src);
  if (session_.rank() == sender) {
    ASSIGN_OR_RETURN(HostTensor image, ReadImage(tensors.src, layout));
    return session_.Send(receiver, image.bytes(), what);
  }
  if (session_.rank() != receiver) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, session_.Receive(sender, what));
  ASSIGN_OR_RETURN(HostTensor received, HostTensor::FromBytes(tensors.src.dtype(), layout, std::move(bytes)));
  if (!tensors.src.is_view()) return WriteInto(received, tensors.src);
  // A window cannot be written whole: the bytes must then be what this rank holds already.
  ASSIGN_OR_RETURN(HostTensor held, ReadImage(tensors.src, layout));
  if (held == received) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("MPI: at ", what, " chip ", *from_chip, "'s bytes from rank ", sender,
                                          " differ from rank ", session_.rank(), "'s"));
}

}  // namespace visa::mpi
