// Tokenizer: training on a slice of mt-ende, attn's special ids, exact round trip of real dev
// lines, seeded sampling, user-defined symbols, errors.
#include <sentencepiece_trainer.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "data_test_util.h"

namespace attn::data {
namespace {

using namespace testing;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Tokenizer, SpecialIdsAreAttnsConvention) {
  const Tokenizer& tok = slice_tokenizer();
  EXPECT_EQ(tok.vocab_size(), 1000);
  EXPECT_EQ(tok.piece(kPadId), "<pad>");
  EXPECT_EQ(tok.piece(kBosId), "<s>");
  EXPECT_EQ(tok.piece(kEosId), "</s>");
  EXPECT_EQ(tok.piece(kUnkId), "<unk>");
  EXPECT_EQ(tok.piece_to_id("</s>"), kEosId);
  EXPECT_EQ(tok.piece_to_id("no-such-piece-xyz"), kUnkId);
}

// Every dev line whose characters the 10k-line slice has seen decodes to itself, byte for byte
// (normalisation "identity": no NFKC, so "…" and „quotes“ survive), and no bos/eos is added.
TEST(Tokenizer, RoundTripOfRealDevLinesIsExact) {
  const Tokenizer& tok = slice_tokenizer();
  for (const char* name : {"dev.en", "dev.de"}) {
    auto lines = read_lines(mt_dir() + name);
    ASSERT_EQ(lines.size(), 1790u);
    int64_t with_unk = 0, exact = 0, tokens = 0;
    for (const auto& line : lines) {
      auto ids = tok.encode(line);
      tokens += static_cast<int64_t>(ids.size());
      for (int32_t id : ids) {
        ASSERT_GT(id, kEosId) << "pad/bos/eos in the encoding of: " << line;
        ASSERT_LT(id, tok.vocab_size());
      }
      if (std::count(ids.begin(), ids.end(), kUnkId) > 0) {
        ++with_unk;
        continue;
      }
      EXPECT_EQ(tok.decode(ids), line);
      exact += tok.decode(ids) == line;
    }
    std::printf("%s: %ld of %zu lines exact, %ld with a character unseen in the slice (unk); "
                "%.2f tokens per line\n",
                name, exact, lines.size(), with_unk, double(tokens) / lines.size());
    EXPECT_LE(with_unk, 36) << "more than 2% of lines with unknown characters";
  }
}

TEST(Tokenizer, KnownPiecesAndWhitespace) {
  const Tokenizer& tok = slice_tokenizer();
  // Runs of spaces become one and the ends are trimmed (remove_extra_whitespaces).
  EXPECT_EQ(tok.decode(tok.encode("  Datei  nicht   gefunden ")), "Datei nicht gefunden");
  EXPECT_TRUE(tok.encode("").empty());
  EXPECT_EQ(tok.decode({}), "");
  // pad, bos and eos decode to nothing.
  auto ids = tok.encode("Datei");
  std::vector<int32_t> wrapped = {kBosId};
  wrapped.insert(wrapped.end(), ids.begin(), ids.end());
  wrapped.insert(wrapped.end(), {kEosId, kPadId, kPadId});
  EXPECT_EQ(tok.decode(wrapped), "Datei");
  auto pieces = tok.encode_pieces("Datei");
  ASSERT_EQ(pieces.size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(tok.piece(ids[i]), pieces[i]);
}

TEST(Tokenizer, SerializedModelLoadsTheSame) {
  const Tokenizer& tok = slice_tokenizer();
  Tokenizer copy = Tokenizer::from_serialized(tok.serialized(), "copy");
  const std::string line = "Die Datei „%s“ konnte nicht geöffnet werden …";
  EXPECT_EQ(copy.encode(line), tok.encode(line));
  EXPECT_EQ(copy.vocab_size(), tok.vocab_size());
}

TEST(Tokenizer, Errors) {
  const Tokenizer& tok = slice_tokenizer();
  expect_error([&] { tok.decode({5, 1000}); }, {"id 1000", "position 1", "vocabulary 1000"});
  expect_error([&] { tok.piece(-1); }, {"piece id -1"});
  expect_error([] { Tokenizer::load("/no/such/dir/x.model"); }, {"/no/such/dir/x.model"});
  const std::string junk = scratch("junk.model");
  write_file(junk, "this is not a model");
  expect_error([&] { Tokenizer::load(junk); }, {junk});
  // A model with a piece of zero length (found by fuzzing) makes SentencePiece throw from inside
  // its loader: an error naming the model, from a file and from bytes.
  const std::string zero = std::string(ATTN_TEST_DATA) + "/../../fuzz/regressions/sentencepiece/zero_length_piece.model";
  expect_error([&] { Tokenizer::load(zero); }, {zero, "zero-length key"});
  expect_error([&] { Tokenizer::from_serialized(slurp(zero), "zero.model"); }, {"zero.model", "zero-length key"});
  TokenizerTrainOptions o;
  o.inputs = {mt_dir() + "dev.en"};
  o.model_prefix = scratch("never");
  o.model_type = "wordpiece";
  expect_error([&] { Tokenizer::train(o); }, {"model_type 'wordpiece'"});
  o.model_type = "bpe";
  o.user_defined_symbols = {"a,b"};
  expect_error([&] { Tokenizer::train(o); }, {"'a,b'", "comma"});
  o.user_defined_symbols = {};
  o.inputs = {scratch("missing.txt")};
  expect_error([&] { Tokenizer::train(o); }, {"missing.txt"});
  o.inputs = {scratch("latin1.txt")};
  write_file(o.inputs[0], "fine\nGr\xFC\xDF" "e\n");  // Latin-1 "Grüße"
  expect_error([&] { Tokenizer::train(o); }, {"latin1.txt:2: invalid UTF-8"});
  // More distinct characters than pieces (Chinese): the message says what to change.
  o.inputs = {scratch("many_chars.txt")};
  std::string text;
  for (char32_t c = 0x4E00; c < 0x4E00 + 200; ++c) {  // 200 CJK ideographs, 3 UTF-8 bytes each
    text += static_cast<char>(0xE0 | (c >> 12));
    text += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    text += static_cast<char>(0x80 | (c & 0x3F));
    if (c % 10 == 0) text += "\n";
  }
  write_file(o.inputs[0], text + "\n");
  o.vocab_size = 100;
  expect_error([&] { Tokenizer::train(o); }, {"100 pieces", "distinct character", "raise the vocabulary size"});
}

// A model trained elsewhere with SentencePiece's default ids (unk=0, bos=1, eos=2, no pad) is
// refused with a message that says what attn needs.
TEST(Tokenizer, ForeignSpecialIdsAreRefused) {
  const std::string prefix = scratch("foreign");
  auto status = sentencepiece::SentencePieceTrainer::Train(
      "--input=" + head_file("train.en", 1000) + " --model_prefix=" + prefix +
      " --vocab_size=300 --model_type=bpe --minloglevel=2");
  ASSERT_TRUE(status.ok()) << status.ToString();
  expect_error([&] { Tokenizer::load(prefix + ".model"); },
               {prefix + ".model", "pad id is -1", "pad=0 bos=1 eos=2 unk=3"});
}

// input_sentence_size samples lines with attn's seed: same seed, same vocabulary; another seed,
// another one. Unigram, and user-defined symbols stay whole pieces.
TEST(Tokenizer, SampledUnigramTrainingIsSeededAndKeepsUserSymbols) {
  TokenizerTrainOptions o;
  o.inputs = {head_file("train.en", 500), head_file("train.de", 500)};
  o.vocab_size = 250;
  o.model_type = "unigram";
  o.input_sentence_size = 400;
  o.user_defined_symbols = {"%s", "%d"};
  auto t0 = std::chrono::steady_clock::now();
  for (auto [seed, name] : {std::pair{1, "s1a"}, {1, "s1b"}, {2, "s2"}}) {
    o.seed = seed;
    o.model_prefix = scratch(name);
    Tokenizer::train(o);
  }
  std::printf("3 unigram trainings on 400 of 1000 lines: %.2f s\n", seconds_since(t0));
  const std::string a = slurp(scratch("s1a.vocab")), b = slurp(scratch("s1b.vocab"));
  const std::string c = slurp(scratch("s2.vocab"));
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b) << "same seed, different vocabulary";
  EXPECT_NE(a, c) << "seed 2 sampled the same lines as seed 1?";

  Tokenizer tok = Tokenizer::load(scratch("s1a.model"));
  EXPECT_EQ(tok.vocab_size(), 250);
  EXPECT_EQ(tok.piece(4), "%s");  // user-defined symbols follow the special ids
  EXPECT_EQ(tok.piece(5), "%d");
  auto pieces = tok.encode_pieces("Datei %s hat %d Zeilen");
  EXPECT_NE(std::find(pieces.begin(), pieces.end(), "%s"), pieces.end());
  EXPECT_NE(std::find(pieces.begin(), pieces.end(), "%d"), pieces.end());
  EXPECT_EQ(tok.decode(tok.encode("Datei %s hat %d Zeilen")), "Datei %s hat %d Zeilen");
}

}  // namespace
}  // namespace attn::data
