// Staging: a device tensor's units copied into one host buffer laid out by its full mapping
// (position = spatial position * Element size + element position), so compiled moves address
// device data as plain strided memory, and written back unit by unit afterwards.
//
// For what compiled moves cannot address in place (jit/in_place.h: HBM in a rank of several, a
// source that overlaps its destination, a 4-bit view off a byte) the JIT reads each live unit's
// bytes once into the buffer and writes them back once; spatial positions that hold no data are
// never read or written (the buffer is not initialized there). A view is staged in its own layout: each slot
// holds the base tensor's Element positions [window offset, window offset + window size).
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dsl/commit_engine.h"
#include "runtime/device.h"
#include "runtime/tensor.h"

namespace visa::jit {

class Staged {
 public:
  // The current bytes of a tensor or view, with `tail` zeroed positions after the last unit (a
  // sequencer may over-read past the Element for stream positions that are padding).
  static absl::StatusOr<Staged> Read(const DeviceTensor& tensor, int64_t tail = 0);
  // The current bytes of a placement that is not a tensor yet (the destination of a store);
  // with `read` false the buffer is left as is, for a move that overwrites every position.
  static absl::StatusOr<Staged> Read(Device& device, const Placement& placement, bool read = true);
  // Two tensors with identical placements one after the other (an interleaved fetch): tensor 1's
  // positions start at `positions_per_tensor()`.
  static absl::StatusOr<Staged> ReadPair(const DeviceTensor& first, const DeviceTensor& second);

  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  int64_t positions() const { return positions_; }  // all tensors staged
  int64_t positions_per_tensor() const { return prefix_size_ * window_; }
  int64_t live_bytes() const;  // bytes the live units hold

  // Writes every live unit's window back (only the slices `slices` enables when given).
  absl::Status Write(const SliceBitmap* slices = nullptr) const;

 private:
  Staged() = default;
  absl::Status ReadUnits(int64_t first_position);
  absl::Status CopySlot(int64_t k, int64_t first_position, bool to_device) const;

  Device* device_ = nullptr;
  const Placement* placement_ = nullptr;
  std::shared_ptr<const Placement> owned_;  // a placement staged before it is a tensor
  int bits_ = 8;
  int64_t window_ = 0;   // positions per slot (the handle's Element size)
  int64_t offset_ = 0;   // the slot's first position in the base Element
  int64_t prefix_size_ = 0;
  int64_t positions_ = 0;
  std::unique_ptr<uint8_t[]> data_;
};

}  // namespace visa::jit
