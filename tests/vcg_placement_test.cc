// Every row of the manual's Valid Count Generator tables ("Valid Count Generator's Interface":
// Quick Reference and the examples of both modes) as a whole kernel: DM tensor, fetch, vector
// chain with the intra-slice reduce, commit. Supported placements run on the interpreter and the
// JIT, identical, against a host reduction that matches every live input element to its output
// by tensor index (padding in DM holds garbage that must not count). Unsupported ones fail at the
// call with the rule's name and the way out, and where the Padding Strategy's way out (the op's
// identity as the fetch's pad value) applies, it is run too. A left-padded reduce axis
// (`# n + R + # m`, "Masking Configuration") is beyond the VCG's prefix counts: refused with that
// reason, and run with the identity in the left pad and the VCG for the right pad.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "tests/common/backends.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

enum class Op { kAddSat, kMin, kMax, kAdd };

// One row: the Way8 stream (slice, time, packet; the DM element is time then packet), the
// narrowing (trim to `narrow_packet`, or split to `narrow_time` / `narrow_packet`), the reduce's
// OTime / OPacket, the widening back and the committed element.
struct Row {
  std::string name, axes, slice, time, packet;
  std::string narrow_time;  // empty: trim_way4
  std::string narrow_packet, out_time, out_packet, wide_packet, commit;
  DType dtype = DType::kI32;
  Op op = Op::kAddSat;
  std::string element;  // the DM element when it is not time, packet
  std::string garbage;  // a plain mapping over the element's bytes, written first with large values
  std::string fetch_packet;  // the fetch's Packet when the Collect pads it to `packet`
};

// Far from every ValueAt and every sum of them: a pad counted by mistake shows.
double GarbageAt(int64_t p) { return static_cast<double>(100000 + (p * 53) % 977); }

Mapping ElementOf(const Row& row, const MappingScope& s) {
  return row.element.empty() ? Pair({s.m(row.time), s.m(row.packet)}) : s.m(row.element);
}

double Identity(Op op, DType dtype) {
  const bool f32 = dtype == DType::kF32;
  switch (op) {
    case Op::kMin: return f32 ? std::numeric_limits<double>::infinity() : std::numeric_limits<int32_t>::max();
    case Op::kMax: return f32 ? -std::numeric_limits<double>::infinity() : std::numeric_limits<int32_t>::min();
    default: return 0;
  }
}

double Combine(Op op, double a, double b) {
  switch (op) {
    case Op::kMin: return std::min(a, b);
    case Op::kMax: return std::max(a, b);
    default: return a + b;  // small integers: exact in f32, no saturation in i32
  }
}

// Small integers, different at every position (pads included, so a counted pad shows).
double ValueAt(int64_t p) { return static_cast<double>((p * 37 + 11) % 101 - 50); }

struct Outcome {
  absl::Status status;
  std::vector<double> values;       // the result read back as slice, commit element
  std::vector<double> expected;     // the host reduction at the same positions (NaN: not live)
  std::string explain;
};

