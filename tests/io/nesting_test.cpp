// Nesting is bounded in every JSON and YAML attn reads (io::kMaxNesting levels): a file nested
// 100,000 deep is refused with a message naming the file and the limit, where it used to overflow
// the stack. Ordinary nesting up to the limit reads as before.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "attn/io/atomic_file.h"
#include "attn/io/json.h"
#include "attn/io/safetensors.h"
#include "attn/io/yaml.h"
#include "attn/models/model_dir.h"
#include "io_test_util.h"

namespace attn::io {
namespace {

using testing::expect_error;
using testing::TempDir;
using testing::write_plain;

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(Nesting, DeepYamlIsRefusedNamingTheFileAndTheLimit) {
  const std::string limit = std::to_string(kMaxNesting);
  // The report's input: python3 -c 'print("a: "+"["*100000)'
  expect_error([] { parse_yaml("a: " + repeat("[", 100000) + "\n", "deep.yaml"); },
               {"deep.yaml:1", "nested more than " + limit, "at most " + limit});
  expect_error([] { parse_yaml(repeat("{a: ", 5000) + "1" + repeat("}", 5000), "deep.yaml"); },
               {"deep.yaml", limit});
  std::string block;  // block style: "a:\n  a:\n    a: ..." 200 levels
  for (int i = 0; i < 200; ++i) block += std::string(2 * i, ' ') + "a:\n";
  expect_error([&] { parse_yaml(block + std::string(400, ' ') + "1\n", "block.yaml"); }, {"block.yaml", limit});
  // The limit itself is fine: kMaxNesting collections inside one another.
  nlohmann::json j = parse_yaml(repeat("[", kMaxNesting - 1) + "7" + repeat("]", kMaxNesting - 1), "ok.yaml");
  for (int i = 0; i < kMaxNesting - 1; ++i) j = j.at(0);
  EXPECT_EQ(j, 7);
  expect_error([] { parse_yaml("a: " + repeat("[", kMaxNesting) + repeat("]", kMaxNesting), "over.yaml"); },
               {"over.yaml", limit});
}

TEST(Nesting, DeepJsonIsRefusedInConfigAndSafetensorsHeaders) {
  const std::string limit = std::to_string(kMaxNesting);
  expect_error([] { parse_json(repeat("[", 100000) + repeat("]", 100000), "deep.json"); },
               {"deep.json", "nested more than " + limit});
  EXPECT_EQ(parse_json(repeat("[", kMaxNesting) + repeat("]", kMaxNesting), "ok.json").size(), 1u);
  expect_error([] { parse_json(repeat("[", kMaxNesting + 1) + repeat("]", kMaxNesting + 1), "x.json"); }, {limit});
  expect_error([] { parse_json("{\"a\": [1, 2", "broken.json"); }, {"broken.json", "not valid JSON"});

  TempDir dir;
  // A model directory's config.json.
  std::string config = dir.file("config.json");
  write_plain(config, "{\"d_model\": " + repeat("[", 100000) + repeat("]", 100000) + "}");
  expect_error([&] { read_json_file(config); }, {config, limit});
  // A safetensors header (a hostile file: nothing attn writes).
  std::string header = "{\"__metadata__\": " + repeat("{\"a\":", 100000) + "1" + repeat("}", 100000) + "}";
  uint64_t n = header.size();
  std::string st = dir.file("deep.safetensors");
  write_plain(st, std::string(reinterpret_cast<const char*>(&n), 8) + header);
  expect_error([&] { load_safetensors(st); }, {st, limit});
}

// A whole number too large for 64 bits (found by fuzz_yaml, where it escaped as std::out_of_range,
// "error: stoll") is kept as text, which no number key accepts; up to 2^63 - 1 it is an integer.
TEST(Yaml, WholeNumbersPast64BitsAreText) {
  nlohmann::json j = parse_yaml("a: 9223372036854775807\nb: 22222222222444444444444444222\n", "big.yaml");
  EXPECT_TRUE(j["a"].is_number_integer());
  EXPECT_EQ(j["a"], 9223372036854775807LL);
  EXPECT_EQ(j["b"], "22222222222444444444444444222");
}

// A plain scalar is read as a number by a scan that is linear and needs no stack: std::regex's
// matcher recursed once a character (fuzz_yaml ran at 170 inputs/s on a corpus of 2 KB scalars,
// and a long enough number overflowed the stack).
TEST(Yaml, LongScalarsAreReadInOnePassWithoutRecursion) {
  const std::string digits(1 << 20, '7');
  nlohmann::json j = parse_yaml("a: " + digits + "\nb: -" + digits + ".5e-3\nc: 1" + std::string(1 << 20, 'x') +
                                    "\nd: +.5\ne: 5.\nf: 1e5\ng: 1e\nh: .\ni: +\nj: 0x10\nk: 2.5E+3\n",
                                "long.yaml");
  EXPECT_EQ(j["a"], digits);  // a whole number past 64 bits: text
  ASSERT_TRUE(j["b"].is_number_float());
  EXPECT_TRUE(std::isinf(j["b"].get<double>()));  // -777...7.5e-3: a real, too large for a double
  EXPECT_TRUE(j["c"].is_string());
  EXPECT_EQ(j["d"], 0.5);
  EXPECT_EQ(j["e"], 5.0);
  EXPECT_EQ(j["f"], 1e5);
  EXPECT_EQ(j["g"], "1e");
  EXPECT_EQ(j["h"], ".");
  EXPECT_EQ(j["i"], "+");
  EXPECT_EQ(j["j"], "0x10");
  EXPECT_EQ(j["k"], 2500.0);
  EXPECT_TRUE(parse_yaml("n: 12\n", "n.yaml")["n"].is_number_integer());
}

}  // namespace
}  // namespace attn::io
