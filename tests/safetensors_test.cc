// Safetensors: a file written byte by byte here (an oracle independent of the writer), round trips
// of every dtype, loading into HBM and reading back on both backends, and every malformed input.
#include "runtime/safetensors.h"

#include <cstdint>
#include <cstring>
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
#include "runtime/launch.h"
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

// A file image: the 8-byte little-endian length of `header`, `header`, then `data`.
std::vector<uint8_t> FileBytes(const std::string& header, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> bytes;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>(n >> (8 * i)));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

// f32 bit patterns, least significant byte first, written out by hand.
const std::vector<uint8_t> kSixFloats = {
    0x00, 0x00, 0x80, 0x3f,  // 1.0
    0x00, 0x00, 0x00, 0xc0,  // -2.0
    0x00, 0x00, 0x40, 0x3f,  // 0.75
    0x00, 0x00, 0xc8, 0x42,  // 100.0
    0x00, 0x00, 0x00, 0x00,  // 0.0
    0x00, 0x80, 0x80, 0x3f,  // 1.00390625 = 1 + 2^-8 (halfway between two bf16 values)
};
const std::vector<uint8_t> kThreeI16 = {0x01, 0x00, 0xff, 0xff, 0x00, 0x80};  // 1, -1, -32768

// The header the writer must produce for the same two tensors and metadata: keys in the order
// added, `__metadata__` first, compact JSON, padded with spaces to a multiple of 8 bytes.
const std::string kHandHeader =
    R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
    R"("b":{"dtype":"I16","shape":[3],"data_offsets":[24,30]}})";

std::vector<uint8_t> HandFile() {
  std::vector<uint8_t> data = kSixFloats;
  data.insert(data.end(), kThreeI16.begin(), kThreeI16.end());
  std::string header = kHandHeader;
  header.append((8 - header.size() % 8) % 8, ' ');
  return FileBytes(header, data);
}

class SafetensorsTest : public ::testing::Test {
 protected:
  MappingScope s = *MappingScope::Parse("R = 2, C = 3, K = 3, A = 4, B = 6, X = 7");
};

TEST_F(SafetensorsTest, ReadsAFileWrittenByHand) {
  std::string path = TempPath("hand.safetensors");
  WriteFile(path, HandFile());
  absl::StatusOr<SafetensorsFile> file = SafetensorsFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT(file->names(), ElementsAre("w", "b"));
  ASSERT_EQ(file->metadata().size(), 1u);
  EXPECT_EQ(file->metadata()[0].first, "format");
  EXPECT_EQ(file->metadata()[0].second, "pt");
  const SafetensorsEntry& w = file->tensors()[0];
  EXPECT_EQ(w.dtype_name, "F32");
  EXPECT_EQ(w.dtype, DType::kF32);
  EXPECT_THAT(w.shape, ElementsAre(2, 3));
  EXPECT_EQ(w.begin, 0);
  EXPECT_EQ(w.end, 24);
  EXPECT_EQ(file->data_start(), 8 + static_cast<int64_t>((kHandHeader.size() + 7) / 8 * 8));

  absl::StatusOr<HostTensor> host = file->ToHost("w", s.m("R, C"));
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_THAT(host->ToValues(), ElementsAre(1.0, -2.0, 0.75, 100.0, 0.0, 1.00390625));
  Index r1c0;
  r1c0.Set("R", 1);
  r1c0.Set("C", 0);
  EXPECT_EQ(*host->Get(r1c0), 100.0);
  absl::StatusOr<HostTensor> b = file->ToHost("b", s.m("K"));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_THAT(b->ToValues(), ElementsAre(1.0, -1.0, -32768.0));
}

