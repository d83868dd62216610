// HostTensor: construction (values, bits, random, iota), element access and printing.
#include "runtime/host_tensor.h"

#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dsl/status_macros.h"
#include "runtime/relayout.h"
#include "runtime/scalar_convert.h"

namespace visa {
namespace {

std::string Str(DType dtype) { return std::string(Name(dtype)); }

absl::Status CheckHostType(DType dtype, const Mapping& mapping) {
  // The staging types i5 / i9 are allowed: a stream image between the Fetch Adapter and the
  // Contraction Engine holds them (PackedStorage keeps them sign-extended); device memory and
  // DMA refuse them (tensor_rules.cc).
  (void)dtype;
  return mapping.status();
}

absl::Status CheckCount(const Mapping& mapping, size_t count, absl::string_view what) {
  if (static_cast<int64_t>(count) == mapping.size()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "HostTensor: the mapping `", mapping.ToString(), "` has ", mapping.size(),
      " positions (padding included), got ", count, " ", what));
}

// Exact integers of a float type: 2^(mantissa bits + 1).
int64_t FloatIotaPeriod(DType dtype) {
  switch (dtype) {
    case DType::kBF16: return 256;
    case DType::kF16: return 2048;
    case DType::kF32: return int64_t{1} << 24;
    case DType::kF8E4M3: return 16;
    case DType::kF8E5M2: return 8;
    default: return 1;
  }
}

std::string FormatValue(double v) {
  if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 1e15) {
    return absl::StrFormat("%.0f", v);
  }
  return absl::StrFormat("%g", v);
}

}  // namespace

absl::StatusOr<HostTensor> HostTensor::Zeros(DType dtype, const Mapping& mapping) {
  RETURN_IF_ERROR(CheckHostType(dtype, mapping));
  ASSIGN_OR_RETURN(PackedStorage storage, PackedStorage::Create(dtype, mapping.size()));
  return HostTensor(mapping, std::move(storage));
}

absl::StatusOr<HostTensor> HostTensor::FromValues(DType dtype, const Mapping& mapping,
                                                  absl::Span<const double> values) {
  ASSIGN_OR_RETURN(HostTensor t, Zeros(dtype, mapping));
  RETURN_IF_ERROR(CheckCount(mapping, values.size(), "values"));
  for (size_t i = 0; i < values.size(); ++i) RETURN_IF_ERROR(t.Set(static_cast<int64_t>(i), values[i]));
  return t;
}

absl::StatusOr<HostTensor> HostTensor::FromBits(DType dtype, const Mapping& mapping,
                                                absl::Span<const uint32_t> bits) {
  ASSIGN_OR_RETURN(HostTensor t, Zeros(dtype, mapping));
  RETURN_IF_ERROR(CheckCount(mapping, bits.size(), "bit patterns"));
  RETURN_IF_ERROR(t.storage_.SetAllBits(std::span<const uint32_t>(bits.data(), bits.size())));
  return t;
}

absl::StatusOr<HostTensor> HostTensor::FromBytes(DType dtype, const Mapping& mapping,
                                                 std::vector<uint8_t> bytes) {
  RETURN_IF_ERROR(CheckHostType(dtype, mapping));
  ASSIGN_OR_RETURN(PackedStorage storage,
                   PackedStorage::FromBytes(dtype, mapping.size(), std::move(bytes)));
  return HostTensor(mapping, std::move(storage));
}

absl::StatusOr<HostTensor> HostTensor::Random(DType dtype, const Mapping& mapping, uint64_t seed) {
  ASSIGN_OR_RETURN(HostTensor t, Zeros(dtype, mapping));
  ASSIGN_OR_RETURN(std::vector<int64_t> live, LivePositions(mapping));
  std::mt19937_64 engine(seed);
  for (int64_t p : live) {
    const uint64_t r = engine();
    uint32_t bits = 0;
    if (IsFloat(dtype)) {
      // 53 random bits -> [0, 1) -> [-1, 1); the standard distributions differ across libraries.
      const double unit = static_cast<double>(r >> 11) * 0x1p-53;
      ASSIGN_OR_RETURN(bits, DoubleToBits(dtype, 2.0 * unit - 1.0));
    } else {
      const uint64_t range = static_cast<uint64_t>(IntMax(dtype) - IntMin(dtype)) + 1;
      bits = TruncateToBits(static_cast<int32_t>(IntMin(dtype) + static_cast<int64_t>(r % range)),
                            Bits(dtype));
    }
    RETURN_IF_ERROR(t.SetBits(p, bits));
  }
  return t;
}

