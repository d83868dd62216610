// The API misuse probe of issue 30, kept: every public entry point a kernel author calls, misused
// the ways a careless user misuses it (wrong tier, wrong dtype, shape mismatch, out-of-range
// address or index, unwritten input, destroyed device, released tensor, a launch over a live
// tensor...), on the interpreter and on the JIT. Each call must return a non-OK Status naming its
// rule, and none may crash the process. The cases are a table; the count of calls per area is
// printed and checked, so a table that silently shrank shows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/chip_shuffle.h"
#include "runtime/indirect_dma.h"
#include "runtime/launch.h"
#include "runtime/tensor_unit.h"
#include "runtime/tier.h"
#include "runtime/transfer.h"
#include "tests/common/dm_input.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// One misuse's world: a fresh device (4 chips, for chip shuffles), a context on the backend under
// test, and the tensors most cases start from.
class Probe {
 public:
  Probe(Backend& backend, int chips)
      : chips_(chips),
        device_(std::make_unique<Device>(chips)),
        backend_(&backend),
        ctx_(std::make_unique<Context>(*device_, backend)) {}

  Mapping m(const std::string& text) const { return s_.m(text); }
  // A tensor on chip 0 only.
  Mapping chip() const { return chips_ == 1 ? m("1") : m(absl::StrCat("1 # ", chips_)); }
  Device& device() { return *device_; }
  Backend& backend() { return *backend_; }
  Context& ctx() { return *ctx_; }

  HostTensor Host(DType dtype, const std::string& element, uint64_t seed = 1) const {
    return *HostTensor::Random(dtype, m(element), seed);
  }
  // A written HBM tensor on chip 0.
  HbmTensor Hbm(DType dtype, const std::string& element, int64_t address) {
    return *Host(dtype, element).to_hbm(ctx_->pdma, address, chip(), m(element));
  }
  // A written DM tensor on chip 0, cluster 0, slice 0.
  DmTensor Dm(DType dtype, const std::string& element, int64_t address) {
    return test::WriteDm(*device_, Host(dtype, element), m(element), address);
  }
  absl::StatusOr<DmTensor> UnwrittenDm(DType dtype, const std::string& element, int64_t address) {
    return DmTensor::Create(*device_, dtype, chip(), m("1 # 2"), m("1 # 256"), m(element), address);
  }
  absl::StatusOr<HbmTensor> UnwrittenHbm(DType dtype, const std::string& element, int64_t address) {
    return HbmTensor::Create(*device_, dtype, chip(), m(element), address);
  }
  // i32 (or another dtype) row numbers for a gather or scatter, in HBM.
  HbmTensor Index(DType dtype, const std::vector<double>& rows) {
    return *HostTensor::FromValues(dtype, m("K"), rows)->to_hbm(ctx_->pdma, 1 << 20, chip(), m("K"));
  }
  Destination Out(const std::string& element = "K, V") const {
    return Destination{Tier::kDm, Address(1 << 16), {chip(), m("1 # 2"), m("1 # 256"), m(element)}};
  }
  // A [A] copy through the main context: fetch, collect, commit at `address`.
  absl::StatusOr<DmTensor> Copy(const DmTensor& in, DType dtype, int64_t address) {
    return ctx_->main.begin(in.view()).fetch(dtype, m("1"), m("A")).collect(m("1"), m("A")).commit(m("A"), address);
  }
  // A stream entered into the Vector Engine from a written [T] [A] tensor.
  Stream Entered(DType dtype) {
    DmTensor in = Dm(dtype, "T, E", 0);
    return ctx_->main.begin(in.view()).fetch(dtype, m("T"), m("E")).collect(m("T"), m("E")).vector_init()
        .vector_intra_slice_branch(BranchMode::Unconditional());
  }
  absl::Status Committed(Stream s) { return std::move(s).vector_final().commit(m("T, E"), 4096).status(); }
  VrfTensor Vrf(DType dtype, const std::string& time, const std::string& element, int64_t address) {
    DmTensor source = Dm(dtype, element, 16384);
    return *ctx_->sub.begin(source.view()).fetch(dtype, m(time), m("E")).collect(m(time), m("E")).to_vrf(m(element),
                                                                                                              address);
  }
  // HBM [A] -> DM -> committed copy -> HBM at 0x10000: a program with one input and one output.
  KernelOf CopyKernel() const {
    return [this](Context& ctx, const std::vector<DeviceTensor>& in) -> absl::StatusOr<std::vector<DeviceTensor>> {
      ASSIGN_OR_RETURN(HbmTensor hbm, HbmTensor::From(in.at(0)));
      ASSIGN_OR_RETURN(DmTensor dm, hbm.to_dm(ctx.tdma, 0, m("1 # 2"), m("1 # 256"), m("A")));
      ASSIGN_OR_RETURN(DmTensor out,
                       ctx.main.begin(dm).fetch(DType::kI8, m("1"), m("A")).collect(m("1"), m("A")).commit(m("A"), 0x1000));
      ASSIGN_OR_RETURN(HbmTensor back, out.to_hbm(ctx.tdma, 0x10000, m("A")));
      return std::vector<DeviceTensor>{back};
    };
  }
  // The device goes away; the handles made on it stay.
  void DestroyDevice() {
    ctx_.reset();
    device_.reset();
    device_ = std::make_unique<Device>(chips_);
    ctx_ = std::make_unique<Context>(*device_, *backend_);
  }

 private:
  MappingScope s_{*Axes::Parse("A = 32, B = 16, T = 2, H = 4, W = 6, V = 16, K = 5, E = 8")};
  int chips_;
  std::unique_ptr<Device> device_;
  Backend* backend_;
  std::unique_ptr<Context> ctx_;
};

struct MisuseCase {
  std::string area;  // the entry point's family, for the counts
  std::string name;  // what the case misuses
  std::function<absl::Status(Probe&)> call;
  std::string rule;  // what the Status must name
  int chips = 1;     // the device's chips (4 for a chip shuffle)
};

