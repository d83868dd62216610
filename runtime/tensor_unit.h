// The kernel-facing API of the Tensor Unit: a Context with `main`, `sub`, `tdma` and `pdma`, and
// engine chains that read like the manual:
//
//   ctx.main.begin(dm.view()).fetch(DType::kI32, T, P).collect(T, P).commit(E, 1024)
//
// The builder plans, checks and records; it computes nothing. Every call checks the engine's rules
// on the stream shape it receives and derives the hardware configuration; the chain's final call
// (commit, to_trf, to_vrf) records the whole pipeline as one op of the context's Program and, when
// the context's backend executes, runs it there at once (record, then execute: the same path a
// traced Program takes through Launch). A call that breaks a rule (or comes at a position where the
// pipeline does not allow it) makes the stream invalid; later calls pass the error along and the
// final call returns it, so the error names the call that broke the rule.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/stream.h"
#include "dsl/stream_order.h"
#include "runtime/address.h"
#include "runtime/backend.h"
#include "runtime/device.h"
#include "runtime/dma.h"
#include "runtime/program.h"
#include "runtime/tensor.h"

namespace visa {

class Context;

template <typename...>
inline constexpr bool kConsumedStream = false;

// For each name, an overload taken only by a call on a named (lvalue) stream, which stops the
// compilation with the remedy instead of a list of rejected rvalue overloads.
#define VISA_CONSUMED_STREAM_CALL(name)                                                          \
  template <typename... Args>                                                                    \
  auto name(Args&&... args) & -> decltype(std::move(*this).name(std::forward<Args>(args)...)) {   \
    static_assert(::visa::kConsumedStream<Args...>,                                             \
                  "visa::Stream: each call consumes the stream; call it on std::move(stream) "  \
                  "(a stream is one pipeline value, it cannot be continued twice)");            \
  }

// ---- Vector Engine operands as kernels write them (manual, "Operands") ----------------------------

// The stash marker: `.vector_clip(ClipBinaryOpF32::kMax, Stash)` reads what vector_stash() saved.
struct StashOperand {};
inline constexpr StashOperand Stash{};

// One operand: a constant (broadcast to every element), a VRF tensor loaded with `to_vrf`, or the
// stash (the manual's VeRhs / IntoOperands).
class VeRhs {
 public:
  VeRhs(int32_t value) : operand_{VeOperand::Kind::kConstant, DType::kI32, static_cast<uint32_t>(value)} {}
  VeRhs(float value);
  VeRhs(StashOperand) : operand_{VeOperand::Kind::kStash} {}
  static VeRhs vrf(const VrfTensor& tensor);

  const VeOperand& operand() const { return operand_; }
  const std::optional<VrfTensor>& tensor() const { return tensor_; }

 private:
  VeOperand operand_;
  std::optional<VrfTensor> tensor_;
};

// An op's operand slots: one unconditional operand (what a bare VeRhs converts to), an operand
// per execution-id group (VeBranchOperand::group), or several guarded slots: reg0..reg2 filled by
// `imm` in call order, then one `rf` (a VRF tensor or the stash), last. A ternary op's slots
// carry their operand1 (always an f32 constant).
class VeBranchOperand {
 public:
  VeBranchOperand() = default;
  VeBranchOperand(VeRhs operand) { add(TagGuard::All(), std::move(operand), std::nullopt); }
  VeBranchOperand(int32_t value) : VeBranchOperand(VeRhs(value)) {}
  VeBranchOperand(float value) : VeBranchOperand(VeRhs(value)) {}
  VeBranchOperand(StashOperand s) : VeBranchOperand(VeRhs(s)) {}
  VeBranchOperand(const VrfTensor& vrf) : VeBranchOperand(VeRhs::vrf(vrf)) {}
  VeBranchOperand(VeRhs operand0, float operand1) { add(TagGuard::All(), std::move(operand0), operand1); }
  static VeBranchOperand always(VeRhs operand) { return VeBranchOperand(std::move(operand)); }
  static VeBranchOperand group(VeRhs operand, GroupId group);
  VeBranchOperand& imm(TagGuard guard, VeRhs operand, std::optional<float> operand1 = std::nullopt);
  VeBranchOperand& rf(TagGuard guard, VeRhs operand, std::optional<float> operand1 = std::nullopt);

