// The interpreter's Contraction Engine: both operands placed by tensor index in the computation
// mapping, products in the accumulator type, the pairwise spatial tree, accumulation in time order.
//
// Numeric contract (design.md, "Numeric semantics"): operands are widened exactly (i4 / i8 to
// i32, f8 / bf16 to f32) and multiplied in that type; level k of the tree combines adjacent pairs
// of level k - 1; the accumulator stores a slot's first contribution as is and combines later
// ones in time order. Computation-mapping padding contributes the operation's identity (+0 for
// add, the smallest value for max); padded Time steps contribute nothing. f32 adds round to
// nearest even and are never fused; i32 adds wrap.
#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "dsl/scalar_convert.h"
#include "dsl/status_macros.h"
#include "interp/index_move.h"
#include "interp/stages.h"
#include "runtime/scalar_convert.h"
#include "runtime/transfer.h"

namespace visa::interp {
namespace {

// The accumulator's arithmetic on raw 32-bit patterns (f32 or i32).
struct Arithmetic {
  bool is_float = true;
  ReduceOp op = ReduceOp::kAdd;

  uint32_t Identity() const {
    if (op == ReduceOp::kAdd) return 0;
    return is_float ? 0xff800000u : 0x80000000u;  // -inf, INT32_MIN
  }
  uint32_t Multiply(uint32_t a, uint32_t b) const {
    if (is_float) return std::bit_cast<uint32_t>(std::bit_cast<float>(a) * std::bit_cast<float>(b));
    return a * b;  // wraps like i32
  }
  uint32_t Combine(uint32_t a, uint32_t b) const {
    if (is_float) {
      const float x = std::bit_cast<float>(a), y = std::bit_cast<float>(b);
      if (op == ReduceOp::kMax) return y > x ? b : a;
      const float sum = x + y;
      return std::bit_cast<uint32_t>(sum);
    }
    if (op == ReduceOp::kMax) return static_cast<int32_t>(b) > static_cast<int32_t>(a) ? b : a;
    return a + b;
  }
};

// Raw bits of element `i` of a packed image (the layout of runtime/packed_storage.h).
uint32_t RawBits(const HostTensor& image, int64_t i) {
  const uint8_t* bytes = image.bytes().data();
  const uint32_t mask = Bits(image.dtype()) == 32 ? 0xffffffffu : (1u << Bits(image.dtype())) - 1;
  switch (StorageBits(image.dtype())) {
    case 4: return (i % 2 == 0 ? bytes[i / 2] : bytes[i / 2] >> 4) & 0xf;
    case 8: return bytes[i] & mask;
    case 16: {
      uint16_t v;
      std::memcpy(&v, bytes + 2 * i, 2);
      return v & mask;
    }
    default: {
      uint32_t v;
      std::memcpy(&v, bytes + 4 * i, 4);
      return v;
    }
  }
}

// The widened value of every bit pattern of `from` (Contraction stage conversions).
absl::StatusOr<std::vector<uint32_t>> WidenTable(DType from, DType to) {
  std::vector<uint32_t> table(size_t{1} << Bits(from));
  for (uint32_t bits = 0; bits < table.size(); ++bits) {
    ASSIGN_OR_RETURN(table[bits], Convert(ConversionStage::kContraction, from, to, bits));
  }
  return table;
}

std::vector<bool> LiveMask(const Mapping& mapping) {
  std::vector<bool> live(mapping.size());
  for (int64_t i = 0; i < mapping.size(); ++i) live[i] = mapping.map(i).live();
  return live;
}

}  // namespace

absl::StatusOr<HostTensor> ContractStream(const HostTensor& stream, const TrfTensor& weights,
                                          const AlignStage& align, const ContractStage& contract,
                                          const AccumulateStage& accumulate) {
  const StreamShape& comp = align.out;
  const Mapping outer = Pair({comp.chip, comp.cluster, comp.slice});
  ASSIGN_OR_RETURN(HostTensor x, MoveByIndex(stream, Pair({outer, comp.time, comp.packet}), {.allow_drop = true}));
  ASSIGN_OR_RETURN(HostTensor trf, ReadImage(weights, weights.full_mapping()));
  ASSIGN_OR_RETURN(HostTensor w, MoveByIndex(trf, comp.Full(), {.allow_drop = true}));

  const DType acc_type = contract.out.dtype;
  ASSIGN_OR_RETURN(std::vector<uint32_t> widen_x, WidenTable(x.dtype(), acc_type));
  ASSIGN_OR_RETURN(std::vector<uint32_t> widen_w, WidenTable(w.dtype(), acc_type));
  const Arithmetic math{IsFloat(acc_type), contract.op};

  const int64_t n_outer = outer.size(), rows = comp.row->size(), times = comp.time.size();
  const int64_t packet = comp.packet.size(), group = int64_t{1} << contract.depth, groups = packet / group;
  const std::vector<bool> live_outer = LiveMask(outer), live_row = LiveMask(*comp.row),
                          live_packet = LiveMask(comp.packet);
  const std::vector<int64_t> retained = RetainedTimeTable(accumulate, comp.time);
  const std::vector<int64_t> target = TreeGroupTargets(comp.packet, contract);
  const int64_t out_times = accumulate.retained_time.size(), out_packet = contract.out.packet.size();

  std::vector<uint32_t> acc(n_outer * rows * out_times * out_packet, 0);
  std::vector<bool> written(acc.size(), false);
  std::vector<uint32_t> level(group);
  for (int64_t o = 0; o < n_outer; ++o) {
    if (!live_outer[o]) continue;
    for (int64_t r = 0; r < rows; ++r) {
      if (!live_row[r]) continue;
      for (int64_t t = 0; t < times; ++t) {
        if (retained[t] < 0) continue;
        const int64_t x_base = (o * times + t) * packet, w_base = ((o * rows + r) * times + t) * packet;
        for (int64_t g = 0; g < groups; ++g) {
          for (int64_t k = 0; k < group; ++k) {
            const int64_t p = g * group + k;
            level[k] = live_packet[p] ? math.Multiply(widen_x[RawBits(x, x_base + p)], widen_w[RawBits(w, w_base + p)])
                                      : math.Identity();
          }
          for (int64_t width = group; width > 1; width /= 2) {
            for (int64_t k = 0; k < width / 2; ++k) level[k] = math.Combine(level[2 * k], level[2 * k + 1]);
          }
          if (target[g] < 0) continue;
          const int64_t slot = ((o * rows + r) * out_times + retained[t]) * out_packet + target[g];
          acc[slot] = written[slot] ? math.Combine(acc[slot], level[0]) : level[0];
          written[slot] = true;
        }
      }
    }
  }
  Mapping result_layout = Pair({outer, *comp.row, accumulate.retained_time, contract.out.packet});
  ASSIGN_OR_RETURN(HostTensor result, HostTensor::FromBits(acc_type, result_layout, acc));
  return MoveByIndex(result, accumulate.out.Full());
}

}  // namespace visa::interp