std::vector<MisuseCase> AllCases();

// ---- Placement and tiles -------------------------------------------------------------------------

void AddPlacementCases(std::vector<MisuseCase>& cases) {
  for (int64_t address : {int64_t{-1}, int64_t{-8}, kMax, kMax - 7, kMax - 31, kDmBytesPerSlice,
                          kDmBytesPerSlice - 16, int64_t{1} << 40}) {
    cases.push_back({"placement", absl::StrCat("DmTensorAt", address),
                     [address](Probe& p) { return p.UnwrittenDm(DType::kI8, "A", address).status(); }, "Capacity"});
  }
  for (int64_t address : {int64_t{-1}, kMax, kMax - 31, kHbmBytesPerChip, kHbmBytesPerChip - 8}) {
    cases.push_back({"placement", absl::StrCat("HbmTensorAt", address),
                     [address](Probe& p) { return p.UnwrittenHbm(DType::kI8, "A", address).status(); }, "Capacity"});
  }
  cases.push_back({"placement", "SpmTensorPastSpm",
                   [](Probe& p) {
                     return DmTensor::Create(p.device(), DType::kI32, p.chip(), p.m("1 # 2"), p.m("1 # 256"),
                                             p.m("A"), kSpmBytesPerSlice - 8, Tier::kSpm)
                         .status();
                   },
                   "Capacity"});
  cases.push_back({"placement", "DmTensorOverALiveOne",
                   [](Probe& p) {
                     DmTensor live = p.Dm(DType::kI8, "A", 0);
                     live.SetName("live");
                     p.Dm(DType::kI8, "A", 16);  // placed and written over the live tensor's upper half
                     return ReadAs(live, p.m("A")).status();
                   },
                   "Address Collision"});
  cases.push_back({"placement", "HbmTensorOverALiveOne",
                   [](Probe& p) {
                     HbmTensor live = p.Hbm(DType::kI8, "A", 0);
                     p.Hbm(DType::kI8, "A", 8);
                     return ReadAs(live, p.m("A")).status();
                   },
                   "Address Collision"});
  for (auto [len, start] : {std::pair<int64_t, int64_t>{kMax, 1}, {1, kMax}, {kMax, kMax}, {33, 0}, {1, 32},
                            {0, 0}, {-1, 0}, {2, -1}}) {
    cases.push_back({"tile", absl::StrCat("DmTile", len, "At", start),
                     [len, start](Probe& p) { return p.Dm(DType::kI8, "A", 0).tile(p.m("A"), len, start).status(); },
                     "tile"});
    cases.push_back({"tile", absl::StrCat("HbmTile", len, "At", start),
                     [len, start](Probe& p) { return p.Hbm(DType::kI8, "A", 0).tile(p.m("A"), len, start).status(); },
                     "tile"});
  }
  cases.push_back({"tile", "DmTileOfAnAxisItDoesNotHold",
                   [](Probe& p) { return p.Dm(DType::kI8, "A", 0).tile(p.m("B"), 1, 0).status(); }, "tile"});
  cases.push_back({"tile", "HbmTileOfAnAxisItDoesNotHold",
                   [](Probe& p) { return p.Hbm(DType::kI8, "A", 0).tile(p.m("B"), 1, 0).status(); }, "tile"});
}

// ---- Tiers and handles ---------------------------------------------------------------------------

void AddTierCases(std::vector<MisuseCase>& cases) {
  cases.push_back({"tier", "DmTensorOfAnHbmTensor",
                   [](Probe& p) { return DmTensor::From(p.Hbm(DType::kI8, "A", 0)).status(); }, "Tensor Tier"});
  cases.push_back({"tier", "TrfTensorOfAnHbmTensor",
                   [](Probe& p) { return TrfTensor::From(p.Hbm(DType::kI8, "A", 0)).status(); }, "Tensor Tier"});
  cases.push_back({"tier", "VrfTensorOfAnHbmTensor",
                   [](Probe& p) { return VrfTensor::From(p.Hbm(DType::kI8, "A", 0)).status(); }, "Tensor Tier"});
  cases.push_back({"tier", "HbmTensorOfADmTensor",
                   [](Probe& p) { return HbmTensor::From(p.Dm(DType::kI8, "A", 0)).status(); }, "Tensor Tier"});
  cases.push_back({"tier", "TrfTensorOfADmTensor",
                   [](Probe& p) { return TrfTensor::From(p.Dm(DType::kI8, "A", 0)).status(); }, "Tensor Tier"});
  cases.push_back({"tier", "VrfTensorOfADmTensor",
                   [](Probe& p) { return VrfTensor::From(p.Dm(DType::kI8, "A", 0)).status(); }, "Tensor Tier"});
  cases.push_back({"tier", "GatherOnThePcieDma",
                   [](Probe& p) {
                     DmTensor table = p.Dm(DType::kI8, "W, V", 0);
                     return Gather(p.ctx().pdma, table, p.Index(DType::kI32, {0, 1, 2, 3, 4}), "W", p.Out()).status();
                   },
                   "DMA Context"});
  cases.push_back({"tier", "MemsetOnTheMainContext",
                   [](Probe& p) { return p.ctx().main.memset(p.Dm(DType::kI8, "A", 0).view(), 1); },
                   "Generate Mode runs on the sub context only"});
  cases.push_back({"tier", "MemsetOfSpm",
                   [](Probe& p) {
                     absl::StatusOr<DmTensor> spm = DmTensor::Create(p.device(), DType::kI8, p.chip(), p.m("1 # 2"),
                                                                     p.m("1 # 256"), p.m("A"), 0, Tier::kSpm);
                     if (!spm.ok()) return spm.status();
                     return p.ctx().sub.memset(*spm, 0);
                   },
                   "Generate Mode writes DM"});
}

// ---- A handle after its Device is destroyed, and a released one ----------------------------------

