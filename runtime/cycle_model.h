// The cycle model's formulas that are not one stage's planning: DMA requests and commands, HBM
// channel and row behaviour, the Reducer's latencies, the inter-slice ring, the Vector Engine's
// throughput and latency, and split reduce (manual: "DMA Engine" > Performance and Detailed
// Examples, "Memory Performance", "Reducer" > Performance, "Vector Engine" > Performance,
// "Kernel Examples" > Split Reduce). Stage cycles that come with a stage's plan (fetch, switch,
// transpose, commit) are computed where the stage is planned; op_description.cc combines them.
// Cycles are counted at 1 GHz, as the manual's DMA examples count them.
#pragma once

#include <cstdint>
#include <vector>

#include "dsl/sequencer.h"

namespace visa::cycles {

// ---- DMA ------------------------------------------------------------------------------------------

// "DMA automatically splits packets into 256-byte units internally: an n-byte packet becomes
// ceil(n / 256) DMA requests" ("DMA Engine" > Performance).
inline constexpr int64_t kDmaRequestBytes = 256;
// "Each DMA command incurs approximately 500 cycles of startup latency".
inline constexpr int64_t kDmaCommandStartup = 500;

int64_t DmaRequestsPerPacket(int64_t packet_bytes);
// Requests of a stream of `time_size` packets of `packet_bytes`: at saturation "one request
// completes per cycle", so this is also the cycles one side needs.
int64_t DmaRequests(int64_t time_size, int64_t packet_bytes);

// How one command's reads and writes share time: overlapped ("max(65536, 65536) + 500") or one
// after the other (one memory serves both: "reads and writes must proceed sequentially").
enum class ReadWrite { kOverlapped, kSequential };

struct DmaCommand {
  int64_t read_cycles = 0;
  int64_t write_cycles = 0;
};

// Start-up + the transfer: max or sum of the two sides.
int64_t DmaCommandCycles(const DmaCommand& command, ReadWrite mode);
// A segmented move: each command pays its own start-up ("Command segmentation ... doubles startup
// latency"); commands of one DMN run one after another.
int64_t SegmentedDmaCycles(const std::vector<DmaCommand>& commands, ReadWrite mode);

// Request start addresses of a DMA sequencer side: `time` entries (outermost first, byte
// strides) from `base`, each packet of `packet_bytes` split into 256-byte requests.
std::vector<int64_t> DmaRequestAddresses(const std::vector<SequencerEntry>& time, int64_t base,
                                         int64_t packet_bytes);

// ---- HBM ("Memory Performance" > High-Bandwidth Memory) --------------------------------------------

// Where an HBM address lands (Address Space in a Chip). Channel bit k is the XOR of address bits
// 9 + k, 13 + k, 21 + k and 25 + k: the manual's own instance ("the channel's first bit equals
// the XOR of bits 9, 13, 21, and 25") taken for every k.
struct HbmLocation {
  int stack = 0;       // bit 8
  int channel = 0;     // 0..15 within the stack
  int bank_group = 0;  // bits 13, 19
  int bank = 0;        // bits 17-18
  int slice = 0;       // bits 20, 34
  int64_t row = 0;     // bits 21-33 and 35
  int global_channel() const { return stack * 16 + channel; }
};
HbmLocation LocateHbm(int64_t address);

// A channel moves a 256-byte request in 4 of its 0.75 GHz cycles, 16/3 cycles at 1 GHz (Example
// 5's "approximately 5.3 cycles per request"); a request that must switch its bank's open row
// pays ~40 (Example 4: "Each request incurs approximately 40 cycles due to bank conflicts").
inline constexpr double kHbmCyclesPerRequest = 16.0 / 3.0;
inline constexpr double kHbmRowSwitchCycles = 40.0;

struct HbmEstimate {
  int64_t requests = 0;
  int channels = 0;                     // distinct channels (stack x channel) the requests use
  int64_t busiest_channel_requests = 0;
  int64_t row_switches = 0;             // in the busiest channel
  double cycles = 0;                    // the busiest channel's time: the HBM side's cycles
};

// Requests in issue order, each channel serving its own in order; every bank keeps one row open
// (all start closed; opening a closed row is not counted as a switch).
class HbmChannels {
 public:
  HbmChannels();
  void Add(int64_t request_address);
  HbmEstimate Finish() const;

