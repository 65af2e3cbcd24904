// CTranslate2's model.bin (io/ct2_model_bin.h): what attn writes it reads back bit for bit, with
// aliases followed as CTranslate2 follows them; the older item-size layout is read; every
// structural error names the file and what was being read. Reading the files ctranslate2's own
// converter writes is checked in tests/models/ct2_test.py.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "attn/io/atomic_file.h"
#include "attn/io/ct2_model_bin.h"
#include "io_test_util.h"

namespace attn::io {
namespace {

using testing::expect_error;
using testing::TempDir;
using testing::write_plain;

Ct2Variable raw(Shape shape, Ct2DType dtype, const std::string& bytes) {
  Ct2Variable v;
  v.shape = std::move(shape);
  v.dtype = dtype;
  v.bytes = bytes;
  return v;
}

template <class T>
std::string bytes_of(std::initializer_list<T> values) {
  std::string out;
  for (T v : values) out.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return out;
}

Ct2ModelBin sample() {
  Ct2ModelBin m;
  m.variables["a/weight"] = ct2_from_float(Tensor::from_vector({1.5f, -2.f, 0.25f, 3.f, 4.f, -0.f}, {2, 3}));
  m.variables["a/weight_scale"] = ct2_from_float(Tensor::from_vector({2.f, 4.f}, {2}));
  m.variables["b/int8"] = raw({3}, Ct2DType::i8, bytes_of<int8_t>({-128, 0, 127}));
  m.variables["c/int16"] = raw({2}, Ct2DType::i16, bytes_of<int16_t>({-32768, 32767}));
  m.variables["d/int32"] = ct2_scalar(7, Ct2DType::i32);
  // float16: 1, -2, the smallest subnormal 2^-24, +inf; bfloat16: 1, -0.5
  m.variables["e/half"] = raw({4}, Ct2DType::f16, bytes_of<uint16_t>({0x3c00, 0xc000, 0x0001, 0x7c00}));
  m.variables["f/bf16"] = raw({2}, Ct2DType::bf16, bytes_of<uint16_t>({0x3f80, 0xbf00}));
  m.variables["g/flag"] = ct2_scalar(1, Ct2DType::i8);
  m.aliases["x/weight"] = "a/weight";
  return m;
}

TEST(Ct2ModelBin, WhatIsWrittenIsReadBackExactly) {
  TempDir dir;
  const Ct2ModelBin m = sample();
  write_ct2_model_bin(dir.file("model.bin"), m);
  const Ct2ModelBin r = read_ct2_model_bin(dir.file("model.bin"));
  EXPECT_EQ(r.binary_version, 6u);
  EXPECT_EQ(r.spec, "TransformerSpec");
  EXPECT_EQ(r.spec_revision, 7u);
  ASSERT_EQ(r.variables.size(), m.variables.size());
  for (const auto& [name, v] : m.variables) {
    const Ct2Variable& w = r.variables.at(name);
    EXPECT_EQ(w.shape, v.shape) << name;
    EXPECT_EQ(w.dtype, v.dtype) << name;
    EXPECT_EQ(w.bytes, v.bytes) << name;
  }
  EXPECT_EQ(r.aliases, m.aliases);
  // and written again, the same bytes
  write_ct2_model_bin(dir.file("again.bin"), r);
  EXPECT_EQ(read_file(dir.file("again.bin")), read_file(dir.file("model.bin")));
}

TEST(Ct2ModelBin, AliasesAndTheirScalesAreFollowed) {
  const Ct2ModelBin m = sample();
  EXPECT_EQ(m.find("x/weight"), &m.variables.at("a/weight"));
  // CTranslate2 (models/model.cc): "<alias>_scale" is "<variable>_scale"
  EXPECT_EQ(m.find("x/weight_scale"), &m.variables.at("a/weight_scale"));
  EXPECT_EQ(m.find("y/weight"), nullptr);
  EXPECT_EQ(m.find("x/weight_zero"), nullptr);
}

TEST(Ct2ModelBin, EveryDtypeConvertsToFloat) {
  const Ct2ModelBin m = sample();
  auto values = [&](const std::string& name) {
    const Tensor t = ct2_to_float(m.variables.at(name));
    return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
  };
  EXPECT_EQ(values("b/int8"), (std::vector<float>{-128, 0, 127}));
  EXPECT_EQ(values("c/int16"), (std::vector<float>{-32768, 32767}));
  EXPECT_EQ(values("e/half"), (std::vector<float>{1.f, -2.f, 0x1p-24f, INFINITY}));
  EXPECT_EQ(values("f/bf16"), (std::vector<float>{1.f, -0.5f}));
  EXPECT_EQ(ct2_scalar_value(m.variables.at("d/int32"), "d/int32", "m"), 7);
  EXPECT_EQ(ct2_to_float(m.variables.at("a/weight")).shape(), (Shape{2, 3}));
  expect_error([&] { ct2_scalar_value(m.variables.at("a/weight"), "a/weight", "dir/model.bin"); },
               {"dir/model.bin", "a/weight", "not a scalar"});
}

// model.bin before binary version 4: an item size (1, 2 or 4) and an item count instead of a
// dtype and a byte count; version 2 has no aliases.
TEST(Ct2ModelBin, VersionTwoItemSizesAreRead) {
  std::string b = bytes_of<uint32_t>({2});
  auto text = [&](const std::string& s) {
    b += bytes_of<uint16_t>({static_cast<uint16_t>(s.size() + 1)}) + s + '\0';
  };
  text("TransformerSpec");
  b += bytes_of<uint32_t>({1, 2});  // revision 1, two variables
  text("w");
  b += bytes_of<uint8_t>({1}) + bytes_of<uint32_t>({2}) + bytes_of<uint8_t>({2}) + bytes_of<uint32_t>({2});
  b += bytes_of<int16_t>({-3, 5});
  text("z");
  b += bytes_of<uint8_t>({0}) + bytes_of<uint8_t>({4}) + bytes_of<uint32_t>({1}) + bytes_of<float>({0.5f});
  TempDir dir;
  write_plain(dir.file("model.bin"), b);
  const Ct2ModelBin m = read_ct2_model_bin(dir.file("model.bin"));
  EXPECT_EQ(m.binary_version, 2u);
  EXPECT_EQ(m.variables.at("w").dtype, Ct2DType::i16);
  EXPECT_EQ(ct2_to_float(m.variables.at("w")).data<float>()[1], 5.f);
  EXPECT_EQ(ct2_scalar_value(m.variables.at("z"), "z", "m"), 0.5);
  EXPECT_TRUE(m.aliases.empty());
}

TEST(Ct2ModelBin, BrokenFilesNameTheFileAndWhat) {
  TempDir dir;
  const std::string path = dir.file("model.bin");
  write_ct2_model_bin(path, sample());
  const std::string good = read_file(path);
  auto broken = [&](const std::string& bytes, const std::vector<std::string>& parts) {
    write_plain(path, bytes);
    expect_error([&] { read_ct2_model_bin(path); }, parts);
  };
  broken("", {path, "binary version", "truncated"});
  broken(good.substr(0, good.size() / 2), {path, "ends inside"});
  broken(good + "x", {path, "1 bytes after the last alias"});
  std::string version = good;
  version[0] = 9;
  broken(version, {path, "binary version 9", "2 to 6"});
  // the first variable ("a/weight", 2 x 3 float32): its dtype byte, then its byte count
  const size_t dtype_at = good.find("a/weight") + std::strlen("a/weight") + 1 + 1 + 2 * 4;
  std::string dtype = good;
  dtype[dtype_at] = 9;
  broken(dtype, {path, "\"a/weight\"", "dtype id 9"});
  std::string count = good;
  count[dtype_at + 1] = 23;
  broken(count, {path, "\"a/weight\"", "holds 23 bytes", "needs 24"});
  std::string alias = good;
  const size_t target = alias.rfind("a/weight");
  alias[target] = 'q';
  broken(alias, {path, "alias \"x/weight\"", "q/weight", "not a variable"});
}

}  // namespace
}  // namespace attn::io
