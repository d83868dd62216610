// The indirect-fetch draws of the random-program generator: choices, description, run.
#include "random_programs/random_indirect.h"

#include <algorithm>
#include <memory>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "runtime/device.h"
#include "runtime/tensor_unit.h"

namespace visa::samples {
namespace {

constexpr uint64_t kIndirectStream = 0x1d1ec7f37c4ull;  // the seed's own stream for these choices
constexpr int64_t kIndexAddress = 0x8000, kOutputAddress = 0x10000, kIndexHbmAddress = int64_t{1} << 20;
constexpr uint64_t kTableSeed = 45;

struct IndirectCalls {
  DType in = DType::kI8, out = DType::kI8;
  int64_t w = 4, v = 8, k = 1;     // |W| rows, |V| elements a row, |K| tokens
  std::string element;             // the table's DM Element
  std::string slice;               // the table's and the index's Slice
  std::vector<double> rows;        // the index tensor's values
  std::optional<double> pad_value; // fetch_indirect_masked
  std::string data;                // the stream's term over V: `V`, `V # n` or `# l + V + # r`
  int64_t packet = 8;              // elements a packet (data / packet terms)
  int64_t data_size = 8;           // positions of `data`

  std::string Axes() const { return absl::StrFormat("W = %d, V = %d, K = %d", w, v, k); }
  std::string Group() const { return data == "V" ? data : absl::StrCat("[", data, "]"); }
  std::string Time() const {
    return data_size == packet ? "K" : absl::StrCat("K, ", Group(), " / ", packet);
  }
  std::string Packet() const { return data_size == packet ? data : absl::StrCat(Group(), " % ", packet); }
  // One 32-byte flit a packet at collect.
  std::string Flit() const {
    const int64_t flit = 256 / Bits(out);
    return packet == flit ? Packet() : absl::StrCat(Packet(), " # ", flit);
  }
};

class Drawer {
 public:
  explicit Drawer(uint64_t seed) : rng_(seed ^ kIndirectStream) {}

  IndirectCalls Draw() {
    IndirectCalls c;
    // The adapter's conversions (manual, Fetch Adapter) or none.
    const std::vector<std::pair<DType, DType>> types = {
        {DType::kI8, DType::kI8},   {DType::kI8, DType::kI32},   {DType::kI16, DType::kI16},
        {DType::kI16, DType::kI32}, {DType::kBF16, DType::kBF16}, {DType::kBF16, DType::kF32},
        {DType::kF32, DType::kF32}, {DType::kI4, DType::kI4}};  // i4 -> i32: 16-element packets, over a flit
    std::tie(c.in, c.out) = types[Below(types.size())];
    c.w = Pick<int64_t>({4, 12, 16, 40});
    // DMA writes into DM come in 8-byte packets (manual, "DMA Engine" > Alignment Constraints):
    // rows and their runs a multiple of 8 bytes (16 elements for i4), an even number of indices.
    const int64_t run = std::max<int64_t>(8, 64 / Bits(c.in));
    c.v = run * Pick<int64_t>({1, 2, 3, 4});
    c.k = Pick<int64_t>({2, 4, 8, 18, 32});
    const int64_t flit = 256 / Bits(c.out);
    // Rows back to back, strided around W, or padded to a longer row (room for a left pad).
    const int layout = static_cast<int>(Below(3));
    c.element = layout == 0   ? "W, V"
                : layout == 1 ? absl::StrFormat("V / %d, W, V %% %d", run, run)
                              : absl::StrCat("W, V # ", c.v + run);
    c.slice = Below(4) == 0 ? "4 # 256" : "1 # 256";
    for (int64_t i = 0; i < c.k; ++i) {
      const int64_t pick = static_cast<int64_t>(Below(8));
      c.rows.push_back(static_cast<double>(pick == 0 ? 0 : pick == 1 ? c.w - 1 : static_cast<int64_t>(Below(c.w))));
    }
    std::vector<int64_t> packets;  // elements a packet: at most a flit, 8-byte aligned on both sides
    for (int64_t e : {4, 8, 16, 32, 64}) {
      if (e <= flit && e <= c.v && e * Bits(c.out) % 64 == 0 && e * Bits(c.in) % 64 == 0) packets.push_back(e);
    }
    VISA_CHECK(!packets.empty(), "every drawn type pair has a packet");
    c.packet = packets[Below(packets.size())];
    // None, a right pad, or (on padded rows, whose padding the shifted reads stay in) a left pad.
    int masking = static_cast<int>(Below(3));
    if (masking == 2 && layout != 2) masking = 1;
    if (masking == 0 && c.v % c.packet == 0) {
      c.data = "V";
      c.data_size = c.v;
      return c;
    }
    c.pad_value = Pick<double>({0, -1, 3});
    const int64_t left =
        masking == 2 && c.packet > 1 ? 1 + static_cast<int64_t>(Below(std::min<int64_t>(c.packet - 1, 3))) : 0;
    const int64_t total = (left + c.v + c.packet - 1) / c.packet * c.packet;
    const int64_t right = total - left - c.v;
    c.data_size = total;
    if (left == 0) {
      c.data = right == 0 ? "V" : absl::StrCat("V # ", total);
    } else {
      c.data = right == 0 ? absl::StrCat("# ", left, " + V") : absl::StrCat("# ", left, " + V + # ", right);
    }
    return c;
  }

