// MpiBackend: per-op program agreement, each rank executing the ops on its own chips, and the
// exchanges that bring other ranks' chips where an op reads them.
#include "mpi/mpi_backend.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "mpi/chip_parts.h"
#include "mpi/chip_range_move.h"
#include "mpi/chip_range_pipeline.h"
#include "mpi/large_block_reuse.h"
#include "runtime/device.h"
#include "runtime/host_read_hook.h"
#include "runtime/host_tensor.h"
#include "runtime/kept_chips.h"
#include "runtime/transfer.h"
#include "runtime/uninitialized_reads.h"
#include "runtime/window_write.h"

namespace visa::mpi {
namespace {

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

// The one rank owning every chip in `chips`, or nullopt when they belong to several.
std::optional<int> SoleOwner(const std::vector<int>& chips, const Session& session, int device_chips) {
  std::optional<int> owner;
  for (int chip : chips) {
    const int rank = OwnerOf(chip, session.ranks(), device_chips);
    if (owner && *owner != rank) return std::nullopt;
    owner = rank;
  }
  return owner;
}

// Whether a gather's table (or a scatter's base) stays on its chip: it and the destination have
// the same single axis over every chip of the device as their Chip level, and the rows the index
// picks are numbered along another axis (the IndirectLoop's table and key axes are not the chip
// axis). Each chip's rows then move on that chip; only the index may come from another chip (the
// Llama layer's embedding and RoPE tables, replicated on every chip, with row numbers on chip 0:
// before, every rank gathered the whole tables at every launch, 1.5 MB a decode step).
bool RowsStayOnTheirChips(const IndirectLoop& loop, const DeviceTensor& read, const DeviceTensor& dst) {
  const Mapping from = read.levels().front();  // levels() is a copy
  const Mapping to = dst.levels().front();
  const int64_t chips = dst.device().chips();
  if (from.kind() != Mapping::Kind::kSymbol || to.kind() != Mapping::Kind::kSymbol) return false;
  const std::string& axis = from.axis().name;
  return axis == to.axis().name && from.size() == chips && to.size() == chips && axis != loop.table_axis &&
         axis != loop.key_axis;
}

}  // namespace

MpiBackend::MpiBackend(Backend& inner, Session& session) : inner_(inner), session_(session) {
  const char* split = std::getenv("VISA_MPI_SPLIT_PIPELINES");
  split_pipelines_ = split == nullptr || std::string_view(split) != "0";
  KeepOwnChipsOf(session.rank(), session.ranks());  // other ranks' chips' HBM is never committed here
  if (session.ranks() > 1 && split_pipelines_) ReuseLargeBlocks();  // the parts' stream images (large_block_reuse.h)
  SetHostReadHook([this](const DeviceTensor& src) {
    // Every rank reads back at the same point of the same program: the ops noted so far are
    // compared first, so a rank that recorded another program is named, not met in the exchange.
    RETURN_IF_ERROR(session_.Agree(TextHash("a host read-back"), "a host read-back"));
    return GatherChips(src, "a host read-back");
  });
}

MpiBackend::~MpiBackend() { SetHostReadHook({}); }

absl::Status MpiBackend::AgreeOn(const std::string& text, bool exchanges) {
  if (exchanges) return session_.Agree(TextHash(text), OpName(ops_, text));
  session_.Note(TextHash(text), OpName(ops_, text));
  return absl::OkStatus();
}

bool MpiBackend::WritesOnlyOthersChips(const DeviceTensor& output) const {
  if (!inner_.executes() || session_.ranks() == 1) return false;
  const std::vector<int> chips = ChipsOf(output);
  if (chips.empty()) return false;
  const ChipShare share = session_.Share(output.device().chips());
  return std::none_of(chips.begin(), chips.end(), [&](int chip) { return share.Owns(chip); });
}

absl::Status MpiBackend::Run(const PipelineOp& op, const PipelineTensors& tensors) {
  const std::string text = OpText(Op{op}, static_cast<size_t>(ops_));
  // A pipeline runs on each chip's slices alone: nothing crosses chips. One that is SPMD over the
  // chips runs here for this rank's chips alone; any other that spans several ranks' chips runs
  // whole, on what one process would read: its inputs' other chips are gathered first (every rank
  // takes part, also one that then skips the op), after every rank agreed on the program so far.
  const bool spans_ranks = SpansRanks(tensors.output);
  const bool by_chip = spans_ranks && split_pipelines_ && CheckSplitsByChip(op, tensors).ok();
  RETURN_IF_ERROR(AgreeOn(text, /*exchanges=*/spans_ranks && !by_chip));
  const std::string what = OpName(ops_, text);
  ++ops_;
  if (spans_ranks && !by_chip) RETURN_IF_ERROR(GatherReads(tensors, what));
  if (WritesOnlyOthersChips(tensors.output)) {
    ++skipped_;
    ++session_.stats().skipped;
    return absl::OkStatus();
  }
  if (by_chip) {
    const ChipShare share = session_.Share(tensors.output.device().chips());
    RETURN_IF_ERROR(pipelines_.Run(inner_, op, tensors, share.first, share.count));
    ++session_.stats().split_pipelines;
    session_.stats().pipeline_parts_made = pipelines_.made();
    session_.stats().pipeline_parts_reused = pipelines_.reused();
  } else {
    RETURN_IF_ERROR(inner_.Run(op, tensors));
    if (spans_ranks) ++session_.stats().whole_pipelines;
  }
  return Digest(tensors.output);
}

bool MpiBackend::SpansRanks(const DeviceTensor& output) const {
  if (!inner_.executes() || session_.ranks() == 1) return false;
  const std::vector<int> chips = ChipsOf(output);
  if (chips.empty()) return false;
  return !SoleOwner(chips, session_, output.device().chips()).has_value();
}

absl::Status MpiBackend::GatherReads(const PipelineTensors& tensors, const std::string& what) {
  for (const DmTensor& input : tensors.inputs) RETURN_IF_ERROR(GatherChips(input, what));
  if (tensors.weights) RETURN_IF_ERROR(GatherChips(*tensors.weights, what));
  for (const DeviceTensor& vrf : tensors.vrf_operands) RETURN_IF_ERROR(GatherChips(vrf, what));
  if (tensors.fetch_index) RETURN_IF_ERROR(GatherChips(*tensors.fetch_index, what));
  return absl::OkStatus();
}

absl::Status MpiBackend::Run(const DmaOp& op, const DmaTensors& tensors) {
  const std::string text = OpText(Op{op}, static_cast<size_t>(ops_));
  // The reads to exchange depend on the op and the chips' owners alone, so every rank agrees (waits)
  // at the same ops: those that exchange data.
  ASSIGN_OR_RETURN(const std::vector<Read> reads, ReadsToExchange(op, tensors));
  RETURN_IF_ERROR(AgreeOn(text, /*exchanges=*/!reads.empty()));
  std::optional<HostTensor> received;
  RETURN_IF_ERROR(Exchange(reads, OpName(ops_, text), received));
  ++ops_;
  if (WritesOnlyOthersChips(tensors.dst)) {
    ++skipped_;
    ++session_.stats().skipped;
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(const bool own_parts, RunsOwnChipsOnly(op, tensors));
  if (received) {
    // Another rank's chip arrived for this chip move: written straight into the destination chip,
    // as the move would write it, after the read check the backends make of a move's source.
    RETURN_IF_ERROR(CheckAllWritten(tensors.src, absl::StrCat("a ", ContextName(op.context), " move")));
    RETURN_IF_ERROR(WriteIntoWindow(*received, tensors.dst));
  } else if (own_parts) {
    const ChipShare share = session_.Share(tensors.dst.device().chips());
    RETURN_IF_ERROR(RunChipRange(inner_, op, tensors, share.first, share.count));
    ++session_.stats().split;
  } else {
    RETURN_IF_ERROR(inner_.Run(op, tensors));
  }
  return Digest(tensors.dst);
}

absl::StatusOr<bool> MpiBackend::RunsOwnChipsOnly(const DmaOp& op, const DmaTensors& tensors) const {
  if (!inner_.executes() || session_.ranks() == 1) return false;
  const ChipShare share = session_.Share(tensors.dst.device().chips());
  const std::vector<int> chips = ChipsOf(tensors.dst);
  if (share.count == 0 || std::all_of(chips.begin(), chips.end(), [&](int chip) { return share.Owns(chip); })) {
    return false;  // nothing of another rank's to leave out
  }
  return SplitsByChip(op, tensors);
}

absl::Status MpiBackend::Digest(const DeviceTensor& output) {
  if (!session_.reporting() || !inner_.executes()) return absl::OkStatus();
  ExchangeStats& stats = session_.stats();
  const std::vector<int> chips = ChipsOf(output);
  if (chips.empty()) {
    ASSIGN_OR_RETURN(HostTensor image, ReadImage(output, output.full_mapping()));
    stats.Fold(ExchangeStats::kDigestSlots - 1, image.bytes());
    return absl::OkStatus();
  }
  const ChipShare share = session_.Share(output.device().chips());
  if (std::none_of(chips.begin(), chips.end(), [&](int chip) { return share.Owns(chip); })) return absl::OkStatus();
  ASSIGN_OR_RETURN(HostTensor image, ReadImage(output, output.full_mapping()));
  ASSIGN_OR_RETURN(int64_t block, ChipBlockBytes(output));
  const bool whole = output.levels().front().size() <= 1;
  for (int chip : chips) {
    if (share.Owns(chip)) stats.Fold(chip, absl::MakeConstSpan(image.bytes()).subspan(whole ? 0 : chip * block, block));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<MpiBackend::Read>> MpiBackend::ReadsToExchange(const DmaOp& op,
                                                                           const DmaTensors& tensors) const {
  std::vector<Read> exchanged;
  if (!inner_.executes() || session_.ranks() == 1) return exchanged;
  const int device_chips = tensors.dst.device().chips();
  if (device_chips == 1) return exchanged;  // one chip, one owner: nothing crosses
  const std::vector<int> to = ChipsOf(tensors.dst);
  std::vector<const DeviceTensor*> reads;
  if (op.fill() == nullptr) reads.push_back(&tensors.src);
  if (tensors.index) reads.push_back(&*tensors.index);
  if (tensors.base) reads.push_back(&*tensors.base);
  for (const DeviceTensor* read : reads) {
    const std::vector<int> from = ChipsOf(*read);
    if (from.empty()) continue;
    std::vector<int> both = from;
    both.insert(both.end(), to.begin(), to.end());
    if (SoleOwner(both, session_, device_chips)) continue;  // one rank holds all it reads and writes
    const bool plain = op.fill() == nullptr && op.index() == nullptr && read == &tensors.src;
    if (plain && from.size() == 1 && to.size() == 1) {
      exchanged.push_back({read, from[0], to[0]});
      continue;
    }
    const bool table = read == &tensors.src || (tensors.base && read == &*tensors.base);
    if (table && op.indirect() != nullptr && RowsStayOnTheirChips(*op.indirect(), *read, tensors.dst)) continue;
    if (plain && from == to && !tensors.dst.is_view()) {
      ASSIGN_OR_RETURN(TransferReport plan, PlanTransfer(*read, tensors.dst.placement()));
      if (!plan.crosses_chips) continue;  // each chip's part moves on its own chip
    }
    exchanged.push_back({read, -1, -1});
  }
  return exchanged;
}

absl::Status MpiBackend::Exchange(const std::vector<Read>& reads, const std::string& what,
                                  std::optional<HostTensor>& received) {
  for (const Read& read : reads) {
    if (read.from_chip >= 0) {
      ASSIGN_OR_RETURN(received, ExchangeChipMove(*read.tensor, read.from_chip, read.to_chip, what));
    } else {
      RETURN_IF_ERROR(GatherChips(*read.tensor, what));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<HostTensor>> MpiBackend::ExchangeChipMove(const DeviceTensor& src, int from_chip,
                                                                        int to_chip, const std::string& what) {
  const int chips = src.device().chips();
  const int sender = OwnerOf(from_chip, session_.ranks(), chips);
  const int receiver = OwnerOf(to_chip, session_.ranks(), chips);
  if (sender == receiver) return std::nullopt;
  const Mapping layout = OwnChipLayout(src);
  if (session_.rank() == sender) {
    ASSIGN_OR_RETURN(HostTensor image, ReadImage(src, layout));
    session_.Post(receiver, image.bytes());
    return std::nullopt;
  }
  if (session_.rank() != receiver) return std::nullopt;
  std::vector<uint8_t> bytes(static_cast<size_t>(StorageBytes(src.dtype(), layout.size())));
  RETURN_IF_ERROR(session_.ReceiveInto(sender, absl::MakeSpan(bytes), what));
  return HostTensor::FromBytes(src.dtype(), layout, std::move(bytes));
}

absl::Status MpiBackend::GatherChips(const DeviceTensor& tensor, const std::string& what) {
  if (session_.ranks() == 1 || !inner_.executes()) return absl::OkStatus();
  const std::vector<int> chips = ChipsOf(tensor);
  const int device_chips = tensor.device().chips();
  if (chips.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(int64_t block, ChipBlockBytes(tensor));
  ASSIGN_OR_RETURN(HostTensor image, ReadImage(tensor, tensor.full_mapping()));
  std::vector<uint8_t> bytes = image.bytes();
  const bool whole = tensor.levels().front().size() <= 1;
  std::vector<Outgoing> sends;
  std::vector<Incoming> receives;
  for (int chip : chips) {
    const int owner = OwnerOf(chip, session_.ranks(), device_chips);
    const int64_t offset = whole ? 0 : chip * block;
    if (owner == session_.rank()) {
      for (int rank = 0; rank < session_.ranks(); ++rank) {
        if (rank != owner) sends.push_back({rank, absl::MakeConstSpan(bytes).subspan(offset, block)});
      }
    } else {
      receives.push_back({owner, absl::MakeSpan(bytes).subspan(offset, block)});
    }
  }
  if (sends.empty() && receives.empty()) return absl::OkStatus();
  RETURN_IF_ERROR(session_.ExchangeBlocks(sends, receives, absl::StrCat(what, ", ", tensor.ToString())));
  if (receives.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(HostTensor gathered, HostTensor::FromBytes(tensor.dtype(), tensor.full_mapping(), std::move(bytes)));
  const KeepEveryChip into_other_ranks_chips;
  return WriteIntoWindow(gathered, tensor);
}

}  // namespace visa::mpi
