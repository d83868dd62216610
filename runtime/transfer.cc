// Transfer: plan the move once per pair of layouts, then copy runs of bytes: straight between
// device memory and the host side when the runs are long and contiguous, else through a staged
// copy of the units (gathers, transposes in tiles).
#include "runtime/transfer.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/chip_crossing.h"
#include "runtime/device.h"
#include "runtime/host_read_hook.h"
#include "runtime/relayout.h"
#include "runtime/window_write.h"
#include "runtime/uninitialized_reads.h"

namespace visa {
namespace {

// Division by a fixed positive divisor, by shifting when it is a power of two (the usual case:
// unit sizes of hardware-shaped mappings), since it runs once per copied run.
class Divider {
 public:
  explicit Divider(int64_t d = 1) : d_(d), shift_(-1) {
    if (d > 0 && (d & (d - 1)) == 0) shift_ = __builtin_ctzll(static_cast<uint64_t>(d));
  }
  int64_t Div(int64_t x) const { return shift_ >= 0 ? x >> shift_ : x / d_; }
  int64_t value() const { return d_; }

 private:
  int64_t d_;
  int shift_;
};

// One side of a transfer: a slot of `slot_bytes` per spatial position, holding the Element
// positions [first, first + slot capacity) of that unit. The slots are either in host memory
// (`data`: a staged copy, or a host image read in place) or, for a side read or written in place,
// in device memory at `address` of unit `units[slot]`.
struct Staging {
  int bits = 8;                  // storage bits of one element (4, 8, 16 or 32)
  Divider unit;                  // positions per spatial position in the full mapping
  int64_t window_offset = 0;     // Element position of the handle's position 0
  int64_t first = 0;             // first staged Element position (even for 4-bit types)
  int64_t slot_bytes = 0;
  int64_t chip_span = 0;         // spatial positions per chip (0: a host image, no chips)
  std::vector<int64_t> slot;     // spatial position -> slot, -1 when not staged
  std::vector<uint8_t> owned;
  uint8_t* data = nullptr;
  // Device sides: where slot k's byte 0 lives.
  Tier tier = Tier::kHost;
  const std::vector<int64_t>* units = nullptr;
  int64_t address = 0;
};

// Where full position p lives: its spatial position, its element index inside the slot, and how
// many positions remain in that unit.
struct Located {
  int64_t prefix, element, left;
};

inline Located Locate(const Staging& s, int64_t p) {
  const int64_t prefix = s.unit.Div(p);
  const int64_t within = p - prefix * s.unit.value();
  return {prefix, within + s.window_offset - s.first, s.unit.value() - within};
}

// The Element positions a handle can reach, clipped to the tensor: [first, last).
absl::Status Window(const DeviceTensor& t, int64_t* first, int64_t* last) {
  const int64_t base = t.base_element().size();
  const int bits = StorageBits(t.dtype());
  ASSIGN_OR_RETURN(int64_t extent, LiveExtent(t.element()));
  *first = std::min(t.window_offset(), base);
  if (bits < 8) *first -= *first % (8 / bits);  // start on a whole byte
  *last = std::max(*first, std::min(t.window_offset() + extent, base));
  return absl::OkStatus();
}

// A handle's window in every live unit, not yet read.
absl::StatusOr<Staging> DescribeSource(const DeviceTensor& t) {
  const Placement& p = t.placement();
  Staging s;
  s.bits = StorageBits(p.dtype);
  s.unit = Divider(t.element().size());
  s.window_offset = t.window_offset();
  int64_t last = 0;
  RETURN_IF_ERROR(Window(t, &s.first, &last));
  s.slot_bytes = StorageBytes(p.dtype, last - s.first);
  s.chip_span = p.prefix_size / t.device().chips();
  s.slot.assign(p.prefix_size, -1);
  for (size_t k = 0; k < p.live_prefixes.size(); ++k) s.slot[p.live_prefixes[k]] = static_cast<int64_t>(k);
  s.tier = p.tier;
  s.units = &p.units;
  s.address = p.address + s.first * s.bits / 8;
  return s;
}

// Copies every slot's device bytes into host memory.
absl::Status ReadSlots(const Device& device, Staging& s) {
  s.owned.resize(s.units->size() * s.slot_bytes);
  s.data = s.owned.data();
  for (size_t k = 0; k < s.units->size(); ++k) {
    absl::Span<uint8_t> bytes(s.data + k * s.slot_bytes, s.slot_bytes);
    RETURN_IF_ERROR(device.Read(s.tier, (*s.units)[k], s.address, bytes));
  }
  return absl::OkStatus();
}

// Stages the bytes a source handle (tensor or view) can reach in every live unit.
absl::StatusOr<Staging> StageSource(const DeviceTensor& t) {
  ASSIGN_OR_RETURN(Staging s, DescribeSource(t));
  RETURN_IF_ERROR(ReadSlots(t.device(), s));
  return s;
}

// A host image as one slot; read in place (a source is never written).
Staging ViewHost(const HostTensor& host) {
  Staging s;
  s.bits = StorageBits(host.dtype());
  s.unit = Divider(host.size());
  s.slot_bytes = static_cast<int64_t>(host.bytes().size());
  s.slot = {0};
  s.data = const_cast<uint8_t*>(host.bytes().data());
  return s;
}

// A new host image of `size` positions, zero (its padding stays zero).
Staging NewHostImage(DType dtype, int64_t size) {
  Staging s;
  s.bits = StorageBits(dtype);
  s.unit = Divider(size);
  s.owned.assign(StorageBytes(dtype, size), 0);
  s.slot_bytes = static_cast<int64_t>(s.owned.size());
  s.slot = {0};
  s.data = s.owned.data();
  return s;
}

// A whole destination tensor's units, not yet read.
Staging DescribeDestination(Device& device, const Placement& dst) {
  Staging s;
  s.bits = StorageBits(dst.dtype);
  s.unit = Divider(dst.levels.back().size());
  s.slot_bytes = dst.unit_bytes();
  s.chip_span = dst.prefix_size / device.chips();
  s.slot.assign(dst.prefix_size, -1);
  for (size_t k = 0; k < dst.live_prefixes.size(); ++k) s.slot[dst.live_prefixes[k]] = static_cast<int64_t>(k);
  s.tier = dst.tier;
  s.units = &dst.units;
  s.address = dst.address;
  return s;
}

// One run clipped to a source unit and a destination unit: n elements from source slot element
// `src_element` (every `stride`-th) to destination slot elements [dst_element, dst_element + n).
struct Piece {
  int64_t dst_slot, dst_element, src_slot, src_element, n, stride;
  bool crosses;  // the element changes chip
};

template <typename Fn>
void ForEachPiece(const Staging& src, const Staging& dst, absl::Span<const RelayoutRun> runs, Fn&& fn) {
  const bool chips = src.chip_span > 0 && dst.chip_span > 0;
  for (const RelayoutRun& run : runs) {
    const int64_t stride = run.src_stride;
    int64_t p = run.dst, q = run.src, left = run.length;
    while (left > 0) {
      const Located to = Locate(dst, p);
      const Located from = Locate(src, q);
      // Elements whose source stays in this source unit.
      const int64_t within = src.unit.value() - from.left;  // q's place inside its unit
      const int64_t in_unit = stride == 0  ? left
                              : stride > 0 ? (from.left + stride - 1) / stride
                                           : within / -stride + 1;
      const int64_t n = std::min({left, to.left, in_unit});
      fn(Piece{dst.slot[to.prefix], to.element, src.slot[from.prefix], from.element, n, stride,
               chips && from.prefix / src.chip_span != to.prefix / dst.chip_span});
      p += n;
      q += n * stride;
      left -= n;
    }
  }
}

// Copies `n` 4-bit elements (even index in the low nibble).
void CopyNibbles(uint8_t* d, int64_t de, const uint8_t* s, int64_t se, int64_t n) {
  if ((de & 1) == 0 && (se & 1) == 0) {
    std::memcpy(d + de / 2, s + se / 2, static_cast<size_t>(n / 2));
    de += n & ~int64_t{1};
    se += n & ~int64_t{1};
    n &= 1;
  }
  for (int64_t i = 0; i < n; ++i, ++de, ++se) {
    const uint8_t nibble = (s[se >> 1] >> ((se & 1) * 4)) & 0xf;
    uint8_t& byte = d[de >> 1];
    byte = (de & 1) ? static_cast<uint8_t>((byte & 0x0f) | (nibble << 4))
                    : static_cast<uint8_t>((byte & 0xf0) | nibble);
  }
}

// Copies `n` elements of `kBytes` bytes read `stride` elements apart.
template <int kBytes>
void Gather(uint8_t* d, const uint8_t* s, int64_t stride, int64_t n) {
  for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * kBytes, s + i * stride * kBytes, kBytes);
}

void GatherNibbles(uint8_t* d, int64_t de, const uint8_t* s, int64_t se, int64_t stride, int64_t n) {
  for (int64_t i = 0; i < n; ++i, ++de, se += stride) CopyNibbles(d, de, s, se, 1);
}

// `rows` gathers of `n` elements each: row r writes d + r * n and reads s + r * step, element i
// `stride` elements after element i - 1 (a transpose when step is small and stride large). Done
// a 32 x 32 tile at a time through a small buffer: the tile's source lines are read whole into it
// and its destination lines written whole from it, so power-of-two strides (which map every line
// of a tile to one cache set) cost no misses inside the tile.
template <int kBytes>
void TransposeTiles(uint8_t* d, const uint8_t* s, int64_t rows, int64_t n, int64_t step, int64_t stride) {
  constexpr int64_t kTile = 32;
  uint8_t tile[kTile * kTile * kBytes];
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const int64_t nr = std::min(kTile, rows - r0);
    for (int64_t i0 = 0; i0 < n; i0 += kTile) {
      const int64_t ni = std::min(kTile, n - i0);
      // tile[i][r] = source element (r0 + r, i0 + i): a line of the source per i when step is 1.
      for (int64_t i = 0; i < ni; ++i) {
        const uint8_t* from = s + ((i0 + i) * stride + r0 * step) * kBytes;
        uint8_t* to = tile + i * kTile * kBytes;
        if (step == 1) {
          std::memcpy(to, from, static_cast<size_t>(nr * kBytes));
        } else {
          for (int64_t r = 0; r < nr; ++r) std::memcpy(to + r * kBytes, from + r * step * kBytes, kBytes);
        }
      }
      for (int64_t r = 0; r < nr; ++r) {
        uint8_t* to = d + ((r0 + r) * n + i0) * kBytes;
        for (int64_t i = 0; i < ni; ++i) std::memcpy(to + i * kBytes, tile + (i * kTile + r) * kBytes, kBytes);
      }
    }
  }
}