TEST_F(SafetensorsTest, WriterProducesTheHandWrittenBytes) {
  SafetensorsWriter writer;
  ASSERT_TRUE(writer.SetMetadata("format", "pt").ok());
  HostTensor w = *HostTensor::FromValues(DType::kF32, s.m("R, C"), {1.0, -2.0, 0.75, 100.0, 0.0, 1.00390625});
  HostTensor b = *HostTensor::FromValues(DType::kI16, s.m("K"), {1, -1, -32768});
  ASSERT_TRUE(writer.Add("w", w, s.m("R, C")).ok());
  ASSERT_TRUE(writer.Add("b", b, s.m("K")).ok());
  EXPECT_EQ(writer.Bytes(), HandFile());
}

TEST_F(SafetensorsTest, RoundTripsEveryDTypeBitForBit) {
  const DType kTypes[] = {DType::kBF16, DType::kF16, DType::kF32, DType::kF8E4M3,
                          DType::kF8E5M2, DType::kI8, DType::kI16, DType::kI32};
  SafetensorsWriter writer;
  std::vector<HostTensor> originals;
  for (DType dtype : kTypes) {
    HostTensor t = *HostTensor::Random(dtype, s.m("A, B"), 17 + static_cast<int>(dtype));
    ASSERT_TRUE(writer.Add(Name(dtype), t, s.m("A, B")).ok());
    originals.push_back(t);
  }
  std::string path = TempPath("every_dtype.safetensors");
  ASSERT_TRUE(writer.Write(path).ok());
  absl::StatusOr<SafetensorsFile> file = SafetensorsFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  for (size_t k = 0; k < originals.size(); ++k) {
    SCOPED_TRACE(Name(kTypes[k]));
    const SafetensorsEntry* entry = *file->Find(Name(kTypes[k]));
    EXPECT_EQ(entry->dtype, kTypes[k]);
    EXPECT_THAT(entry->shape, ElementsAre(4, 6));
    absl::StatusOr<HostTensor> back = file->ToHost(Name(kTypes[k]), s.m("A, B"));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, originals[k]);
  }
}

TEST_F(SafetensorsTest, WritesAnotherLayoutInRowMajorOrder) {
  // A tensor laid out [B, A] (transposed, padded) is written as the [A, B] the axes list says.
  HostTensor t = *HostTensor::Random(DType::kF32, s.m("B, A # 8"), 5);
  SafetensorsWriter writer;
  ASSERT_TRUE(writer.Add("t", t, s.m("A, B")).ok());
  std::vector<uint8_t> bytes = writer.Bytes();
  absl::StatusOr<SafetensorsFile> file = SafetensorsFile::Parse(bytes, "memory");
  ASSERT_TRUE(file.ok()) << file.status();
  HostTensor back = *file->ToHost("t", s.m("A, B"));
  for (int64_t a = 0; a < 4; ++a) {
    for (int64_t b = 0; b < 6; ++b) {
      Index index;
      index.Set("A", a);
      index.Set("B", b);
      EXPECT_EQ(*back.GetBits(index), *t.GetBits(index));
      EXPECT_EQ(*back.GetBits(a * 6 + b), *t.GetBits(index));  // row-major position
    }
  }
}

