// Npy: files written byte by byte here (versions 1.0 and 2.0, an oracle independent of the
// writer), round trips of every dtype, loading into HBM and writing from it on both backends, and
// every malformed input.
#include "runtime/npy.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "dsl/mapping_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interp/interpreter.h"
#include "jit/jit_backend.h"
#include "runtime/device.h"
#include "runtime/dma.h"
#include "runtime/host_tensor.h"
#include "runtime/tensor_unit.h"
#include "tests/common/backends.h"
#include "tests/common/temp_files.h"

namespace visa {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using test::TempPath;
using test::WriteFile;

// Magic, version `major`.0, the little-endian length of `header` (2 bytes for 1.0, 4 for 2.0 and
// above), `header`, then `data`.
std::vector<uint8_t> NpyFileBytes(int major, const std::string& header, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  int length_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < length_bytes; ++i) bytes.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

const std::vector<uint8_t> kSixFloats = {
    0x00, 0x00, 0x80, 0x3f,  // 1.0
    0x00, 0x00, 0x00, 0xc0,  // -2.0
    0x00, 0x00, 0x40, 0x3f,  // 0.75
    0x00, 0x00, 0xc8, 0x42,  // 100.0
    0x00, 0x00, 0x00, 0x00,  // 0.0
    0x00, 0x00, 0x80, 0xbf,  // -1.0
};

// NumPy's own header for a (2, 3) float32 array: the dict, spaces, a newline, so that magic (6) +
// version (2) + length (2) + header = 128 bytes.
std::string NumpyStyleHeader() {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  return dict + std::string(128 - 10 - dict.size() - 1, ' ') + "\n";
}

class NpyTest : public ::testing::Test {
 protected:
  MappingScope s = *MappingScope::Parse("R = 2, C = 3, K = 3, A = 4, B = 6");
};

TEST_F(NpyTest, ReadsAVersion1FileWrittenByHand) {
  std::string path = TempPath("hand.npy");
  WriteFile(path, NpyFileBytes(1, NumpyStyleHeader(), kSixFloats));
  absl::StatusOr<NpyFile> file = NpyFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->major_version(), 1);
  EXPECT_EQ(file->descr(), "<f4");
  EXPECT_THAT(file->shape(), ElementsAre(2, 3));
  EXPECT_EQ(file->data_start(), 128);
  absl::StatusOr<HostTensor> host = file->ToHost(s.m("R, C"));
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_THAT(host->ToValues(), ElementsAre(1.0, -2.0, 0.75, 100.0, 0.0, -1.0));
}

TEST_F(NpyTest, WriterProducesNumpysBytes) {
  HostTensor t = *HostTensor::FromValues(DType::kF32, s.m("R, C"), {1.0, -2.0, 0.75, 100.0, 0.0, -1.0});
  absl::StatusOr<std::vector<uint8_t>> bytes = NpyBytes(t, s.m("R, C"));
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, NpyFileBytes(1, NumpyStyleHeader(), kSixFloats));
}

TEST_F(NpyTest, ReadsVersion2OtherSpellingsAndRankZero) {
  // Version 2.0, keys in another order, double quotes, Python 2 longs, no padding.
  std::vector<uint8_t> v2 = NpyFileBytes(2, "{\"shape\": (3L,), 'fortran_order': False, 'descr': '<i2'}\n",
                                         {0x01, 0x00, 0xff, 0xff, 0x00, 0x80});
  absl::StatusOr<NpyFile> file = NpyFile::Parse(v2, "v2");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->major_version(), 2);
  EXPECT_THAT(file->ToHost(s.m("K"))->ToValues(), ElementsAre(1, -1, -32768));
  // int8 as NumPy writes it ('|i1') and as '<i1'.
  for (const char* descr : {"|i1", "<i1"}) {
    std::vector<uint8_t> i8 = NpyFileBytes(1, std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (3,), }\n",
                                           {0x7f, 0x80, 0x05});
    EXPECT_THAT(NpyFile::Parse(i8, "i8")->ToHost(s.m("K"))->ToValues(), ElementsAre(127, -128, 5));
  }
  // A scalar: shape (), the axes `1`.
  std::vector<uint8_t> scalar = NpyFileBytes(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (), }\n", {0x00, 0x3c});
  absl::StatusOr<HostTensor> one = NpyFile::Parse(scalar, "scalar")->ToHost(Mapping());
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_THAT(one->ToValues(), ElementsAre(1.0));
}