void CopyPiece(const Staging& src, Staging& dst, const Piece& piece) {
  uint8_t* d = dst.data + piece.dst_slot * dst.slot_bytes;
  const uint8_t* s = src.data + piece.src_slot * src.slot_bytes;
  const int64_t de = piece.dst_element, se = piece.src_element, n = piece.n, stride = piece.stride;
  if (stride == 1) {
    switch (dst.bits) {
      case 4: CopyNibbles(d, de, s, se, n); break;
      default: std::memcpy(d + de * (dst.bits / 8), s + se * (dst.bits / 8), n * (dst.bits / 8)); break;
    }
    return;
  }
  switch (dst.bits) {
    case 4: GatherNibbles(d, de, s, se, stride, n); break;
    case 8: Gather<1>(d + de, s + se, stride, n); break;
    case 16: Gather<2>(d + de * 2, s + se * 2, stride, n); break;
    default: Gather<4>(d + de * 4, s + se * 4, stride, n); break;
  }
}

// Pieces [0, rows) of `pieces` from `at` on read as one tile when they are gathers of one length
// and stride between the same slots, each written after the last and read a fixed step after it.
int64_t TileRows(const std::vector<Piece>& pieces, size_t at) {
  const Piece& a = pieces[at];
  if (a.stride == 0 || a.stride == 1 || at + 1 >= pieces.size()) return 1;
  const int64_t step = pieces[at + 1].src_element - a.src_element;
  size_t k = at + 1;
  for (; k < pieces.size(); ++k) {
    const Piece& b = pieces[k];
    const Piece& prev = pieces[k - 1];
    if (b.n != a.n || b.stride != a.stride || b.dst_slot != a.dst_slot || b.src_slot != a.src_slot ||
        b.dst_element != prev.dst_element + a.n || b.src_element != prev.src_element + step) {
      break;
    }
  }
  return static_cast<int64_t>(k - at);
}