  struct Slot {
    TagGuard guard;
    VeRhs operand;
    std::optional<float> operand1;
    bool rf;
  };
  const std::vector<Slot>& slots() const { return slots_; }

 private:
  void add(TagGuard guard, VeRhs operand, std::optional<float> operand1);
  std::vector<Slot> slots_;
};

// A stream between two engines, as a value: its shape, position and the op being recorded.
class Stream {
 public:
  // Fetch Engine (with the adapter's stages as options).
  Stream fetch(DType out, const Mapping& time, const Mapping& packet) &&;
  Stream fetch_with_zero_point(DType out, int32_t zero_point, const Mapping& time,
                               const Mapping& packet) &&;
  Stream fetch_with_zero_points(DType out, int32_t lhs, int32_t rhs, const Mapping& time,
                                const Mapping& packet) &&;
  Stream fetch_with_table(DType out, std::vector<uint32_t> table, const Mapping& time,
                          const Mapping& packet) &&;
  // Masking: padded packet positions read as `pad_value` instead of an arbitrary value.
  Stream fetch_masked(DType out, double pad_value, const Mapping& time, const Mapping& packet) &&;
  // Indirect Access (runtime/indirect_fetch_calls.cc, dsl/indirect_fetch.h): Time starts with the
  // i32 DM `index` tensor's axis K, which the stream holds where the DM Element holds the rows
  // `table_axis`; the Fetch Sequencer's outermost entry is the IndirectLoop, reading row index[k]
  // at step k. An index outside the rows fails the op when it runs.
  Stream fetch_indirect(DType out, const DmTensor& index, const std::string& table_axis, const Mapping& time,
                        const Mapping& packet) &&;
  // The same with the Fetch Adapter's masking: padded positions of the stream (`# n + V + # m`
  // left and right padding included) read as `pad_value`.
  Stream fetch_indirect_masked(DType out, double pad_value, const DmTensor& index, const std::string& table_axis,
                               const Mapping& time, const Mapping& packet) &&;
  // Switch Engine (`switch` is a C++ keyword): redistributes the stream across slices.
  Stream switch_engine(const SwitchConfig& config, const Mapping& slice, const Mapping& time) &&;
  // Collect Engine.
  Stream collect(const Mapping& time, const Mapping& packet) &&;
  // Contraction Engine: the Aligner pairs the collect stream with TRF weights in the computation
  // mapping [Row, Time, Packet] (Packet = 64 bytes); contract multiplies and sums the packet's
  // innermost 2^depth elements (leaving `packet`); accumulate sums the Time axes `time` drops.
  Stream align(const Mapping& time, const Mapping& packet, const TrfTensor& weights) &&;
  Stream contract(const Mapping& packet, ReduceOp op = ReduceOp::kAdd) &&;
  Stream accumulate(const Mapping& time, const Mapping& packet, AccumulationKind kind) &&;
  // Cast Engine and Transpose Engine.
  Stream cast(DType out, const Mapping& packet) &&;
  Stream transpose(const Mapping& time, const Mapping& packet) &&;
  // Commit Adapter cast (main context): f32 -> bf16 on the way into DM, the packet mapping kept;
  // the ReLU form sends negative non-NaN values (and -0) to +0 first (dsl/commit_cast.h).
  Stream commit_cast(DType to) &&;
  Stream commit_cast_relu(DType to) &&;
  // Commit Engine: a new DM tensor with Element `element` at `address` (same Chip, Cluster, Slice).
  absl::StatusOr<DmTensor> commit(const Mapping& element, Address address) &&;
  // The same with the Slice Bitmap: only enabled slices receive the data; the others keep what
  // their DM holds at the new tensor's address (zero if never written).
  absl::StatusOr<DmTensor> commit(const Mapping& element, Address address, const SliceBitmap& slices) &&;
  // Commit into an existing DM tensor or view (its Element is the commit Element; its Chip,
  // Cluster and Slice must equal the stream's). Only the view's live positions are written.
  absl::Status commit_view(const DmTensor& view) &&;
  // Register files (sub context).
  absl::StatusOr<TrfTensor> to_trf(const Mapping& row, const Mapping& element,
                                   TrfAddress address = TrfAddress::kFull) &&;
  absl::StatusOr<VrfTensor> to_vrf(const Mapping& element, int64_t address) &&;