 private:
  static constexpr int kBanksPerChannel = 4 * 4 * 4;  // slice (2 bits) x bank group x bank
  std::vector<int64_t> requests_, switches_;           // per channel
  std::vector<int64_t> open_rows_;                     // per channel and bank; -1: closed
};
HbmEstimate EstimateHbm(const std::vector<int64_t>& request_addresses);

// Misaligned access: a read crossing a 256-byte boundary takes two NoC transfers ("effectively
// halving bandwidth"); a partial write is a read-modify-write, "roughly 50x" an aligned write.
inline constexpr int64_t kHbmUnalignedReadFactor = 2;
inline constexpr int64_t kHbmPartialWriteFactor = 50;
// Requests an HBM write of `packet_bytes` at `address` costs, counted in aligned-request units.
int64_t HbmWriteRequestCost(int64_t address, int64_t packet_bytes);
int64_t HbmReadRequestCost(int64_t address, int64_t packet_bytes);

// Peak: "The channel controller transfers 64B/cycle at 0.75GHz", 32 channels per chip; "The
// fundamental transfer unit is 256 bytes, requiring 4 clock cycles per channel".
inline constexpr int64_t kHbmChannels = 32;
inline constexpr int64_t kHbmChannelBytesPerClock = 64;
inline constexpr double kHbmChannelGhz = 0.75;
double HbmPeakGBytesPerSecond();  // 48 GB/s x 32 = 1536 GB/s, "1.5TB/s per chip"

// Column-to-column delay (tCCD, cycles at 1.5 GHz) between consecutive commands on a channel, and
// the channel throughput relative to the ideal 2.
enum class HbmCommandRelation { kSameSliceOtherBankGroup, kOtherSlice, kSameSliceSameBankGroup };
int HbmTccd(HbmCommandRelation relation);
double HbmRelativeThroughput(HbmCommandRelation relation);

// ---- DM ("Memory Performance" > Data Memory) ---------------------------------------------------

// "each DMN provides only 128 B/cycle"; alternating requests across a cluster's two DMNs gives
// 256 ("DMN interleaving | ... | 50% bandwidth loss" without it).
int64_t DmBytesPerCycle(bool dmn_interleaved);
// The bank-starvation limit from its derivation: (TDMA_IO_BYTE / DMN_IO_BYTE) x
// Max_Consecutive_Access x DMN_SIZE < 4096 (the NoC timeout), so Max_Consecutive_Access < 64.
inline constexpr int64_t kNocTimeoutCycles = 4096;
int64_t MaxConsecutiveSameBankAccesses();

// ---- Reducer and the inter-slice ring ---------------------------------------------------------

// "i4 depth 7 (128 elements in 7 cycles), i8/f8 depth 6, bf16 depth 5".
int64_t SpatialReduceLatency(int tree_depth);
// "For a reduction axis of size N in the time dimension, the accumulator requires approximately
// N cycles".
int64_t TemporalReduceCycles(int64_t time_steps);
// Inter-slice reduce: "stream partial results in, then pay about one ring traversal" of the
// `slices` taking part.
int64_t InterSliceReduceCycles(int64_t input_stream_cycles, int64_t slices);

// ---- Vector Engine (the hook its stages use once they exist) ----------------------------------

// Throughput: Logic, Fxp and Clip clusters take 8 elements per cycle, the Float cluster 4.
enum class VectorCluster { kLogic, kFxp, kClip, kFloat };
int64_t VectorThroughputCycles(int64_t elements, VectorCluster cluster);
// "Each ALU introduces one cycle of latency": exp(sqrt(x)) adds 2.
int64_t VectorPipelineLatency(int alus);
// Intra-slice reduce: "the first output flit is delayed by n flit cycles" for a reduce spanning
// n time steps.
int64_t IntraSliceReduceDelay(int64_t reduce_time_steps);

// ---- Split reduce ("Kernel Examples" > Split Reduce > Cycle Analysis) ------------------------

// N_splits x fetch_cycles + max(0, VE_cycles - overlap).
int64_t SplitReduceCycles(int64_t splits, int64_t fetch_cycles_per_tensor, int64_t vector_cycles,
                          int64_t overlap);

}  // namespace visa::cycles
