// The Vector Engine's intra-slice block as a recorded configuration, and the rules that plan it
// (manual, "Vector Engine": Interface, Quick Reference, Stages, Stage Details, Operands, Argument
// Modes, Stash, Constraints, the ALU Conflict Example).
//
// A chain `vector_init() .vector_intra_slice_branch(mode) ... .vector_final()` becomes one
// VectorStage: the entry shape, the branch mode (execution ids), and its steps in order: element
// ops (a scalar function of dsl/vector_ops.h with its ALU, argument mode and operand slots),
// Narrow / Widen relayouts, stash writes and reinterprets. VectorChain checks, call by call:
//   - the stage order Branch, Logic, Fxp, FxpToFp, Narrow, Float, IntraSliceReduce, FpDiv, Widen,
//     FpToFxp, Clip, Filter, Output as a typed transition table: every stage optional, later stages
//     only, Logic / Fxp / Float / Clip repeatable (multi-ALU clusters), one Way4 region;
//   - Way8 / Way4 per stage, i32 / f32 per op;
//   - each ALU at most once per pass ("FxpAdd is already in use");
//   - operands (constants, VRF tensors loaded with to_vrf, the stash) and their slots and guards;
//   - the stash: one typed slot, written at a Stashable stage, read once at the same Way.
// The reductions plan through their own modules and are recorded as steps of the same stage:
// vector_intra_slice_reduce (dsl/vector_reduce.h, the IntraSliceReduce stage between Float and
// FpDiv) and vector_inter_slice_reduce (dsl/inter_slice_reduce.h), either right after vector_init()
// (InterFirst: vector_intra_slice_branch may follow) or from a Way8 intra-slice stage (IntraFirst:
// only Filter / Output may follow); dsl/vector_reduce_chain.cc holds those rules.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dsl/inter_slice_reduce.h"
#include "dsl/stream.h"
#include "dsl/vector_ops.h"
#include "dsl/vector_reduce.h"