  // Vector Engine (manual, "Vector Engine"): vector_init() after collect or accumulate (i32 / f32),
  // vector_intra_slice_branch(mode), the stages in order, vector_final(); then cast / transpose /
  // commit. Each call checks its rules (dsl/vector_engine.h); the chain is one recorded stage.
  Stream vector_init() &&;
  Stream vector_intra_slice_branch(const BranchMode& mode) &&;
  Stream vector_logic(LogicBinaryOpI32 op, const VeBranchOperand& operand) &&;
  Stream vector_logic(LogicBinaryOpF32 op, const VeBranchOperand& operand) &&;
  Stream vector_logic_with_mode(LogicBinaryOpI32 op, BinaryArgMode mode, const VeBranchOperand& operand) &&;
  Stream vector_logic_with_mode(LogicBinaryOpF32 op, BinaryArgMode mode, const VeBranchOperand& operand) &&;
  Stream vector_fxp(FxpBinaryOp op, const VeBranchOperand& operand) &&;
  Stream vector_fxp_with_mode(FxpBinaryOp op, BinaryArgMode mode, const VeBranchOperand& operand) &&;
  Stream vector_fxp_to_fp(int int_width) &&;
  Stream vector_split(const Mapping& time, const Mapping& packet) &&;   // Narrow, both halves live
  Stream vector_trim_way4(const Mapping& packet) &&;                    // Narrow, back 4 lanes padding
  Stream vector_fp_unary(FpUnaryOp op) &&;
  Stream vector_fp_unary(TagGuard guard, FpUnaryOp op) &&;  // only where the guard admits the id
  Stream vector_fp_unary_with_mode(FpUnaryOp op, UnaryArgMode mode, const VeBranchOperand& operand) &&;
  Stream vector_fp_binary(FpBinaryOp op, const VeBranchOperand& operand) &&;
  Stream vector_fp_binary_with_mode(FpBinaryOp op, BinaryArgMode mode, const VeBranchOperand& operand) &&;
  Stream vector_fp_ternary(FpTernaryOp op, const VeBranchOperand& operands) &&;
  Stream vector_fp_ternary_with_mode(FpTernaryOp op, TernaryArgMode mode, const VeBranchOperand& operands) &&;
  Stream vector_fp_div(FpDivBinaryOp op, const VeBranchOperand& operand) &&;
  Stream vector_fp_div_with_mode(FpDivBinaryOp op, BinaryArgMode mode, const VeBranchOperand& operand) &&;
  Stream vector_concat(const Mapping& time, const Mapping& packet) &&;  // Widen, reverses vector_split
  Stream vector_pad_way8(const Mapping& packet) &&;                     // Widen, reverses vector_trim_way4
  Stream vector_fp_to_fxp(int int_width) &&;
  Stream vector_clip(ClipBinaryOpI32 op, const VeBranchOperand& operand) &&;
  Stream vector_clip(ClipBinaryOpF32 op, const VeBranchOperand& operand) &&;
  Stream vector_clip_with_mode(ClipBinaryOpI32 op, BinaryArgMode mode, const VeBranchOperand& operand) &&;
  Stream vector_clip_with_mode(ClipBinaryOpF32 op, BinaryArgMode mode, const VeBranchOperand& operand) &&;
  Stream vector_stash() &&;
  // BranchMode::Vrf: the execution ids (0-15) from an i32 VRF tensor (dsl/vector_branch_ids.h).
  Stream vector_intra_slice_branch(const VrfTensor& execution_ids) &&;
  // Filter: keeps the elements whose execution id `keep` admits, the others become 0.
  Stream vector_filter(const TagGuard& keep) &&;
  Stream vector_reinterpret(DType to) &&;
  Stream vector_final() &&;
  // Reductions (runtime/vector_reduce_calls.cc): the manual's `vector_intra_slice_reduce::<R, OTime,
  // OPacket>(op)` on the Way4 stream (padding of R left out by the Valid Count Generator, or
  // ReducePadding::kIdentity when the fetch padded R with the op's identity), and
  // `vector_inter_slice_reduce::<SliceOut, TimeOut>(op)` right after vector_init() (InterFirst) or
  // from a Way8 intra-slice stage (IntraFirst).
  Stream vector_intra_slice_reduce(const std::string& axis, const Mapping& out_time, const Mapping& out_packet,
                                   IntraSliceReduceOpI32 op, ReducePadding padding = ReducePadding::kValidCount) &&;
  Stream vector_intra_slice_reduce(const std::string& axis, const Mapping& out_time, const Mapping& out_packet,
                                   IntraSliceReduceOpF32 op, ReducePadding padding = ReducePadding::kValidCount) &&;
  Stream vector_inter_slice_reduce(const Mapping& out_slice, const Mapping& out_time, InterSliceReduceOpI32 op) &&;
  Stream vector_inter_slice_reduce(const Mapping& out_slice, const Mapping& out_time, InterSliceReduceOpF32 op) &&;