bool CopyTile(const Staging& src, Staging& dst, const std::vector<Piece>& pieces, size_t at, int64_t rows) {
  const Piece& a = pieces[at];
  const int64_t step = pieces[at + 1].src_element - a.src_element;
  uint8_t* d = dst.data + a.dst_slot * dst.slot_bytes;
  const uint8_t* s = src.data + a.src_slot * src.slot_bytes;
  switch (dst.bits) {
    case 8: TransposeTiles<1>(d + a.dst_element, s + a.src_element, rows, a.n, step, a.stride); return true;
    case 16: TransposeTiles<2>(d + a.dst_element * 2, s + a.src_element * 2, rows, a.n, step, a.stride); return true;
    case 32: TransposeTiles<4>(d + a.dst_element * 4, s + a.src_element * 4, rows, a.n, step, a.stride); return true;
    default: return false;  // 4-bit: element by element
  }
}

// Copies the runs' elements from `src` into `dst` (both in host memory); notes whether some
// element changes chip.
void CopyRuns(const Staging& src, Staging& dst, absl::Span<const RelayoutRun> runs, bool* crosses) {
  std::vector<Piece> pieces;
  ForEachPiece(src, dst, runs, [&](const Piece& piece) {
    *crosses = *crosses || piece.crosses;
    pieces.push_back(piece);
  });
  for (size_t k = 0; k < pieces.size();) {
    const int64_t rows = TileRows(pieces, k);
    if (rows >= 4 && CopyTile(src, dst, pieces, k, rows)) {
      k += static_cast<size_t>(rows);
      continue;
    }
    CopyPiece(src, dst, pieces[k]);
    ++k;
  }
}

