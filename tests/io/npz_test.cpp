// .npy / .npz: archives written by numpy.savez and numpy.savez_compressed load with exact values;
// save -> load round-trips; .npy versions 2.0/3.0 and Zip64 directories are read; malformed files
// are refused with a message naming the file and the member.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "attn/io/atomic_file.h"
#include "attn/io/npy.h"
#include "attn/io/npz.h"
#include "attn/io/zip.h"
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

// The arrays of tests/io/make_io_fixtures.py.
void expect_fixture_arrays(const std::string& path) {
  auto t = load_npz(path);
  ASSERT_EQ(t.size(), 8u);
  EXPECT_EQ(t["f32_2x3"].dtype(), DType::f32);
  EXPECT_EQ(t["f32_2x3"].shape(), (Shape{2, 3}));
  EXPECT_EQ(t["f32_2x3"].to_vector(), (std::vector<float>{-1, -0.5f, 0, 0.5f, 1, 1.5f}));
  EXPECT_EQ(t["f64_4"].dtype(), DType::f32);  // converted from float64
  EXPECT_EQ(t["f64_4"].to_vector(), (std::vector<float>{static_cast<float>(0.1), -2.5f, 1e10f, 3}));
  EXPECT_EQ(t["i64_2x2x2"].dtype(), DType::i64);
  EXPECT_EQ(t["i64_2x2x2"].shape(), (Shape{2, 2, 2}));
  std::vector<int64_t> big;
  for (int64_t k = 0; k < 8; ++k) big.push_back(k * (int64_t(1) << 40) - 3);
  EXPECT_EQ(ints(t["i64_2x2x2"]), big);
  EXPECT_EQ(t["i32_3"].dtype(), DType::i32);
  EXPECT_EQ(ints(t["i32_3"]), (std::vector<int64_t>{-7, 0, 2147483647}));
  EXPECT_EQ(t["scalar"].dim(), 0);
  EXPECT_EQ(t["scalar"].to_vector(), std::vector<float>{3.25f});
  EXPECT_EQ(t["empty_0x3"].shape(), (Shape{0, 3}));
  EXPECT_EQ(t["fortran_2x3"].shape(), (Shape{2, 3}));  // stored transposed, read in C order
  EXPECT_TRUE(t["fortran_2x3"].is_contiguous());
  EXPECT_EQ(t["fortran_2x3"].to_vector(), (std::vector<float>{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(t["mask_4"].dtype(), DType::i32);
  EXPECT_EQ(ints(t["mask_4"]), (std::vector<int64_t>{1, 0, 0, 1}));
}

TEST(Npz, LoadsNumpySavez) { expect_fixture_arrays(fixture("savez.npz")); }
TEST(Npz, LoadsNumpySavezCompressed) { expect_fixture_arrays(fixture("savez_compressed.npz")); }

TEST(Npz, RoundTripsDtypesAndViews) {
  TempDir dir;
  std::string path = dir.file("rt.npz");
  Tensor m = Tensor::from_vector({0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor bf = Tensor::empty({3}, DType::bf16);
  uint16_t bits[3] = {0x3f80, 0xc049, 0x7f80};  // 1, -3.140625, +inf
  std::memcpy(bf.raw_data(), bits, sizeof bits);
  Tensor i64 = Tensor::empty({2, 1}, DType::i64);
  i64.data<int64_t>()[0] = int64_t(1) << 62;
  i64.data<int64_t>()[1] = -1;
  save_npz(path, {{"emb.T", m.transpose(0, 1)}, {"bf16", bf}, {"ids", Tensor::from_ids({3, -4}, {2})},
                  {"big", i64}, {"scalar", Tensor::full({}, 2.5f)}, {"none", Tensor::empty({4, 0})}});
  auto t = load_npz(path);
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t["emb.T"].shape(), (Shape{3, 2}));
  EXPECT_EQ(t["emb.T"].to_vector(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(t["bf16"].dtype(), DType::f32);  // numpy has no bfloat16: widened exactly
  EXPECT_EQ(t["bf16"].to_vector(), (std::vector<float>{1, -3.140625f, INFINITY}));
  EXPECT_EQ(t["ids"].dtype(), DType::i32);
  EXPECT_EQ(ints(t["ids"]), (std::vector<int64_t>{3, -4}));
  EXPECT_EQ(t["big"].shape(), (Shape{2, 1}));
  EXPECT_EQ(ints(t["big"]), (std::vector<int64_t>{int64_t(1) << 62, -1}));
  EXPECT_EQ(t["scalar"].dim(), 0);
  EXPECT_EQ(t["scalar"].to_vector(), std::vector<float>{2.5f});
  EXPECT_EQ(t["none"].shape(), (Shape{4, 0}));
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"rt.npz"});
}

TEST(Npy, RoundTripsAndWritesNumpysLayout) {
  TempDir dir;
  std::string path = dir.file("a.npy");
  save_npy(path, Tensor::from_vector({1, 2, 3}, {3}));
  std::string bytes = read_file(path);
  EXPECT_EQ(bytes.size(), 128u + 12u);  // header padded to 128 bytes, then 3 floats
  EXPECT_NE(bytes.find("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"), std::string::npos);
  EXPECT_EQ(bytes[127], '\n');
  EXPECT_EQ(load_npy(path).to_vector(), (std::vector<float>{1, 2, 3}));
}

// A .npy image with the given header dict, written at `major` version (1, 2 or 3).
std::string npy_image(const std::string& dict, const std::string& data, int major = 1) {
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  uint32_t len = static_cast<uint32_t>(dict.size());
  out.append(reinterpret_cast<const char*>(&len), major == 1 ? 2 : 4);
  return out + dict + data;
}

std::string floats(std::vector<float> v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

TEST(Npy, ReadsVersions2And3AndDoubleQuotes) {
  std::string dict = "{\"descr\": \"<f4\", \"shape\": (2,), \"fortran_order\": False}\n";
  for (int major : {2, 3}) {
    Tensor t = parse_npy(npy_image(dict, floats({4, -5}), major), "test");
    EXPECT_EQ(t.to_vector(), (std::vector<float>{4, -5})) << "version " << major;
  }
}

TEST(Npy, RefusesMalformedImages) {
  std::string f2 = floats({1, 2});
  expect_error([&] { parse_npy("not numpy at all", "thing.npy"); }, {"thing.npy", "magic"});
  expect_error([&] { parse_npy(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f2), "x.npy"); },
               {"x.npy", "needs 12 bytes"});
  expect_error([&] { parse_npy(npy_image("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", f2), "x.npy"); },
               {"x.npy", "'>f4'"});
  expect_error([&] { parse_npy(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", f2), "x.npy"); },
               {"x.npy", "header"});
  expect_error([&] { parse_npy(npy_image("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", f2), "x.npy"); },
               {"x.npy", "structured"});
  std::string image = npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f2);
  expect_error([&] { parse_npy(std::string_view(image).substr(0, 20), "x.npy"); }, {"x.npy", "beyond the end"});
  std::string v9 = image;
  v9[6] = 9;
  expect_error([&] { parse_npy(v9, "x.npy"); }, {"x.npy", "version 9"});
}

TEST(Npz, RefusesMalformedArchives) {
  TempDir dir;
  std::string path = dir.file("bad.npz");
  std::string missing = dir.file("absent.npz");
  expect_error([&] { load_npz(missing); }, {missing});

  write_file_atomic(path, "PK but not really a zip file, just some bytes long enough");
  expect_error([&] { load_npz(path); }, {path, "end-of-central-directory"});
  write_file_atomic(path, "");
  expect_error([&] { load_npz(path); }, {path, "too short"});

  // A complex64 member: refused naming the archive, the member and the dtype.
  std::string c8 = npy_image("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", floats({1, 2}));
  write_file_atomic(path, zip_stored({{"ok.npy", npy_bytes(Tensor::zeros({1}))}, {"cplx.npy", c8}}));
  expect_error([&] { load_npz(path); }, {path, "'cplx'", "'<c8'"});

  // A flipped byte in a stored member's data fails its CRC-32.
  std::string good = zip_stored({{"w.npy", npy_bytes(Tensor::from_vector({1, 2, 3}, {3}))}});
  std::string corrupt = good;
  corrupt[30 + 5 + 128 + 1] ^= 0x40;  // local header, name "w.npy", npy header, 2nd data byte
  write_file_atomic(path, corrupt);
  expect_error([&] { load_npz(path); }, {path, "'w.npy'", "CRC-32"});

  // Truncated archive: the central directory is gone.
  write_file_atomic(path, good.substr(0, good.size() - 30));
  expect_error([&] { load_npz(path); }, {path});
}

// Writes `v` little-endian.
template <typename T> void put(std::string& s, T v) { s.append(reinterpret_cast<const char*>(&v), sizeof v); }

// An archive as zipfile writes it for large members: 0xffffffff sizes and offset in the central
// directory with the real values in a Zip64 extra field, and a Zip64 end record.
std::string zip64_archive(const std::string& name, const std::string& data, uint32_t crc) {
  std::string z;
  put<uint32_t>(z, 0x04034b50);
  for (uint16_t v : {45, 0, 0, 0, 0x21}) put<uint16_t>(z, v);
  for (uint32_t v : {crc, 0xffffffffu, 0xffffffffu}) put<uint32_t>(z, v);
  put<uint16_t>(z, static_cast<uint16_t>(name.size()));
  put<uint16_t>(z, 20);
  z += name;
  put<uint16_t>(z, 1), put<uint16_t>(z, 16), put<uint64_t>(z, data.size()), put<uint64_t>(z, data.size());
  z += data;
  uint64_t cd = z.size();
  put<uint32_t>(z, 0x02014b50);
  for (uint16_t v : {45, 45, 0, 0, 0, 0x21}) put<uint16_t>(z, v);
  for (uint32_t v : {crc, 0xffffffffu, 0xffffffffu}) put<uint32_t>(z, v);
  put<uint16_t>(z, static_cast<uint16_t>(name.size()));
  put<uint16_t>(z, 28);
  for (int k = 0; k < 3; ++k) put<uint16_t>(z, 0);
  put<uint32_t>(z, 0);
  put<uint32_t>(z, 0xffffffffu);
  z += name;
  put<uint16_t>(z, 1), put<uint16_t>(z, 24);
  put<uint64_t>(z, data.size()), put<uint64_t>(z, data.size()), put<uint64_t>(z, 0);
  uint64_t cd_size = z.size() - cd, end64 = z.size();
  put<uint32_t>(z, 0x06064b50), put<uint64_t>(z, 44), put<uint16_t>(z, 45), put<uint16_t>(z, 45);
  put<uint32_t>(z, 0), put<uint32_t>(z, 0), put<uint64_t>(z, 1), put<uint64_t>(z, 1);
  put<uint64_t>(z, cd_size), put<uint64_t>(z, cd);
  put<uint32_t>(z, 0x07064b50), put<uint32_t>(z, 0), put<uint64_t>(z, end64), put<uint32_t>(z, 1);
  put<uint32_t>(z, 0x06054b50);
  for (uint16_t v : {0, 0, 0xffff, 0xffff}) put<uint16_t>(z, v);
  put<uint32_t>(z, 0xffffffffu), put<uint32_t>(z, 0xffffffffu), put<uint16_t>(z, 0);
  return z;
}

TEST(Npz, ReadsZip64Directories) {
  TempDir dir;
  std::string path = dir.file("z64.npz");
  std::string npy = npy_bytes(Tensor::from_vector({6, 7}, {2}));
  // The CRC-32 comes from a stored zip of the same member (bytes 14..17 of its local header).
  std::string plain = zip_stored({{"x.npy", npy}});
  uint32_t crc;
  std::memcpy(&crc, plain.data() + 14, 4);
  write_file_atomic(path, zip64_archive("x.npy", npy, crc));
  auto t = load_npz(path);
  ASSERT_EQ(t.count("x"), 1u);
  EXPECT_EQ(t["x"].to_vector(), (std::vector<float>{6, 7}));
}

}  // namespace
}  // namespace attn::io
