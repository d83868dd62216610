// Random Vector Engine chains for the random-program generator (random_programs/random_program.h): drawn
// for a Way8 i32 / f32 stream after collect or accumulate, they exercise every elementwise part of
// the engine in rule-abiding combinations: branch modes (Unconditional, Comparison, AxisToggle,
// ValidCount, Vrf), Logic / Fxp / Float / FpDiv / Clip ops with unary, binary and ternary argument
// modes, constants, VRF operands and the stash in guarded slots, FxpToFp / FpToFxp, Narrow / Widen
// (split / trim, concat / pad), Filter, and two-group mode (unzip, per-group ops, _zip) on an
// interleaved stream, and both reductions (intra-slice over the innermost Time term when it is a
// whole axis, inter-slice over the innermost Slice digit). A chain ends at the type it began with;
// a reduction takes its term out of Time (`reduced_term`) or changes the Slice (`out_slice`).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "dsl/mapping_parser.h"
#include "runtime/tensor_unit.h"
#include "random_programs/program_coverage.h"

namespace visa::samples {

// What the generator knows of the stream entering the Vector Engine.
struct VectorEntry {
  DType type = DType::kI32;
  std::vector<std::string> time;  // Time, term by term (the interleave axis I first when present)
  std::string packet;             // the packet: one flit of 8 elements, the live term padded
  std::string live;               // the packet's live term ("C", "N % 8", ...)
  int64_t live_size = 8;          // its positions
  std::vector<std::string> toggle_axes;  // axes of Time / the live term of more than one value
  std::string slice;              // the stream's Slice
  int64_t slice_axis = 0;         // Slice is [S] (256) or [S # 256] with S of this size; else 0
  bool interleaved = false;       // Time starts with I (two tensors, begin_interleaved)
  bool vrf_possible = false;      // a VRF tensor over the stream's own Time x Packet fits and matches
  std::string after;              // "collect" or "accumulate"
};

// One operand slot as drawn: a constant, the VRF operand, the stash.
struct VectorSlotDraw {
  enum class Kind { kConstant, kVrf, kStash };
  Kind kind = Kind::kConstant;
  uint32_t bits = 0;
  TagGuard guard;
  std::optional<float> o1;
  bool rf = false;
};

struct VectorCallDraw {
  enum class Kind {
    kLogic, kFxp, kFxpToFp, kSplit, kTrim, kFpUnary, kFpBinary, kFpTernary, kFpDiv, kConcat, kPad, kFpToFxp,
    kClip, kStash, kFilter, kZip, kIntraReduce, kInterReduce,
  };
  Kind kind = Kind::kLogic;
  DType type = DType::kI32;  // the stream's type at the call (i32 / f32 overloads)
  int op = 0;                // the op enum's value (FpBinaryOp: its Kind; MulF's ALU in `mul`)
  FpMulAlu mul = FpMulAlu::kMul0;
  int mode = 1;              // BinaryArgMode / TernaryArgMode value
  std::vector<VectorSlotDraw> slots;
  bool pair = false;                               // a per-group op (two-group mode)
  std::array<std::optional<VectorSlotDraw>, 2> group;  // per-group operands
  std::array<bool, 2> group_flags{false, false};   // per-group unary
  std::optional<TagGuard> guard;                   // a guarded unary op; kFilter: what it keeps
  Kind zip_of = Kind::kClip;                       // kZip: which _zip
  int width = 0;                                   // FxpToFp / FpToFxp int_width
  std::string time, packet;                        // Narrow / Widen; a reduce's output Time / Packet
  std::string axis;                                // kIntraReduce: the reduced axis
  std::string slice;                               // kInterReduce: the output Slice
};

struct VectorChainDraw {
  BranchMode branch;          // kVrf: ids from the ids VRF
  bool pair = false;          // two-group mode: unzip over I
  std::string split_time;     // one group's Time
  std::vector<VectorCallDraw> calls;
  bool vrf_operand = false;   // the VRF operand (stream type, stream's Time x Packet) is loaded
  bool vrf_ids = false;       // the ids VRF (i32 values 0..15) is loaded
  DType vrf_type = DType::kI32;
  std::string vrf_element;    // both VRF tensors' Element (and their DM sources')
  std::string after;
  // The stream after the chain: Time without I after a zip, without a reduced term.
  std::vector<std::string> out_time;
  std::optional<std::string> reduced_term;  // the Time term an intra-slice reduce took away
  std::optional<std::string> out_slice;     // the Slice after an inter-slice reduce
};

// Draws a chain with `rng` (two-group mode on an interleaved stream, sometimes).
VectorChainDraw DrawVectorChain(std::mt19937_64& rng, const VectorEntry& entry);

// The chain's calls as text, one per line with `indent` before each.
std::string VectorChainText(const VectorChainDraw& chain, const std::string& indent);

// The VRF tensors a chain reads, loaded by sub-context pipelines from DM sources on `slice`.
struct VectorVrfs {
  std::optional<VrfTensor> operand, ids;
};
absl::StatusOr<VectorVrfs> LoadVectorVrfs(Context& ctx, const MappingScope& m, const VectorChainDraw& chain,
                                          const std::string& slice, const std::string& time,
                                          const std::string& packet);

// The chain applied to a stream just past collect / accumulate (vector_init ... vector_final).
Stream ApplyVectorChain(Stream stream, const MappingScope& m, const VectorChainDraw& chain, const VectorVrfs& vrfs);

// Coverage: what a drawn chain calls for and what a recorded VectorStage ran, named alike
// (category "vector"); VectorDrawnKinds lists every kind the generator draws.
void VectorChainCoverage(const VectorChainDraw& chain, std::set<CoverageKey>& out);
void VectorStageCoverage(const VectorStage& stage, const std::string& after, std::set<CoverageKey>& out);
std::vector<CoverageKey> VectorDrawnKinds();

}  // namespace visa::samples
