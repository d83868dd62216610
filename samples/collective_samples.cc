// The manual's 4-chip collectives (Chip/Cluster Reduce): ReduceScatter with Add and AllReduce with
// Add on i8 [A = 4, B = 4] laid out {chip: A, element: B}, built from the asymmetric slice
// (ParallelCopy on the sub context), the chip shuffle (DMA through HBM) and the tensor addition
// (interleaved fetch and the Vector Engine's two-group add). Each is checked against a host sum
// and against the operands the manual lists for every chip.
//
// Layout choices the manual leaves open: the data sits in slice 0 of cluster 0 of each chip
// (`slice: 1 # 256`); each B value of the ReduceScatter input is on its own 8-byte word
// (`B, 1 # 8`: stos moves 8-byte words, so a one-byte slice could not be copied), the AllReduce
// input is the row `B # 8`. The addition widens: the interleaved fetch converts i8 to i32 (the
// Vector Engine adds i32 or f32), so the sums are exact and the results are i32; the four tensors
// are added as a tree, (T0 + T1) + (T2 + T3), three two-group adds.
//
// Step 6 of the ReduceScatter example (AllGather) contradicts the rest of it: its Goal, its
// Output's per-chip list and its name say each chip ends with one sum (chip c: column B = c, the
// state after Step 5), while Step 6 says every chip gathers the sums of chips 0..3 and prints
// `{chip: 4, slice: 256, element: B}`, the AllReduce's output. The reading taken here:
// ReduceScatter is Steps 1-5 (`reduce_scatter_4chip` stops there), and Step 6 is an AllGather
// appended to it, which turns the ReduceScatter into an AllReduce (`reduce_scatter_all_gather_4chip`
// runs Steps 1-6 and must end where `all_reduce_4chip` does). The manual names no primitive for the
// gather; it is built from the two the section has: three ChipShuffle rotations of the sums bring
// chip c + k's sum to chip c, and an asymmetric placement (the asymmetric slice's inverse,
// ParallelCopy per chip on the sub context) writes it into slot B = c + k (mod 4) of the result,
// `{chip: A (every chip), element: B, 1 # 2}` in i32 (each sum in the first 8-byte word of the
// 32 bytes the addition committed it in: stos moves whole words).
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dsl/status_macros.h"
#include "runtime/chip_shuffle.h"
#include "runtime/parallel_copy.h"
#include "runtime/transfer.h"
#include "samples/sample.h"