void AddLifetimeCases(std::vector<MisuseCase>& cases) {
  using HbmUse = std::function<absl::Status(Probe&, const HbmTensor&)>;
  const std::vector<std::pair<std::string, HbmUse>> hbm_uses = {
      {"ToHost", [](Probe& p, const HbmTensor& t) { return t.to_host(p.ctx().pdma, p.m("A")).status(); }},
      {"ToHbm", [](Probe& p, const HbmTensor& t) { return t.to_hbm(p.ctx().tdma, 0x1000, p.m("A")).status(); }},
      {"ToDm",
       [](Probe& p, const HbmTensor& t) {
         return t.to_dm(p.ctx().tdma, 0, p.m("1 # 2"), p.m("1 # 256"), p.m("A")).status();
       }},
      {"ReadAs", [](Probe& p, const HbmTensor& t) { return ReadAs(t, p.m("A")).status(); }},
      {"WriteInto", [](Probe& p, const HbmTensor& t) { return WriteInto(p.Host(DType::kI8, "A"), t); }},
      {"CheckReadable", [](Probe&, const HbmTensor& t) { return t.CheckReadable(); }},
      {"CheckDeviceAlive", [](Probe&, const HbmTensor& t) { return t.CheckDeviceAlive(); }},
      {"DmTensorFrom", [](Probe&, const HbmTensor& t) { return DmTensor::From(t).status(); }},
      {"TransferToHost", [](Probe& p, const HbmTensor& t) { 
         return TransferToHost(t, p.m("A"), [](const TransferReport&) { return absl::OkStatus(); }).status();
       }},
  };
  for (const auto& [use_name, use] : hbm_uses) {
    cases.push_back({"lifetime", absl::StrCat("HbmAfterDeviceDestroyed", use_name),
                     [use](Probe& p) {
                       HbmTensor orphan = p.Hbm(DType::kI8, "A", 0x100);
                       p.DestroyDevice();
                       return use(p, orphan);
                     },
                     "Tensor Lifetime"});
  }
  using DmUse = std::function<absl::Status(Probe&, const DmTensor&)>;
  const std::vector<std::pair<std::string, DmUse>> dm_uses = {
      {"ToHbm", [](Probe& p, const DmTensor& t) { return t.to_hbm(p.ctx().tdma, 0x1000, p.m("A")).status(); }},
      {"ToHostCtx", [](Probe& p, const DmTensor& t) { return t.to_host(p.ctx(), p.m("A")).status(); }},
      {"ReadAs", [](Probe& p, const DmTensor& t) { return ReadAs(t, p.m("A")).status(); }},
      {"Fetch", [](Probe& p, const DmTensor& t) { return p.Copy(t, DType::kI8, 0x1000).status(); }},
      {"Memset", [](Probe& p, const DmTensor& t) { return p.ctx().sub.memset(t.view(), 1); }},
      {"Tile", [](Probe&, const DmTensor& t) { return t.tile(t.element(), 1, 0).status().ok() ? t.CheckReadable() : absl::OkStatus(); }},
      {"Gather",
       [](Probe& p, const DmTensor& t) {
         return Gather(p.ctx().tdma, t, p.Index(DType::kI32, {0, 1, 2, 3, 4}), "A", p.Out("K")).status();
       }},
  };
  // Whether a context on a new device refuses the orphan as a tensor of another device or as one
  // whose device is gone depends on where the allocator put the new Device (at the old one's
  // address in the normal build, elsewhere under ASan): either is the Status of its rule.
  for (const auto& [use_name, use] : dm_uses) {
    cases.push_back({"lifetime", absl::StrCat("DmAfterDeviceDestroyed", use_name),
                     [use](Probe& p) {
                       DmTensor orphan = p.Dm(DType::kI8, "A", 0x100);
                       p.DestroyDevice();
                       return use(p, orphan);
                     },
                     "Tensor Lifetime|on another device than the context|bound to another device"});
  }
  for (const auto& [use_name, use] : hbm_uses) {
    if (use_name == "WriteInto" || use_name == "CheckDeviceAlive" || use_name == "DmTensorFrom") continue;
    cases.push_back({"lifetime", absl::StrCat("HbmAfterRelease", use_name),
                     [use](Probe& p) {
                       HbmTensor released = p.Hbm(DType::kI8, "A", 0x100);
                       released.Release();
                       return use(p, released);
                     },
                     "Released tensor"});
  }
}

// ---- Moves: shapes, dtypes, unwritten data -------------------------------------------------------

