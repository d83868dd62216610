// InPlace: the padded full mapping over a dense device memory.
#include "jit/in_place.h"

#include <algorithm>
#include <vector>

#include "runtime/device.h"
#include "runtime/kept_chips.h"

namespace visa::jit {
namespace {

bool SameMemory(Tier a, Tier b) {
  const auto block = [](Tier t) { return t == Tier::kSpm ? Tier::kDm : t; };
  return block(a) == block(b);
}

}  // namespace

std::optional<Mapping> InPlaceLayout(const DeviceTensor& tensor) {
  const Placement& placement = tensor.placement();
  const int64_t stride = Device::UnitStride(placement.tier);
  const int bits = StorageBits(tensor.dtype());
  if (stride == 0 || (bits == 4 && tensor.window_offset() % 2 != 0)) return std::nullopt;
  if (placement.tier == Tier::kHbm && !KeepsHbmOfEveryChip()) return std::nullopt;
  std::vector<Mapping> levels(placement.levels.begin(), placement.levels.end() - 1);
  if (placement.tier == Tier::kTrf) levels.back() = levels.back().pad(kTrfRows);
  levels.push_back(tensor.element().pad(stride * 8 / bits));
  Mapping layout = Pair(levels);
  if (!layout.ok()) return std::nullopt;
  return layout;
}

namespace {

int64_t OffsetBytes(const DeviceTensor& tensor) {
  return tensor.placement().address + tensor.window_offset() * StorageBits(tensor.dtype()) / 8;
}

}  // namespace

int64_t InPlacePositions(const DeviceTensor& tensor) {
  const Placement& p = tensor.placement();
  const int64_t end = (p.UnitOf(p.prefix_size - 1) + 1) * Device::UnitStride(p.tier);
  return (end - OffsetBytes(tensor)) * 8 / StorageBits(tensor.dtype());
}

void NoteInPlaceWrites(const DeviceTensor& tensor) {
  const Placement& p = tensor.placement();
  if (p.tier != Tier::kHbm) return;
  for (int64_t unit : p.units) tensor.device().NoteInPlaceWrite(p.tier, unit, p.range().begin, p.range().end);
}

std::optional<InPlace> InPlaceOf(const DeviceTensor& tensor) {
  std::optional<Mapping> layout = InPlaceLayout(tensor);
  if (!layout) return std::nullopt;
  uint8_t* first = tensor.device().UnitData(tensor.placement().tier, 0);
  if (first == nullptr) return std::nullopt;
  NoteInPlaceWrites(tensor);
  InPlace in_place;
  in_place.layout = *std::move(layout);
  in_place.data = first + OffsetBytes(tensor);
  in_place.positions = InPlacePositions(tensor);
  return in_place;
}

bool InPlaceWalkStaysOnItsChips(const DeviceTensor& tensor, int64_t prefixes) {
  const Placement& p = tensor.placement();
  // The Chip level spans the device's chips (its padding included); read from the placement, not
  // the device, which a traced handle compiled ahead may have outlived.
  const int chips = static_cast<int>(p.levels.front().size());
  if (chips <= 1 || prefixes <= 0 || p.prefix_size % chips != 0) return true;
  std::vector<bool> live(static_cast<size_t>(chips), false);
  for (int64_t prefix : p.live_prefixes) live[static_cast<size_t>(p.ChipOf(prefix, chips))] = true;
  const int64_t last = p.ChipOf(std::min(prefixes, p.prefix_size) - 1, chips);
  for (int64_t chip = 0; chip <= last; ++chip) {
    if (!live[static_cast<size_t>(chip)]) return false;
  }
  return true;
}

bool MayOverlap(const DeviceTensor& a, const DeviceTensor& b) {
  const Placement& pa = a.placement();
  const Placement& pb = b.placement();
  if (&a.device() != &b.device() || !SameMemory(pa.tier, pb.tier)) return false;
  const auto start = [](const Placement& p) { return p.address + (p.tier == Tier::kSpm ? kSpmOffsetInDm : 0); };
  const int64_t a0 = start(pa), b0 = start(pb);
  if (a0 + pa.unit_bytes() <= b0 || b0 + pb.unit_bytes() <= a0) return false;
  std::vector<int64_t> ua = pa.units, ub = pb.units;
  std::sort(ua.begin(), ua.end());
  std::sort(ub.begin(), ub.end());
  std::vector<int64_t> common;
  std::set_intersection(ua.begin(), ua.end(), ub.begin(), ub.end(), std::back_inserter(common));
  return !common.empty();
}

}  // namespace visa::jit