TEST_F(SafetensorsTest, ConvertsOnlyWhenAsked) {
  std::vector<uint8_t> bytes = HandFile();
  SafetensorsFile file = *SafetensorsFile::Parse(bytes, "hand");
  // bf16 of the hand values, rounded to nearest even: 1 + 2^-8 is a tie and goes to 1.0.
  absl::StatusOr<HostTensor> bf16 = file.ToHost("w", s.m("R, C"), {.dtype = DType::kBF16});
  ASSERT_TRUE(bf16.ok()) << bf16.status();
  EXPECT_EQ(bf16->dtype(), DType::kBF16);
  EXPECT_THAT(bf16->ToBits(), ElementsAre(0x3f80, 0xc000, 0x3f40, 0x42c8, 0x0000, 0x3f80));
  // i16 -> i32 widens exactly; f32 -> i32 refuses the fraction, naming the element.
  EXPECT_THAT(file.ToHost("b", s.m("K"), {.dtype = DType::kI32})->ToValues(), ElementsAre(1, -1, -32768));
  absl::StatusOr<HostTensor> ints = file.ToHost("w", s.m("R, C"), {.dtype = DType::kI32});
  EXPECT_THAT(ints.status().message(), AllOf(HasSubstr("dtype conversion"), HasSubstr("element 2"), HasSubstr("`w`")));
  // Narrow sources convert through a table of every pattern: bf16 -> f32 exactly, i8 -> i4 (two
  // per byte) when the values fit.
  SafetensorsWriter narrow;
  ASSERT_TRUE(narrow.Add("h", *HostTensor::FromValues(DType::kBF16, s.m("K"), {1.0, -2.0, 0.5}), s.m("K")).ok());
  ASSERT_TRUE(narrow.Add("q", *HostTensor::FromValues(DType::kI8, s.m("K"), {1, -1, 7}), s.m("K")).ok());
  std::vector<uint8_t> narrow_bytes = narrow.Bytes();
  SafetensorsFile narrow_file = *SafetensorsFile::Parse(narrow_bytes, "narrow");
  EXPECT_THAT(narrow_file.ToHost("h", s.m("K"), {.dtype = DType::kF32})->ToBits(),
              ElementsAre(0x3f800000u, 0xc0000000u, 0x3f000000u));
  absl::StatusOr<HostTensor> i4 = narrow_file.ToHost("q", s.m("K"), {.dtype = DType::kI4});
  ASSERT_TRUE(i4.ok()) << i4.status();
  EXPECT_THAT(i4->ToValues(), ElementsAre(1, -1, 7));
  EXPECT_THAT(i4->bytes(), ElementsAre(0xf1, 0x07));
  // i16 -> i8 refuses -32768.
  EXPECT_THAT(file.ToHost("b", s.m("K"), {.dtype = DType::kI8}).status().message(),
              AllOf(HasSubstr("dtype conversion"), HasSubstr("element 2")));
}

class SafetensorsBackendTest : public SafetensorsTest, public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override {
    owned_backend = test::MakeBackend(std::string(GetParam()) == "jit" ? 1 : 0, /*jit_threads=*/1);
    backend = owned_backend.get();
    ASSERT_NE(backend, nullptr);
  }
  std::unique_ptr<Backend> owned_backend;
  Backend* backend = nullptr;
};