// A device side read or written in place, a byte range per piece: what a move of stride-1 runs
// needs when its pieces are long (short ones cost a device call each; those are staged).
bool InPlace(const Staging& src, const Staging& dst, const RelayoutRuns& plan) {
  if (!plan.contiguous) return false;
  constexpr int64_t kMinPieceBytes = 256;
  int64_t pieces = 0;
  bool whole_bytes = true;
  ForEachPiece(src, dst, plan.runs, [&](const Piece& piece) {
    ++pieces;
    if (dst.bits == 4) {
      // Slots start on whole bytes (`first` is even), so even elements start bytes.
      whole_bytes = whole_bytes && piece.n % 2 == 0 && piece.dst_element % 2 == 0 && piece.src_element % 2 == 0;
    }
  });
  return whole_bytes && pieces * kMinPieceBytes * 8 <= plan.elements * dst.bits;
}

bool AnyCrosses(const Staging& src, const Staging& dst, const RelayoutRuns& plan) {
  bool crosses = false;
  if (src.chip_span > 0 && dst.chip_span > 0) {
    ForEachPiece(src, dst, plan.runs, [&](const Piece& piece) { crosses = crosses || piece.crosses; });
  }
  return crosses;
}

// Writes the pieces from host-side `src` straight into the device units of `dst`.
absl::Status WritePieces(Device& device, const Staging& src, const Staging& dst, const RelayoutRuns& plan) {
  const int64_t bytes = dst.bits / 8;
  absl::Status status;
  ForEachPiece(src, dst, plan.runs, [&](const Piece& piece) {
    if (!status.ok()) return;
    const uint8_t* s = src.data + piece.src_slot * src.slot_bytes;
    if (bytes == 0) {  // 4-bit, whole bytes (InPlace)
      status = device.Write(dst.tier, (*dst.units)[piece.dst_slot], dst.address + piece.dst_element / 2,
                            absl::MakeConstSpan(s + piece.src_element / 2, piece.n / 2));
    } else {
      status = device.Write(dst.tier, (*dst.units)[piece.dst_slot], dst.address + piece.dst_element * bytes,
                            absl::MakeConstSpan(s + piece.src_element * bytes, piece.n * bytes));
    }
  });
  return status;
}