class VcgPlacementTest : public ::testing::Test {
 protected:
  // Builds and (on `backend`) runs the row; `pad` fetches with masking at that pad value.
  static absl::StatusOr<DmTensor> Build(Context& ctx, const Row& row, const MappingScope& s,
                                        std::optional<double> pad, ReducePadding padding) {
    const Mapping element = ElementOf(row, s);
    const Mapping whole = Pair({s.m(row.slice), element});
    std::vector<double> all(static_cast<size_t>(whole.size()));
    for (size_t p = 0; p < all.size(); ++p) all[p] = ValueAt(static_cast<int64_t>(p));
    ASSIGN_OR_RETURN(HostTensor host, HostTensor::FromValues(row.dtype, whole, all));
    if (!row.garbage.empty()) {  // the element's pads keep what memory held (WriteAs leaves them)
      const Mapping plain = s.m(row.garbage);
      const Mapping plain_whole = Pair({s.m(row.slice), plain});
      std::vector<double> junk(static_cast<size_t>(plain_whole.size()));
      for (size_t p = 0; p < junk.size(); ++p) junk[p] = GarbageAt(static_cast<int64_t>(p));
      ASSIGN_OR_RETURN(HostTensor garbage, HostTensor::FromValues(row.dtype, plain_whole, junk));
      ASSIGN_OR_RETURN(Placement under,
                       Place(ctx.device(), row.dtype, Tier::kDm, {s.m("1"), s.m("1 # 2"), s.m(row.slice), plain}, 0));
      RETURN_IF_ERROR(WriteAs(garbage, ctx.device(), under).status());
    }
    ASSIGN_OR_RETURN(Placement placement,
                     Place(ctx.device(), row.dtype, Tier::kDm, {s.m("1"), s.m("1 # 2"), s.m(row.slice), element}, 0));
    ASSIGN_OR_RETURN(DeviceTensor written, WriteAs(host, ctx.device(), placement));
    DmTensor in(written);
    Stream begun = ctx.main.begin(in.view());
    const Mapping fetch_packet = s.m(row.fetch_packet.empty() ? row.packet : row.fetch_packet);
    Stream fetched = pad ? std::move(begun).fetch_masked(row.dtype, *pad, s.m(row.time), fetch_packet)
                         : std::move(begun).fetch(row.dtype, s.m(row.time), fetch_packet);
    Stream entered = std::move(fetched)
                         .collect(s.m(row.time), s.m(row.packet))
                         .vector_init()
                         .vector_intra_slice_branch(BranchMode::Unconditional());
    Stream narrowed = row.narrow_time.empty()
                          ? std::move(entered).vector_trim_way4(s.m(row.narrow_packet))
                          : std::move(entered).vector_split(s.m(row.narrow_time), s.m(row.narrow_packet));
    Stream reduced = [&]() {
      const Mapping ot = s.m(row.out_time), op = s.m(row.out_packet);
      switch (row.op) {
        case Op::kAddSat:
          return std::move(narrowed).vector_intra_slice_reduce("R", ot, op, IntraSliceReduceOpI32::kAddSat, padding);
        case Op::kAdd:
          return std::move(narrowed).vector_intra_slice_reduce("R", ot, op, IntraSliceReduceOpF32::kAdd, padding);
        case Op::kMin:
          return row.dtype == DType::kI32
                     ? std::move(narrowed).vector_intra_slice_reduce("R", ot, op, IntraSliceReduceOpI32::kMin, padding)
                     : std::move(narrowed).vector_intra_slice_reduce("R", ot, op, IntraSliceReduceOpF32::kMin, padding);
        default:
          return row.dtype == DType::kI32
                     ? std::move(narrowed).vector_intra_slice_reduce("R", ot, op, IntraSliceReduceOpI32::kMax, padding)
                     : std::move(narrowed).vector_intra_slice_reduce("R", ot, op, IntraSliceReduceOpF32::kMax, padding);
      }
    }();
    return std::move(reduced)
        .vector_pad_way8(s.m(row.wide_packet))
        .vector_final()
        .commit(s.m(row.commit), 1 << 16);
  }

  // The host reduction: every live element of the fetched stream goes to the output position with
  // the same slice and the same index without R.
  static std::vector<double> Expected(const Row& row, const MappingScope& s, const Mapping& readback) {
    const Mapping slice = s.m(row.slice);
    const Mapping element = ElementOf(row, s);
    auto key_of = [](int64_t slice_pos, const Index& index) {
      std::string key = std::to_string(slice_pos);
      for (const auto& [name, value] : index.coords()) {
        if (name != "R") key += "," + name + "=" + std::to_string(value);
      }
      return key;
    };
    std::map<std::string, double> acc;
    const Mapping whole = Pair({slice, element});
    for (int64_t p = 0; p < whole.size(); ++p) {
      const Cell c = whole.map(p);
      if (!c.live()) continue;
      const std::string key = key_of(p / element.size(), c.index);
      auto it = acc.find(key);
      acc[key] = it == acc.end() ? ValueAt(p) : Combine(row.op, it->second, ValueAt(p));
    }
    const int64_t per_slice = readback.size() / slice.size();
    std::vector<double> out(static_cast<size_t>(readback.size()), std::nan(""));
    for (int64_t p = 0; p < readback.size(); ++p) {
      const Cell c = readback.map(p);
      if (!c.live()) continue;
      auto it = acc.find(key_of(p / per_slice, c.index));
      out[p] = it == acc.end() ? Identity(row.op, row.dtype) : it->second;
    }
    return out;
  }