TEST_P(SafetensorsBackendTest, LoadsIntoHbmAndReadsBack) {
  HostTensor w = *HostTensor::Random(DType::kBF16, s.m("A, B"), 3);
  SafetensorsWriter writer;
  ASSERT_TRUE(writer.Add("w", w, s.m("A, B")).ok());
  std::vector<uint8_t> bytes = writer.Bytes();
  SafetensorsFile file = *SafetensorsFile::Parse(bytes, "weights");

  Device device(1);
  Context ctx(device, *backend);
  // Transposed on the device: the HBM tensor holds [B, A].
  absl::StatusOr<HbmTensor> hbm = file.ToHbm(ctx.pdma, "w", s.m("A, B"), 0x1000, {.element = s.m("B, A")});
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  EXPECT_EQ(hbm->address(), 0x1000);
  EXPECT_EQ(hbm->element(), s.m("B, A"));
  // Through the device: HBM -> DM -> HBM, then back to the host in the file's order.
  DmTensor dm = *hbm->to_dm(ctx.tdma, 0, {.cluster = s.m("1 # 2"), .slice = s.m("1 # 256"), .element = s.m("B, A")});
  absl::StatusOr<HostTensor> back = dm.to_host(ctx, s.m("A, B"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, w);

  // Into an existing tensor, then written from the device into a new file.
  HbmTensor dst = *HbmTensor::Create(device, DType::kBF16, {.element = s.m("A, B")}, 0x4000);
  ASSERT_TRUE(file.LoadInto(ctx.pdma, "w", s.m("A, B"), dst).ok());
  SafetensorsWriter out;
  ASSERT_TRUE(out.Add(ctx.pdma, "w", dst, s.m("A, B")).ok());
  ASSERT_TRUE(out.Add(ctx.pdma, "w_t", *hbm, s.m("A, B")).ok());
  std::vector<uint8_t> written = out.Bytes();
  SafetensorsFile reread = *SafetensorsFile::Parse(written, "written");
  EXPECT_EQ(*reread.ToHost("w", s.m("A, B")), w);
  EXPECT_EQ(*reread.ToHost("w_t", s.m("A, B")), w);
}

// The way a model uses its weights: the program is traced once over HBM tensors placed by hand,
// the weights are loaded into those tensors from the file, and each launch reads them there.
TEST_P(SafetensorsBackendTest, LoadsWeightsForATracedProgram) {
  HostTensor w = *HostTensor::Random(DType::kBF16, s.m("A, B"), 8);
  SafetensorsWriter writer;
  ASSERT_TRUE(writer.Add("w", w, s.m("A, B")).ok());
  std::vector<uint8_t> bytes = writer.Bytes();
  SafetensorsFile file = *SafetensorsFile::Parse(bytes, "weights");

  Device device(1);
  HbmTensor weights = *HbmTensor::Create(device, DType::kBF16, {.element = s.m("A, B")}, 0x1000);
  const MappingScope& scope = s;
  KernelOf copy_through_dm = [&scope](Context& ctx, const std::vector<DeviceTensor>& inputs)
      -> absl::StatusOr<std::vector<DeviceTensor>> {
    HbmTensor in(inputs[0]);
    absl::StatusOr<DmTensor> dm =
        in.to_dm(ctx.tdma, 0, {.cluster = scope.m("1 # 2"), .slice = scope.m("1 # 256"), .element = scope.m("A, B")});
    if (!dm.ok()) return dm.status();
    absl::StatusOr<HbmTensor> out = dm->to_hbm(ctx.tdma, 0x100000, {.element = scope.m("A, B")});
    if (!out.ok()) return out.status();
    return std::vector<DeviceTensor>{*out};
  };
  absl::StatusOr<Program> program = Trace(copy_through_dm, {weights});
  ASSERT_TRUE(program.ok()) << program.status();
  Dma pdma = Dma::Pcie(device);
  ASSERT_TRUE(file.LoadInto(pdma, "w", s.m("A, B"), weights).ok());
  for (int launch = 0; launch < 2; ++launch) {
    absl::StatusOr<std::vector<DeviceTensor>> outputs = Launch(*program, device, *backend, {weights});
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    EXPECT_EQ(*HbmTensor((*outputs)[0]).to_host(pdma, s.m("A, B")), w);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, SafetensorsBackendTest, ::testing::Values("interp", "jit"));

TEST_F(SafetensorsTest, LoadsWithADmaOfItsOwn) {
  std::vector<uint8_t> bytes = HandFile();
  SafetensorsFile file = *SafetensorsFile::Parse(bytes, "hand");
  Device device(1);
  Dma pdma = Dma::Pcie(device);
  absl::StatusOr<HbmTensor> hbm = file.ToHbm(pdma, "w", s.m("R, C"), Address::Any());
  ASSERT_TRUE(hbm.ok()) << hbm.status();
  EXPECT_THAT(hbm->to_host(pdma, s.m("C, R"))->ToValues(), ElementsAre(1.0, 100.0, -2.0, 0.0, 0.75, 1.00390625));
}

// ---- Malformed files: each names its rule, the file and the offending field -------------------

absl::Status ParseStatus(const std::string& header, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> bytes = FileBytes(header, data);
  return SafetensorsFile::Parse(bytes, "bad.safetensors").status();
}

const std::vector<uint8_t> k24(24, 0);

TEST_F(SafetensorsTest, RefusesATruncatedHeaderLength) {
  std::vector<uint8_t> bytes = {1, 0, 0};
  absl::Status status = SafetensorsFile::Parse(bytes, "bad.safetensors").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("truncated header"), HasSubstr("bad.safetensors"), HasSubstr("3 bytes")));
}

