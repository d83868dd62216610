// Transfer: stage the source, fill a staged destination through the relayout table, commit.
#include "runtime/transfer.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/device.h"
#include "runtime/relayout.h"
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

// One side's bytes in host memory: a slot of `slot_bytes` per staged spatial position, holding
// the Element positions [first, first + slot capacity) of that unit.
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

// Stages the bytes a source handle (tensor or view) can reach in every live unit.
absl::StatusOr<Staging> StageSource(const DeviceTensor& t) {
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
  s.owned.assign(p.live_prefixes.size() * s.slot_bytes, 0);
  s.data = s.owned.data();
  const int64_t start = p.address + s.first * s.bits / 8;
  for (size_t k = 0; k < p.live_prefixes.size(); ++k) {
    s.slot[p.live_prefixes[k]] = static_cast<int64_t>(k);
    absl::Span<uint8_t> bytes(s.data + k * s.slot_bytes, s.slot_bytes);
    RETURN_IF_ERROR(t.device().Read(p.tier, p.units[k], start, bytes));
  }
  return s;
}

Staging StageHost(const HostTensor& host, std::vector<uint8_t> bytes) {
  Staging s;
  s.bits = StorageBits(host.dtype());
  s.unit = Divider(host.size());
  s.slot_bytes = static_cast<int64_t>(bytes.size());
  s.slot = {0};
  s.owned = std::move(bytes);
  s.data = s.owned.data();
  return s;
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

// Copies the runs' elements from `src` into `dst`, a piece per run and unit; notes whether some
// element changes chip.
void CopyRuns(const Staging& src, Staging& dst, absl::Span<const RelayoutRun> runs, bool* crosses) {
  const bool chips = src.chip_span > 0 && dst.chip_span > 0;
  const int bytes = dst.bits / 8;  // 0 for 4-bit elements
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
      uint8_t* d = dst.data + dst.slot[to.prefix] * dst.slot_bytes;
      const uint8_t* s = src.data + src.slot[from.prefix] * src.slot_bytes;
      if (stride == 1) {
        switch (bytes) {
          case 0: CopyNibbles(d, to.element, s, from.element, n); break;
          case 1: std::memcpy(d + to.element, s + from.element, n); break;
          case 2: std::memcpy(d + to.element * 2, s + from.element * 2, n * 2); break;
          default: std::memcpy(d + to.element * 4, s + from.element * 4, n * 4); break;
        }
      } else {
        switch (bytes) {
          case 0: GatherNibbles(d, to.element, s, from.element, stride, n); break;
          case 1: Gather<1>(d + to.element, s + from.element, stride, n); break;
          case 2: Gather<2>(d + to.element * 2, s + from.element * 2, stride, n); break;
          default: Gather<4>(d + to.element * 4, s + from.element * 4, stride, n); break;
        }
      }
      if (chips && from.prefix / src.chip_span != to.prefix / dst.chip_span) *crosses = true;
      p += n;
      q += n * stride;
      left -= n;
    }
  }
}