  static std::vector<double> Decode(const std::vector<uint32_t>& bits, DType dtype) {
    std::vector<double> out;
    for (uint32_t b : bits) {
      out.push_back(dtype == DType::kF32 ? static_cast<double>(std::bit_cast<float>(b))
                                         : static_cast<double>(static_cast<int32_t>(b)));
    }
    return out;
  }

  // Runs `row` on both backends; values are the interpreter's (EXPECTs they equal the JIT's).
  static Outcome Run(const Row& row, std::optional<double> pad = std::nullopt,
                     ReducePadding padding = ReducePadding::kValidCount) {
    Outcome outcome;
    MappingScope s(*Axes::Parse(row.axes));
    const Mapping readback = Pair({s.m(row.slice), s.m(row.commit)});
    std::vector<uint32_t> bits[2];
    for (int b = 0; b < 2; ++b) {
      Device device(1);
      std::unique_ptr<Backend> backend = test::MakeBackend(b, 2);
      Context ctx(device, *backend);
      absl::StatusOr<DmTensor> out = Build(ctx, row, s, pad, padding);
      if (!out.ok()) {
        outcome.status = out.status();
        return outcome;
      }
      if (b == 0) outcome.explain = ctx.program().ToText();
      absl::StatusOr<HostTensor> host = ReadAs(*out, readback);
      if (!host.ok()) {
        outcome.status = host.status();
        return outcome;
      }
      bits[b] = host->ToBits();
    }
    EXPECT_EQ(bits[0], bits[1]) << row.name << ": the interpreter and the JIT differ";
    outcome.values = Decode(bits[0], row.dtype);
    outcome.expected = Expected(row, s, readback);
    return outcome;
  }

  static void ExpectMatchesHost(const Row& row, const Outcome& outcome) {
    ASSERT_TRUE(outcome.status.ok()) << row.name << ": " << outcome.status;
    ASSERT_EQ(outcome.values.size(), outcome.expected.size());
    int64_t live = 0;
    for (size_t p = 0; p < outcome.values.size(); ++p) {
      if (std::isnan(outcome.expected[p])) continue;
      ++live;
      ASSERT_EQ(outcome.values[p], outcome.expected[p]) << row.name << " at readback position " << p;
    }
    EXPECT_GT(live, 0) << row.name;
  }
};

// ---- Supported placements: both backends against the host -------------------------------------

TEST_F(VcgPlacementTest, SliceTime) {
  // Quick Reference "Slice + Time": R = 17 as R # 24 / 3 (Slice) x R # 24 % 3 (Time).
  const Row row{"slice + time", "A = 4, R = 17, X = 32", "X, R # 24 / 3", "R # 24 % 3", "A # 8", "", "A", "1", "A",
                "A # 8", "A"};
  const Outcome o = Run(row);
  ExpectMatchesHost(row, o);
  EXPECT_THAT(o.explain, HasSubstr("valid count generator: Time Reduce (Slice + Time), R = 17 padded to 24"));
}

TEST_F(VcgPlacementTest, SliceTimeWithTwoSliceParts) {
  const Row row{"slice + time, two slice parts", "R = 13, X = 32", "R # 16 / 8, X, R # 16 / 2 % 4", "R # 16 % 2",
                "1 # 8", "", "1 # 4", "1", "1 # 4", "1 # 8", "1 # 2", DType::kI32, Op::kMin};
  ExpectMatchesHost(row, Run(row));
}