namespace visa {

enum class VeStage {
  kBranch, kLogic, kFxp, kFxpToFp, kNarrow, kFloat, kIntraSliceReduce, kFpDiv, kWiden, kFpToFxp, kClip,
  kFilter, kOutput,
};
const char* VeStageName(VeStage stage);  // "Branch", "Logic", ...

enum class VeWay { kWay8 = 8, kWay4 = 4 };

// ---- Branch: execution ids -------------------------------------------------------------------

// One comparison of the Comparison branch mode on the element's value (bit i of the id is the
// i-th comparison's result). Unsigned comparisons compare the raw 32-bit patterns.
struct InputCmp {
  enum class Kind { kTrue, kFalse, kEqual, kLess, kGreater, kLessUnsigned, kGreaterUnsigned };
  Kind kind = Kind::kFalse;
  DType dtype = DType::kI32;  // the type `value` is read as (the stream's)
  uint32_t value = 0;         // bits
  static InputCmp True() { return {Kind::kTrue}; }
  static InputCmp False() { return {Kind::kFalse}; }
  static InputCmp Equal(int32_t v) { return {Kind::kEqual, DType::kI32, static_cast<uint32_t>(v)}; }
  static InputCmp Equal(float v);
  static InputCmp Less(int32_t v) { return {Kind::kLess, DType::kI32, static_cast<uint32_t>(v)}; }
  static InputCmp Less(float v);
  static InputCmp Greater(int32_t v) { return {Kind::kGreater, DType::kI32, static_cast<uint32_t>(v)}; }
  static InputCmp Greater(float v);
  static InputCmp LessUnsigned(int32_t v) { return {Kind::kLessUnsigned, DType::kI32, static_cast<uint32_t>(v)}; }
  static InputCmp LessUnsigned(float v);
  static InputCmp GreaterUnsigned(int32_t v) {
    return {Kind::kGreaterUnsigned, DType::kI32, static_cast<uint32_t>(v)};
  }
  static InputCmp GreaterUnsigned(float v);
  bool Holds(uint32_t x) const;  // on the element's bits
  std::string ToString() const;
};

struct BranchMode {
  enum class Kind { kUnconditional, kAxisToggle, kValidCount, kComparison, kVrf };
  Kind kind = Kind::kUnconditional;
  std::string axis;                // kAxisToggle; kValidCount: the padded axis the VCG counts
  std::array<InputCmp, 4> cmp{};   // kComparison
  int vrf = -1;                    // kVrf: the VRF operand holding the ids (dsl/vector_branch_ids.h)
  static BranchMode Unconditional() { return {}; }
  static BranchMode AxisToggle(std::string axis) { return {Kind::kAxisToggle, std::move(axis)}; }
  static BranchMode ValidCount(std::string axis = "") { return {Kind::kValidCount, std::move(axis)}; }
  static BranchMode Comparison(std::array<InputCmp, 4> cmp) { return {Kind::kComparison, "", cmp}; }
  static BranchMode Vrf(int vrf = -1) { return {Kind::kVrf, "", {}, vrf}; }
  std::string ToString() const;
};

enum class BitReq { kIgnore, kZero, kOne };
enum class GroupId { kZero, kOne };  // bit 3 of the execution id

// Which execution ids an operand slot (or a guarded unary op) applies to.
struct TagGuard {
  std::array<BitReq, 4> bits{BitReq::kIgnore, BitReq::kIgnore, BitReq::kIgnore, BitReq::kIgnore};
  bool negate = false;
  static TagGuard All() { return {}; }
  static TagGuard Matches(std::array<BitReq, 4> bits) { return {bits, false}; }
  static TagGuard NotMatches(std::array<BitReq, 4> bits) { return {bits, true}; }
  static TagGuard Group(GroupId group);
  bool Admits(uint8_t id) const;
  bool unconditional() const;  // admits every id
  bool dead() const;           // admits none
  std::string ToString() const;
};

// ---- Operands ------------------------------------------------------------------------------------

// A register-file tensor an op reads (loaded by `to_vrf` before the pipeline), as planning sees it.
struct VrfOperandInfo {
  DType dtype = DType::kI32;
  Mapping chip, cluster, slice, element;
  std::string text;
};

struct VeOperand {
  enum class Kind { kConstant, kVrf, kStash };
  Kind kind = Kind::kConstant;
  DType dtype = DType::kI32;  // kConstant: the literal's type
  uint32_t bits = 0;          // kConstant
  int vrf = -1;               // kVrf: index into the pipeline's VRF operands
  std::string ToString() const;
};

// One operand slot: reg0..reg2 (immediates) or rf (a VRF tensor or the stash), with its guard.
// `o1` is a ternary op's second operand (always an f32 constant).
struct VeSlot {
  TagGuard guard;
  VeOperand o0;
  std::optional<uint32_t> o1;
};

// Where each argument of an op comes from: 0 the stream, 1 operand0, 2 operand1 (the manual's
// UnaryArgMode / BinaryArgMode / TernaryArgMode digits).
struct VeArgs {
  std::array<int8_t, 3> from{0, 1, 2};
  std::string name;  // "Mode01"
};
enum class UnaryArgMode { kMode0, kMode1 };
enum class BinaryArgMode { kMode00, kMode01, kMode10, kMode11 };
enum class TernaryArgMode { kMode012, kMode002, kMode102, kMode112, kMode020, kMode021, kMode120 };
VeArgs ArgsOf(UnaryArgMode mode);
VeArgs ArgsOf(BinaryArgMode mode);
VeArgs ArgsOf(TernaryArgMode mode);

// ---- The recorded configuration -----------------------------------------------------------------

struct VeStep {
  // kZip: two-group mode's merge, out = fn(group 0, group 1) by `args` (0 group 0, 1 group 1).
  // kIntraReduce / kInterReduce: the reductions, planned by their modules (`intra_reduce`,
  // `inter_reduce`).
  enum class Kind { kOp, kSplit, kTrim, kConcat, kPad, kStash, kReinterpret, kZip, kIntraReduce, kInterReduce };
  Kind kind = Kind::kOp;
  VeStage stage = VeStage::kBranch;
  std::string call;  // the builder call, "vector_fxp"
  // kOp
  VeFn fn = VeFn::kAddFxp;
  std::optional<VeAlu> alu;
  VeArgs args;
  int32_t param = 0;             // FxpToFp / FpToFxp int_width
  std::vector<VeSlot> slots;     // binary / ternary operands; empty for a unary op
  std::optional<TagGuard> guard; // a guarded unary op
  StreamShape out;               // the stream after the step
  std::shared_ptr<const IntraSliceReduceStage> intra_reduce;  // kIntraReduce
  std::shared_ptr<const InterSliceReduceStage> inter_reduce;  // kInterReduce
  std::string Describe() const;
};

struct VectorStage {
  StreamShape in;
  BranchMode branch;
  // Two-group mode (vector_intra_slice_unzip): the groups are the coordinates 0 and 1 of this axis
  // of the stream's Time; each element's execution id has the group in bit 3 (an AxisToggle over
  // it), so per-group operands are slots guarded by GroupId. Empty in single-stream mode.
  std::string unzip_axis;
  std::vector<VeStep> steps;
  std::vector<VrfOperandInfo> vrfs;  // what kVrf operands index
  StreamShape out;
  std::string Describe() const;
  // Way4 steps (the float region) and ALUs claimed: the cycle estimate's terms.
  bool has_way4() const;
  int alus_used() const;
};

// ---- Planning --------------------------------------------------------------------------------

// An operand as the builder receives it, before slots are assigned (VeBranched builds several).
struct VeBranched {
  std::vector<VeSlot> slots;
  absl::Status status;
  // reg0..reg2 in call order, then at most one rf slot, last.
  VeBranched& imm(TagGuard guard, VeOperand operand, std::optional<float> o1 = std::nullopt);
  VeBranched& rf(TagGuard guard, VeOperand operand, std::optional<float> o1 = std::nullopt);
};

class VectorChain {
 public:
  // vector_init(): after collect or the Contraction Engine's accumulate, on i32 / f32.
  static absl::StatusOr<VectorChain> Init(const StreamShape& in, StreamPosition position);

