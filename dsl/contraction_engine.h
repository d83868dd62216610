// The Contraction Engine's rules and configuration: the Aligner (Stream Adapter + TRF Sequencer),
// the Reducer's spatial tree (`contract`) and its temporal accumulator (`accumulate`).
//
// The manual's chain is `collect() -> align(trf) -> contract() -> accumulate()`: align pairs the
// streamed activations with the stationary TRF weights in one computation mapping
// [Chip, Cluster, Slice, Row, Time, Packet] (Packet = 64 bytes, the MAC width); contract multiplies
// element-wise, widens (i4 / i8 -> i32, f8 / bf16 -> f32) and sums the innermost 2^depth packet
// elements with a pairwise tree; accumulate sums the Time axes that disappear from its OutTime in
// time order and lays the result out (Interleaved or Sequential).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/normal_form.h"
#include "dsl/sequencer.h"
#include "dsl/stream.h"

namespace visa {

inline constexpr int64_t kMacWidthBytes = 64;
inline constexpr int kReducerRows = 8;
inline constexpr int64_t kAccumulatorSlots = 1024;  // 8 rows x 32 columns x 4 registers
inline constexpr int64_t kAccumulatorColumns = 32;
inline constexpr int64_t kFlitBufferBytes = 96;     // the Stream Adapter's 3 flits

enum class AccumulationKind { kInterleaved, kSequential };
const char* AccumulationKindName(AccumulationKind kind);  // "Interleaved", "Sequential"

// The Reducer's operation: reduce-add (every Row) or reduce-max (Row 0 only).
enum class ReduceOp { kAdd, kMax };
const char* ReduceOpName(ReduceOp op);  // "Add", "Max"

// What align needs to know about the TRF tensor it pairs the stream with.
struct TrfOperand {
  DType dtype = DType::kBF16;
  Mapping chip, cluster, slice, row, element;
  std::string mode;          // "Full", "FirstHalf", "SecondHalf"
  int64_t base_bytes = 0;    // the mode's byte offset inside each row
  std::string text;          // the tensor as printed, for messages
};

struct AlignStage {
  StreamShape in;   // the collect stream
  StreamShape out;  // the computation mapping (row set), in the stream's dtype
  TrfOperand trf;
  // Stream Adapter.
  int collect_flits = 2;      // 1, 2, or 3 (shift-reuse)
  int64_t rows = 1;           // Rows receiving the broadcast packet
  int64_t time_broadcast = 1; // size of the tiling axes innermost in OutTime
  int feed_flits = 0;         // shift-reuse: flits of one input row in the buffer
  int64_t shifts = 0;         // shift-reuse: windows after the first
  int64_t shift_stride = 0;   // shift-reuse: elements between windows
  // TRF Sequencer.
  int64_t reg_read_size = 0;      // contiguous bytes read from the TRF per cycle
  int64_t packet_broadcast = 1;   // repeats of the read that fill the 64-byte MAC width
  std::vector<SequencerEntry> trf_entries;  // Time loops, innermost first, strides in bytes
  std::string Describe() const;
};

struct ContractStage {
  StreamShape out;  // row kept; packet = the surviving packet part; widened dtype
  int depth = 0;       // tree levels used
  int max_depth = 0;   // the dtype's tree (7 i4, 6 i8 / f8, 5 bf16)
  ReduceOp op = ReduceOp::kAdd;
  std::string Describe() const;
};

struct AccumulateStage {
  StreamShape in;            // the contracted stream
  StreamShape out;           // no row: the Reducer's output stream
  AccumulationKind kind = AccumulationKind::kInterleaved;
  ReduceOp op = ReduceOp::kAdd;
  Mapping retained_time;     // Time' = Time without the reduced axes
  // The Time factors of the contracted stream (innermost first) and which of them are reduced;
  // the retained ones read in this order form retained_time's positions.
  std::vector<Factor> time_factors;
  std::vector<bool> reduced;
  int64_t inner_time = 1;    // retained Time positions inner to the outermost reduced axis
  int64_t buffer_cells = 0;  // padded rows x inner time x padded packet (<= 1024)
  std::string Describe() const;
};

// The accumulator type the Reducer widens `dtype` to (i32 or f32).
DType AccumulatorType(DType dtype);
// The spatial tree's depth for `dtype`: 7 (i4 / i5), 6 (i8 / i9 / f8), 5 (bf16).
int TreeDepth(DType dtype);

absl::StatusOr<AlignStage> PlanAlign(const StreamShape& in, StreamPosition position,
                                     const TrfOperand& trf, const Mapping& out_time,
                                     const Mapping& out_packet);

absl::StatusOr<ContractStage> PlanContract(const AlignStage& aligned, const Mapping& out_packet,
                                           ReduceOp op = ReduceOp::kAdd);

absl::StatusOr<AccumulateStage> PlanAccumulate(const ContractStage& contracted, const Mapping& out_time,
                                               const Mapping& out_packet, AccumulationKind kind);

// The retained-time position of contracted time position `t` (digit values of the kept factors),
// or -1 when `t` is a padding position.
int64_t RetainedTimePosition(const AccumulateStage& stage, int64_t t);

// Per time step of the computation mapping: its retained-time position, -1 for padding.
std::vector<int64_t> RetainedTimeTable(const AccumulateStage& stage, const Mapping& time);

// Per tree group (a position of Packet / 2^depth): the contracted packet position it lands in, or
// -1 when it is padding (both backends read the Reducer's output through this table).
std::vector<int64_t> TreeGroupTargets(const Mapping& packet, const ContractStage& contract);

}  // namespace visa