TEST_F(NpyTest, ReadsBf16BitsOnlyWhenAsked) {
  // 1.0, -2.0, 0.5 in bf16, stored as '<u2' and as '|V2'.
  const std::vector<uint8_t> bits = {0x80, 0x3f, 0x00, 0xc0, 0x00, 0x3f};
  for (const char* descr : {"<u2", "|V2"}) {
    SCOPED_TRACE(descr);
    std::vector<uint8_t> bytes =
        NpyFileBytes(1, std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (3,), }\n", bits);
    NpyFile file = *NpyFile::Parse(bytes, "bf16.npy");
    absl::StatusOr<HostTensor> bf16 = file.ToHost(s.m("K"), {.dtype = DType::kBF16});
    ASSERT_TRUE(bf16.ok()) << bf16.status();
    EXPECT_EQ(bf16->dtype(), DType::kBF16);
    EXPECT_THAT(bf16->ToValues(), ElementsAre(1.0, -2.0, 0.5));
    EXPECT_THAT(file.ToHost(s.m("K")).status().message(),
                AllOf(HasSubstr("bf16.npy"), HasSubstr(descr), HasSubstr("LoadOptions::dtype = bf16")));
    EXPECT_FALSE(file.ToHost(s.m("K"), {.dtype = DType::kF32}).ok());
  }
}

TEST_F(NpyTest, RoundTripsEveryDTypeBitForBit) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kI8, DType::kI16, DType::kI32, DType::kBF16}) {
    SCOPED_TRACE(Name(dtype));
    HostTensor t = *HostTensor::Random(dtype, s.m("A, B"), 40 + static_cast<int>(dtype));
    std::string path = TempPath(std::string("round_") + Name(dtype) + ".npy");
    ASSERT_TRUE(WriteNpy(path, t, s.m("A, B")).ok());
    absl::StatusOr<NpyFile> file = NpyFile::Open(path);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_EQ(file->descr(), *NpyDescr(dtype));
    EXPECT_EQ(file->data_start() % 64, 0);
    absl::StatusOr<HostTensor> back = file->ToHost(s.m("A, B"), {.dtype = dtype});
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, t);
  }
  EXPECT_EQ(*NpyDescr(DType::kBF16), "<u2");
  EXPECT_THAT(NpyDescr(DType::kF8E4M3).status().message(), HasSubstr("no descr for f8e4m3"));
  EXPECT_THAT(NpyBytes(*HostTensor::Zeros(DType::kI4, s.m("K")), s.m("K")).status().message(), HasSubstr("i4"));
}

TEST_F(NpyTest, WritesAnotherLayoutInCOrder) {
  HostTensor t = *HostTensor::Random(DType::kI32, s.m("B, A"), 9);
  std::vector<uint8_t> bytes = *NpyBytes(t, s.m("A, B"));
  HostTensor back = *NpyFile::Parse(bytes, "t")->ToHost(s.m("A, B"));
  for (int64_t a = 0; a < 4; ++a) {
    for (int64_t b = 0; b < 6; ++b) {
      Index index;
      index.Set("A", a);
      index.Set("B", b);
      EXPECT_EQ(*back.GetBits(a * 6 + b), *t.GetBits(index));
    }
  }
}

class NpyBackendTest : public NpyTest, public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override {
    owned_backend = test::MakeBackend(std::string(GetParam()) == "jit" ? 1 : 0, /*jit_threads=*/1);
    backend = owned_backend.get();
    ASSERT_NE(backend, nullptr);
  }
  std::unique_ptr<Backend> owned_backend;
  Backend* backend = nullptr;
};