void AddMoveCases(std::vector<MisuseCase>& cases) {
  cases.push_back({"move", "HostToHbmWithAnotherShape",
                   [](Probe& p) {
                     return p.Host(DType::kI8, "A").to_hbm(p.ctx().pdma, 0, p.chip(), p.m("B")).status();
                   },
                   "Tensor Function"});
  cases.push_back({"move", "HbmToDmWithAnotherShape",
                   [](Probe& p) {
                     return p.Hbm(DType::kI8, "A", 0).to_dm(p.ctx().tdma, 0, p.m("1 # 2"), p.m("1 # 256"), p.m("B")).status();
                   },
                   "Tensor Function"});
  cases.push_back({"move", "DmToHbmWithAnotherShape",
                   [](Probe& p) { return p.Dm(DType::kI8, "A", 0).to_hbm(p.ctx().tdma, 0x1000, p.m("B")).status(); },
                   "Tensor Function"});
  cases.push_back({"move", "HbmToHostWithAnotherShape",
                   [](Probe& p) { return p.Hbm(DType::kI8, "A", 0).to_host(p.ctx().pdma, p.m("B")).status(); },
                   "Tensor Function"});
  cases.push_back({"move", "WriteIntoAnotherShape",
                   [](Probe& p) { return WriteInto(p.Host(DType::kI8, "B"), p.Hbm(DType::kI8, "A", 0)); },
                   "Tensor Function"});
  cases.push_back({"move", "WriteIntoAnotherDType",
                   [](Probe& p) { return WriteInto(p.Host(DType::kI32, "A"), p.Hbm(DType::kI8, "A", 0)); },
                   "Tensor Function: a move keeps the element type"});
  cases.push_back({"move", "HostToDmOnTheTensorDma",
                   [](Probe& p) { return p.Host(DType::kI8, "A").to_hbm(p.ctx().tdma, 0, p.chip(), p.m("A")).status(); },
                   "DMA Context"});
  cases.push_back({"move", "HbmToHostOnTheTensorDma",
                   [](Probe& p) { return p.Hbm(DType::kI8, "A", 0).to_host(p.ctx().tdma, p.m("A")).status(); },
                   "DMA Context"});
  cases.push_back({"move", "HbmToDmOnThePcieDma",
                   [](Probe& p) {
                     return p.Hbm(DType::kI8, "A", 0).to_dm(p.ctx().pdma, 0, p.m("1 # 2"), p.m("1 # 256"), p.m("A")).status();
                   },
                   "DMA Context"});
  // A move over a live tensor is allowed; the live tensor then reads as a collision, never as the new data.
  cases.push_back({"move", "HbmToDmOverALiveTensorThenReadIt",
                   [](Probe& p) -> absl::Status {
                     DmTensor live = p.Dm(DType::kI8, "A", 0);
                     RETURN_IF_ERROR(
                         p.Hbm(DType::kI8, "A", 0).to_dm(p.ctx().tdma, 8, p.m("1 # 2"), p.m("1 # 256"), p.m("A")).status());
                     return p.Copy(live, DType::kI8, 0x1000).status();
                   },
                   "Address Collision"});
  cases.push_back({"move", "HbmToDmPastDm",
                   [](Probe& p) {
                     return p.Hbm(DType::kI8, "A", 0)
                         .to_dm(p.ctx().tdma, kDmBytesPerSlice - 8, p.m("1 # 2"), p.m("1 # 256"), p.m("A"))
                         .status();
                   },
                   "Capacity"});
  cases.push_back({"move", "HbmToHbmAtANegativeAddress",
                   [](Probe& p) { return p.Hbm(DType::kI8, "A", 0).to_hbm(p.ctx().tdma, -64, p.m("A")).status(); },
                   "Capacity"});
  // Never-written memory (item 2): the interpreter and the JIT both refuse to read it.
  cases.push_back({"unwritten", "FetchOfUnwrittenDm",
                   [](Probe& p) { return p.Copy(*p.UnwrittenDm(DType::kI8, "A", 0x100), DType::kI8, 0x1000).status(); },
                   "Uninitialized Read"});
  cases.push_back({"unwritten", "DmaOfUnwrittenHbm",
                   [](Probe& p) { return p.UnwrittenHbm(DType::kF32, "A", 0x4000)->to_hbm(p.ctx().tdma, 0x8000, p.m("A")).status(); },
                   "Uninitialized Read"});
  cases.push_back({"unwritten", "DmaOfUnwrittenHbmToDm",
                   [](Probe& p) {
                     return p.UnwrittenHbm(DType::kI8, "A", 0x4000)
                         ->to_dm(p.ctx().tdma, 0, p.m("1 # 2"), p.m("1 # 256"), p.m("A"))
                         .status();
                   },
                   "Uninitialized Read"});
  cases.push_back({"unwritten", "DmaOfUnwrittenDm",
                   [](Probe& p) { return p.UnwrittenDm(DType::kI8, "A", 0x100)->to_hbm(p.ctx().tdma, 0x8000, p.m("A")).status(); },
                   "Uninitialized Read"});
  cases.push_back({"unwritten", "ToHostOfUnwrittenHbm",
                   [](Probe& p) { return p.UnwrittenHbm(DType::kI8, "A", 0x4000)->to_host(p.ctx().pdma, p.m("A")).status(); },
                   "Uninitialized Read"});
  cases.push_back({"unwritten", "DmToHostCtxOfUnwrittenDm",
                   [](Probe& p) { return p.UnwrittenDm(DType::kI8, "A", 0x100)->to_host(p.ctx(), p.m("A")).status(); },
                   "Uninitialized Read"});
  cases.push_back({"unwritten", "ReadAsOfUnwrittenHbm",
                   [](Probe& p) { return ReadAs(*p.UnwrittenHbm(DType::kI8, "A", 0x4000), p.m("A")).status(); },
                   "Uninitialized Read"});
  cases.push_back({"unwritten", "ReadAsOfUnwrittenDm",
                   [](Probe& p) { return ReadAs(*p.UnwrittenDm(DType::kI8, "A", 0x100), p.m("A")).status(); },
                   "Uninitialized Read"});
  cases.push_back({"unwritten", "GatherWithAnUnwrittenIndex",
                   [](Probe& p) {
                     DmTensor table = p.Dm(DType::kI8, "W, V", 0);
                     absl::StatusOr<HbmTensor> index = p.UnwrittenHbm(DType::kI32, "K", 1 << 20);
                     return Gather(p.ctx().tdma, table, *index, "W", p.Out()).status();
                   },
                   "Uninitialized Read"});
  cases.push_back({"unwritten", "GatherOfAnUnwrittenTable",
                   [](Probe& p) {
                     absl::StatusOr<DmTensor> table = p.UnwrittenDm(DType::kI8, "W, V", 0);
                     return Gather(p.ctx().tdma, *table, p.Index(DType::kI32, {0, 1, 2, 3, 4}), "W", p.Out()).status();
                   },
                   "Uninitialized Read"});
  cases.push_back({"unwritten", "ChipShuffleOfUnwrittenHbm",
                   [](Probe& p) {
                     absl::StatusOr<HbmTensor> in =
                         HbmTensor::Create(p.device(), DType::kI8, p.m("H"), p.m("B"), 0);
                     return ChipShuffle(p.ctx().tdma, *in, {1, 2, 3, 0}, 0x8000).status();
                   },
                   "Uninitialized Read", 4});
  cases.push_back({"unwritten", "VrfLoadOfUnwrittenDm",
                   [](Probe& p) {
                     absl::StatusOr<DmTensor> in = p.UnwrittenDm(DType::kI32, "T, E", 16384);
                     return p.ctx().sub.begin(in->view()).fetch(DType::kI32, p.m("T"), p.m("E")).collect(p.m("T"), p.m("E"))
                         .to_vrf(p.m("T, E"), 0).status();
                   },
                   "Uninitialized Read"});
}