TEST_F(VcgPlacementTest, SliceTimeTransposedSupported) {
  const Row row{"slice + time transposed", "R = 5, X = 64", "X, R # 8 % 4", "R # 8 / 4", "1 # 8", "", "1 # 4", "1",
                "1 # 4", "1 # 8", "1 # 2"};
  const Outcome o = Run(row);
  ExpectMatchesHost(row, o);
  EXPECT_THAT(o.explain, HasSubstr("Slice + Time (transposed)"));
  EXPECT_THAT(o.explain, HasSubstr("transposed"));
}

TEST_F(VcgPlacementTest, TimeOnly) {
  const Row row{"time only", "A = 8, R = 12, X = 64", "X, A / 2", "R # 16", "A % 2 # 8", "", "A % 2 # 4", "1",
                "A % 2 # 4", "A % 2 # 8", "A % 2"};
  const Outcome o = Run(row);
  ExpectMatchesHost(row, o);
  EXPECT_THAT(o.explain, HasSubstr("Time Reduce (Time only)"));
}

// "Time: Flexible Ordering": R # 48's Time part split in two with X between them. The manual's
// listing leaves R # 48 % 8 out of every dimension (its Packet says A # 8, its Time repeats one
// part); its prose puts R # 48 % 8 in Packet, as here.
TEST_F(VcgPlacementTest, TimePartsInAnyOrder) {
  const Row row{"time flexible ordering", "R = 45, X = 2, Y = 256", "Y", "R # 48 / 8 % 2, X, R # 48 / 16",
                "R # 48 % 8", "R # 48 / 8 % 2, X, R # 48 / 16, R # 48 % 8 / 4", "R # 48 % 4", "X", "1 # 4",
                "1 # 8", "X, 1 # 2", DType::kF32, Op::kAdd, "X, R # 48"};
  ExpectMatchesHost(row, Run(row));
}

// The manual's Packet-mode examples hold A / 2 in Slice and nothing of A % 2: here A % 2 is Time's
// (outside R, one accumulator slot).
TEST_F(VcgPlacementTest, PacketOnly) {
  const Row row{"packet only", "A = 8, R = 3, X = 64", "X, A / 2", "A % 2", "R # 8", "", "R # 4", "A % 2", "1 # 4",
                "1 # 8", "A % 2, 1 # 2", DType::kF32, Op::kAdd};
  const Outcome o = Run(row);
  ExpectMatchesHost(row, o);
  EXPECT_THAT(o.explain, HasSubstr("Packet Reduce (Packet only)"));
}

TEST_F(VcgPlacementTest, TimePacket) {
  const Row row{"time + packet", "A = 8, R = 19, X = 64", "X, A / 2", "A % 2, R # 24 / 8", "R # 24 % 8",
                "A % 2, R # 24 / 8, R # 24 % 8 / 4", "R # 24 % 4", "A % 2", "1 # 4", "1 # 8", "A % 2, 1 # 2",
                DType::kF32, Op::kAdd};
  const Outcome o = Run(row);
  ExpectMatchesHost(row, o);
  EXPECT_THAT(o.explain, HasSubstr("packet dim: V_p 19, stride_p 8"));
}

// "Time + Packet (R fills fewer than 8 positions)": R = 7, Time [R # 8 / 4], Packet [R # 8 % 4 # 8]
// ([4, 3] valid lanes). The fetch cannot read that padded packet straight from DM: a stream
// packet `R # 8 % 4 # 8` next to Time `R # 8 / 4` names R in digits whose coordinates add up
// across the buffer's digits with a gap between them ("Incompatible Shapes", from `A % 2, R`,
// `A % 2, R # 8` or an element padding each half-row itself). It can read the 16-byte packet
// `R # 8 % 4` (fetch_size 16) and let the Collect Engine pad it to the flit (`[R # 8 % 4] # 8`):
// the stream the manual's row names, fed end to end. R's pad (R = 7 in `R # 8`) holds garbage.
TEST_F(VcgPlacementTest, TimePacketFewerThanEightLanes) {
  Row row{"time + packet, fewer than 8 lanes", "A = 8, R = 7, X = 64", "X, A / 2", "A % 2, R # 8 / 4",
          "[R # 8 % 4] # 8", "", "R # 8 % 4", "A % 2", "1 # 4", "1 # 8", "A % 2, 1 # 2", DType::kI32,
          Op::kAddSat, "A % 2, R # 8", "A % 2, 1 # 8"};
  row.fetch_packet = "R # 8 % 4";
  const Outcome o = Run(row);
  ExpectMatchesHost(row, o);
  EXPECT_THAT(o.explain, HasSubstr("Packet Reduce"));
  for (Op op : {Op::kMin, Op::kMax}) {
    row.op = op;
    ExpectMatchesHost(row, Run(row));
  }
}