 private:
  uint64_t Below(uint64_t n) { return rng_() % n; }
  template <typename T>
  T Pick(std::initializer_list<T> choices) {
    return *(choices.begin() + Below(choices.size()));
  }
  std::mt19937_64 rng_;
};

std::string Describe(uint64_t seed, const IndirectCalls& c) {
  std::vector<std::string> rows;
  for (double r : c.rows) rows.push_back(absl::StrCat(r));
  const std::string fetch =
      c.pad_value ? absl::StrFormat("fetch_indirect_masked(%s, %g, index, \"W\", [%s], [%s])", Name(c.out),
                                    *c.pad_value, c.Time(), c.Packet())
                  : absl::StrFormat("fetch_indirect(%s, index, \"W\", [%s], [%s])", Name(c.out), c.Time(), c.Packet());
  return absl::StrCat("# random program ", seed, " (an indirect fetch, random_programs/random_indirect.h)\naxes: ", c.Axes(),
                      "\ntable: ", Name(c.in), " [W, V] in DM, Slice [", c.slice, "], Element [", c.element,
                      "]\nindex: i32 [K] in DM at 0x8000, Slice [", c.slice, "] = [", absl::StrJoin(rows, ", "),
                      "]\nmain: begin(table)\n  .", fetch, "\n  .collect([", c.Time(), "], [", c.Flit(),
                      "])\n  .commit([K, ", c.data, "], 0x10000)\n");
}

std::vector<CoverageKey> Drawn(const IndirectCalls& c) {
  std::vector<CoverageKey> kinds = {
      {"stage", "begin"},          {"stage", "fetch"},      {"stage", "collect"},  {"stage", "commit"},
      {"context", "main"},         {"commit", "all"},       {"dma", "host->HBM"},  {"dma", "HBM->DM"},
      {"fetch", ConversionKind(c.in, c.out)}, {"adapter", c.pad_value ? "masked" : "plain"},
      {"indirect", c.pad_value ? "masked" : "fetch"}};
  std::sort(kinds.begin(), kinds.end());
  return kinds;
}

absl::StatusOr<SampleRun> Run(const IndirectCalls& c, Backend& backend, const DeviceOptions& device_options) {
  ASSIGN_OR_RETURN(MappingScope m, MappingScope::Parse(c.Axes()));
  ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(1, device_options));
  Context ctx(*device, backend);
  ASSIGN_OR_RETURN(HostTensor table_host, HostTensor::Random(c.in, m.m("W, V"), kTableSeed));
  ASSIGN_OR_RETURN(HbmTensor table_hbm, table_host.to_hbm(ctx.pdma, 0, m.m("1"), m.m("W, V")));
  ASSIGN_OR_RETURN(DmTensor table, table_hbm.to_dm(ctx.tdma, 0, m.m("1 # 2"), m.m(c.slice), m.m(c.element)));
  ASSIGN_OR_RETURN(HostTensor index_host, HostTensor::FromValues(DType::kI32, m.m("K"), c.rows));
  ASSIGN_OR_RETURN(HbmTensor index_hbm, index_host.to_hbm(ctx.pdma, kIndexHbmAddress, m.m("1"), m.m("K")));
  ASSIGN_OR_RETURN(DmTensor index, index_hbm.to_dm(ctx.tdma, kIndexAddress, m.m("1 # 2"), m.m(c.slice), m.m("K")));
  Stream begin = ctx.main.begin(table.view());
  Stream fetched = c.pad_value ? std::move(begin).fetch_indirect_masked(c.out, *c.pad_value, index, "W",
                                                                        m.m(c.Time()), m.m(c.Packet()))
                               : std::move(begin).fetch_indirect(c.out, index, "W", m.m(c.Time()), m.m(c.Packet()));
  RETURN_IF_ERROR(std::move(fetched)
                      .collect(m.m(c.Time()), m.m(c.Flit()))
                      .commit(m.m(absl::StrCat("K, ", c.data)), kOutputAddress)
                      .status());
  SampleRun run;
  run.program = ctx.program();
  run.stream_elements = StreamPositions(run.program);
  run.note = "no host reference: compare backends";
  return run;
}

}  // namespace

bool DrawsIndirect(uint64_t seed) {
  std::mt19937_64 rng(seed ^ (kIndirectStream << 1));
  return rng() % 12 == 0;
}

RandomProgram DrawRandomIndirect(uint64_t seed) {
  const IndirectCalls calls = Drawer(seed).Draw();
  RandomProgram program;
  program.seed = seed;
  program.description = Describe(seed, calls);
  program.drawn = Drawn(calls);
  Sample& s = program.sample;
  s.name = absl::StrCat("random-", seed);
  s.description = "a random program (random_programs/random_indirect.h)";
  s.axes = calls.Axes();
  s.dtype = calls.in;
  s.slice = calls.slice;
  s.element = calls.element;
  s.runner = [calls](Backend& backend, const DeviceOptions& device_options) {
    return Run(calls, backend, device_options);
  };
  return program;
}

std::vector<CoverageKey> IndirectDrawnKinds() { return {{"indirect", "fetch"}, {"indirect", "masked"}}; }

}  // namespace visa::samples