// Reads the pieces from the device units of `src` straight into host-side `dst`.
absl::Status ReadPieces(const Device& device, const Staging& src, Staging& dst, const RelayoutRuns& plan) {
  const int64_t bytes = dst.bits / 8;
  absl::Status status;
  ForEachPiece(src, dst, plan.runs, [&](const Piece& piece) {
    if (!status.ok()) return;
    uint8_t* d = dst.data + piece.dst_slot * dst.slot_bytes;
    if (bytes == 0) {
      status = device.Read(src.tier, (*src.units)[piece.src_slot], src.address + piece.src_element / 2,
                           absl::MakeSpan(d + piece.dst_element / 2, piece.n / 2));
    } else {
      status = device.Read(src.tier, (*src.units)[piece.src_slot], src.address + piece.src_element * bytes,
                           absl::MakeSpan(d + piece.dst_element * bytes, piece.n * bytes));
    }
  });
  return status;
}

// Fills `dst` (in host memory) from `src` (in host memory) through a streamed relayout.
absl::Status StreamedRelayout(const RelayoutPlan& plan, Staging& dst, const Staging& src, TransferReport& report) {
  bool crosses = false;
  int64_t elements = 0;
  RETURN_IF_ERROR(plan.Run([&](absl::Span<const RelayoutRun> runs) {
    for (const RelayoutRun& run : runs) elements += run.length;
    CopyRuns(src, dst, runs, &crosses);
  }));
  report.crosses_chips = crosses;
  report.elements = elements;
  return absl::OkStatus();
}

// The table of a move, checked (kept per pair of mappings), or nullptr when it is too long to keep.
absl::StatusOr<std::shared_ptr<const RelayoutRuns>> PlanOf(const Mapping& dst, const Mapping& src) {
  ASSIGN_OR_RETURN(RelayoutPlan plan, RelayoutPlan::Make(dst, src));
  return plan.Runs();
}

// Writes host-side `from` into the device units `to` describes (a whole tensor, or a view's window
// when `to` came from DescribeSource): a byte range per piece when the move's pieces are long and
// contiguous, else through a staged copy of the units (what lies between live positions is read
// first, so it keeps what memory holds). `check` runs before anything is written.
absl::Status WriteThrough(Device& device, const Mapping& dst_mapping, Staging& to, const Mapping& src_mapping,
                          const Staging& from, TransferCheck check, TransferReport& report) {
  ASSIGN_OR_RETURN(std::shared_ptr<const RelayoutRuns> plan, PlanOf(dst_mapping, src_mapping));
  if (plan != nullptr && InPlace(from, to, *plan)) {
    report.elements = plan->elements;
    report.crosses_chips = AnyCrosses(from, to, *plan);
    RETURN_IF_ERROR(check(report));
    report.bytes_written = static_cast<int64_t>(to.units->size()) * to.slot_bytes;  // as a staged write
    return WritePieces(device, from, to, *plan);
  }
  const bool covers_units =
      plan != nullptr && plan->elements * to.bits == static_cast<int64_t>(to.units->size()) * to.slot_bytes * 8;
  if (covers_units) {  // every byte is written: what memory holds need not be read first
    to.owned.resize(to.units->size() * to.slot_bytes);
    to.data = to.owned.data();
  } else {
    RETURN_IF_ERROR(ReadSlots(device, to));
  }
  if (plan != nullptr) {
    bool crosses = false;
    CopyRuns(from, to, plan->runs, &crosses);
    report.elements = plan->elements;
    report.crosses_chips = crosses;
  } else {
    ASSIGN_OR_RETURN(RelayoutPlan streamed, RelayoutPlan::Make(dst_mapping, src_mapping));
    RETURN_IF_ERROR(StreamedRelayout(streamed, to, from, report));
  }
  RETURN_IF_ERROR(check(report));
  for (size_t k = 0; k < to.units->size(); ++k) {
    absl::Span<const uint8_t> bytes(to.data + k * to.slot_bytes, to.slot_bytes);
    RETURN_IF_ERROR(device.Write(to.tier, (*to.units)[k], to.address, bytes));
  }
  report.bytes_written = static_cast<int64_t>(to.units->size()) * to.slot_bytes;
  return absl::OkStatus();
}

// A destination tensor written whole by a transfer: a view keeps the bytes outside its window.
absl::Status CheckWholeTensor(const DeviceTensor& dst) {
  if (!dst.is_view()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("Transfer: the destination ", dst.ToString(),
                                                 " is a view; a transfer writes a whole tensor"));
}