TEST_F(SafetensorsTest, RefusesAHeaderLengthBeyondTheFile) {
  std::vector<uint8_t> bytes = FileBytes("{}", {});
  bytes[0] = 3;  // claims 3 header bytes, 2 follow
  EXPECT_THAT(SafetensorsFile::Parse(bytes, "bad.safetensors").status().message(),
              AllOf(HasSubstr("header length beyond file"), HasSubstr("3 bytes but only 2")));
  bytes[7] = 0xff;  // a length near 2^64 must not wrap
  EXPECT_THAT(SafetensorsFile::Parse(bytes, "bad.safetensors").status().message(),
              HasSubstr("header length beyond file"));
}

TEST_F(SafetensorsTest, RefusesBadJson) {
  EXPECT_THAT(ParseStatus(R"({"w": {"dtype": "F32",)", {}).message(),
              AllOf(HasSubstr("header JSON"), HasSubstr("bad.safetensors"), HasSubstr("parse error")));
  EXPECT_THAT(ParseStatus(R"([1, 2])", {}).message(), AllOf(HasSubstr("header JSON"), HasSubstr("begin with `{`")));
  EXPECT_THAT(ParseStatus("", {}).message(), HasSubstr("header JSON"));
  EXPECT_THAT(ParseStatus("{\"\xff\": 1}", {}).message(), HasSubstr("header JSON"));  // not UTF-8
  EXPECT_THAT(ParseStatus(R"({"w": {"dtype": "F32", "shape": [[[[1]]]], "data_offsets": [0, 4]}})", {}).message(),
              AllOf(HasSubstr("header JSON"), HasSubstr("nest deeper")));
}

TEST_F(SafetensorsTest, AcceptsAnEmptyFileOfTensorsAndPaddedHeaders) {
  std::vector<uint8_t> bytes = FileBytes("{}      ", {});
  absl::StatusOr<SafetensorsFile> file = SafetensorsFile::Parse(bytes, "empty");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE(file->tensors().empty());
}

TEST_F(SafetensorsTest, RefusesOffsetsOutOfRange) {
  EXPECT_THAT(ParseStatus(R"({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [4, 28]}})", k24).message(),
              AllOf(HasSubstr("data_offsets out of range"), HasSubstr("`w`"), HasSubstr("[4, 28]"), HasSubstr("24-byte")));
}

TEST_F(SafetensorsTest, RefusesOverlappingOffsets) {
  EXPECT_THAT(ParseStatus(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},)"
                          R"( "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})", k24).message(),
              AllOf(HasSubstr("data_offsets overlap"), HasSubstr("`b` [8, 24]"), HasSubstr("`a` [0, 16]")));
}

TEST_F(SafetensorsTest, RefusesAGapAndUncoveredData) {
  EXPECT_THAT(ParseStatus(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
                          R"( "b": {"dtype": "F32", "shape": [2], "data_offsets": [16, 24]}})", k24).message(),
              AllOf(HasSubstr("data_offsets leave a gap"), HasSubstr("[8, 16)"), HasSubstr("`b`")));
  EXPECT_THAT(ParseStatus(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", k24).message(),
              AllOf(HasSubstr("data_offsets do not cover the data"), HasSubstr("16 bytes of the 24-byte")));
  EXPECT_THAT(ParseStatus("{}", {1, 2}).message(), HasSubstr("do not cover the data"));
}

TEST_F(SafetensorsTest, RefusesAShapeThatDoesNotMatchTheBytes) {
  EXPECT_THAT(ParseStatus(R"({"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 24]}})", k24).message(),
              AllOf(HasSubstr("shape and data_offsets"), HasSubstr("`w`"), HasSubstr("[2, 2]"), HasSubstr("cover 24 bytes")));
  EXPECT_THAT(ParseStatus(R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 24]}})", k24)
                  .message(),
              AllOf(HasSubstr("shape"), HasSubstr("`w`"), HasSubstr("more than")));
  EXPECT_THAT(ParseStatus(R"({"w": {"dtype": "F32", "shape": [-6], "data_offsets": [0, 24]}})", k24).message(),
              AllOf(HasSubstr("shape"), HasSubstr("`-6`")));
  EXPECT_THAT(ParseStatus(R"({"w": {"dtype": "F32", "shape": [6.0], "data_offsets": [0, 24]}})", k24).message(),
              AllOf(HasSubstr("shape"), HasSubstr("not an integer")));
  EXPECT_THAT(ParseStatus(R"({"w": {"dtype": "F32", "shape": 6, "data_offsets": [0, 24]}})", k24).message(),
              AllOf(HasSubstr("shape"), HasSubstr("not an array")));
}

