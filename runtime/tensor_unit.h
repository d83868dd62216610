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

  // Every call above consumes the stream (a chain is one value moving from engine to engine), so
  // a stream kept in a variable is passed on with std::move: `std::move(fetched).collect(...)`.
  // Calling on a named stream without it fails to compile with that sentence .
  VISA_CONSUMED_STREAM_CALL(fetch)
  VISA_CONSUMED_STREAM_CALL(fetch_with_zero_point)
  VISA_CONSUMED_STREAM_CALL(fetch_with_zero_points)
  VISA_CONSUMED_STREAM_CALL(fetch_with_table)
  VISA_CONSUMED_STREAM_CALL(fetch_masked)
  VISA_CONSUMED_STREAM_CALL(switch_engine)
  VISA_CONSUMED_STREAM_CALL(collect)
  VISA_CONSUMED_STREAM_CALL(align)
  VISA_CONSUMED_STREAM_CALL(contract)
  VISA_CONSUMED_STREAM_CALL(accumulate)
  VISA_CONSUMED_STREAM_CALL(cast)
  VISA_CONSUMED_STREAM_CALL(transpose)
  VISA_CONSUMED_STREAM_CALL(commit)
  VISA_CONSUMED_STREAM_CALL(commit_view)
  VISA_CONSUMED_STREAM_CALL(to_trf)
  VISA_CONSUMED_STREAM_CALL(to_vrf)

  const absl::Status& status() const { return status_; }
  StreamPosition position() const { return position_; }
  const StreamShape& shape() const { return shape_; }

 private:
  friend class TensorUnit;
  Stream(Context* ctx, TuContextKind kind) : ctx_(ctx), kind_(kind) {}

  // Fails the stream unless `call` may follow the current position (stream_order.h).
  bool Allow(StreamCall call);
  Stream Fail(absl::Status status) &&;
  // Records a planned stage and moves the stream to the shape and position it leads to.
  template <typename S>
  Stream Then(StreamCall call, absl::StatusOr<S> stage, const StreamShape& (*out)(const S&)) &&;
  Stream FetchWith(StreamCall call, DType out, const Mapping& time, const Mapping& packet, FetchAdapter adapter) &&;
  // Records the finished pipeline writing `output` and runs it. A new tensor `reserved` for it
  // claims its ranges once the run succeeded (the inputs are read first) and is released otherwise.
  absl::Status Finish(Stage stage, const DeviceTensor& output, bool reserved);
  // The commit_view rules on the target that the Commit Engine's own plan does not cover.
  absl::Status CheckCommitTarget(const DmTensor& view) const;

  Context* ctx_;
  TuContextKind kind_;
  StreamPosition position_ = StreamPosition::kBegin;
  StreamShape shape_;
  absl::Status status_;
  std::vector<DmTensor> inputs_;
  std::optional<TrfTensor> weights_;  // paired by align
  PipelineOp op_;
};

// `ctx.main` or `ctx.sub`.
class TensorUnit {
 public:
  Stream begin(const DmTensor& input);
  // Two tensors with identical mappings alternating along `axis` (I = 2), an outer Time term.
  Stream begin_interleaved(const Mapping& axis, const DmTensor& lhs, const DmTensor& rhs);

 private:
  friend class Context;
  TensorUnit(Context* ctx, TuContextKind kind) : ctx_(ctx), kind_(kind) {}
  Context* ctx_;
  TuContextKind kind_;
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
  void Record(Op op) { program_.ops.push_back(std::move(op)); }

 private:
  Device* device_;
  Backend* backend_;
  Program program_;
};

}  // namespace visa
