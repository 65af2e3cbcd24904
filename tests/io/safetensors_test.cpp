// safetensors: files written by Python (by hand from the spec, and by the `safetensors` library)
// load with exact values; save -> load round-trips; every kind of malformed file is refused with
// a message naming the file and the tensor.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>
#include <optional>

#include "attn/io/atomic_file.h"
#include "attn/io/safetensors.h"
#include "io_test_util.h"

namespace attn::io {
namespace {

using testing::expect_error;
using testing::fixture;
using testing::TempDir;

std::vector<int64_t> ints(const Tensor& t) {
  std::vector<int64_t> out;
  Tensor c = t.contiguous();
  for (int64_t k = 0; k < t.numel(); ++k)
    out.push_back(t.dtype() == DType::i64 ? c.data<int64_t>()[k] : c.data<int32_t>()[k]);
  return out;
}

std::vector<uint16_t> bf16_bits(const Tensor& t) {
  Tensor c = t.contiguous();
  return std::vector<uint16_t>(c.data<uint16_t>(), c.data<uint16_t>() + t.numel());
}

TEST(Safetensors, LoadsHandWrittenFixture) {
  std::map<std::string, std::string> meta;
  auto t = load_safetensors(fixture("hand.safetensors"), &meta);
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(meta, (std::map<std::string, std::string>{{"format", "pt"}, {"note", "written by hand"}}));

  EXPECT_EQ(t["weight"].dtype(), DType::f32);
  EXPECT_EQ(t["weight"].shape(), (Shape{2, 3}));
  EXPECT_EQ(t["weight"].to_vector(), (std::vector<float>{-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f}));
  EXPECT_EQ(t["ids"].dtype(), DType::i64);
  EXPECT_EQ(ints(t["ids"]), (std::vector<int64_t>{-1, 0, int64_t(1) << 40}));
  EXPECT_EQ(t["counts"].dtype(), DType::i32);
  EXPECT_EQ(t["counts"].shape(), (Shape{2, 2}));
  EXPECT_EQ(ints(t["counts"]), (std::vector<int64_t>{1, -2, 3, 2147483647}));
  EXPECT_EQ(t["half"].dtype(), DType::bf16);
  // bf16 bits of 1.0, -2.0, 0.5, 256.0
  EXPECT_EQ(bf16_bits(t["half"]), (std::vector<uint16_t>{0x3f80, 0xc000, 0x3f00, 0x4380}));
  EXPECT_EQ(t["half"].at({3}), 256.0f);
  EXPECT_EQ(t["scale"].dim(), 0);
  EXPECT_EQ(t["scale"].to_vector(), std::vector<float>{0.125f});
  EXPECT_EQ(t["nothing"].shape(), (Shape{0, 4}));
  EXPECT_EQ(t["nothing"].numel(), 0);
}

TEST(Safetensors, LoadsFileWrittenByTheSafetensorsLibrary) {
  std::map<std::string, std::string> meta;
  auto t = load_safetensors(fixture("pylib.safetensors"), &meta);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(meta.at("made_by"), "safetensors.numpy");
  std::vector<float> w;
  for (int k = 0; k < 12; ++k) w.push_back(k / 4.0f);
  EXPECT_EQ(t["encoder.w"].shape(), (Shape{3, 4}));
  EXPECT_EQ(t["encoder.w"].to_vector(), w);
  EXPECT_EQ(t["encoder.b"].to_vector(), (std::vector<float>{-1.5f, 2.5f}));
  EXPECT_EQ(ints(t["steps"]), (std::vector<int64_t>{7, 8, 9}));
  EXPECT_EQ(t["pos"].shape(), (Shape{1, 2}));
  EXPECT_EQ(ints(t["pos"]), (std::vector<int64_t>{4, 5}));
}

TEST(Safetensors, LoadedTensorsBorrowTheMappingAndOutliveTheFile) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  save_safetensors(path, {{"a", Tensor::from_vector({1, 2, 3, 4}, {4})}});
  auto first = load_safetensors(path);
  EXPECT_NE(first["a"].storage()->keep_alive, nullptr) << "expected a zero-copy view of the mmap";
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first["a"].raw_data()) % 64, 0u)
      << "attn-written files put the first tensor 64-byte aligned";
  // Replacing the file (atomically) and deleting it leaves the old mapping intact.
  save_safetensors(path, {{"a", Tensor::from_vector({9, 9, 9, 9}, {4})}});
  EXPECT_EQ(load_safetensors(path)["a"].to_vector(), (std::vector<float>{9, 9, 9, 9}));
  std::filesystem::remove(path);
  EXPECT_EQ(first["a"].to_vector(), (std::vector<float>{1, 2, 3, 4}));
  // Writing into a borrowed tensor is private to the process.
  first["a"].data<float>()[0] = 7;
  EXPECT_EQ(first["a"].at({0}), 7.0f);
}