  absl::Status Branch(const BranchMode& mode);
  // vector_intra_slice_unzip(): two-group mode over the axis `axis` (size 2) of Time; each group's
  // Time is `split_time` (Time without the axis).
  absl::Status Unzip(const std::string& axis, const Mapping& split_time);
  // A per-group op in two-group mode: operand0 for group 0 and / or group 1 (nullopt: that group
  // passes unchanged); a unary op applies to the groups whose flag is set.
  VeBranched Groups(const std::optional<VeOperand>& g0, const std::optional<VeOperand>& g1,
                    std::optional<float> o1_g0 = std::nullopt, std::optional<float> o1_g1 = std::nullopt) const;
  // The _zip ops: merge the two groups with one op (args: 0 group 0, 1 group 1).
  absl::Status LogicZip(LogicBinaryOpI32 op, const VeArgs& args);
  absl::Status LogicZip(LogicBinaryOpF32 op, const VeArgs& args);
  absl::Status FxpZip(FxpBinaryOp op, const VeArgs& args);
  absl::Status FpZip(FpBinaryOp op, const VeArgs& args);
  absl::Status ClipZip(ClipBinaryOpI32 op, const VeArgs& args);
  absl::Status ClipZip(ClipBinaryOpF32 op, const VeArgs& args);
  bool paired() const { return paired_; }
  absl::Status Logic(LogicBinaryOpI32 op, const VeArgs& args, const VeBranched& operand);
  absl::Status Logic(LogicBinaryOpF32 op, const VeArgs& args, const VeBranched& operand);
  absl::Status Fxp(FxpBinaryOp op, const VeArgs& args, const VeBranched& operand);
  absl::Status FxpToFp(int int_width);
  absl::Status Split(const Mapping& time, const Mapping& packet);
  absl::Status TrimWay4(const Mapping& packet);
  absl::Status FpUnary(FpUnaryOp op, const VeArgs& args, std::optional<TagGuard> guard,
                       const VeBranched& operand);
  absl::Status FpBinary(FpBinaryOp op, const VeArgs& args, const VeBranched& operand);
  absl::Status FpTernary(FpTernaryOp op, const VeArgs& args, const VeBranched& operand);
  absl::Status FpDiv(FpDivBinaryOp op, const VeArgs& args, const VeBranched& operand);
  absl::Status Concat(const Mapping& time, const Mapping& packet);
  absl::Status PadWay8(const Mapping& packet);
  absl::Status FpToFxp(int int_width);
  absl::Status Clip(ClipBinaryOpI32 op, const VeArgs& args, const VeBranched& operand);
  absl::Status Clip(ClipBinaryOpF32 op, const VeArgs& args, const VeBranched& operand);
  absl::Status Stash();
  // vector_filter (dsl/vector_filter.cc): keeps the elements whose execution id `keep` admits.
  absl::Status Filter(const TagGuard& keep);
  absl::Status Reinterpret(DType to);
  // vector_intra_slice_reduce::<axis, out_time, out_packet>(op) on the Way4 stream after a narrow.
  absl::Status IntraSliceReduce(const std::string& axis, const Mapping& out_time, const Mapping& out_packet,
                                VeReduceOp op, ReducePadding padding);
  // vector_inter_slice_reduce::<out_slice, out_time>(op): InterFirst right after vector_init(), or
  // IntraFirst from a Way8 intra-slice stage.
  absl::Status InterSliceReduce(const Mapping& out_slice, const Mapping& out_time, VeReduceOp op);
  // Registers a VRF tensor an operand reads; returns its operand index.
  absl::StatusOr<int> AddVrf(VrfOperandInfo vrf);
  // vector_final(): the finished configuration (Way8, exits to cast / transpose / commit).
  absl::StatusOr<VectorStage> Final();