TEST_F(VcgPlacementTest, TimePacketPerfectlyAligned) {
  const Row row{"time + packet aligned", "A = 8, R = 24, X = 64", "X, A / 2", "A % 2, R / 8", "R % 8",
                "A % 2, R / 8, R % 8 / 4", "R % 4", "A % 2", "1 # 4", "1 # 8", "A % 2, 1 # 2", DType::kF32, Op::kAdd};
  const Outcome o = Run(row);
  ExpectMatchesHost(row, o);
  EXPECT_THAT(o.explain, HasSubstr("every flit full"));
}

// ---- Unsupported placements: the rule and the way out, at the call ----------------------------

void ExpectRefused(const Outcome& o, const std::string& rule, const std::string& way_out) {
  ASSERT_FALSE(o.status.ok());
  const std::string message(o.status.message());
  EXPECT_THAT(message, HasSubstr("Intra-Slice Reduce: Valid Count Generator: "));
  EXPECT_THAT(message, HasSubstr(rule));
  EXPECT_THAT(message, HasSubstr(way_out));
  EXPECT_THAT(message, HasSubstr("reduce with identity padding"));
  EXPECT_THAT(message, HasSubstr("at `vector_intra_slice_reduce::<R, "));
}

TEST_F(VcgPlacementTest, SliceTimeTransposedOverAllocatedIsRefused) {
  const Row row{"transposed, R # 20", "R = 14, X = 64", "X, R # 20 % 4", "R # 20 / 4", "1 # 8", "", "1 # 4", "1",
                "1 # 4", "1 # 8", "1 # 2"};
  ExpectRefused(Run(row), "Slice + Time (transposed): time_size must equal ceil(|R| / slice_size)", "fix: pad R to 16");
  // The manual's fix: R # 16.
  const Row fixed{"transposed, R # 16", "R = 14, X = 64", "X, R # 16 % 4", "R # 16 / 4", "1 # 8", "", "1 # 4", "1",
                  "1 # 4", "1 # 8", "1 # 2"};
  ExpectMatchesHost(fixed, Run(fixed));
}

TEST_F(VcgPlacementTest, NonOuterInnerOrderingIsRefused) {
  const Row row{"non-outer/inner", "R = 13, X = 32", "X, R # 16 / 2 % 4, R # 16 / 8", "R # 16 % 2", "1 # 8", "", "1 # 4",
                "1", "1 # 4", "1 # 8", "1 # 2", DType::kI32, Op::kMin};
  ExpectRefused(Run(row), "Non-outer/inner ordering", "reorder them");
  // The manual's fix: the standard order.
  const Row fixed{"outer/inner", "R = 13, X = 32", "X, R # 16 / 8, R # 16 / 2 % 4", "R # 16 % 2", "1 # 8", "", "1 # 4",
                  "1", "1 # 4", "1 # 8", "1 # 2", DType::kI32, Op::kMin};
  ExpectMatchesHost(fixed, Run(fixed));
}