TEST_F(SafetensorsTest, RefusesBadDataOffsets) {
  EXPECT_THAT(ParseStatus(R"({"w": {"dtype": "F32", "shape": [6], "data_offsets": [0, 12, 24]}})", k24).message(),
              AllOf(HasSubstr("data_offsets"), HasSubstr("[0,12,24]"), HasSubstr("BEGIN <= END")));
  EXPECT_THAT(ParseStatus(R"({"w": {"dtype": "F32", "shape": [6], "data_offsets": [24, 0]}})", k24).message(),
              HasSubstr("BEGIN <= END"));
  EXPECT_THAT(ParseStatus(R"({"w": {"dtype": "F32", "shape": [6], "data_offsets": [0, 18446744073709551615]}})", k24)
                  .message(),
              AllOf(HasSubstr("data_offsets"), HasSubstr("not an integer in [0, 2^63)")));
}

TEST_F(SafetensorsTest, RefusesUnknownDTypesAndListsUnsupportedOnes) {
  EXPECT_THAT(ParseStatus(R"({"w": {"dtype": "F33", "shape": [6], "data_offsets": [0, 24]}})", k24).message(),
              AllOf(HasSubstr("unknown dtype `F33`"), HasSubstr("`w`"), HasSubstr("BF16")));
  // F64 is a dtype of the format: the file is valid and lists it, loading it is an error.
  std::vector<uint8_t> bytes = FileBytes(R"({"d": {"dtype": "F64", "shape": [3], "data_offsets": [0, 24]}})", k24);
  absl::StatusOr<SafetensorsFile> file = SafetensorsFile::Parse(bytes, "f64.safetensors");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->tensors()[0].dtype, std::nullopt);
  EXPECT_THAT(file->ToHost("d", s.m("K")).status().message(),
              AllOf(HasSubstr("unsupported dtype"), HasSubstr("`d`"), HasSubstr("F64"), HasSubstr("f64.safetensors")));
}

TEST_F(SafetensorsTest, RefusesDuplicateNamesAndFields) {
  EXPECT_THAT(ParseStatus(R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]},)"
                          R"( "w": {"dtype": "F32", "shape": [3], "data_offsets": [12, 24]}})", k24).message(),
              AllOf(HasSubstr("duplicate name"), HasSubstr("`w` appears twice")));
  EXPECT_THAT(ParseStatus(R"({"w": {"dtype": "F32", "dtype": "I32", "shape": [6], "data_offsets": [0, 24]}})", k24)
                  .message(),
              AllOf(HasSubstr("duplicate name"), HasSubstr("field `dtype` appears twice in `w`")));
}

