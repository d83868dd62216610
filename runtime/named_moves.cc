// The named-level forms of Create and the moves (layouts.h), SPM moves with a Chip, and the
// DM read-back through HBM: each resolves its levels and calls the general form.
#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/dma.h"
#include "runtime/tensor.h"
#include "runtime/tensor_unit.h"

namespace visa {
namespace {

// What an HBM source's move to DM or SPM fills in: its Chip, then a new tensor's Cluster and Slice.
std::vector<Mapping> FromHbm(const HbmTensor& src) {
  std::vector<Mapping> levels = NewTensorLevels(src.device().chips());
  levels[0] = src.chip();
  return levels;
}

}  // namespace

absl::StatusOr<HbmTensor> HbmTensor::Create(Device& device, DType dtype, const HbmLayout& layout, Address address) {
  ASSIGN_OR_RETURN(std::vector<Mapping> levels, LevelsOf(layout, NewTensorLevels(device.chips()), "HbmTensor::Create"));
  return Create(device, dtype, levels[0], levels[1], address);
}

absl::StatusOr<DmTensor> DmTensor::Create(Device& device, DType dtype, const DmLayout& layout, Address address,
                                          Tier tier) {
  ASSIGN_OR_RETURN(std::vector<Mapping> levels, LevelsOf(layout, NewTensorLevels(device.chips()), "DmTensor::Create"));
  return Create(device, dtype, levels[0], levels[1], levels[2], levels[3], address, tier);
}

absl::StatusOr<TrfTensor> TrfTensor::Create(Device& device, DType dtype, const TrfLayout& layout,
                                            TrfAddress address) {
  ASSIGN_OR_RETURN(std::vector<Mapping> levels, LevelsOf(layout, NewTensorLevels(device.chips()), "TrfTensor::Create"));
  return Create(device, dtype, levels[0], levels[1], levels[2], levels[3], levels[4], address);
}

absl::StatusOr<VrfTensor> VrfTensor::Create(Device& device, DType dtype, const VrfLayout& layout, Address address) {
  ASSIGN_OR_RETURN(std::vector<Mapping> levels, LevelsOf(layout, NewTensorLevels(device.chips()), "VrfTensor::Create"));
  return Create(device, dtype, levels[0], levels[1], levels[2], levels[3], address);
}

absl::StatusOr<HbmTensor> HostTensor::to_hbm(Dma& pdma, Address address, const HbmLayout& layout) const {
  ASSIGN_OR_RETURN(std::vector<Mapping> levels, LevelsOf(layout, NewTensorLevels(pdma.device().chips()), "HostTensor::to_hbm"));
  return to_hbm(pdma, address, levels[0], levels[1]);
}

absl::StatusOr<HbmTensor> HbmTensor::to_hbm(Dma& dma, Address address, const HbmLayout& layout) const {
  ASSIGN_OR_RETURN(std::vector<Mapping> levels, LevelsOf(layout, {chip()}, "HbmTensor::to_hbm"));
  return to_hbm(dma, address, levels[0], levels[1]);
}

absl::StatusOr<DmTensor> HbmTensor::to_dm(Dma& tdma, Address address, const DmLayout& layout) const {
  ASSIGN_OR_RETURN(std::vector<Mapping> levels, LevelsOf(layout, FromHbm(*this), "HbmTensor::to_dm"));
  return to_dm(tdma, address, levels[0], levels[1], levels[2], levels[3]);
}

absl::StatusOr<DmTensor> HbmTensor::to_spm(Dma& tdma, Address address, const DmLayout& layout) const {
  ASSIGN_OR_RETURN(std::vector<Mapping> levels, LevelsOf(layout, FromHbm(*this), "HbmTensor::to_spm"));
  return to_spm(tdma, address, levels[0], levels[1], levels[2], levels[3]);
}

absl::StatusOr<DmTensor> HbmTensor::to_spm(Dma& tdma, Address address, const Mapping& chip, const Mapping& cluster,
                                           const Mapping& slice, const Mapping& element) const {
  ASSIGN_OR_RETURN(DeviceTensor t, Move(tdma, *this, Destination{Tier::kSpm, address, {chip, cluster, slice, element}}));
  return DmTensor(std::move(t));
}

absl::StatusOr<HbmTensor> DmTensor::to_hbm(Dma& tdma, Address address, const HbmLayout& layout) const {
  ASSIGN_OR_RETURN(std::vector<Mapping> levels, LevelsOf(layout, {chip()}, "DmTensor::to_hbm"));
  return to_hbm(tdma, address, levels[0], levels[1]);
}

absl::StatusOr<DmTensor> DmTensor::to_dm(Dma& tdma, Address address, const DmLayout& layout) const {
  ASSIGN_OR_RETURN(std::vector<Mapping> levels, LevelsOf(layout, {chip(), cluster(), slice()}, "DmTensor::to_dm"));
  return to_dm(tdma, address, levels[0], levels[1], levels[2], levels[3]);
}

absl::StatusOr<DmTensor> DmTensor::to_spm(Dma& tdma, Address address, const DmLayout& layout) const {
  ASSIGN_OR_RETURN(std::vector<Mapping> levels, LevelsOf(layout, {chip(), cluster(), slice()}, "DmTensor::to_spm"));
  return to_spm(tdma, address, levels[0], levels[1], levels[2], levels[3]);
}

absl::StatusOr<DmTensor> DmTensor::to_spm(Dma& tdma, Address address, const Mapping& chip, const Mapping& cluster,
                                          const Mapping& slice, const Mapping& element) const {
  ASSIGN_OR_RETURN(DeviceTensor t, Move(tdma, *this, Destination{Tier::kSpm, address, {chip, cluster, slice, element}}));
  return DmTensor(std::move(t));
}

absl::StatusOr<HostTensor> DmTensor::to_host(Context& ctx, const Mapping& element) const {
  RETURN_IF_ERROR(element.status());
  // The scratch keeps every element on its chip and in its order: its Element is the handle's
  // levels below the Chip, so the first move only drops the cluster / slice split.
  const std::vector<Mapping> levels = this->levels();
  const Mapping below_chip = Pair(std::vector<Mapping>(levels.begin() + 1, levels.end()));
  ASSIGN_OR_RETURN(HbmTensor scratch, to_hbm(ctx.tdma, Address::Any(), chip(), below_chip));
  scratch.SetName(absl::StrCat(name(), " read back"));
  absl::StatusOr<HostTensor> host = scratch.to_host(ctx.pdma, element);
  scratch.Release();
  return host;
}

}  // namespace visa