TEST_F(VcgPlacementTest, TimeSliceTimeInterleaveIsRefused) {
  const Row row{"time-slice-time", "R = 13, X = 64", "X, R # 16 / 2 % 4", "R # 16 / 8, R # 16 % 2", "1 # 8", "",
                "1 # 4", "1", "1 # 4", "1 # 8", "1 # 2", DType::kI32, Op::kMin};
  ExpectRefused(Run(row), "Time-Slice-Time interleave", "the VCG has a single threshold");
  // The manual's fix: Slice outer, Time inner.
  const Row fixed{"slice outer", "R = 13, X = 64", "X, R # 16 / 4", "R # 16 % 4", "1 # 8", "", "1 # 4", "1", "1 # 4",
                  "1 # 8", "1 # 2", DType::kI32, Op::kMin};
  ExpectMatchesHost(fixed, Run(fixed));
}

// "Time + Packet (Packet not innermost)": Time [R # 24 % 8], Packet [R # 24 / 8 # 8] has no
// whole kernel, because no fetch produces that stream from DM. Read from an element holding R in
// order (`A % 2, R` or `A % 2, R # 24`), the packet's innermost sequencer entry `R # 24 / 8 -> 8 : 8`
// has stride 8, and a fetched packet must be contiguous (its innermost entry stride 0 or 1: the
// manual's Fetch Sequencer packs each packet from one contiguous run, "The innermost entry 16 : 1
// has stride 1, making elements contiguous within the packet"). Read from an element that stores
// the digits swapped (`A % 2, R # 24 % 8, [R # 24 / 8] # 8`, also with # 4 or R # 32), the padded
// R # 24 (19 live of 24) cannot be factored at the buffer's digit boundary: live positions are
// R = 8 (R # 24 / 8) + (R # 24 % 8) < 19, which couples the two digits, so the fetch refuses it as
// "Incompatible Shapes" (the manual's factorization rule). Only an unpadded R (R = 24) can be read
// that way, and then no valid count is needed. The VCG's own refusal is in valid_count_test.
TEST_F(VcgPlacementTest, PacketNotInnermostHasNoFetch) {
  Row row{"packet not innermost", "A = 8, R = 19, X = 64", "X, A / 2", "A % 2, R # 24 % 8", "R # 24 / 8 # 8", "",
          "R # 24 / 8 # 4", "A % 2", "1 # 4", "1 # 8", "A % 2, 1 # 2", DType::kF32, Op::kAdd, "A % 2, R # 24"};
  Outcome o = Run(row);
  ASSERT_FALSE(o.status.ok());
  EXPECT_THAT(o.status.message(), HasSubstr("Packet fetch: the innermost entry `R # 24 / 8 # 8 -> 8 : 8`"));
  row.element = "A % 2, R # 24 % 8, R # 24 / 8 # 8";
  o = Run(row);
  ASSERT_FALSE(o.status.ok());
  EXPECT_THAT(o.status.message(), HasSubstr("Incompatible Shapes"));
}

// "Time + Packet (mixed Packet axes)": Packet [A, R # 24 % 4] (A = 2: each half of the flit a
// different A), Time [R # 24 / 4]. The fetch reads it from the element `A, R # 24` (the packet's
// innermost entry R # 24 % 4 is contiguous, A steps 24 elements), so the whole kernel is built and
// the reduce refuses it at the call, on the VCG's rule; the Padding Strategy's way out (the op's
// identity as the fetch's pad value, ReducePadding::kIdentity) runs on both backends.
TEST_F(VcgPlacementTest, MixedPacketAxesAreRefusedEndToEnd) {
  const Row row{"mixed packet axes", "A = 2, R = 19, X = 256", "X", "R # 24 / 4", "A, R # 24 % 4",
                "R # 24 / 4, A", "R # 24 % 4", "A", "1 # 4", "1 # 8", "A, 1 # 2", DType::kI32, Op::kMin,
                "A, R # 24", "A, 1 # 24"};
  const Outcome refused = Run(row);
  ASSERT_FALSE(refused.status.ok());
  EXPECT_THAT(refused.status.message(), HasSubstr("mixed Packet axes"));
  EXPECT_THAT(refused.status.message(), HasSubstr("at `vector_intra_slice_reduce::<R, "));
  ExpectMatchesHost(row, Run(row, static_cast<double>(std::numeric_limits<int32_t>::max()), ReducePadding::kIdentity));
}