// load_safetensors_copied: the same tensors in storage of attn's own (nothing borrowed from the
// mapping), every dtype and an empty tensor included; the mapped pages it gave back are not
// needed by anything it returns.
TEST(Safetensors, CopiedLoadOwnsEveryTensor) {
  TempDir dir;
  std::string path = dir.file("c.safetensors");
  Tensor bf = Tensor::empty({3}, DType::bf16);
  uint16_t bits[3] = {0x3f80, 0xbf80, 0x4049};
  std::memcpy(bf.raw_data(), bits, sizeof bits);
  std::vector<float> big(300000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 977) - 400.0f;
  std::map<std::string, Tensor> in = {{"big", Tensor::from_vector(big, {300, 1000})},
                                      {"small", Tensor::from_vector({1, 2, 3}, {3})},
                                      {"bf16", bf},
                                      {"ids", Tensor::from_ids({4, -5}, {2})},
                                      {"empty", Tensor::empty({0, 3})}};
  save_safetensors(path, in);
  auto borrowed = load_safetensors(path);
  auto copied = load_safetensors_copied(path);
  ASSERT_EQ(copied.size(), in.size());
  for (const auto& [name, t] : copied) {
    SCOPED_TRACE(name);
    ASSERT_EQ(t.shape(), in[name].shape());
    ASSERT_EQ(t.dtype(), in[name].dtype());
    if (t.numel() == 0) continue;
    EXPECT_TRUE(t.storage()->owned());
    EXPECT_EQ(t.storage()->keep_alive, nullptr);
    EXPECT_EQ(std::memcmp(t.raw_data(), borrowed[name].raw_data(), t.nbytes()), 0);
  }
  EXPECT_EQ(copied["big"].to_vector(), big);
}

