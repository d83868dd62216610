// DmaRequests: packets from the move's runs, requests and HBM penalties per packet.
#include "runtime/dma_requests.h"

#include <algorithm>

#include "runtime/cycle_model.h"
#include "runtime/relayout.h"

namespace visa {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The open packet: destination and source positions of its next element, and its length.
struct Packet {
  int64_t dst_next = -1, src_next = -1, length = 0, dst_first = 0, src_first = 0;
};

class PacketCounter {
 public:
  PacketCounter(const DeviceTensor& src, const DeviceTensor& dst)
      : src_(src), dst_(dst), src_unit_(src.levels().back().size()), dst_unit_(dst.levels().back().size()),
        bits_(StorageBits(dst.dtype())) {}

  // Positions dst + i read src + i * stride.
  void Add(const MoveRun& run) {
    if (run.src_stride != 1) {
      for (int64_t i = 0; i < run.length; ++i) Piece(run.dst + i, run.src + i * run.src_stride, 1);
      return;
    }
    // Cut at unit boundaries of either side.
    int64_t done = 0;
    while (done < run.length) {
      const int64_t d = run.dst + done, s = run.src + done;
      const int64_t room = std::min(dst_unit_ - d % dst_unit_, src_unit_ - s % src_unit_);
      const int64_t n = std::min(room, run.length - done);
      Piece(d, s, n);
      done += n;
    }
  }

  DmaRequests Finish() {
    Close();
    return counts_;
  }

 private:
  void Piece(int64_t dst, int64_t src, int64_t n) {
    const bool continues = open_.length > 0 && dst == open_.dst_next && src == open_.src_next &&
                           dst % dst_unit_ != 0 && src % src_unit_ != 0;
    if (!continues) {
      Close();
      open_ = {dst, src, 0, dst, src};
    }
    open_.length += n;
    open_.dst_next = dst + n;
    open_.src_next = src + n;
  }

  // Positions of a view count from its window.
  int64_t ByteAddress(const DeviceTensor& t, int64_t position, int64_t unit) const {
    return t.address() + (t.window_offset() + position % unit) * bits_ / 8;
  }

  void Close() {
    if (open_.length == 0) return;
    const int64_t bytes = CeilDiv(open_.length * bits_, 8);
    const int64_t requests = cycles::DmaRequestsPerPacket(bytes);
    ++counts_.packets;
    counts_.requests += requests;
    if (src_.tier() == Tier::kHbm) {
      const int64_t cost = cycles::HbmReadRequestCost(ByteAddress(src_, open_.src_first, src_unit_), bytes);
      counts_.read_cost += cost;
      counts_.split_hbm_reads += (cost - requests) / (cycles::kHbmUnalignedReadFactor - 1);
    } else {
      counts_.read_cost += requests;
    }
    if (dst_.tier() == Tier::kHbm) {
      const int64_t cost = cycles::HbmWriteRequestCost(ByteAddress(dst_, open_.dst_first, dst_unit_), bytes);
      counts_.write_cost += cost;
      counts_.partial_hbm_writes += (cost - requests) / (cycles::kHbmPartialWriteFactor - 1);
    } else {
      counts_.write_cost += requests;
    }
    open_ = {};
  }

  const DeviceTensor& src_;
  const DeviceTensor& dst_;
  int64_t src_unit_, dst_unit_;
  int bits_;
  Packet open_;
  DmaRequests counts_;
};

}  // namespace

std::optional<DmaRequests> CountDmaRequests(const DmaOp& op, int64_t max_runs) {
  if (!op.src.handle || !op.dst.handle) return std::nullopt;
  absl::StatusOr<RelayoutPlan> plan = RelayoutPlan::Make(op.dst.handle->full_mapping(), op.src.handle->full_mapping());
  if (!plan.ok()) return std::nullopt;
  PacketCounter counter(*op.src.handle, *op.dst.handle);
  int64_t runs = 0;
  bool too_many = false;
  absl::Status walked = plan->Run([&](absl::Span<const RelayoutRun> chunk) {
    if (too_many) return;
    runs += static_cast<int64_t>(chunk.size());
    if (runs > max_runs) {
      too_many = true;
      return;
    }
    for (const RelayoutRun& r : chunk) counter.Add(r);
  });
  if (!walked.ok() || too_many) return std::nullopt;
  return counter.Finish();
}

}  // namespace visa
