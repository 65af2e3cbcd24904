// PieceVocabulary and a Tokenizer read through one (an imported model's, data/piece_vocabulary.h):
// MarianTokenizer's rules, each expected value what transformers 4.46 / Python's re give.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>

#include <nlohmann/json.hpp>

#include "attn/data/piece_vocabulary.h"
#include "data_test_util.h"

namespace attn::data {
namespace {

using namespace testing;

// Python: m = re.match(">>.+<<", t); (m.group(0) if m else "", re.sub(">>.+<<", "", t))
TEST(PieceVocabulary, LanguageCodesAreFoundAsPythonsRegexFindsThem) {
  const std::vector<std::array<std::string, 3>> cases = {
      {">>fr<< Hello", ">>fr<<", " Hello"},
      {"Hello >>fr<< world", "", "Hello  world"},
      {">>fr<<>>de<< x", ">>fr<<>>de<<", " x"},  // .+ is greedy: up to the last <<
      {">><< x", "", ">><< x"},                   // .+ needs a character
      {">>x<< a << b", ">>x<< a <<", " b"},
      {"no code", "", "no code"},
      {">>fr<<", ">>fr<<", ""},
      {">>a\n<< b >>c<<", "", ">>a\n<< b "},  // . does not cross a newline
      {"a>>b<<c>>d", "", "ac>>d"},
  };
  for (const auto& [text, code, rest] : cases) {
    const auto [got_code, got_rest] = remove_language_code(text);
    EXPECT_EQ(got_code, code) << text;
    EXPECT_EQ(got_rest, rest) << text;
  }
}

TEST(PieceVocabulary, CleanUpIsTransformersChainOfReplacements) {
  EXPECT_EQ(clean_up_tokenization("Hello , world ! It 's done . Is n't it ?"), "Hello, world! It's done. Isn't it?");
  EXPECT_EQ(clean_up_tokenization("a ' b"), "a'b");
  EXPECT_EQ(clean_up_tokenization("nothing here"), "nothing here");
}

TEST(PieceVocabulary, ReadsTheThreeFileForms) {
  write_file(scratch("v.json"), R"({"</s>": 0, "<unk>": 1, "▁a": 2, "<pad>": 3})");
  write_file(scratch("list.json"), R"(["<unk>", "<s>", "</s>", "▁a"])");
  write_file(scratch("v.txt"), "<unk>\n<s>\n</s>\n▁a\n");
  const PieceVocabulary a = read_piece_vocabulary(scratch("v.json"));
  ASSERT_EQ(a.size(), 4);
  EXPECT_EQ(a.pieces[3], "<pad>");
  EXPECT_EQ(a.find("▁a"), 2);
  EXPECT_EQ(a.find("nope"), -1);
  for (const char* f : {"list.json", "v.txt"}) {
    const PieceVocabulary b = read_piece_vocabulary(scratch(f));
    ASSERT_EQ(b.size(), 4) << f;
    EXPECT_EQ(b.pieces[2], "</s>") << f;
    EXPECT_EQ(b.find("▁a"), 3) << f;
  }
}

TEST(PieceVocabulary, BadFilesNameTheFileAndTheEntry) {
  write_file(scratch("gap.json"), R"({"a": 0, "b": 2})");
  expect_error([] { read_piece_vocabulary(scratch("gap.json")); }, {"gap.json", "\"b\"", "0 .. 1"});
  write_file(scratch("twice.json"), R"({"a": 0, "b": 0})");
  expect_error([] { read_piece_vocabulary(scratch("twice.json")); }, {"twice.json", "id 0", "\"a\"", "\"b\""});
  write_file(scratch("dup.json"), R"(["a", "a"])");
  expect_error([] { read_piece_vocabulary(scratch("dup.json")); }, {"dup.json", "\"a\"", "twice"});
  write_file(scratch("num.json"), R"(["a", 7])");
  expect_error([] { read_piece_vocabulary(scratch("num.json")); }, {"num.json", "entry 1"});
  write_file(scratch("empty.txt"), "a\n\nb\n");
  expect_error([] { read_piece_vocabulary(scratch("empty.txt")); }, {"empty.txt:2", "empty line"});
  write_file(scratch("bad.json"), "{");
  expect_error([] { read_piece_vocabulary(scratch("bad.json")); }, {"bad.json", "not JSON"});
}

// A vocabulary in OPUS-MT's order (</s> 0, <unk> 1, the pieces, <pad> last) over a SentencePiece
// model whose own ids differ: ids are the vocabulary's, text round-trips through it.
PieceVocabulary opus_vocabulary(const Tokenizer& spm, bool with_code) {
  nlohmann::json j = {{"</s>", 0}, {"<unk>", 1}};
  int64_t next = 2;
  if (with_code) j[">>de<<"] = next++;
  for (int32_t id = 4; id < spm.vocab_size(); ++id) j[spm.piece(id)] = next++;  // attn's specials are 0..3
  j["<pad>"] = next;
  write_file(scratch("opus_vocab.json"), j.dump());
  return read_piece_vocabulary(scratch("opus_vocab.json"));
}

TEST(PieceVocabulary, ATokenizerThroughAVocabularyUsesItsIdsAndRules) {
  const Tokenizer& spm = slice_tokenizer();
  const std::string model = scratch("slice_bpe1000.model");
  VocabularyRules rules;
  rules.language_codes = true;
  const Tokenizer tok = Tokenizer::with_vocabulary(model, opus_vocabulary(spm, true), rules);
  EXPECT_EQ(tok.vocab_size(), spm.vocab_size());  // </s>, <unk>, a code, <pad> for attn's 4 specials
  const std::string line = "Open the file.";
  const std::vector<int32_t> own = spm.encode(line);
  const std::vector<int32_t> ids = tok.encode(line);
  ASSERT_EQ(ids.size(), own.size());
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(tok.piece(ids[i]), spm.piece(own[i]));
  EXPECT_EQ(tok.decode(ids), line);
  // a language code at the start is one token; specials written in the text are the tokens
  std::vector<int32_t> coded = tok.encode(">>de<< Open the file.");
  ASSERT_FALSE(coded.empty());
  EXPECT_EQ(coded.front(), 2);
  EXPECT_EQ(std::vector<int32_t>(coded.begin() + 1, coded.end()), ids);
  const std::vector<int32_t> with_eos = tok.encode("Open</s>file");
  EXPECT_NE(std::find(with_eos.begin(), with_eos.end(), 0), with_eos.end());
  // decoding skips the specials (eos, unk, pad) and strips
  std::vector<int32_t> padded = {1};
  padded.insert(padded.end(), ids.begin(), ids.end());
  padded.push_back(0);
  padded.push_back(tok.vocab_size() - 1);
  EXPECT_EQ(tok.decode(padded), line);
  EXPECT_EQ(tok.piece_to_id("no-such-piece"), 1);
  // pieces SentencePiece makes that the vocabulary lacks become unk
  VocabularyRules plain;
  nlohmann::json small = {{"</s>", 0}, {"<unk>", 1}, {"<pad>", 2}};
  write_file(scratch("small.json"), small.dump());
  const Tokenizer tiny = Tokenizer::with_vocabulary(model, read_piece_vocabulary(scratch("small.json")), plain);
  for (int32_t id : tiny.encode(line)) EXPECT_EQ(id, 1);
  EXPECT_FALSE(tok.same_as(tiny));
  EXPECT_TRUE(tok.same_as(tok));
}

TEST(PieceVocabulary, AVocabularyWithoutItsUnknownTokenIsRefused) {
  write_file(scratch("nounk.json"), R"({"</s>": 0, "<pad>": 1})");
  slice_tokenizer();
  expect_error([] {
    Tokenizer::with_vocabulary(scratch("slice_bpe1000.model"), read_piece_vocabulary(scratch("nounk.json")), {});
  }, {"nounk.json", "\"<unk>\""});
}

}  // namespace
}  // namespace attn::data
