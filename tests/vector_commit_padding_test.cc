// What a commit leaves in the pad bytes of a `#`-padded DM Element: the bytes as they were, on both
// backends. The manual's Commit Engine writes whole commit_size units (8-byte multiples, "a dummy
// is added to align the tail to 8 bytes"), so a row of 5 f32 is written as 24 bytes and the
// hardware's sixth lane lands in a pad byte with whatever the lane held (padding lanes hold
// arbitrary data). The interpreter writes live positions only; the JIT walked the sequencer's
// units and carried its stream's pad lane along. Decided: pad bytes keep what they held (the
// interpreter's reading; pads are the Element's own, no rule reads them). Checked by filling
// the DM range with 0xab first and reading the raw bytes back through `Device` memory.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "dsl/mapping_parser.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"
#include "tests/common/backends.h"

namespace visa {
namespace {

constexpr int64_t kOut = 16384;
constexpr int64_t kBytes = 1024;
constexpr uint8_t kFill = 0xab;

class VectorCommitPaddingTest : public ::testing::Test {
 protected:
  VectorCommitPaddingTest() : scope_(*Axes::Parse("T = 4, A = 5")) {}
  Mapping m(const std::string& text) { return scope_.m(text); }

  // x[t][a] = 1 + 5 t + a through `chain` (nullptr: no Vector Engine, fetch straight to commit),
  // committed to `element` at kOut over bytes filled with kFill; the raw bytes from kOut.
  std::vector<uint8_t> Run(int backend_kind, const std::function<Stream(Stream)>& chain, const std::string& element) {
    Device device(1);
    std::unique_ptr<Backend> backend = test::MakeBackend(backend_kind, 1);
    Context ctx(device, *backend);
    std::vector<double> values(20);
    for (int i = 0; i < 20; ++i) values[i] = i + 1;
    HostTensor host = *HostTensor::FromValues(DType::kF32, m("T, A"), values);
    Placement placement = *Place(device, DType::kF32, Tier::kDm, {m("1"), m("1 # 2"), m("1 # 256"), m("T, A # 8")}, 0);
    DmTensor in(*WriteAs(host, device, placement));
    const std::vector<uint8_t> fill(kBytes, kFill);
    EXPECT_TRUE(device.WriteDm({}, kOut, fill).ok());
    Stream fetched = ctx.main.begin(in.view()).fetch(DType::kF32, m("T"), m("A # 8")).collect(m("T"), m("A # 8"));
    absl::StatusOr<DmTensor> out =
        chain ? chain(std::move(fetched).vector_init().vector_intra_slice_branch(BranchMode::Unconditional()))
                    .vector_final()
                    .commit(m(element), kOut)
              : std::move(fetched).commit(m(element), kOut);
    EXPECT_TRUE(out.ok()) << element << ": " << out.status();
    std::vector<uint8_t> got(kBytes);
    EXPECT_TRUE(device.ReadDm({}, kOut, absl::MakeSpan(got)).ok());
    return got;
  }

  // Live bytes hold value(t, a) as f32, every other byte of the range is still kFill.
  void ExpectLiveValuesAndUntouchedPads(const std::vector<uint8_t>& got, const std::string& element,
                                        const std::function<float(int, int)>& value, const std::string& what) {
    const Mapping layout = m(element);
    std::vector<bool> live(kBytes, false);
    for (int64_t p = 0; p < layout.size(); ++p) {
      const Cell cell = layout.map(p);
      if (!cell.live()) continue;
      const float want = value(static_cast<int>(cell.index["T"]), static_cast<int>(cell.index["A"]));
      uint32_t bits;
      std::memcpy(&bits, &got[4 * p], 4);
      EXPECT_EQ(bits, std::bit_cast<uint32_t>(want)) << what << " " << element << " position " << p;
      for (int k = 0; k < 4; ++k) live[4 * p + k] = true;
    }
    for (int64_t i = 0; i < kBytes; ++i) {
      if (!live[i]) { ASSERT_EQ(got[i], kFill) << what << " " << element << ": pad byte " << i << " was written"; }
    }
  }

  MappingScope scope_;
};

const char* const kElements[] = {"T, A # 8", "T, A # 16", "T # 8, A # 8", "T, A # 6"};

TEST_F(VectorCommitPaddingTest, AVectorChainLeavesThePadBytesOnBothBackends) {
  // Clip Add 1.0 also runs on the stream's pad lanes, so those lanes hold values a unit-wide walk
  // would carry into the pads.
  auto chain = [](Stream s) { return std::move(s).vector_clip(ClipBinaryOpF32::kAdd, 1.0f); };
  for (const char* element : kElements) {
    for (int backend = 0; backend < 2; ++backend) {
      const std::vector<uint8_t> got = Run(backend, chain, element);
      ExpectLiveValuesAndUntouchedPads(got, element, [](int t, int a) { return 2.0f + 5 * t + a; },
                                       backend == 0 ? "interpreter" : "jit");
    }
  }
}

TEST_F(VectorCommitPaddingTest, AFetchStraightToCommitLeavesThePadBytesOnBothBackends) {
  for (const char* element : kElements) {
    for (int backend = 0; backend < 2; ++backend) {
      const std::vector<uint8_t> got = Run(backend, nullptr, element);
      ExpectLiveValuesAndUntouchedPads(got, element, [](int t, int a) { return 1.0f + 5 * t + a; },
                                       backend == 0 ? "interpreter" : "jit");
    }
  }
}

}  // namespace
}  // namespace visa