  // Two-group mode (manual, "Two-Group Mode"): after vector_init(), the Time axis `axis` (I = 2, e.g.
  // from begin_interleaved) splits the stream into group 0 and group 1, each with Time
  // `split_time` (`tile_time` is the manual's TileTime, [1 # 2]). Common stages (fxp_to_fp, split,
  // concat, fp_to_fxp, reinterpret) apply to both; per-group ops take an operand per group
  // (std::nullopt skips that group); a _zip op merges the pair (mode digits: 0 group 0, 1 group 1).
  Stream vector_intra_slice_unzip(const std::string& axis, const Mapping& tile_time, const Mapping& split_time) &&;
  Stream vector_logic(LogicBinaryOpI32 op, std::optional<VeRhs> group0, std::optional<VeRhs> group1) &&;
  Stream vector_fxp(FxpBinaryOp op, std::optional<VeRhs> group0, std::optional<VeRhs> group1) &&;
  Stream vector_fp_unary(FpUnaryOp op, bool group0, bool group1) &&;
  Stream vector_fp_binary(FpBinaryOp op, std::optional<VeRhs> group0, std::optional<VeRhs> group1) &&;
  Stream vector_clip(ClipBinaryOpI32 op, std::optional<VeRhs> group0, std::optional<VeRhs> group1) &&;
  Stream vector_clip(ClipBinaryOpF32 op, std::optional<VeRhs> group0, std::optional<VeRhs> group1) &&;
  // (operand0, operand1) per group, operand1 an f32 constant (runtime/vector_group_calls.cc).
  Stream vector_fp_ternary(FpTernaryOp op, std::optional<std::pair<VeRhs, float>> group0,
                           std::optional<std::pair<VeRhs, float>> group1) &&;
  Stream vector_fp_div(FpDivBinaryOp op, std::optional<VeRhs> group0, std::optional<VeRhs> group1) &&;
  Stream vector_logic_zip(LogicBinaryOpI32 op, BinaryArgMode mode = BinaryArgMode::kMode01) &&;
  Stream vector_fxp_zip(FxpBinaryOp op, BinaryArgMode mode = BinaryArgMode::kMode01) &&;
  Stream vector_fp_zip(FpBinaryOp op, BinaryArgMode mode = BinaryArgMode::kMode01) &&;
  Stream vector_clip_zip(ClipBinaryOpI32 op, BinaryArgMode mode = BinaryArgMode::kMode01) &&;
  Stream vector_clip_zip(ClipBinaryOpF32 op, BinaryArgMode mode = BinaryArgMode::kMode01) &&;

  // Names the operation the pipeline implements (`visa explain` prints it above the stages), e.g.
  // "ParallelCopy"; it changes nothing else.
  Stream named(std::string operation) &&;