// ---- Gather, scatter, memset, chip shuffle -------------------------------------------------------

void AddIndirectCases(std::vector<MisuseCase>& cases) {
  for (double row : {6.0, -1.0, 1e9, -2147483648.0, 2147483647.0, 100.0}) {
    cases.push_back({"indirect", absl::StrCat("GatherRow", row),
                     [row](Probe& p) {
                       DmTensor table = p.Dm(DType::kI8, "W, V", 0);
                       return Gather(p.ctx().tdma, table, p.Index(DType::kI32, {0, 1, row, 2, 3}), "W", p.Out()).status();
                     },
                     "Indirect Access"});
    cases.push_back({"indirect", absl::StrCat("ScatterRow", row),
                     [row](Probe& p) {
                       DmTensor table = p.Dm(DType::kI8, "W, V", 0);
                       HbmTensor rows = p.Hbm(DType::kI8, "K, V", 1 << 21);
                       return Scatter(p.ctx().tdma, rows, p.Index(DType::kI32, {0, 1, row, 2, 3}), table, "W",
                                      p.Out("W, V"))
                           .status();
                     },
                     "Indirect Access"});
  }
  for (DType dtype : {DType::kI8, DType::kI16, DType::kF32, DType::kBF16}) {
    cases.push_back({"indirect", absl::StrCat("GatherIndexOf", Name(dtype)),
                     [dtype](Probe& p) {
                       DmTensor table = p.Dm(DType::kI8, "W, V", 0);
                       return Gather(p.ctx().tdma, table, p.Index(dtype, {0, 1, 2, 3, 4}), "W", p.Out()).status();
                     },
                     "i32 row numbers"});
  }
  cases.push_back({"indirect", "GatherOverANoAxis",
                   [](Probe& p) {
                     DmTensor table = p.Dm(DType::kI8, "W, V", 0);
                     return Gather(p.ctx().tdma, table, p.Index(DType::kI32, {0, 1, 2, 3, 4}), "X", p.Out()).status();
                   },
                   "has no axis `X`"});
  cases.push_back({"indirect", "GatherKeepingTheRowAxis",
                   [](Probe& p) {
                     DmTensor table = p.Dm(DType::kI8, "W, V", 0);
                     return Gather(p.ctx().tdma, table, p.Index(DType::kI32, {0, 1, 2, 3, 4}), "W", p.Out("W, V")).status();
                   },
                   "Indirect Access"});
  cases.push_back({"indirect", "GatherEmptyRowAxisName",
                   [](Probe& p) {
                     DmTensor table = p.Dm(DType::kI8, "W, V", 0);
                     return Gather(p.ctx().tdma, table, p.Index(DType::kI32, {0, 1, 2, 3, 4}), "", p.Out()).status();
                   },
                   "Indirect Access"});
  cases.push_back({"indirect", "ScatterNamingARowTwice",
                   [](Probe& p) {
                     DmTensor table = p.Dm(DType::kI8, "W, V", 0);
                     HbmTensor rows = p.Hbm(DType::kI8, "K, V", 1 << 21);
                     return Scatter(p.ctx().tdma, rows, p.Index(DType::kI32, {5, 1, 3, 1, 2}), table, "W", p.Out("W, V"))
                         .status();
                   },
                   "both name row 1"});
  cases.push_back({"indirect", "ScatterRowsOfAnotherShape",
                   [](Probe& p) {
                     DmTensor table = p.Dm(DType::kI8, "W, V", 0);
                     return Scatter(p.ctx().tdma, table, p.Index(DType::kI32, {5, 1, 3, 0, 2}), table, "W", p.Out("W, V"))
                         .status();
                   },
                   "Indirect Access"});
  cases.push_back({"indirect", "ScatterRowsOfAnotherDType",
                   [](Probe& p) {
                     DmTensor table = p.Dm(DType::kI8, "W, V", 0);
                     HbmTensor rows = p.Hbm(DType::kI16, "K, V", 1 << 21);
                     return Scatter(p.ctx().tdma, rows, p.Index(DType::kI32, {5, 1, 3, 0, 2}), table, "W", p.Out("W, V"))
                         .status();
                   },
                   "Indirect Access"});
  // memset: values the dtype does not hold, views off word boundaries.
  for (double value : {300.0, -129.0, 128.0, 1e10, 0.5, -0.25, static_cast<double>(kMax)}) {
    cases.push_back({"memset", absl::StrCat("MemsetI8", value),
                     [value](Probe& p) { return p.ctx().sub.memset(p.Dm(DType::kI8, "A", 0).view(), value); },
                     "Generate Mode"});
  }
  for (double value : {8.0, -9.0, 0.5}) {
    cases.push_back({"memset", absl::StrCat("MemsetI4", value),
                     [value](Probe& p) { return p.ctx().sub.memset(p.Dm(DType::kI4, "A", 0).view(), value); },
                     "not a i4 value"});
  }
  for (double value : {1.3, 1e-40, 1e39}) {
    cases.push_back({"memset", absl::StrCat("MemsetBf16", value),
                     [value](Probe& p) { return p.ctx().sub.memset(p.Dm(DType::kBF16, "A", 0).view(), value); },
                     "bf16"});
  }
  cases.push_back({"memset", "MemsetI16Past",
                   [](Probe& p) { return p.ctx().sub.memset(p.Dm(DType::kI16, "A", 0).view(), 40000); }, "Generate Mode"});
  cases.push_back({"memset", "MemsetNaNIntoI32",
                   [](Probe& p) { return p.ctx().sub.memset(p.Dm(DType::kI32, "A", 0).view(), std::nan("")); },
                   "Generate Mode"});
  cases.push_back({"memset", "MemsetARowOffWordBoundaries",
                   [](Probe& p) {
                     DmTensor x = test::WriteDm(p.device(), p.Host(DType::kI8, "H, W"), p.m("H, W"), 0x100);
                     return p.ctx().sub.memset(*x.tile(p.m("H"), 1, 1), 1);
                   },
                   "ITOS commands write whole aligned 32-bit words"});
  // Chip shuffle: patterns that are no permutation of the 4 chips, outputs of another shape.
  const std::vector<std::vector<int64_t>> patterns = {
      {1, 1, 3, 0}, {1, 2, 3}, {1, 2, 3, 4}, {-1, 0, 1, 2}, {}, {0, 0, 0, 0}, {1, 2, 3, 0, 0}, {kMax, 0, 1, 2}};
  for (size_t i = 0; i < patterns.size(); ++i) {
    const std::vector<int64_t> pattern = patterns[i];
    cases.push_back({"chip_shuffle", absl::StrCat("HbmPattern", i),
                     [pattern](Probe& p) {
                       HbmTensor in = *p.Host(DType::kI8, "H, B").to_hbm(p.ctx().pdma, 0, p.m("H"), p.m("B"));
                       return ChipShuffle(p.ctx().tdma, in, pattern, 0x8000).status();
                     },
                     "Chip Shuffle", 4});
  }
  cases.push_back({"chip_shuffle", "IntoAnotherShape",
                   [](Probe& p) {
                     HbmTensor in = *p.Host(DType::kI8, "H, B").to_hbm(p.ctx().pdma, 0, p.m("H"), p.m("B"));
                     HbmTensor other = *HbmTensor::Create(p.device(), DType::kI8, p.m("H"), p.m("B # 32"), 0x8000);
                     return ChipShuffleInto(p.ctx().tdma, in, {1, 2, 3, 0}, other);
                   },
                   "the output must match", 4});
  cases.push_back({"chip_shuffle", "IntoAnotherDType",
                   [](Probe& p) {
                     HbmTensor in = *p.Host(DType::kI8, "H, B").to_hbm(p.ctx().pdma, 0, p.m("H"), p.m("B"));
                     HbmTensor other = *HbmTensor::Create(p.device(), DType::kI16, p.m("H"), p.m("B"), 0x9000);
                     return ChipShuffleInto(p.ctx().tdma, in, {1, 2, 3, 0}, other);
                   },
                   "the output must match", 4});
  cases.push_back({"chip_shuffle", "OfOneChip",
                   [](Probe& p) { return ChipShuffle(p.ctx().tdma, p.Hbm(DType::kI8, "B", 0), {1, 2, 3, 0}, 0x8000).status(); },
                   "Chip Shuffle", 4});
  cases.push_back({"chip_shuffle", "OutputOverTheInput",
                   [](Probe& p) {
                     HbmTensor in = *p.Host(DType::kI8, "H, B").to_hbm(p.ctx().pdma, 0, p.m("H"), p.m("B"));
                     return ChipShuffle(p.ctx().tdma, in, {1, 2, 3, 0}, 0).status();
                   },
                   "Address Collision", 4});
}