namespace visa::samples {
namespace {

constexpr uint64_t kCollectiveSeed = 42;

// The manual's cell (A, B): what a chip's operand holds.
struct Cell2 {
  int a, b;
};

// lhs + rhs (same levels, i8 or i32) as i32 into a new tensor with Element `element` at `address`:
// the manual's "Tensor Addition", an interleaved fetch and the Vector Engine's binary add.
absl::StatusOr<DmTensor> Add(Context& ctx, const MappingScope& m, const DmTensor& lhs, const DmTensor& rhs,
                             const std::string& element, int64_t address) {
  return ctx.main.begin_interleaved(m.m("I"), lhs.view(), rhs.view())
      .fetch(DType::kI32, m.m("I"), m.m(element))
      .collect(m.m("I"), m.m(element))
      .vector_init()
      .vector_intra_slice_unzip("I", m.m("1 # 2"), m.m("1"))
      .vector_clip_zip(ClipBinaryOpI32::kAddFxp)
      .vector_final()
      .named("TensorAddition")
      .commit(m.m(element), address);
}

// (T0 + T1) + (T2 + T3).
absl::StatusOr<DmTensor> AddFour(Context& ctx, const MappingScope& m, const std::vector<DmTensor>& t,
                                 const std::string& element) {
  ASSIGN_OR_RETURN(DmTensor s01, Add(ctx, m, t[0], t[1], element, 0x3000));
  ASSIGN_OR_RETURN(DmTensor s23, Add(ctx, m, t[2], t[3], element, 0x3100));
  return Add(ctx, m, s01, s23, element, 0x3200);
}

// Sets up the manual's input on a 4-chip device, runs `kernel`, and compares what it returns
// (read back by `readback`) with `want` at every position.
using CollectiveKernel = std::function<absl::StatusOr<DmTensor>(Context&, const MappingScope&, const DmTensor&)>;
using CollectiveWant = std::function<double(const Index&, const HostTensor&)>;

absl::StatusOr<SampleRun> RunCollective(Backend& backend, const DeviceOptions& options, const std::string& element,
                                        const CollectiveKernel& kernel, const std::string& readback,
                                        const CollectiveWant& want, std::string note) {
  ASSIGN_OR_RETURN(Axes axes, Axes::Parse("A = 4, B = 4, I = 2"));
  MappingScope m(axes);
  ASSIGN_OR_RETURN(std::unique_ptr<Device> device, Device::Create(4, options));
  Context ctx(*device, backend);
  ASSIGN_OR_RETURN(HostTensor host, HostTensor::Random(DType::kI8, m.m("A, B"), kCollectiveSeed));
  ASSIGN_OR_RETURN(HbmTensor hbm, host.to_hbm(ctx.pdma, 0, m.m("A"), m.m(element)));
  ASSIGN_OR_RETURN(DmTensor in, hbm.to_dm(ctx.tdma, 0, m.m("A"), m.m("1 # 2"), m.m("1 # 256"), m.m(element)));

  auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(DmTensor out, kernel(ctx, m, in));
  SampleRun run;
  run.kernel_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.device_resident_bytes = device->resident_bytes();
  run.program = ctx.program();
  run.stream_elements = StreamPositions(run.program);
  run.note = std::move(note);
  Mapping layout = m.m(readback);
  RETURN_IF_ERROR(layout.status());
  ASSIGN_OR_RETURN(HostTensor got, ReadAs(out, layout));
  for (int64_t p = 0; p < layout.size(); ++p) {
    Cell cell = layout.map(p);
    if (!cell.live()) continue;
    ASSIGN_OR_RETURN(double value, got.Get(p));
    const double expected = want(cell.index, host);
    ++run.elements;
    if (value != expected) {
      run.mismatch = absl::StrCat(cell.index.ToString(), ": got ", value, ", want ", expected);
      return run;
    }
  }
  return run;
}

double HostAt(const HostTensor& host, int a, int b) { return *host.Get(a * 4 + b); }

// The sum the manual lists for one chip, operand by operand, when it agrees with the sum over A
// of column `b`; otherwise NaN, which no result equals.
double ListedSum(const HostTensor& host, const std::vector<Cell2>& operands, int b) {
  double listed = 0, column = 0;
  for (const Cell2& c : operands) listed += HostAt(host, c.a, c.b);
  for (int a = 0; a < 4; ++a) column += HostAt(host, a, b);
  return listed == column ? listed : std::nan("");
}

// The manual's Step 5: what each chip adds.
const std::vector<std::vector<Cell2>>& ReduceScatterOperands() {
  static const std::vector<std::vector<Cell2>> operands = {
      {{0, 0}, {1, 0}, {2, 0}, {3, 0}},
      {{1, 1}, {2, 1}, {3, 1}, {0, 1}},
      {{2, 2}, {3, 2}, {0, 2}, {1, 2}},
      {{3, 3}, {0, 3}, {1, 3}, {2, 3}},
  };
  return operands;
}

// The manual's Step 4: chip c adds rows c, c + 1, c + 2, c + 3 (mod 4) of every column.
std::vector<Cell2> AllReduceOperands(int chip, int b) {
  std::vector<Cell2> operands;
  for (int k = 0; k < 4; ++k) operands.push_back({(chip + k) % 4, b});
  return operands;
}

// The manual's Steps 1-5 of the ReduceScatter: chip c ends with the sum of column B = c.
absl::StatusOr<DmTensor> ReduceScatterSteps(Context& ctx, const MappingScope& m, const DmTensor& in) {
  // Tk: chip c selects B = (c + k') and the shuffle brings chip c + k's pick to chip c, so
  // chip c of every Tk holds a value of column B = c (the manual's Steps 1-4).
  struct Step {
    std::vector<int64_t> slice, shuffle;
  };
  const std::vector<Step> steps = {{{0, 1, 2, 3}, {}},
                                   {{3, 0, 1, 2}, {1, 2, 3, 0}},
                                   {{2, 3, 0, 1}, {2, 3, 0, 1}},
                                   {{1, 2, 3, 0}, {3, 0, 1, 2}}};
  std::vector<DmTensor> t;
  for (size_t k = 0; k < steps.size(); ++k) {
    ASSIGN_OR_RETURN(DmTensor sliced, AsymmetricSlice(ctx.sub, in, SliceLevel::kChip, "B", m.m("1 # 8"),
                                                      steps[k].slice, 0x1000 + 0x100 * k));
    if (steps[k].shuffle.empty()) {
      t.push_back(sliced);
      continue;
    }
    ASSIGN_OR_RETURN(DmTensor shuffled, ChipShuffle(ctx.tdma, sliced, steps[k].shuffle, 0x2000 + 0x100 * k));
    t.push_back(shuffled);
  }
  return AddFour(ctx, m, t, "1 # 8");  // Step 5: chip c holds the sum of column B = c
}

Sample ReduceScatter() {
  Sample s;
  s.name = "reduce_scatter_4chip";
  s.description = "Chip/Cluster Reduce, the manual's 4-chip ReduceScatter with Add: diagonal asymmetric slices "
                  "(ParallelCopy, sub), ChipShuffle(1,2,3,0) / (2,3,0,1) / (3,0,1,2) through HBM, "
                  "(T0 + T1) + (T2 + T3) on the Vector Engine";
  s.axes = "A = 4, B = 4, I = 2";
  s.runner = [](Backend& backend, const DeviceOptions& options) {
    CollectiveKernel kernel = [](Context& ctx, const MappingScope& m, const DmTensor& in) {
      return ReduceScatterSteps(ctx, m, in);
    };
    // Chip c (the result's A) holds the sum of column B = c, as the manual lists it.
    CollectiveWant want = [](const Index& at, const HostTensor& host) {
      const int chip = static_cast<int>(at["A"]);
      return ListedSum(host, ReduceScatterOperands()[chip], chip);
    };
    return RunCollective(backend, options, "B, 1 # 8", kernel, "A", want,
                         "chip c: sum over A of (A, B = c), exact in i32");
  };
  return s;
}

// The manual's Step 6: every chip gathers the four sums (one per chip in `sums`) into slots
// B = 0..3 of a new tensor at 0x3400. Rotation k brings chip c + k's sum to chip c, which places it
// in slot c + k; rotation 0 is the sums themselves.
absl::StatusOr<DmTensor> AllGather(Context& ctx, const MappingScope& m, const DmTensor& sums) {
  ASSIGN_OR_RETURN(DmTensor gathered, DmTensor::Create(ctx.device(), sums.dtype(), sums.chip(), sums.cluster(),
                                                       sums.slice(), m.m("B, 1 # 2"), 0x3400));
  for (int64_t k = 0; k < 4; ++k) {
    std::vector<int64_t> rotation, slots;
    for (int64_t chip = 0; chip < 4; ++chip) {
      rotation.push_back((chip + k) % 4);
      slots.push_back((chip + k) % 4);
    }
    absl::StatusOr<DmTensor> rotated = k == 0 ? sums : ChipShuffle(ctx.tdma, sums, rotation, 0x4000 + 0x100 * k);
    RETURN_IF_ERROR(rotated.status());
    RETURN_IF_ERROR(AsymmetricPlaceInto(ctx.sub, *rotated, SliceLevel::kChip, "B", m.m("1 # 2"), slots, gathered));
  }
  return gathered;
}

// The column sum over A of column `b`, from the host input alone.
double ColumnSum(const HostTensor& host, int b) {
  double sum = 0;
  for (int a = 0; a < 4; ++a) sum += HostAt(host, a, b);
  return sum;
}

Sample ReduceScatterAllGather() {
  Sample s;
  s.name = "reduce_scatter_all_gather_4chip";
  s.description = "Chip/Cluster Reduce, the manual's 4-chip ReduceScatter with its Step 6 (AllGather): Steps 1-5 "
                  "as reduce_scatter_4chip, then ChipShuffle rotations of the sums and an asymmetric placement "
                  "(ParallelCopy, sub) into slot B on every chip; ends as all_reduce_4chip does";
  s.axes = "A = 4, B = 4, I = 2";
  s.runner = [](Backend& backend, const DeviceOptions& options) {
    CollectiveKernel kernel = [](Context& ctx, const MappingScope& m, const DmTensor& in) -> absl::StatusOr<DmTensor> {
      ASSIGN_OR_RETURN(DmTensor sums, ReduceScatterSteps(ctx, m, in));
      return AllGather(ctx, m, sums);
    };
    // Every chip (the result's A) holds every column sum, as after an AllReduce.
    CollectiveWant want = [](const Index& at, const HostTensor& host) {
      return ColumnSum(host, static_cast<int>(at["B"]));
    };
    return RunCollective(backend, options, "B, 1 # 8", kernel, "A, B", want,
                         "every chip: sum over A of (A, B), exact in i32, gathered from the chip holding B");
  };
  return s;
}

Sample AllReduce() {
  Sample s;
  s.name = "all_reduce_4chip";
  s.description = "Chip/Cluster Reduce, the manual's 4-chip AllReduce with Add: ChipShuffle(1,2,3,0) / (2,3,0,1) / "
                  "(3,0,1,2) through HBM, (T0 + T1) + (T2 + T3) on the Vector Engine";
  s.axes = "A = 4, B = 4, I = 2";
  s.runner = [](Backend& backend, const DeviceOptions& options) {
    CollectiveKernel kernel = [](Context& ctx, const MappingScope& m, const DmTensor& in) -> absl::StatusOr<DmTensor> {
      std::vector<DmTensor> t = {in};
      const std::vector<std::vector<int64_t>> rotations = {{1, 2, 3, 0}, {2, 3, 0, 1}, {3, 0, 1, 2}};
      for (size_t k = 0; k < rotations.size(); ++k) {
        ASSIGN_OR_RETURN(DmTensor shuffled, ChipShuffle(ctx.tdma, in, rotations[k], 0x2000 + 0x100 * k));
        t.push_back(shuffled);
      }
      return AddFour(ctx, m, t, "B # 8");
    };
    // Every chip (the result's A) holds the column sums.
    CollectiveWant want = [](const Index& at, const HostTensor& host) {
      const int chip = static_cast<int>(at["A"]), b = static_cast<int>(at["B"]);
      return ListedSum(host, AllReduceOperands(chip, b), b);
    };
    return RunCollective(backend, options, "B # 8", kernel, "A, B", want,
                         "every chip: sum over A of (A, B), exact in i32");
  };
  return s;
}

}  // namespace

std::vector<Sample> CollectiveSamples() { return {ReduceScatter(), ReduceScatterAllGather(), AllReduce()}; }

}  // namespace visa::samples