  // Every call above consumes the stream (a chain is one value moving from engine to engine), so
  // a stream kept in a variable is passed on with std::move: `std::move(fetched).collect(...)`.
  // Calling on a named stream without it fails to compile with that sentence .
  VISA_CONSUMED_STREAM_CALL(fetch)
  VISA_CONSUMED_STREAM_CALL(fetch_with_zero_point)
  VISA_CONSUMED_STREAM_CALL(fetch_with_zero_points)
  VISA_CONSUMED_STREAM_CALL(fetch_with_table)
  VISA_CONSUMED_STREAM_CALL(fetch_masked)
  VISA_CONSUMED_STREAM_CALL(fetch_indirect)
  VISA_CONSUMED_STREAM_CALL(fetch_indirect_masked)
  VISA_CONSUMED_STREAM_CALL(switch_engine)
  VISA_CONSUMED_STREAM_CALL(collect)
  VISA_CONSUMED_STREAM_CALL(align)
  VISA_CONSUMED_STREAM_CALL(contract)
  VISA_CONSUMED_STREAM_CALL(accumulate)
  VISA_CONSUMED_STREAM_CALL(cast)
  VISA_CONSUMED_STREAM_CALL(transpose)
  VISA_CONSUMED_STREAM_CALL(commit)
  VISA_CONSUMED_STREAM_CALL(commit_view)
  VISA_CONSUMED_STREAM_CALL(named)
  VISA_CONSUMED_STREAM_CALL(commit_cast)
  VISA_CONSUMED_STREAM_CALL(commit_cast_relu)
  VISA_CONSUMED_STREAM_CALL(to_trf)
  VISA_CONSUMED_STREAM_CALL(to_vrf)
  VISA_CONSUMED_STREAM_CALL(vector_clip)
  VISA_CONSUMED_STREAM_CALL(vector_clip_with_mode)
  VISA_CONSUMED_STREAM_CALL(vector_clip_zip)
  VISA_CONSUMED_STREAM_CALL(vector_concat)
  VISA_CONSUMED_STREAM_CALL(vector_filter)
  VISA_CONSUMED_STREAM_CALL(vector_final)
  VISA_CONSUMED_STREAM_CALL(vector_fp_binary)
  VISA_CONSUMED_STREAM_CALL(vector_fp_binary_with_mode)
  VISA_CONSUMED_STREAM_CALL(vector_fp_div)
  VISA_CONSUMED_STREAM_CALL(vector_fp_div_with_mode)
  VISA_CONSUMED_STREAM_CALL(vector_fp_ternary)
  VISA_CONSUMED_STREAM_CALL(vector_fp_ternary_with_mode)
  VISA_CONSUMED_STREAM_CALL(vector_fp_to_fxp)
  VISA_CONSUMED_STREAM_CALL(vector_fp_unary)
  VISA_CONSUMED_STREAM_CALL(vector_fp_unary_with_mode)
  VISA_CONSUMED_STREAM_CALL(vector_fp_zip)
  VISA_CONSUMED_STREAM_CALL(vector_fxp)
  VISA_CONSUMED_STREAM_CALL(vector_fxp_to_fp)
  VISA_CONSUMED_STREAM_CALL(vector_fxp_with_mode)
  VISA_CONSUMED_STREAM_CALL(vector_fxp_zip)
  VISA_CONSUMED_STREAM_CALL(vector_init)
  VISA_CONSUMED_STREAM_CALL(vector_intra_slice_branch)
  VISA_CONSUMED_STREAM_CALL(vector_intra_slice_reduce)
  VISA_CONSUMED_STREAM_CALL(vector_inter_slice_reduce)
  VISA_CONSUMED_STREAM_CALL(vector_intra_slice_unzip)
  VISA_CONSUMED_STREAM_CALL(vector_logic)
  VISA_CONSUMED_STREAM_CALL(vector_logic_with_mode)
  VISA_CONSUMED_STREAM_CALL(vector_logic_zip)
  VISA_CONSUMED_STREAM_CALL(vector_pad_way8)
  VISA_CONSUMED_STREAM_CALL(vector_reinterpret)
  VISA_CONSUMED_STREAM_CALL(vector_split)
  VISA_CONSUMED_STREAM_CALL(vector_stash)
  VISA_CONSUMED_STREAM_CALL(vector_trim_way4)

  const absl::Status& status() const { return status_; }
  StreamPosition position() const { return position_; }
  const StreamShape& shape() const { return shape_; }