// ---- Vector Engine -------------------------------------------------------------------------------

void AddVectorCases(std::vector<MisuseCase>& cases) {
  cases.push_back({"vector", "InitTwice",
                   [](Probe& p) {
                     DmTensor in = p.Dm(DType::kI32, "T, E", 0);
                     return p.ctx().main.begin(in.view()).fetch(DType::kI32, p.m("T"), p.m("E")).collect(p.m("T"), p.m("E"))
                         .vector_init().vector_init().vector_final().commit(p.m("T, E"), 4096).status();
                   },
                   "`vector_init` enters the Vector Engine once"});
  cases.push_back({"vector", "BranchTwice",
                   [](Probe& p) {
                     return p.Committed(p.Entered(DType::kI32).vector_intra_slice_branch(BranchMode::Unconditional()));
                   },
                   "enters the intra-slice block once"});
  cases.push_back({"vector", "FinalWithoutInit",
                   [](Probe& p) {
                     DmTensor in = p.Dm(DType::kI32, "T, E", 0);
                     return p.ctx().main.begin(in.view()).fetch(DType::kI32, p.m("T"), p.m("E")).collect(p.m("T"), p.m("E"))
                         .vector_final().status();
                   },
                   "`vector_final` closes a chain that vector_init() opened"});
  cases.push_back({"vector", "AxisToggleOnAMissingAxis",
                   [](Probe& p) {
                     DmTensor in = p.Dm(DType::kI32, "T, E", 0);
                     return p.Committed(p.ctx().main.begin(in.view()).fetch(DType::kI32, p.m("T"), p.m("E"))
                                            .collect(p.m("T"), p.m("E")).vector_init()
                                            .vector_intra_slice_branch(BranchMode::AxisToggle("H")));
                   },
                   "Branch: AxisToggle toggles on axis `H`"});
  cases.push_back({"vector", "AnF32VrfOperandOnI32",
                   [](Probe& p) {
                     VrfTensor f32 = p.Vrf(DType::kF32, "T", "T, E", 0);
                     return p.Committed(p.Entered(DType::kI32).vector_fxp(FxpBinaryOp::kAddFxp, f32));
                   },
                   "VRF Input"});
  cases.push_back({"vector", "AVrfOperandOfAnotherAxis",
                   [](Probe& p) {
                     VrfTensor h = p.Vrf(DType::kI32, "H", "H, E", 2048);
                     return p.Committed(p.Entered(DType::kI32).vector_fxp(FxpBinaryOp::kAddFxp, h));
                   },
                   "VRF Input"});
  cases.push_back({"vector", "ARfSlotHoldingAConstant",
                   [](Probe& p) {
                     return p.Committed(
                         p.Entered(DType::kI32).vector_fxp(FxpBinaryOp::kAddFxp, VeBranchOperand().rf(TagGuard::All(), 3)));
                   },
                   "Operands"});
  cases.push_back({"vector", "AnImmediateHoldingTheStash",
                   [](Probe& p) {
                     return p.Committed(p.Entered(DType::kI32).vector_stash().vector_fxp(
                         FxpBinaryOp::kAddFxp, VeBranchOperand().imm(TagGuard::All(), Stash)));
                   },
                   "Operands"});
  cases.push_back({"vector", "AGuardNoIdSatisfies",
                   [](Probe& p) {
                     return p.Committed(p.Entered(DType::kF32)
                                            .vector_split(p.m("T, E / 4"), p.m("E % 4"))
                                            .vector_fp_unary(TagGuard::NotMatches({}), FpUnaryOp::kExp)
                                            .vector_concat(p.m("T"), p.m("E")));
                   },
                   "Operands"});
  cases.push_back({"vector", "AComparisonOfAnotherDType",
                   [](Probe& p) {
                     DmTensor in = p.Dm(DType::kI32, "T, E", 0);
                     return p.Committed(p.ctx().main.begin(in.view()).fetch(DType::kI32, p.m("T"), p.m("E"))
                                            .collect(p.m("T"), p.m("E")).vector_init()
                                            .vector_intra_slice_branch(BranchMode::Comparison(
                                                {InputCmp::Less(0.5f), InputCmp::True(), InputCmp::False(),
                                                 InputCmp::False()})));
                   },
                   "Branch"});
  cases.push_back({"vector", "AVrfLoadPastTheVrf",
                   [](Probe& p) {
                     DmTensor source = p.Dm(DType::kI32, "T, E", 16384);
                     return p.ctx().sub.begin(source.view()).fetch(DType::kI32, p.m("T"), p.m("E"))
                         .collect(p.m("T"), p.m("E")).to_vrf(p.m("T, E"), kVrfBytesPerSlice - 8).status();
                   },
                   "register file capacity"});
  // 32 i8 read as i32: 128 bytes a packet, four flits.
  cases.push_back({"vector", "AFetchAsI32WhosePacketIsNotOneFlit",
                   [](Probe& p) { return p.Copy(p.Dm(DType::kI8, "A", 0), DType::kI32, 0x1000).status(); },
                   "Collect output packet must be exactly 32 bytes"});
  cases.push_back({"vector", "ACommitPastDm",
                   [](Probe& p) { return p.Copy(p.Dm(DType::kI8, "A", 0), DType::kI8, kDmBytesPerSlice - 8).status(); },
                   "Capacity"});
}