TEST_P(NpyBackendTest, LoadsIntoHbmAndWritesFromIt) {
  HostTensor t = *HostTensor::Random(DType::kF16, s.m("A, B"), 11);
  std::vector<uint8_t> bytes = *NpyBytes(t, s.m("A, B"));
  NpyFile file = *NpyFile::Parse(bytes, "t.npy");
  Device device(1);
  Context ctx(device, *backend);
  absl::StatusOr<HbmTensor> hbm = file.ToHbm(ctx.pdma, s.m("A, B"), 0x800, {.element = s.m("B, A")});
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  DmTensor dm = *hbm->to_dm(ctx.tdma, 0, {.cluster = s.m("1 # 2"), .slice = s.m("1 # 256"), .element = s.m("B, A")});
  EXPECT_EQ(*dm.to_host(ctx, s.m("A, B")), t);
  std::string path = TempPath(std::string("from_device_") + GetParam() + ".npy");
  ASSERT_TRUE(WriteNpy(ctx.pdma, path, *hbm, s.m("A, B")).ok());
  EXPECT_EQ(*NpyFile::Open(path)->ToHost(s.m("A, B")), t);
  HbmTensor dst = *HbmTensor::Create(device, DType::kF16, {.element = s.m("A, B")}, 0x4000);
  ASSERT_TRUE(file.LoadInto(ctx.pdma, s.m("A, B"), dst).ok());
  EXPECT_EQ(*dst.to_host(ctx.pdma, s.m("A, B")), t);
}

INSTANTIATE_TEST_SUITE_P(Backends, NpyBackendTest, ::testing::Values("interp", "jit"));

// ---- Malformed files: each names its rule, the file and the offending field -------------------

std::string ParseMessage(const std::vector<uint8_t>& bytes) {
  return std::string(NpyFile::Parse(bytes, "bad.npy").status().message());
}

std::string HeaderMessage(const std::string& header, const std::vector<uint8_t>& data = {}) {
  return ParseMessage(NpyFileBytes(1, header, data));
}

TEST_F(NpyTest, RefusesBadMagicVersionAndLengths) {
  EXPECT_THAT(ParseMessage({'N', 'U', 'M', 'P', 'Y'}), AllOf(HasSubstr("magic"), HasSubstr("bad.npy")));
  EXPECT_THAT(ParseMessage({0x93, 'N', 'U', 'M', 'P', 'Y', 1}), HasSubstr("truncated header"));
  EXPECT_THAT(ParseMessage({0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 5}), HasSubstr("truncated header"));
  EXPECT_THAT(ParseMessage({0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 5, 0, 0}), HasSubstr("truncated header"));
  EXPECT_THAT(ParseMessage(NpyFileBytes(3, "{}", {})), AllOf(HasSubstr("version"), HasSubstr("3.0")));
  EXPECT_THAT(ParseMessage({0x93, 'N', 'U', 'M', 'P', 'Y', 1, 1, 0, 0}), AllOf(HasSubstr("version"), HasSubstr("1.1")));
  std::vector<uint8_t> beyond = NpyFileBytes(1, "{}", {});
  beyond[8] = 9;
  EXPECT_THAT(ParseMessage(beyond), AllOf(HasSubstr("header length beyond file"), HasSubstr("9 bytes but only 2")));
  std::vector<uint8_t> beyond2 = NpyFileBytes(2, "{}", {});
  beyond2[11] = 0xff;
  EXPECT_THAT(ParseMessage(beyond2), HasSubstr("header length beyond file"));
}

TEST_F(NpyTest, RefusesMalformedHeaderDicts) {
  EXPECT_THAT(HeaderMessage("'descr': '<f4'"), AllOf(HasSubstr("header dict"), HasSubstr("starting with `{`")));
  EXPECT_THAT(HeaderMessage("{'descr': '<f4', 'shape': (3,)"), AllOf(HasSubstr("header dict"), HasSubstr("byte")));
  EXPECT_THAT(HeaderMessage("{'descr': '<f4}"), HasSubstr("closing quote"));
  EXPECT_THAT(HeaderMessage("{'descr': '<f\\x34'}"), HasSubstr("without escapes"));
  EXPECT_THAT(HeaderMessage("{'descr': None}"), HasSubstr("a string, True, False or a tuple"));
  EXPECT_THAT(HeaderMessage("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), } x"), HasSubstr("after the dict"));
  EXPECT_THAT(HeaderMessage("{'descr': '<f4', 'fortran_order': False, 'shape': (3), }"), HasSubstr("trailing comma"));
  EXPECT_THAT(HeaderMessage("{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }"), HasSubstr("non-negative integer"));
  EXPECT_THAT(HeaderMessage("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"),
              HasSubstr("below 2^63"));
}