absl::Status CheckSameType(DType src, DType dst) {
  if (src == dst) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Tensor Function: a move keeps the element type; the source is ", std::string(Name(src)),
      " and the destination ", std::string(Name(dst))));
}

absl::Status NoCheck(const TransferReport&) { return absl::OkStatus(); }

}  // namespace

absl::StatusOr<DeviceTensor> TransferToDevice(const DeviceTensor& src, Device& device,
                                              Placement dst, TransferCheck check,
                                              TransferReport* report) {
  if (&src.device() != &device) {
    return absl::InvalidArgumentError("Transfer: source and destination are on different devices");
  }
  RETURN_IF_ERROR(CheckSameType(src.dtype(), dst.dtype));
  RETURN_IF_ERROR(src.CheckReadable());
  TransferReport local;
  ASSIGN_OR_RETURN(Staging from, StageSource(src));
  local.bytes_read = static_cast<int64_t>(from.owned.size());
  Staging to = DescribeDestination(device, dst);
  RETURN_IF_ERROR(WriteThrough(device, Pair(dst.levels), to, src.full_mapping(), from, check, local));
  DeviceTensor out = DeviceTensor::Claim(device, std::move(dst));
  MarkWritten(out);  // its live positions now hold data
  if (report) *report = local;
  return out;
}

absl::StatusOr<DeviceTensor> TransferToDevice(const HostTensor& src, Device& device, Placement dst,
                                              TransferCheck check, TransferReport* report) {
  RETURN_IF_ERROR(CheckSameType(src.dtype(), dst.dtype));
  TransferReport local;
  const Staging from = ViewHost(src);
  local.bytes_read = from.slot_bytes;
  Staging to = DescribeDestination(device, dst);
  RETURN_IF_ERROR(WriteThrough(device, Pair(dst.levels), to, src.mapping(), from, check, local));
  DeviceTensor out = DeviceTensor::Claim(device, std::move(dst));
  MarkWritten(out);  // its live positions now hold data
  if (report) *report = local;
  return out;
}

absl::StatusOr<HostTensor> TransferToHost(const DeviceTensor& src, const Mapping& layout,
                                          TransferCheck check, TransferReport* report) {
  RETURN_IF_ERROR(src.CheckReadable());
  RETURN_IF_ERROR(layout.status());
  TransferReport local;
  ASSIGN_OR_RETURN(Staging from, DescribeSource(src));
  local.bytes_read = static_cast<int64_t>(from.units->size()) * from.slot_bytes;
  Staging to = NewHostImage(src.dtype(), layout.size());
  ASSIGN_OR_RETURN(std::shared_ptr<const RelayoutRuns> plan, PlanOf(layout, src.full_mapping()));
  if (plan != nullptr && InPlace(from, to, *plan)) {
    // Long contiguous runs: read each straight into the image.
    local.elements = plan->elements;
    RETURN_IF_ERROR(check(local));
    RETURN_IF_ERROR(ReadPieces(src.device(), from, to, *plan));
  } else {
    RETURN_IF_ERROR(ReadSlots(src.device(), from));
    if (plan != nullptr) {
      bool crosses = false;
      CopyRuns(from, to, plan->runs, &crosses);
      local.elements = plan->elements;
    } else {
      ASSIGN_OR_RETURN(RelayoutPlan streamed, RelayoutPlan::Make(layout, src.full_mapping()));
      RETURN_IF_ERROR(StreamedRelayout(streamed, to, from, local));
    }
    RETURN_IF_ERROR(check(local));
  }
  local.bytes_written = static_cast<int64_t>(to.owned.size());
  if (report) *report = local;
  return HostTensor::FromBytes(src.dtype(), layout, std::move(to.owned));
}

absl::Status TransferInto(const DeviceTensor& src, const DeviceTensor& dst, TransferReport* report) {
  if (&src.device() != &dst.device()) {
    return absl::InvalidArgumentError("Transfer: source and destination are on different devices");
  }
  RETURN_IF_ERROR(CheckSameType(src.dtype(), dst.dtype()));
  RETURN_IF_ERROR(src.CheckReadable());
  TransferReport local;
  ASSIGN_OR_RETURN(Staging from, StageSource(src));  // a move may overwrite its own source
  local.bytes_read = static_cast<int64_t>(from.owned.size());
  // A view's window is written where it was read: what lies between its live positions is kept.
  Staging to;
  if (dst.is_view()) {
    ASSIGN_OR_RETURN(to, DescribeSource(dst));
  } else {
    to = DescribeDestination(dst.device(), dst.placement());
  }
  RETURN_IF_ERROR(WriteThrough(dst.device(), dst.full_mapping(), to, src.full_mapping(), from, NoCheck, local));
  MarkWritten(dst);  // its live positions now hold data
  if (report) *report = local;
  return absl::OkStatus();
}