// ---- Launch -------------------------------------------------------------------------------------

void AddLaunchCases(std::vector<MisuseCase>& cases) {
  cases.push_back({"launch", "AnOutputKeptAcrossTheNextLaunch",
                   [](Probe& p) -> absl::Status {
                     HbmTensor in = p.Hbm(DType::kI8, "A", 0);
                     ASSIGN_OR_RETURN(Program program, Trace(p.CopyKernel(), {in}));
                     ASSIGN_OR_RETURN(std::vector<DeviceTensor> kept, Launch(program, p.device(), p.backend(), {in}));
                     return Launch(program, p.device(), p.backend(), {in}).status();
                   },
                   "Address Collision"});
  cases.push_back({"launch", "OutputsOverALiveUserTensor",
                   [](Probe& p) -> absl::Status {
                     HbmTensor in = p.Hbm(DType::kI8, "A", 0);
                     ASSIGN_OR_RETURN(Program program, Trace(p.CopyKernel(), {in}));
                     HbmTensor user = p.Hbm(DType::kI8, "A", 0x10000);
                     user.SetName("user");
                     return Launch(program, p.device(), p.backend(), {in}).status();
                   },
                   "Address Collision"});
  cases.push_back({"launch", "AnInputPlacedButNeverWritten",
                   [](Probe& p) -> absl::Status {
                     ASSIGN_OR_RETURN(HbmTensor blank, p.UnwrittenHbm(DType::kI8, "A", 0));
                     ASSIGN_OR_RETURN(Program program, Trace(p.CopyKernel(), {blank}));
                     return Launch(program, p.device(), p.backend(), {blank}).status();
                   },
                   "Uninitialized Read"});
  cases.push_back({"launch", "TooFewInputs",
                   [](Probe& p) -> absl::Status {
                     HbmTensor in = p.Hbm(DType::kI8, "A", 0);
                     ASSIGN_OR_RETURN(Program program, Trace(p.CopyKernel(), {in}));
                     return Launch(program, p.device(), p.backend(), {}).status();
                   },
                   "Launch"});
  cases.push_back({"launch", "TooManyInputs",
                   [](Probe& p) -> absl::Status {
                     HbmTensor in = p.Hbm(DType::kI8, "A", 0);
                     ASSIGN_OR_RETURN(Program program, Trace(p.CopyKernel(), {in}));
                     return Launch(program, p.device(), p.backend(), {in, in}).status();
                   },
                   "Launch"});
  cases.push_back({"launch", "AnInputOfAnotherShape",
                   [](Probe& p) -> absl::Status {
                     HbmTensor in = p.Hbm(DType::kI8, "A", 0);
                     ASSIGN_OR_RETURN(Program program, Trace(p.CopyKernel(), {in}));
                     return Launch(program, p.device(), p.backend(), {p.Hbm(DType::kI8, "B", 0x20000)}).status();
                   },
                   "Launch"});
  cases.push_back({"launch", "AnInputOfAnotherDType",
                   [](Probe& p) -> absl::Status {
                     HbmTensor in = p.Hbm(DType::kI8, "A", 0);
                     ASSIGN_OR_RETURN(Program program, Trace(p.CopyKernel(), {in}));
                     return Launch(program, p.device(), p.backend(), {p.Hbm(DType::kI16, "A", 0x20000)}).status();
                   },
                   "Launch"});
  cases.push_back({"launch", "AnInputOfAnotherTier",
                   [](Probe& p) -> absl::Status {
                     HbmTensor in = p.Hbm(DType::kI8, "A", 0);
                     ASSIGN_OR_RETURN(Program program, Trace(p.CopyKernel(), {in}));
                     return Launch(program, p.device(), p.backend(), {p.Dm(DType::kI8, "A", 0x100)}).status();
                   },
                   "Launch"});
  cases.push_back({"launch", "AnInputOfADestroyedDevice",
                   [](Probe& p) -> absl::Status {
                     HbmTensor in = p.Hbm(DType::kI8, "A", 0);
                     ASSIGN_OR_RETURN(Program program, Trace(p.CopyKernel(), {in}));
                     p.DestroyDevice();
                     return Launch(program, p.device(), p.backend(), {in}).status();
                   },
                   "Tensor Lifetime"});
  cases.push_back({"launch", "OnADeviceOfOtherChips",
                   [](Probe& p) -> absl::Status {
                     HbmTensor in = p.Hbm(DType::kI8, "A", 0);
                     ASSIGN_OR_RETURN(Program program, Trace(p.CopyKernel(), {in}));
                     Device four(4);
                     return Launch(program, four, p.backend(), {in}).status();
                   },
                   "Launch"});
  cases.push_back({"launch", "AKernelThatFails",
                   [](Probe& p) -> absl::Status {
                     HbmTensor in = p.Hbm(DType::kI8, "A", 0);
                     KernelOf bad = [](Context&, const std::vector<DeviceTensor>& inputs)
                         -> absl::StatusOr<std::vector<DeviceTensor>> {
                       ASSIGN_OR_RETURN(DmTensor dm, DmTensor::From(inputs.at(0)));
                       return std::vector<DeviceTensor>{dm};
                     };
                     return Trace(bad, {in}).status();
                   },
                   "Tensor Tier"});
}