TEST_F(VcgPlacementTest, SlicePacketIsRefused) {
  const Row row{"slice + packet", "R = 2045", "R # 2048 / 8", "1", "R # 2048 % 8", "R # 2048 % 8 / 4", "R # 2048 % 4",
                "1", "1 # 4", "1 # 8", "1 # 2"};
  ExpectRefused(Run(row), "Slice + Packet", "fix: put R's Slice part with Time");
  // The manual's fix: R's Slice part with Time.
  const Row fixed{"slice + time instead", "R = 2045, A = 4", "R # 2048 / 8", "R # 2048 % 8", "A # 8", "", "A", "1",
                  "A", "A # 8", "A", DType::kI32, Op::kAddSat};
  ExpectMatchesHost(fixed, Run(fixed));
}

// The Intra-Slice Reduce page's R = 13 over Slice, Time and Packet needs a partial packet count in
// its boundary slice only, which the slice-independent packet dim cannot give (the manual's "The
// VCG handles per-slice valid count variation" contradicts its own formula): refused, and run by
// the Padding Strategy's way out, the identity (i32::MAX for Min) as the fetch's pad value.
// Re-read against every table and example of the VCG chapter, one reading holds them all: the
// Implementation's formula, its "Key property" (packet_vc has no slice term), the gates that only
// zero a flit, and the Quick Reference's "Slice + Packet: No" agree; only the example's sentence
// disagrees. Slice 1 here needs counts (4, 1) where slice 0 needs (4, 4) at the same time steps, so
// no configuration expresses it, and the refusal stands, citing both passages.
TEST_F(VcgPlacementTest, SliceTimePacketRunsThroughIdentityPadding) {
  const Row row{"slice + time + packet", "R = 13", "R # 32 / 8 # 256", "R # 32 / 4 % 2", "R # 32 % 4 # 8", "", "R # 32 % 4",
                "1", "1 # 4", "1 # 8", "1 # 2", DType::kI32, Op::kMin};
  const Outcome refused = Run(row);
  ExpectRefused(refused, "Slice + Packet", "fix:");
  // The refusal cites both passages of the manual and says which reading it takes.
  EXPECT_THAT(refused.status.message(), HasSubstr("\"The VCG handles per-slice valid count variation for boundary slices\""));
  EXPECT_THAT(refused.status.message(), HasSubstr("packet_vc(t) = min(stride_p, max(0, V_p - idx_p(t)))"));
  EXPECT_THAT(refused.status.message(), HasSubstr("\"Key property: packet_vc depends only on the sequencer state t"));
  EXPECT_THAT(refused.status.message(), HasSubstr("the formula is the reading taken"));
  const Outcome o = Run(row, std::numeric_limits<int32_t>::max(), ReducePadding::kIdentity);
  ExpectMatchesHost(row, o);
  EXPECT_THAT(o.explain, HasSubstr("padding by identity padding"));
}

// Identity padding holds only with the op's identity in the pad: a fetch padding with anything
// else is refused, naming the identity.
TEST_F(VcgPlacementTest, IdentityPaddingNeedsTheOpsIdentityAsPadValue) {
  const Row row{"slice + time + packet", "R = 13", "R # 32 / 8 # 256", "R # 32 / 4 % 2", "R # 32 % 4 # 8", "", "R # 32 % 4",
                "1", "1 # 4", "1 # 8", "1 # 2", DType::kI32, Op::kMin};
  const Outcome o = Run(row, 0.0, ReducePadding::kIdentity);
  ASSERT_FALSE(o.status.ok());
  EXPECT_THAT(o.status.message(), HasSubstr("Intra-Slice Reduce: Padding Strategy: identity padding needs the op's "
                                            "identity (Min: "));
  EXPECT_THAT(o.status.message(), HasSubstr("the fetch pads with 0"));
}

// ---- Left padding: `# n + R + # m` ------------------------------------------------------------