  const StreamShape& shape() const { return shape_; }
  VeStage stage() const { return stage_; }

 private:
  enum class StashState { kFresh, kOccupied, kSpent };
  // Fails unless `target` may follow the current stage at the current Way (the transition table).
  absl::Status Enter(const char* call, VeStage target);
  absl::Status RequireWay(const char* call, VeWay way) const;
  absl::Status RequireType(const char* call, DType type) const;
  absl::Status Claim(const char* call, const char* op, VeAlu alu);
  absl::Status CheckOperands(const char* call, const char* op, DType type, int arity, const VeArgs& args,
                             const VeBranched& operand);
  absl::Status AddOp(const char* call, const char* op, VeStage stage, VeFn fn, std::optional<VeAlu> alu, DType type,
                     int arity, const VeArgs& args, const VeBranched& operand, DType out_type, int32_t param = 0,
                     std::optional<TagGuard> guard = std::nullopt);
  absl::Status Relayout(const char* call, VeStep::Kind kind, VeStage stage, VeWay from, const StreamShape& out);
  absl::Status Zip(const char* call, const char* op, VeStage stage, VeFn fn, VeAlu alu, DType type, const VeArgs& args);
  absl::Status NotPaired(const char* call) const;
  absl::Status CheckVrfIds(const BranchMode& mode) const;
  // After an IntraFirst vector_inter_slice_reduce only Filter and Output may follow.
  absl::Status AfterInterSlice(const char* call, VeStage target) const;
  // The Way8 stream the last narrow consumed, and how it narrowed.
  std::pair<StreamShape, Narrowing> NarrowedFrom() const;

  VectorStage config_;
  StreamShape shape_;
  VeStage stage_ = VeStage::kBranch;
  bool entered_ = false;  // vector_intra_slice_branch called
  VeWay way_ = VeWay::kWay8;
  std::bitset<kVeAluCount> used_;
  StashState stash_ = StashState::kFresh;
  DType stash_dtype_ = DType::kI32;
  VeWay stash_way_ = VeWay::kWay8;
  bool paired_ = false;   // between unzip and a _zip
  bool zipped_ = false;   // after a _zip: stash and filter stay unavailable
  Mapping group_time_;    // one group's Time while paired
  enum class Order { kUnset, kIntraFirst, kInterFirst };  // the manual's VeOrder
  Order order_ = Order::kUnset;
  bool inter_done_ = false;  // vector_inter_slice_reduce ran
};

}  // namespace visa