std::vector<MisuseCase> AllCases() {
  std::vector<MisuseCase> cases;
  AddPlacementCases(cases);
  AddTierCases(cases);
  AddLifetimeCases(cases);
  AddMoveCases(cases);
  AddIndirectCases(cases);
  AddVectorCases(cases);
  AddLaunchCases(cases);
  return cases;
}

const std::vector<MisuseCase>& Cases() {
  static const auto* cases = new std::vector<MisuseCase>(AllCases());
  return *cases;
}

enum class BackendKind { kInterpreter, kJit };

Backend& BackendOf(BackendKind kind) {
  static interp::Interpreter* interpreter = new interp::Interpreter();
  static jit::JitBackend* jit = jit::JitBackend::Create({.threads = 2})->release();
  return kind == BackendKind::kJit ? static_cast<Backend&>(*jit) : *interpreter;
}

// The calls made, per area and backend: the count test checks that they all ran.
std::map<std::string, int>& CallsByArea() {
  static auto* calls = new std::map<std::string, int>();
  return *calls;
}

class ApiMisuseProbeTest : public ::testing::TestWithParam<std::tuple<size_t, BackendKind>> {};

TEST_P(ApiMisuseProbeTest, ReturnsAStatusNamingItsRule) {
  const auto [index, kind] = GetParam();
  const MisuseCase& c = Cases()[index];
  Probe probe(BackendOf(kind), c.chips);
  const absl::Status status = c.call(probe);
  ++CallsByArea()[c.area];
  ASSERT_FALSE(status.ok()) << c.name << " was accepted";
  // A rule may have alternatives ("A|B"): either names the misuse.
  std::vector<::testing::Matcher<std::string>> rules;
  for (absl::string_view rule : absl::StrSplit(c.rule, '|')) rules.push_back(HasSubstr(std::string(rule)));
  EXPECT_THAT(std::string(status.message()), ::testing::AnyOfArray(rules)) << c.name << ": " << status;
}

std::string CaseName(const ::testing::TestParamInfo<std::tuple<size_t, BackendKind>>& info) {
  std::string name = absl::StrCat(Cases()[std::get<0>(info.param)].name,
                                  std::get<1>(info.param) == BackendKind::kJit ? "_Jit" : "_Interpreter");
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return absl::StrCat(name, "_", std::get<0>(info.param));
}

std::vector<size_t> CaseIndices() {
  std::vector<size_t> indices(Cases().size());
  for (size_t i = 0; i < indices.size(); ++i) indices[i] = i;
  return indices;
}

INSTANTIATE_TEST_SUITE_P(Probe, ApiMisuseProbeTest,
                         ::testing::Combine(::testing::ValuesIn(CaseIndices()),
                                            ::testing::Values(BackendKind::kInterpreter, BackendKind::kJit)),
                         CaseName);

// The table's size (the calls per area, printed). That each of them ran is checked after all tests
// by EveryCaseRan below.
TEST(ApiMisuseProbeCountTest, EveryCaseRanOnBothBackends) {
  std::map<std::string, int> table;
  for (const MisuseCase& c : Cases()) table[c.area] += 2;
  int total = 0;
  for (const auto& [area, calls] : table) {
    std::cout << "api misuse probe: " << area << ": " << calls << " calls\n";
    total += calls;
  }
  std::cout << "api misuse probe: " << total << " calls on the interpreter and the JIT\n";
  EXPECT_GE(total, 300);
}

// After every test: when the whole probe ran (no --gtest_filter), every case ran on both backends.
class EveryCaseRan : public ::testing::Environment {
 public:
  void TearDown() override {
    if (::testing::GTEST_FLAG(filter) != "*") return;
    std::map<std::string, int> table;
    for (const MisuseCase& c : Cases()) table[c.area] += 2;
    for (const auto& [area, calls] : table) EXPECT_EQ(CallsByArea()[area], calls) << area;
  }
};
const auto* const kEveryCaseRan = ::testing::AddGlobalTestEnvironment(new EveryCaseRan);

}  // namespace
}  // namespace visa