// Fills `dst` from `src` through the relayout of the two full mappings.
absl::Status Relayout(const Mapping& dst_mapping, Staging& dst, const Mapping& src_mapping,
                      const Staging& src, TransferReport& report) {
  ASSIGN_OR_RETURN(RelayoutPlan plan, RelayoutPlan::Make(dst_mapping, src_mapping));
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

absl::Status WriteUnits(Device& device, const Placement& dst, const Staging& staged, TransferReport& report) {
  for (size_t k = 0; k < dst.live_prefixes.size(); ++k) {
    absl::Span<const uint8_t> bytes(staged.data + k * staged.slot_bytes, staged.slot_bytes);
    RETURN_IF_ERROR(device.Write(dst.tier, dst.units[k], dst.address, bytes));
  }
  report.bytes_written = static_cast<int64_t>(dst.live_prefixes.size()) * staged.slot_bytes;
  return absl::OkStatus();
}

absl::StatusOr<DeviceTensor> Commit(Device& device, Placement dst, const Staging& staged,
                                    TransferReport& report) {
  RETURN_IF_ERROR(WriteUnits(device, dst, staged, report));
  return DeviceTensor::Claim(device, std::move(dst));
}

// A destination tensor written whole by a transfer: a view keeps the bytes outside its window.
absl::Status CheckWholeTensor(const DeviceTensor& dst) {
  if (!dst.is_view()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("Transfer: the destination ", dst.ToString(),
                                                 " is a view; a transfer writes a whole tensor"));
}

// Stages the destination's current bytes: its padding keeps what memory holds (not written).
absl::StatusOr<Staging> StageDestination(Device& device, const Placement& dst) {
  Staging s;
  s.bits = StorageBits(dst.dtype);
  s.unit = Divider(dst.levels.back().size());
  s.slot_bytes = dst.unit_bytes();
  s.chip_span = dst.prefix_size / device.chips();
  s.slot.assign(dst.prefix_size, -1);
  s.owned.assign(dst.live_prefixes.size() * s.slot_bytes, 0);
  s.data = s.owned.data();
  for (size_t k = 0; k < dst.live_prefixes.size(); ++k) {
    s.slot[dst.live_prefixes[k]] = static_cast<int64_t>(k);
    absl::Span<uint8_t> bytes(s.data + k * s.slot_bytes, s.slot_bytes);
    RETURN_IF_ERROR(device.Read(dst.tier, dst.units[k], dst.address, bytes));
  }
  return s;
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
  ASSIGN_OR_RETURN(Staging to, StageDestination(device, dst));
  RETURN_IF_ERROR(Relayout(Pair(dst.levels), to, src.full_mapping(), from, local));
  RETURN_IF_ERROR(check(local));
  ASSIGN_OR_RETURN(DeviceTensor out, Commit(device, std::move(dst), to, local));
  MarkWritten(out);  // its live positions now hold data
  if (report) *report = local;
  return out;
}

absl::StatusOr<DeviceTensor> TransferToDevice(const HostTensor& src, Device& device, Placement dst,
                                              TransferCheck check, TransferReport* report) {
  RETURN_IF_ERROR(CheckSameType(src.dtype(), dst.dtype));
  TransferReport local;
  Staging from = StageHost(src, src.bytes());
  local.bytes_read = static_cast<int64_t>(from.owned.size());
  ASSIGN_OR_RETURN(Staging to, StageDestination(device, dst));
  RETURN_IF_ERROR(Relayout(Pair(dst.levels), to, src.mapping(), from, local));
  RETURN_IF_ERROR(check(local));
  ASSIGN_OR_RETURN(DeviceTensor out, Commit(device, std::move(dst), to, local));
  MarkWritten(out);  // its live positions now hold data
  if (report) *report = local;
  return out;
}

absl::StatusOr<HostTensor> TransferToHost(const DeviceTensor& src, const Mapping& layout,
                                          TransferCheck check, TransferReport* report) {
  RETURN_IF_ERROR(src.CheckReadable());
  ASSIGN_OR_RETURN(HostTensor out, HostTensor::Zeros(src.dtype(), layout));
  TransferReport local;
  ASSIGN_OR_RETURN(Staging from, StageSource(src));
  local.bytes_read = static_cast<int64_t>(from.owned.size());
  Staging to = StageHost(out, out.bytes());
  RETURN_IF_ERROR(Relayout(layout, to, src.full_mapping(), from, local));
  RETURN_IF_ERROR(check(local));
  local.bytes_written = static_cast<int64_t>(to.owned.size());
  if (report) *report = local;
  return HostTensor::FromBytes(src.dtype(), layout, std::move(to.owned));
}

namespace {

// A view destination: the bytes its window reaches are staged as they are (what lies between its
// live positions is kept), filled, and written back where they were read.
absl::Status TransferIntoView(const Staging& from, const Mapping& src_mapping, const DeviceTensor& dst,
                              TransferReport* report, TransferReport& local) {
  ASSIGN_OR_RETURN(Staging to, StageSource(dst));
  RETURN_IF_ERROR(Relayout(dst.full_mapping(), to, src_mapping, from, local));
  const Placement& p = dst.placement();
  const int64_t start = p.address + to.first * to.bits / 8;
  for (size_t k = 0; k < p.live_prefixes.size(); ++k) {
    absl::Span<const uint8_t> bytes(to.data + k * to.slot_bytes, to.slot_bytes);
    RETURN_IF_ERROR(dst.device().Write(p.tier, p.units[k], start, bytes));
  }
  local.bytes_written = static_cast<int64_t>(p.live_prefixes.size()) * to.slot_bytes;
  MarkWritten(dst);  // the view's live positions now hold data
  if (report) *report = local;
  return absl::OkStatus();
}

}  // namespace

absl::Status TransferInto(const DeviceTensor& src, const DeviceTensor& dst, TransferReport* report) {
  if (&src.device() != &dst.device()) {
    return absl::InvalidArgumentError("Transfer: source and destination are on different devices");
  }
  RETURN_IF_ERROR(CheckSameType(src.dtype(), dst.dtype()));
  RETURN_IF_ERROR(src.CheckReadable());
  TransferReport local;
  ASSIGN_OR_RETURN(Staging from, StageSource(src));
  local.bytes_read = static_cast<int64_t>(from.owned.size());
  if (dst.is_view()) return TransferIntoView(from, src.full_mapping(), dst, report, local);
  ASSIGN_OR_RETURN(Staging to, StageDestination(dst.device(), dst.placement()));
  RETURN_IF_ERROR(Relayout(dst.full_mapping(), to, src.full_mapping(), from, local));
  RETURN_IF_ERROR(WriteUnits(dst.device(), dst.placement(), to, local));
  MarkWritten(dst);  // its live positions now hold data
  if (report) *report = local;
  return absl::OkStatus();
}

absl::Status WriteInto(const HostTensor& src, const DeviceTensor& dst) {
  RETURN_IF_ERROR(CheckSameType(src.dtype(), dst.dtype()));
  RETURN_IF_ERROR(CheckWholeTensor(dst));
  TransferReport local;
  Staging from = StageHost(src, src.bytes());
  ASSIGN_OR_RETURN(Staging to, StageDestination(dst.device(), dst.placement()));
  RETURN_IF_ERROR(Relayout(dst.full_mapping(), to, src.mapping(), from, local));
  RETURN_IF_ERROR(WriteUnits(dst.device(), dst.placement(), to, local));
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
      for (int64_t i = 0; i < r.length && !report.crosses_chips; ++i) {
        report.crosses_chips = (r.src + i * r.src_stride) / src_unit / src_chip != (r.dst + i) / dst_unit / dst_chip;
      }
    }
  }));
  if (packets != nullptr) packets->Finish();
  report.bytes_read = static_cast<int64_t>(from.live_prefixes.size()) * StorageBytes(from.dtype, last - first);
  report.bytes_written = static_cast<int64_t>(dst.live_prefixes.size()) * dst.unit_bytes();
  return report;
}

absl::StatusOr<HostTensor> ReadAs(const DeviceTensor& src, const Mapping& layout) {
  return TransferToHost(src, layout, NoCheck);
}

absl::StatusOr<DeviceTensor> WriteAs(const HostTensor& src, Device& device, Placement dst) {
  return TransferToDevice(src, device, std::move(dst), NoCheck);
}

}  // namespace visa
