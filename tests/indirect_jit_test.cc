// The JIT's gathers and scatters (jit/indirect_kernel.h): compiled moves around the IndirectLoop's
// row copies, on layouts where rows are not contiguous in memory (a transposed table, a padded
// row, HBM destinations), each against a host computation and bit-identical with the interpreter;
// rows of an odd number of 4-bit elements a whole number of bytes apart are copied nibble by nibble,
// and 4-bit rows starting inside a byte are refused at the call on both backends (Indirect Access).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "dsl/mapping_parser.h"
#include "dsl/status_macros.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/indirect_dma.h"
#include "runtime/tensor_unit.h"
#include "runtime/transfer.h"

namespace visa {
namespace {

using ::testing::HasSubstr;

class IndirectJitTest : public ::testing::Test {
 protected:
  Mapping m(const std::string& text) { return s_.m(text); }

  struct Run {
    std::vector<uint32_t> bits;
    int64_t compiles = 0;  // kernels the indirect op asked the JIT's cache for
  };

  // Gathers (or scatters into a table) rows `rows` of a table laid out as `table_element` in DM (or HBM),
  // into `out_element` at `out_tier`, on the interpreter or the JIT.
  absl::StatusOr<Run> RunOn(bool jit, DType dtype, const std::string& table_element, const std::vector<double>& rows,
                            Tier out_tier, const std::string& out_element, bool scatter) {
    Device device(1);
    std::unique_ptr<jit::JitBackend> jit_backend;
    interp::Interpreter interp;
    if (jit) {
      ASSIGN_OR_RETURN(jit_backend, jit::JitBackend::Create({.threads = 2}));
    }
    Context ctx(device, jit ? static_cast<Backend&>(*jit_backend) : interp);
    ASSIGN_OR_RETURN(HostTensor table_host, HostTensor::Random(dtype, m("W, V"), 7));
    // "hbm:" places the table in HBM with that Element (a layout a DMA into DM would refuse).
    const bool table_in_hbm = table_element.rfind("hbm:", 0) == 0;
    ASSIGN_OR_RETURN(HbmTensor table_hbm, table_host.to_hbm(ctx.pdma, 0, m("1"),
                                                            m(table_in_hbm ? table_element.substr(4) : "W, V")));
    DeviceTensor table = table_hbm;
    if (!table_in_hbm) {
      ASSIGN_OR_RETURN(table, table_hbm.to_dm(ctx.tdma, 0, m("1 # 2"), m("1 # 256"), m(table_element)));
    }
    ASSIGN_OR_RETURN(HostTensor index_host, HostTensor::FromValues(DType::kI32, m("K"), rows));
    ASSIGN_OR_RETURN(HbmTensor index, index_host.to_hbm(ctx.pdma, 1 << 20, m("1"), m("K")));
    std::vector<Mapping> levels = out_tier == Tier::kHbm
                                      ? std::vector<Mapping>{m("1"), m(out_element)}
                                      : std::vector<Mapping>{m("1"), m("1 # 2"), m("1 # 256"), m(out_element)};
    Destination out{out_tier, Address(1 << 16), levels};
    DeviceTensor result = table;
    const int64_t compiles_before = jit ? jit_backend->stats().compiles + jit_backend->stats().cache_hits : 0;
    if (scatter) {
      ASSIGN_OR_RETURN(HostTensor rows_host, HostTensor::Random(dtype, m("K, V"), 8));
      ASSIGN_OR_RETURN(HbmTensor rows_hbm, rows_host.to_hbm(ctx.pdma, 1 << 21, m("1"), m("K, V")));
      ASSIGN_OR_RETURN(result, Scatter(ctx.tdma, rows_hbm, index, table, "W", out));
    } else {
      ASSIGN_OR_RETURN(result, Gather(ctx.tdma, table, index, "W", out));
    }
    const int64_t compiles_after = jit ? jit_backend->stats().compiles + jit_backend->stats().cache_hits : 0;
    ASSIGN_OR_RETURN(HostTensor got, ReadAs(result, m(scatter ? "W, V" : "K, V")));
    Run run{got.ToBits(), compiles_after - compiles_before};
    return run;
  }