absl::StatusOr<HostTensor> HostTensor::Iota(DType dtype, const Mapping& mapping) {
  ASSIGN_OR_RETURN(HostTensor t, Zeros(dtype, mapping));
  ASSIGN_OR_RETURN(std::vector<int64_t> live, LivePositions(mapping));
  for (size_t k = 0; k < live.size(); ++k) {
    const int64_t ordinal = static_cast<int64_t>(k);
    uint32_t bits = 0;
    if (IsFloat(dtype)) {
      ASSIGN_OR_RETURN(bits, DoubleToBits(dtype, static_cast<double>(ordinal % FloatIotaPeriod(dtype))));
    } else {
      bits = TruncateToBits(static_cast<int32_t>(ordinal), Bits(dtype));
    }
    RETURN_IF_ERROR(t.SetBits(live[k], bits));
  }
  return t;
}

std::vector<double> HostTensor::ToValues() const {
  std::vector<double> values(static_cast<size_t>(size()));
  for (int64_t i = 0; i < size(); ++i) values[i] = *storage_.GetDouble(i);
  return values;
}

std::vector<uint32_t> HostTensor::ToBits() const { return storage_.AllBits(); }

absl::StatusOr<double> HostTensor::Get(int64_t position) const { return storage_.GetDouble(position); }
absl::StatusOr<uint32_t> HostTensor::GetBits(int64_t position) const {
  return storage_.GetBits(position);
}

absl::StatusOr<int64_t> HostTensor::PositionOf(const Index& index) const {
  std::optional<int64_t> p = mapping_.inverse(index);
  if (!p) {
    return absl::NotFoundError(absl::StrCat("HostTensor: no position of `", mapping_.ToString(),
                                            "` holds tensor index ", index.ToString()));
  }
  return *p;
}

absl::StatusOr<double> HostTensor::Get(const Index& index) const {
  ASSIGN_OR_RETURN(int64_t p, PositionOf(index));
  return Get(p);
}

absl::StatusOr<uint32_t> HostTensor::GetBits(const Index& index) const {
  ASSIGN_OR_RETURN(int64_t p, PositionOf(index));
  return GetBits(p);
}

absl::Status HostTensor::Set(int64_t position, double value) {
  return storage_.SetDouble(position, value);
}

absl::Status HostTensor::SetBits(int64_t position, uint32_t bits) {
  return storage_.SetBits(position, bits);
}

std::string HostTensor::ToString() const {
  constexpr int64_t kHead = 8, kTail = 2;
  auto show = [&](int64_t i) {
    if (!mapping_.map(i).live()) return std::string("_");
    return FormatValue(*storage_.GetDouble(i));
  };
  std::vector<std::string> shown;
  if (size() <= kHead + kTail + 1) {
    for (int64_t i = 0; i < size(); ++i) shown.push_back(show(i));
  } else {
    for (int64_t i = 0; i < kHead; ++i) shown.push_back(show(i));
    shown.push_back("...");
    for (int64_t i = size() - kTail; i < size(); ++i) shown.push_back(show(i));
  }
  return absl::StrCat("HostTensor<", Str(dtype()), ", [", mapping_.ToString(), "]> ", size(),
                      " elements: [", absl::StrJoin(shown, ", "), "]");
}

bool HostTensor::operator==(const HostTensor& other) const {
  return dtype() == other.dtype() && mapping_ == other.mapping_ && bytes() == other.bytes();
}

}  // namespace visa