TEST_F(SafetensorsTest, RefusesMissingUnknownAndMistypedFields) {
  EXPECT_THAT(ParseStatus(R"({"w": {"dtype": "F32", "shape": [6]}})", k24).message(),
              AllOf(HasSubstr("tensor entry"), HasSubstr("`w` has no field `data_offsets`")));
  EXPECT_THAT(ParseStatus(R"({"w": {"dtype": "F32", "shape": [6], "data_offsets": [0, 24], "x": 1}})", k24).message(),
              AllOf(HasSubstr("tensor entry"), HasSubstr("unknown field `x`")));
  EXPECT_THAT(ParseStatus(R"({"w": [1]})", k24).message(), AllOf(HasSubstr("tensor entry"), HasSubstr("`w` is not an object")));
  EXPECT_THAT(ParseStatus(R"({"w": {"dtype": 7, "shape": [6], "data_offsets": [0, 24]}})", k24).message(),
              AllOf(HasSubstr("dtype"), HasSubstr("not a string")));
  EXPECT_THAT(ParseStatus(R"({"__metadata__": {"k": 1}})", {}).message(),
              AllOf(HasSubstr("metadata"), HasSubstr("`k` is not a string")));
  EXPECT_THAT(ParseStatus(R"({"__metadata__": [1]})", {}).message(), HasSubstr("metadata"));
}

TEST_F(SafetensorsTest, NamesTheClosestTensorsWhenANameIsMissing) {
  std::vector<uint8_t> bytes = HandFile();
  SafetensorsFile file = *SafetensorsFile::Parse(bytes, "hand");
  absl::Status status = file.ToHost("ww", s.m("R, C")).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("no tensor named `ww`"), HasSubstr("hand"), HasSubstr("closest: `w`")));
  SafetensorsWriter writer;
  for (const char* name : {"layers.0.attn.q", "layers.0.attn.k", "layers.1.attn.q", "embed"}) {
    ASSERT_TRUE(writer.Add(name, *HostTensor::Zeros(DType::kBF16, s.m("K")), s.m("K")).ok());
  }
  std::vector<uint8_t> model = writer.Bytes();
  SafetensorsFile named = *SafetensorsFile::Parse(model, "model");
  EXPECT_THAT(named.Find("layers.0.attn.v").status().message(),
              HasSubstr("closest: `layers.0.attn.q`, `layers.0.attn.k`, `layers.1.attn.q`"));
  EXPECT_THAT(named.Find("zzzzzzzzzzzzzzz").status().message(), ::testing::Not(HasSubstr("closest")));
}

TEST_F(SafetensorsTest, RefusesAxesThatDoNotMatchTheShape) {
  std::vector<uint8_t> bytes = HandFile();
  SafetensorsFile file = *SafetensorsFile::Parse(bytes, "hand");
  EXPECT_THAT(file.ToHost("w", s.m("C, R")).status().message(),
              AllOf(HasSubstr("dimension axes"), HasSubstr("`w`"), HasSubstr("[2, 3]"), HasSubstr("`C` of size 3 for dimension 0")));
  EXPECT_THAT(file.ToHost("w", s.m("R")).status().message(), HasSubstr("1 mappings for 2 dimensions"));
  EXPECT_THAT(file.ToHost("w", s.m("R, B / 2")).status().message(), HasSubstr("not a plain axis"));
  EXPECT_THAT(file.ToHost("b", s.m("K, C")).status().message(), HasSubstr("2 mappings for 1 dimensions"));
  const int64_t square[] = {3, 3};
  absl::Status twice = DimensionAxes(s.m("K, K"), square, "a square").status();
  EXPECT_FALSE(twice.ok());
  EXPECT_THAT(twice.message(), HasSubstr("name axis `K` twice")) << twice;
}