absl::Status WriteInto(const HostTensor& src, const DeviceTensor& dst) {
  RETURN_IF_ERROR(dst.CheckDeviceAlive());  // a handle outliving its Device must not reach the freed memory
  RETURN_IF_ERROR(CheckSameType(src.dtype(), dst.dtype()));
  RETURN_IF_ERROR(CheckWholeTensor(dst));
  TransferReport local;
  const Staging from = ViewHost(src);
  Staging to = DescribeDestination(dst.device(), dst.placement());
  RETURN_IF_ERROR(WriteThrough(dst.device(), dst.full_mapping(), to, src.mapping(), from, NoCheck, local));
  MarkWritten(dst);  // its live positions now hold data
  return absl::OkStatus();
}

absl::Status WriteIntoWindow(const HostTensor& src, const DeviceTensor& dst) {
  if (!dst.is_view()) return WriteInto(src, dst);
  RETURN_IF_ERROR(CheckSameType(src.dtype(), dst.dtype()));
  TransferReport local;
  const Staging from = ViewHost(src);
  ASSIGN_OR_RETURN(Staging to, DescribeSource(dst));  // written where it was read, as TransferInto
  RETURN_IF_ERROR(WriteThrough(dst.device(), dst.full_mapping(), to, src.mapping(), from, NoCheck, local));
  MarkWritten(dst);  // its live positions now hold data
  return absl::OkStatus();
}

absl::StatusOr<TransferReport> PlanTransfer(const DeviceTensor& src, const Placement& dst,
                                            DmaPacketScan* packets) {
  RETURN_IF_ERROR(CheckSameType(src.dtype(), dst.dtype));
  const Mapping dst_full = Pair(dst.levels);
  ASSIGN_OR_RETURN(RelayoutPlan plan, RelayoutPlan::Make(dst_full, src.full_mapping()));
  const Placement& from = src.placement();
  int64_t first = 0, last = 0;
  RETURN_IF_ERROR(Window(src, &first, &last));
  const int chips = src.device().chips();
  const int64_t src_unit = src.element().size(), dst_unit = dst.levels.back().size();
  const int64_t src_chip = from.prefix_size / chips, dst_chip = dst.prefix_size / chips;
  TransferReport report;
  RETURN_IF_ERROR(plan.Run([&](absl::Span<const RelayoutRun> runs) {
    for (const RelayoutRun& r : runs) {
      report.elements += r.length;
      if (packets != nullptr) packets->Add(r);
      if (chips == 1 || report.crosses_chips) continue;
      report.crosses_chips = RunCrossesChips(r, src_unit * src_chip, dst_unit * dst_chip);
    }
  }));
  if (packets != nullptr) packets->Finish();
  report.bytes_read = static_cast<int64_t>(from.live_prefixes.size()) * StorageBytes(from.dtype, last - first);
  report.bytes_written = static_cast<int64_t>(dst.live_prefixes.size()) * dst.unit_bytes();
  return report;
}

absl::StatusOr<HostTensor> ReadAs(const DeviceTensor& src, const Mapping& layout) {
  RETURN_IF_ERROR(src.CheckDeviceAlive());
  RETURN_IF_ERROR(CheckAllWritten(src, "a host read-back (ReadAs)"));
  RETURN_IF_ERROR(BeforeHostRead(src));  // under mpirun: other ranks' chips gathered
  return TransferToHost(src, layout, NoCheck);
}

absl::StatusOr<HostTensor> ReadImage(const DeviceTensor& src, const Mapping& layout) {
  return TransferToHost(src, layout, NoCheck);
}

absl::StatusOr<DeviceTensor> WriteAs(const HostTensor& src, Device& device, Placement dst) {
  return TransferToDevice(src, device, std::move(dst), NoCheck);
}

}  // namespace visa