  MappingScope s_{*Axes::Parse("W = 6, V = 16, K = 4")};
};

TEST_F(IndirectJitTest, GathersAndScattersMatchTheInterpreterOnEveryLayout) {
  struct Case {
    const char* table;
    Tier out_tier;
    const char* out;
    bool scatter;
  };
  const std::vector<double> rows = {5, 0, 3, 1};
  for (const Case& c : {Case{"W, V", Tier::kDm, "K, V", false}, Case{"hbm:V, W", Tier::kDm, "V, K", false},
                        Case{"W, V # 32", Tier::kHbm, "K, V", false}, Case{"W, V", Tier::kDm, "W, V", true},
                        Case{"hbm:V, W", Tier::kHbm, "V, W", true}}) {
    for (DType dtype : {DType::kI8, DType::kBF16, DType::kF32, DType::kI4}) {
      // Rows of W along the innermost axis of `V, W` are one element apart: 4-bit ones start inside
      // a byte, which the call refuses (RowsStartingInsideAByteAreRefused).
      if (dtype == DType::kI4 && std::string(c.table) == "hbm:V, W") continue;
      absl::StatusOr<Run> interp = RunOn(false, dtype, c.table, rows, c.out_tier, c.out, c.scatter);
      absl::StatusOr<Run> jit = RunOn(true, dtype, c.table, rows, c.out_tier, c.out, c.scatter);
      ASSERT_TRUE(interp.ok()) << Name(dtype) << " " << c.table << " -> " << c.out << ": " << interp.status();
      ASSERT_TRUE(jit.ok()) << c.table << " -> " << c.out << ": " << jit.status();
      EXPECT_EQ(interp->bits, jit->bits) << Name(dtype) << " " << c.table << " -> " << c.out;
      EXPECT_GT(jit->compiles, 0);  // the moves around the row copies are compiled kernels
    }
  }
}

TEST_F(IndirectJitTest, RowsStartingInsideAByteAreRefused) {
  // Rows of V = 13 i4 elements back to back are 6.5 bytes apart: row 1 starts inside a byte.
  s_ = MappingScope(*Axes::Parse("W = 6, V = 13, K = 4"));
  for (bool jit : {false, true}) {
    for (const char* table : {"hbm:W, V", "hbm:V, W"}) {
      absl::StatusOr<Run> run = RunOn(jit, DType::kI4, table, {1, 2, 3, 4}, Tier::kHbm, "K, V", false);
      ASSERT_FALSE(run.ok());
      EXPECT_TRUE(absl::IsInvalidArgument(run.status())) << run.status();
      EXPECT_THAT(std::string(run.status().message()),
                  HasSubstr("Indirect Access: the IndirectLoop's offsets index[K] x "));
      EXPECT_THAT(std::string(run.status().message()), HasSubstr("i4 elements start rows of W inside a byte"));
    }
  }
}

TEST_F(IndirectJitTest, GathersAndScattersOddFourBitRowsOnWholeBytes) {
  // Rows of 13 i4 elements padded to 16 in HBM: 6.5 bytes of data 8 bytes apart.
  s_ = MappingScope(*Axes::Parse("W = 6, V = 13, K = 4"));
  for (bool scatter : {false, true}) {
    const char* out = scatter ? "W, V" : "K, V";
    absl::StatusOr<Run> interp = RunOn(false, DType::kI4, "hbm:W, V # 16", {5, 0, 3, 1}, Tier::kHbm, out, scatter);
    absl::StatusOr<Run> jit = RunOn(true, DType::kI4, "hbm:W, V # 16", {5, 0, 3, 1}, Tier::kHbm, out, scatter);
    ASSERT_TRUE(interp.ok()) << interp.status();
    ASSERT_TRUE(jit.ok()) << jit.status();
    EXPECT_EQ(interp->bits, jit->bits) << (scatter ? "scatter" : "gather");
  }
}

TEST_F(IndirectJitTest, AnIndexOutOfRangeFailsOnTheJit) {
  absl::StatusOr<Run> jit = RunOn(true, DType::kI8, "W, V", {0, 6, 1, 2}, Tier::kDm, "K, V", false);
  ASSERT_FALSE(jit.ok());
  EXPECT_THAT(std::string(jit.status().message()), HasSubstr("Indirect Access: index[K = 1] = 6 is outside the rows 0..5"));
  absl::StatusOr<Run> twice = RunOn(true, DType::kI8, "W, V", {0, 2, 2, 1}, Tier::kDm, "W, V", true);
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(std::string(twice.status().message()), HasSubstr("both name row 2 of W"));
}

}  // namespace
}  // namespace visa