 private:
  friend class TensorUnit;
  Stream(Context* ctx, ContextKind kind) : ctx_(ctx), kind_(kind) {}

  // Fails the stream unless `call` may follow the current position (stream_order.h).
  bool Allow(StreamCall call);
  Stream Fail(absl::Status status) &&;
  // Records a planned stage and moves the stream to the shape and position it leads to.
  template <typename S>
  Stream Then(StreamCall call, absl::StatusOr<S> stage, const StreamShape& (*out)(const S&)) &&;
  Stream FetchWith(StreamCall call, DType out, const Mapping& time, const Mapping& packet, FetchAdapter adapter) &&;
  Stream FetchIndirect(StreamCall call, DType out, std::optional<double> pad_value, const DmTensor& index,
                       const std::string& table_axis, const Mapping& time, const Mapping& packet) &&;
  // Records the finished pipeline writing `output` and runs it. A new tensor `reserved` for it
  // claims its ranges once the run succeeded (the inputs are read first) and is released otherwise.
  absl::Status Finish(Stage stage, const DeviceTensor& output, bool reserved);
  // Runs one planning call on the open vector chain (failing the stream when there is none).
  Stream Vector(const char* call, const std::function<absl::Status(VectorChain&)>& plan) &&;
  // An operand's slots as the chain plans them, registering the VRF tensors they read.
  absl::StatusOr<VeBranched> Slots(const VeBranchOperand& operand);
  // One operand per group (two-group mode), as slots guarded by GroupId.
  absl::StatusOr<VeBranched> GroupSlots(const std::optional<VeRhs>& group0, const std::optional<VeRhs>& group1);
  // Registers a VRF tensor the vector chain reads; returns its operand index.
  absl::StatusOr<int> AddVrfOperand(const VrfTensor& tensor);
  // The commit_view rules on the target that the Commit Engine's own plan does not cover.
  absl::Status CheckCommitTarget(const DmTensor& view) const;

  Context* ctx_;
  ContextKind kind_;
  StreamPosition position_ = StreamPosition::kBegin;
  StreamShape shape_;
  absl::Status status_;
  std::vector<DmTensor> inputs_;
  std::optional<TrfTensor> weights_;  // paired by align
  std::optional<VectorChain> vector_;  // between vector_init() and vector_final()
  std::vector<DeviceTensor> vrf_operands_;
  PipelineOp op_;
};

// `ctx.main` or `ctx.sub`.
class TensorUnit {
 public:
  Stream begin(const DmTensor& input);
  // Two tensors with identical mappings alternating along `axis` (I = 2), an outer Time term.
  Stream begin_interleaved(const Mapping& axis, const DmTensor& lhs, const DmTensor& rhs);
  ContextKind kind() const { return kind_; }
  // Generate Mode (sub context): fills the live cells of a DM tensor or view with `value`, which
  // must be exactly a value of its type (runtime/memset.h has the rules).
  absl::Status memset(const DmTensor& view, double value);

 private:
  friend class Context;
  TensorUnit(Context* ctx, ContextKind kind) : ctx_(ctx), kind_(kind) {}
  Context* ctx_;
  ContextKind kind_;
};

class Context {
 public:
  // Ops run on `backend` as they are recorded; a backend that does not execute (TraceBackend)
  // makes the Context record only: no byte of the device is read or written.
  Context(Device& device, Backend& backend);
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  TensorUnit main;
  TensorUnit sub;
  Dma tdma;
  Dma pdma;

  Device& device() const { return *device_; }
  Backend& backend() const { return *backend_; }
  bool executes() const { return backend_->executes(); }
  const Program& program() const { return program_; }

  // Runs a planned op on the backend (unless recording only) and records it once it succeeded.
  absl::Status Submit(Op op, const PipelineTensors& tensors);
  absl::Status Submit(Op op, const DmaTensors& tensors);
  // Records an op without running it (a host transfer, whose data path is not a device op).
  void Record(Op op) {
    AssignSerial(op);
    program_.ops.push_back(std::move(op));
  }

 private:
  Device* device_;
  Backend* backend_;
  Program program_;
};

}  // namespace visa
