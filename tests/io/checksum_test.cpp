// Every safetensors file attn writes carries the CRC-32 of its data ("crc32" in __metadata__),
// and a load checks it: a flipped byte in the weights is refused naming the file. Files without
// the key (PyTorch's, older attn's) still load.
#include <gtest/gtest.h>

#include <cstring>

#include <nlohmann/json.hpp>

#include "attn/io/atomic_file.h"
#include "attn/io/crc32.h"
#include "attn/io/safetensors.h"
#include "io_test_util.h"

namespace attn::io {
namespace {

using testing::expect_error;
using testing::fixture;
using testing::TempDir;
using testing::write_plain;

struct Written {
  std::string bytes;
  nlohmann::json header;
  size_t data_start = 0;
};

Written written(const std::string& path) {
  Written w;
  w.bytes = read_file(path);
  uint64_t n = 0;
  std::memcpy(&n, w.bytes.data(), 8);
  w.header = nlohmann::json::parse(w.bytes.substr(8, n));
  w.data_start = 8 + n;
  return w;
}

std::map<std::string, Tensor> sample() {
  return {{"w", Tensor::from_vector({0.5f, -1, 2, 3.25f}, {2, 2})}, {"ids", Tensor::from_ids({7, 8, 9}, {3})}};
}

TEST(SafetensorsChecksum, WrittenIsTheCrc32OfTheDataSection) {
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  save_safetensors(path, sample(), {{"producer", "attn"}});
  Written w = written(path);
  char expected[9];
  std::snprintf(expected, sizeof expected, "%08x", crc32_of(std::string_view(w.bytes).substr(w.data_start)));
  EXPECT_EQ(w.header["__metadata__"]["crc32"], expected);
  EXPECT_EQ(w.header["__metadata__"]["producer"], "attn");
  // Known value: the CRC-32 check value of "123456789" is cbf43926.
  EXPECT_EQ(crc32_of("123456789"), 0xcbf43926u);
  EXPECT_EQ(crc32_of("6789", crc32_of("12345")), 0xcbf43926u);
  // The key is the file's own: a load checks it and does not hand it on.
  std::map<std::string, std::string> meta;
  load_safetensors(path, &meta);
  EXPECT_EQ(meta, (std::map<std::string, std::string>{{"producer", "attn"}}));
}

TEST(SafetensorsChecksum, AFlippedDataByteIsRefusedNamingTheFile) {
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  save_safetensors(path, sample());
  Written w = written(path);
  for (size_t at : {w.data_start, w.data_start + 9, w.bytes.size() - 1}) {
    std::string damaged = w.bytes;
    damaged[at] ^= 0x10;
    write_plain(path, damaged);
    expect_error([&] { load_safetensors(path); }, {path, "checksum", "corrupt"});
    expect_error([&] { load_safetensors_copied(path); }, {path, "checksum"});
  }
  write_plain(path, w.bytes);  // the undamaged bytes load again
  EXPECT_EQ(load_safetensors(path)["w"].to_vector(), (std::vector<float>{0.5f, -1, 2, 3.25f}));
}

TEST(SafetensorsChecksum, FilesWithoutTheKeyLoad) {
  // Written by the safetensors library (PyTorch) and by hand: no crc32.
  for (const char* f : {"pylib.safetensors", "hand.safetensors"}) {
    std::map<std::string, std::string> meta;
    EXPECT_FALSE(load_safetensors(fixture(f), &meta).empty()) << f;
    EXPECT_EQ(meta.count("crc32"), 0u) << f;
  }
}

TEST(SafetensorsChecksum, AMalformedValueOrAReservedKeyIsRefused) {
  TempDir dir;
  std::string path = dir.file("m.safetensors");
  const std::string header = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"__metadata__":{"crc32":"XYZ"}})";
  uint64_t n = header.size();
  write_plain(path, std::string(reinterpret_cast<const char*>(&n), 8) + header + std::string(4, '\0'));
  expect_error([&] { load_safetensors(path); }, {path, "crc32", "'XYZ'"});
  expect_error([&] { save_safetensors(path, sample(), {{"crc32", "00000000"}}); }, {path, "crc32", "reserved"});
}

}  // namespace
}  // namespace attn::io
