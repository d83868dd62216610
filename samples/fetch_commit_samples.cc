// The manual's "Fetch and Commit Engine" kernel examples (Kernel Examples chapter).
//
// The manual writes some shapes loosely (`C # 6` for "C padded to 8 bytes", `B * (A # 72) / 24`);
// here they are the mappings those sentences describe: `C # 8`, `[B, A # 72] / 24`.
#include "samples/sample.h"

#include "dsl/status_macros.h"

namespace visa::samples {
namespace {

using Kernel = std::function<absl::StatusOr<DeviceTensor>(Context&, const DmTensor&, const MappingScope&)>;

Kernel FetchCollectCommit(std::string time, std::string packet, std::string collect_time,
                          std::string collect_packet, std::string element, int64_t address) {
  return [=](Context& ctx, const DmTensor& input, const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
    ASSIGN_OR_RETURN(DmTensor out, ctx.main.begin(input.view())
                                       .fetch(input.dtype(), s.m(time), s.m(packet))
                                       .collect(s.m(collect_time), s.m(collect_packet))
                                       .commit(s.m(element), address));
    return out;
  };
}

// An f8e4m3 sample whose output holds the input tensor unchanged (read back as `readback`).
Sample F8Sample(std::string name, std::string description, std::string axes, std::string element,
                Kernel kernel, std::string readback) {
  Sample s;
  s.name = std::move(name);
  s.description = std::move(description);
  s.axes = std::move(axes);
  s.dtype = DType::kF8E4M3;
  s.element = std::move(element);
  s.kernel = std::move(kernel);
  s.readback = std::move(readback);
  return s;
}

// Examples 1 and 2 keep [A, B, C] (30 f8 bytes) in each slice's DM, padded to 32 bytes: the DMA
// that stages it writes DM in 8-byte packets (manual, "DMA Engine" > Alignment Constraints).
constexpr char kThirtyBytesPadded[] = "[A, B, C] # 32";

}  // namespace

std::vector<Sample> FetchCommitSamples() {
  std::vector<Sample> samples;
  samples.push_back(F8Sample(
      "fetch_commit_permutation",
      "Example 1: [A, B, C] -> [B, A, C # 8] through fetch, collect and a permuting commit",
      "A = 3, B = 5, C = 2", kThirtyBytesPadded,
      FetchCollectCommit("A, B", "C # 8", "A, B", "C # 32", "B, A, C # 8", 1024), "A, B, C"));
  samples.push_back(F8Sample(
      "fetch_commit_full_flit", "Example 2: [A, [B, C] # 32], one full 32-byte flit per A (3 commit cycles)",
      "A = 3, B = 5, C = 2", kThirtyBytesPadded,
      FetchCollectCommit("A", "[B, C] # 32", "A", "[B, C] # 32", "A, [B, C] # 32", 1024), "A, B, C"));
  samples.push_back(F8Sample(
      "fetch_commit_tail_padding", "Example 3: A = 65 padded to 72 (24-byte fetches and commits, 6 cycles)",
      "A = 65, B = 2", "B, A # 72",
      FetchCollectCommit("[B, A # 72] / 24", "[B, A # 72] % 24", "[B, A # 72] / 24", "[B, A # 72] % 24 # 32",
                         "B, A # 72", 1024),
      "B, A"));
  samples.push_back(F8Sample(
      "fetch_commit_tail_padding_32",
      "Example 3, option 2: A = 65 padded to 96 (32-byte fetches and commits, 6 cycles)", "A = 65, B = 2",
      "B, A # 96",
      FetchCollectCommit("[B, A # 96] / 32", "[B, A # 96] % 32", "[B, A # 96] / 32", "[B, A # 96] % 32",
                         "B, A # 96", 1024),
      "B, A"));
  {
    Sample s;
    s.name = "fetch_commit_segmentation";
    s.description = "Example 4: [A, B] copied in two executions over tile views of A (1024 each)";
    s.axes = "A = 2048, B = 32";
    s.dtype = DType::kF8E4M3;
    s.element = "A, B";
    s.kernel = [](Context& ctx, const DmTensor& input, const MappingScope& s) -> absl::StatusOr<DeviceTensor> {
      const int64_t base = 256 * 1024;
      for (int64_t segment = 0; segment < 2; ++segment) {
        ASSIGN_OR_RETURN(DmTensor tile, input.view().tile(s.m("A"), 1024, segment * 1024));
        RETURN_IF_ERROR(ctx.main.begin(tile)
                                            .fetch(DType::kF8E4M3, s.m("A = 1024"), s.m("B"))
                                            .collect(s.m("A = 1024"), s.m("B"))
                                            .commit(s.m("A = 1024, B"), base + segment * 32 * 1024)
                                            .status());
      }
      // The two segments form one tensor [A, B] at `base`.
      return DmTensor::Create(ctx.device(), DType::kF8E4M3, s.m("1"), s.m("1 # 2"), s.m("1 # 256"),
                              s.m("A, B"), base);
    };
    s.readback = "A, B";
    samples.push_back(s);
  }
  return samples;
}

}  // namespace visa::samples
