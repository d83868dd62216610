// The DMA Engine's 8-byte rule and the packets a move's layouts give.
#include "dsl/dma_packet.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace visa {
namespace {

constexpr int64_t kAlignBits = kDmaAlignBytes * 8;

absl::Status AlignmentError(absl::string_view what, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "DMA alignment: ", what, " needs ", why,
      " (SRAM is written in 8-byte units; manual, \"DMA Engine\" > Alignment Constraints)"));
}

}  // namespace

DmaAlignedSides AlignedSides(MemoryTier src, MemoryTier dst) {
  return {.write = dst != MemoryTier::kHbm, .read = src == MemoryTier::kHbm && dst == MemoryTier::kDm};
}

std::string WriteRuleName(MemoryTier dst) { return absl::StrCat("a write into ", MemoryTierName(dst)); }

absl::Status CheckDmaPacketBits(int64_t packet_bits, absl::string_view what, absl::string_view where) {
  if (packet_bits % kAlignBits == 0) return absl::OkStatus();
  return AlignmentError(what, absl::StrCat("8-byte packets, but the packet", where.empty() ? "" : " ", where,
                                           " is ", packet_bits / 8.0, " bytes"));
}

absl::Status CheckDmaStepBits(int64_t step_bits, absl::string_view what, absl::string_view step) {
  if (step_bits % kAlignBits == 0) return absl::OkStatus();
  return AlignmentError(what, absl::StrCat("8-byte aligned addresses, but ", step, " steps ",
                                           step_bits / 8.0, " bytes"));
}

absl::Status CheckDmaOffsetBits(int64_t offset_bits, absl::string_view what, absl::string_view where) {
  if (offset_bits % kAlignBits == 0) return absl::OkStatus();
  return AlignmentError(what, absl::StrCat("8-byte aligned addresses, but ", where, " starts ",
                                           offset_bits / 8.0, " bytes into it"));
}

void DmaPacketScan::Add(const MoveRun& run) {
  if (run.length <= 0) return;
  if (run.src_stride != 1 && run.length > 1) {
    // A gather or a broadcast: every destination element is a packet of its own. The first two
    // packets decide the rule (a one-element packet never fills 8 bytes); the last keeps the
    // scan's position right for the next run.
    Start(run.dst, run.src);
    Start(run.dst + 1, run.src + run.src_stride);
    const int64_t last = run.length - 1;
    if (last > 1) Start(run.dst + last, run.src + last * run.src_stride);
    last_dst_ = run.dst + last;
    last_src_ = run.src + last * run.src_stride;
    return;
  }
  // Contiguous on both sides: one packet, cut where either side crosses into another unit.
  int64_t d = run.dst, q = run.src, n = run.length;
  while (n > 0) {
    const int64_t dw = d % dst_unit_, qw = q % src_unit_;
    const int64_t len = std::min({n, dst_unit_ - dw, src_unit_ - qw});
    // A run continues the open packet when both sides advance by the same step from its end: at
    // once, or over holes (positions no element maps to) that line up on both sides, which the
    // engine copies along, as it does for identical layouts.
    const int64_t step = d - last_dst_;
    const bool same_units = d / dst_unit_ == last_dst_ / dst_unit_ && q / src_unit_ == last_src_ / src_unit_;
    const bool continues = open_ && step >= 1 && q - last_src_ == step && same_units && dw != 0 && qw != 0;
    if (!continues) Start(d, q);
    last_dst_ = d + len - 1;
    last_src_ = q + len - 1;
    d += len;
    q += len;
    n -= len;
  }
}

void DmaPacketScan::Start(int64_t d, int64_t q) {
  const int64_t unit = d / dst_unit_;
  const bool same_unit = open_ && unit == unit_;
  if (open_) Close(same_unit ? d % dst_unit_ : dst_unit_);
  open_ = true;
  unit_ = unit;
  // The first packet of a unit also covers the padding before it.
  start_within_ = same_unit ? d % dst_unit_ : 0;
  const int64_t qw = q % src_unit_;
  if (!read_ && (qw * bits_) % kAlignBits != 0) {
    read_ = Violation{.source = true, .dst_unit = unit, .position = d % dst_unit_, .src_position = qw};
  }
}

void DmaPacketScan::Close(int64_t end_within) {
  // The packet grows through the destination's padding up to the next packet (or the unit's end).
  const int64_t elements = end_within - start_within_;
  if (!write_ && (elements * bits_) % kAlignBits != 0) {
    write_ = Violation{.dst_unit = unit_, .position = start_within_, .elements = elements};
  }
  open_ = false;
}

void DmaPacketScan::Finish() {
  if (open_) Close(dst_unit_);
}

}  // namespace visa