const Row kLeftPadded{"left pad", "A = 8, R = 24, X = 64", "X, A / 2", "A % 2, [# 3 + R + # 5] / 8",
                      "[# 3 + R + # 5] % 8", "A % 2, [# 3 + R + # 5] / 8, [# 3 + R + # 5] % 8 / 4",
                      "[# 3 + R + # 5] % 4", "A % 2", "1 # 4", "1 # 8", "A % 2, 1 # 2", DType::kF32, Op::kAdd,
                      "A % 2, R # 32"};

TEST_F(VcgPlacementTest, LeftPadIsBeyondTheVcg) {
  // A plain fetch (no masking) and the VCG: the VCG cannot leave out the leading pad.
  const Outcome o = Run(kLeftPadded);
  ASSERT_FALSE(o.status.ok());
  EXPECT_THAT(o.status.message(), HasSubstr("Valid Count Generator: left padding: a valid count keeps a prefix"));
  EXPECT_THAT(o.status.message(), HasSubstr("the 3 pad positions in front of R"));
  EXPECT_THAT(o.status.message(), HasSubstr("ReducePadding::kLeftIdentity"));
}

// The way out run as a whole kernel is the sample masked_row_sum / masked_row_max
// (samples/masked_reduce_samples.cc, `visa check`).

// The DM element itself left-padded (`A % 2, # 3 + R + # 5`): its pads hold garbage (a plain
// tensor written over the same bytes first), the masked fetch replaces them with the op's identity
// and the VCG leaves out the right pad. Writing such an element took minutes before the inverse of
// a left-padded mapping was answered digit by digit (tests/left_pad_inverse_test.cc).
TEST_F(VcgPlacementTest, LeftPaddedDmElementWithGarbageInItsPads) {
  Row row = kLeftPadded;
  row.name = "left-padded DM element";
  row.axes = "A = 8, R = 24, X = 64, Z = 32";
  row.element = "A % 2, # 3 + R + # 5";
  row.garbage = "A % 2, Z";
  for (Op op : {Op::kAdd, Op::kMax, Op::kMin}) {
    row.op = op;
    const Outcome o = Run(row, Identity(op, row.dtype), ReducePadding::kLeftIdentity);
    ExpectMatchesHost(row, o);
    EXPECT_THAT(o.explain, HasSubstr("lpad")) << o.explain;
  }
  // i32, AddSat: the identity 0.
  row.dtype = DType::kI32;
  row.op = Op::kAddSat;
  ExpectMatchesHost(row, Run(row, 0.0, ReducePadding::kLeftIdentity));
}

TEST_F(VcgPlacementTest, LeftIdentityRules) {
  // The fetch must pad with the op's identity: 0 is not Max's.
  Row max = kLeftPadded;
  max.op = Op::kMax;
  const Outcome wrong = Run(max, 0.0, ReducePadding::kLeftIdentity);
  ASSERT_FALSE(wrong.status.ok());
  EXPECT_THAT(wrong.status.message(), HasSubstr("Padding Strategy: identity left pad + valid count needs the op's "
                                                "identity (Max: -inf)"));
  // An unmasked fetch leaves arbitrary data in the pad.
  EXPECT_THAT(Run(kLeftPadded, std::nullopt, ReducePadding::kLeftIdentity).status.message(),
              HasSubstr("the fetch does not mask"));
  // kLeftIdentity names a left pad the stream must have.
  const Row plain{"time + packet", "A = 8, R = 19, X = 64", "X, A / 2", "A % 2, R # 24 / 8", "R # 24 % 8",
                  "A % 2, R # 24 / 8, R # 24 % 8 / 4", "R # 24 % 4", "A % 2", "1 # 4", "1 # 8", "A % 2, 1 # 2",
                  DType::kF32, Op::kAdd};
  EXPECT_THAT(Run(plain, 0.0, ReducePadding::kLeftIdentity).status.message(),
              HasSubstr("ReducePadding::kLeftIdentity is for a left-padded reduce axis"));
}

}  // namespace
}  // namespace visa