TEST_F(NpyTest, RefusesWrongKeys) {
  EXPECT_THAT(HeaderMessage("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': True}", {0, 0, 0, 0}),
              AllOf(HasSubstr("unknown key `x`"), HasSubstr("bad.npy")));
  EXPECT_THAT(HeaderMessage("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}"),
              HasSubstr("`descr` appears twice"));
  EXPECT_THAT(HeaderMessage("{'descr': '<f4', 'shape': ()}"), HasSubstr("`fortran_order` is missing"));
  EXPECT_THAT(HeaderMessage("{'descr': '<f4', 'fortran_order': 'no', 'shape': ()}"),
              AllOf(HasSubstr("fortran_order"), HasSubstr("True or False")));
  EXPECT_THAT(HeaderMessage("{'descr': '<f4', 'fortran_order': False, 'shape': 'x'}"),
              AllOf(HasSubstr("shape"), HasSubstr("tuple of integers")));
}

TEST_F(NpyTest, RefusesFortranOrder) {
  EXPECT_THAT(HeaderMessage("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", kSixFloats),
              AllOf(HasSubstr("fortran_order"), HasSubstr("column-major"), HasSubstr("bad.npy")));
}

TEST_F(NpyTest, RefusesUnsupportedDTypes) {
  EXPECT_THAT(HeaderMessage("{'descr': '>f4', 'fortran_order': False, 'shape': (6,), }", kSixFloats),
              AllOf(HasSubstr("dtype"), HasSubstr("`>f4`"), HasSubstr("big-endian")));
  EXPECT_THAT(HeaderMessage("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", kSixFloats),
              AllOf(HasSubstr("dtype"), HasSubstr("unknown descr `<f8`")));
}

TEST_F(NpyTest, RefusesAShapeThatDoesNotMatchTheData) {
  EXPECT_THAT(HeaderMessage("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", kSixFloats),
              AllOf(HasSubstr("shape and data size"), HasSubstr("[2, 2]"), HasSubstr("16 bytes"), HasSubstr("holds 24")));
  EXPECT_THAT(HeaderMessage("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }", kSixFloats),
              HasSubstr("shape and data size"));
  EXPECT_THAT(HeaderMessage("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"),
              AllOf(HasSubstr("shape"), HasSubstr("more than")));
}

TEST_F(NpyTest, RefusesAxesAndDestinationsOfAnotherShape) {
  std::vector<uint8_t> bytes = NpyFileBytes(1, NumpyStyleHeader(), kSixFloats);
  NpyFile file = *NpyFile::Parse(bytes, "hand.npy");
  EXPECT_THAT(file.ToHost(s.m("C, R")).status().message(),
              AllOf(HasSubstr("dimension axes"), HasSubstr("hand.npy"), HasSubstr("for dimension 0 of size 2")));
  Device device(1);
  Dma pdma = Dma::Pcie(device);
  HbmTensor dst = *HbmTensor::Create(device, DType::kF32, {.element = s.m("R, K")}, 0);
  EXPECT_THAT(file.LoadInto(pdma, s.m("R, C"), dst).message(),
              AllOf(HasSubstr("not the destination's shape"), HasSubstr("no axis `C`")));
  EXPECT_THAT(NpyFile::Open(TempPath("missing.npy")).status().message(), HasSubstr("missing.npy"));
}

TEST_F(NpyTest, SurvivesEveryTruncationAndByteFlip) {
  std::vector<uint8_t> valid = NpyFileBytes(1, NumpyStyleHeader(), kSixFloats);
  for (size_t n = 0; n < valid.size(); ++n) {
    std::vector<uint8_t> cut(valid.begin(), valid.begin() + n);
    EXPECT_FALSE(NpyFile::Parse(cut, "cut").ok()) << n;
  }
  for (size_t i = 0; i < valid.size(); ++i) {
    for (uint8_t value : {uint8_t{0x00}, uint8_t{0xff}, uint8_t{'9'}, uint8_t{'\''}, uint8_t{','}}) {
      std::vector<uint8_t> changed = valid;
      changed[i] = value;
      absl::StatusOr<NpyFile> file = NpyFile::Parse(changed, "flip");
      if (file.ok()) (void)file->Image({.dtype = DType::kBF16});
    }
  }
}

}  // namespace
}  // namespace visa