TEST(Safetensors, RoundTripsAllDtypesViewsAndMetadata) {
  TempDir dir;
  std::string path = dir.file("rt.safetensors");
  Tensor m = Tensor::from_vector({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  Tensor transposed = m.transpose(0, 1);         // [4, 3], non-contiguous
  Tensor sliced = m.slice(1, 1, 3);               // [3, 2], non-contiguous
  Tensor bf = Tensor::empty({2, 2}, DType::bf16);
  uint16_t bits[4] = {0x3f80, 0xbf80, 0x4049, 0x0000};  // 1, -1, 3.140625, 0
  std::memcpy(bf.raw_data(), bits, sizeof bits);
  Tensor i64 = Tensor::empty({2}, DType::i64);
  i64.data<int64_t>()[0] = -(int64_t(1) << 50);
  i64.data<int64_t>()[1] = 42;
  std::map<std::string, Tensor> in = {
      {"transposed", transposed}, {"sliced", sliced}, {"bf16", bf},
      {"ids", Tensor::from_ids({5, -6, 7}, {3})}, {"i64", i64},
      {"scalar", Tensor::full({}, -0.75f)}, {"empty", Tensor::empty({0, 5})}};
  std::map<std::string, std::string> meta_in = {{"step", "1200"}, {"config", "{\"d_model\": 512}"}};
  save_safetensors(path, in, meta_in);

  std::map<std::string, std::string> meta;
  auto out = load_safetensors(path, &meta);
  EXPECT_EQ(meta, meta_in);
  ASSERT_EQ(out.size(), in.size());
  for (const auto& [name, t] : in) {
    SCOPED_TRACE(name);
    ASSERT_EQ(out[name].dtype(), t.dtype());
    ASSERT_EQ(out[name].shape(), t.shape());
  }
  EXPECT_EQ(out["transposed"].to_vector(), transposed.to_vector());
  EXPECT_EQ(out["transposed"].to_vector(), (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  EXPECT_EQ(out["sliced"].to_vector(), (std::vector<float>{1, 2, 5, 6, 9, 10}));
  EXPECT_EQ(bf16_bits(out["bf16"]), (std::vector<uint16_t>{0x3f80, 0xbf80, 0x4049, 0x0000}));
  EXPECT_EQ(ints(out["ids"]), (std::vector<int64_t>{5, -6, 7}));
  EXPECT_EQ(ints(out["i64"]), (std::vector<int64_t>{-(int64_t(1) << 50), 42}));
  EXPECT_EQ(out["scalar"].to_vector(), std::vector<float>{-0.75f});
  EXPECT_EQ(out["empty"].numel(), 0);

  // The header is padded with spaces so the data buffer starts at a multiple of 64.
  std::string bytes = read_file(path);
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ((8 + n) % 64, 0u);
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"rt.safetensors"});
}

// ---- Malformed files ---------------------------------------------------------------------------

// A file with the given header text and data buffer; `length` overrides the header length field.
std::string st_bytes(const std::string& header, const std::string& data,
                     std::optional<uint64_t> length = std::nullopt) {
  uint64_t n = length.value_or(header.size());
  std::string out(reinterpret_cast<const char*>(&n), 8);
  return out + header + data;
}

struct SafetensorsMalformed : ::testing::Test {
  TempDir dir;
  std::string path = dir.file("bad.safetensors");
  void expect_refused(const std::string& bytes, std::vector<std::string> parts) {
    write_file_atomic(path, bytes);
    parts.push_back(path);
    expect_error([&] { load_safetensors(path); }, parts);
  }
};

const std::string kGoodHeader = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";

TEST_F(SafetensorsMalformed, TheGoodFileLoads) {
  write_file_atomic(path, st_bytes(kGoodHeader, std::string(8, '\0')));
  EXPECT_EQ(load_safetensors(path)["w"].to_vector(), (std::vector<float>{0, 0}));
}
TEST_F(SafetensorsMalformed, MissingFile) {
  std::string missing = dir.file("absent.safetensors");
  expect_error([&] { load_safetensors(missing); }, {missing});
}
TEST_F(SafetensorsMalformed, EmptyAndTooShortFiles) {
  expect_refused("", {"too short"});
  expect_refused("abc", {"too short"});
}
TEST_F(SafetensorsMalformed, TruncatedData) {
  expect_refused(st_bytes(kGoodHeader, std::string(5, '\0')), {"'w'", "out of range"});
}
TEST_F(SafetensorsMalformed, HeaderLengthBeyondTheFile) {
  expect_refused(st_bytes(kGoodHeader, std::string(8, '\0'), 1'000'000), {"header length 1000000"});
  expect_refused(st_bytes(kGoodHeader, "", ~uint64_t(1)), {"header length 18446744073709551614"});
}
TEST_F(SafetensorsMalformed, BadJson) {
  expect_refused(st_bytes(R"({"w":{"dtype":"F32",)", ""), {"not valid JSON"});
  expect_refused(st_bytes(R"([1, 2])", ""), {"not a JSON object"});
}
TEST_F(SafetensorsMalformed, UnknownDtype) {
  expect_refused(st_bytes(R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", std::string(4, '\0')),
                 {"'w'", "F16"});
}
TEST_F(SafetensorsMalformed, OffsetsOutOfRange) {
  expect_refused(st_bytes(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", std::string(8, '\0')),
                 {"'w'", "out of range"});
  expect_refused(st_bytes(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", std::string(8, '\0')),
                 {"'w'", "out of range"});
  expect_refused(st_bytes(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[-1,7]}})", std::string(8, '\0')),
                 {"'w'", "data_offsets"});
}
TEST_F(SafetensorsMalformed, OffsetsNotMatchingShape) {
  expect_refused(st_bytes(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", std::string(8, '\0')),
                 {"'w'", "needs 12"});
  expect_refused(st_bytes(R"({"w":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8]}})",
                          std::string(8, '\0')),
                 {"'w'", "shape"});
}
TEST_F(SafetensorsMalformed, OverlappingTensors) {
  expect_refused(st_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                          std::string(12, '\0')),
                 {"'b'", "overlaps", "'a'"});
}
TEST_F(SafetensorsMalformed, DataNotFullyCovered) {
  expect_refused(st_bytes(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", std::string(8, '\0')),
                 {"gap before tensor 'a'"});
  expect_refused(st_bytes(kGoodHeader, std::string(12, '\0')), {"belong to no tensor"});
}
TEST_F(SafetensorsMalformed, BadEntryFields) {
  expect_refused(st_bytes(R"({"w":{"dtype":"F32","data_offsets":[0,8]}})", std::string(8, '\0')),
                 {"'w'", "shape"});
  expect_refused(st_bytes(R"({"w":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", std::string(8, '\0')),
                 {"'w'", "shape"});
  expect_refused(st_bytes(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", std::string(8, '\0')),
                 {"'w'", "data_offsets"});
  expect_refused(st_bytes(R"({"w":7})", ""), {"'w'", "not an object"});
  expect_refused(st_bytes(R"({"__metadata__":{"k":1}})", ""), {"__metadata__", "'k'"});
}
TEST_F(SafetensorsMalformed, SaveRefusesReservedName) {
  expect_error([&] { save_safetensors(path, {{"__metadata__", Tensor::zeros({1})}}); },
               {path, "__metadata__"});
}

}  // namespace
}  // namespace attn::io