TEST_F(SafetensorsTest, RefusesADestinationOfAnotherShapeOrDType) {
  std::vector<uint8_t> bytes = HandFile();
  SafetensorsFile file = *SafetensorsFile::Parse(bytes, "hand");
  Device device(1);
  Dma pdma = Dma::Pcie(device);
  HbmTensor other_axes = *HbmTensor::Create(device, DType::kF32, {.element = s.m("R, K")}, 0);
  EXPECT_THAT(file.LoadInto(pdma, "w", s.m("R, C"), other_axes).message(),
              AllOf(HasSubstr("not the destination's shape"), HasSubstr("`w`"), HasSubstr("no axis `C`")));
  HbmTensor bigger = *HbmTensor::Create(device, DType::kF32, {.element = s.m("R, C, A")}, 0x1000);
  EXPECT_THAT(file.LoadInto(pdma, "w", s.m("R, C"), bigger).message(),
              AllOf(HasSubstr("not the destination's shape"), HasSubstr("axis `A`")));
  HbmTensor bf16 = *HbmTensor::Create(device, DType::kBF16, {.element = s.m("R, C")}, 0x2000);
  EXPECT_THAT(file.LoadInto(pdma, "w", s.m("R, C"), bf16).message(),
              AllOf(HasSubstr("loaded as f32"), HasSubstr("LoadOptions::dtype = bf16")));
  EXPECT_TRUE(file.LoadInto(pdma, "w", s.m("R, C"), bf16, {.dtype = DType::kBF16}).ok());
  EXPECT_THAT(bf16.to_host(pdma, s.m("R, C"))->ToBits(), ElementsAre(0x3f80, 0xc000, 0x3f40, 0x42c8, 0x0000, 0x3f80));
}

TEST_F(SafetensorsTest, WriterRefusesWhatTheFormatCannotHold) {
  SafetensorsWriter writer;
  HostTensor t = *HostTensor::Zeros(DType::kF32, s.m("K"));
  ASSERT_TRUE(writer.Add("t", t, s.m("K")).ok());
  EXPECT_THAT(writer.Add("t", t, s.m("K")).message(), AllOf(HasSubstr("duplicate name"), HasSubstr("`t`")));
  EXPECT_THAT(writer.Add("__metadata__", t, s.m("K")).message(), HasSubstr("metadata key"));
  EXPECT_THAT(writer.Add("i4", *HostTensor::Zeros(DType::kI4, s.m("K")), s.m("K")).message(),
              AllOf(HasSubstr("no name for i4")));
  EXPECT_THAT(writer.Add("bad\xff", t, s.m("K")).message(), HasSubstr("not valid UTF-8"));
  EXPECT_THAT(writer.SetMetadata("k", "\xc3").message(), HasSubstr("not valid UTF-8"));
  EXPECT_THAT(writer.Add("u", t, s.m("R")).message(), AllOf(HasSubstr("`u`"), HasSubstr("not a layout of the axes `R`")));
  EXPECT_THAT(writer.Write(TempPath("no_such_dir/x.safetensors")).message(), HasSubstr("cannot open"));
}

TEST_F(SafetensorsTest, OpenNamesAMissingFile) {
  absl::Status status = SafetensorsFile::Open(TempPath("missing.safetensors")).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("missing.safetensors"));
}

// No byte sequence crashes the parser: every truncation and every single-byte change of a valid
// file parses or fails with a status.
TEST_F(SafetensorsTest, SurvivesEveryTruncationAndByteFlip) {
  std::vector<uint8_t> valid = HandFile();
  int refused = 0;
  for (size_t n = 0; n < valid.size(); ++n) {
    std::vector<uint8_t> cut(valid.begin(), valid.begin() + n);
    refused += !SafetensorsFile::Parse(cut, "cut").ok();
  }
  EXPECT_EQ(refused, static_cast<int>(valid.size()));  // every proper prefix breaks a rule
  for (size_t i = 0; i < valid.size(); ++i) {
    for (uint8_t value : {uint8_t{0x00}, uint8_t{0xff}, uint8_t{'9'}, uint8_t{'"'}}) {
      std::vector<uint8_t> changed = valid;
      changed[i] = value;
      absl::StatusOr<SafetensorsFile> file = SafetensorsFile::Parse(changed, "flip");
      if (!file.ok()) continue;
      for (const SafetensorsEntry& t : file->tensors()) (void)file->Image(t.name);
    }
  }
}

}  // namespace
}  // namespace visa
