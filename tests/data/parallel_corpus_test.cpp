// Text files and the parallel corpus: line splitting, UTF-8 errors naming file:line, aligned
// line counts, what training skips and evaluation keeps, the real dev set.
#include <gtest/gtest.h>

#include "data_test_util.h"

namespace attn::data {
namespace {

using namespace testing;

TEST(TextFile, SplitLines) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_lines("", "t"), V{});
  EXPECT_EQ(split_lines("a", "t"), V{"a"});
  EXPECT_EQ(split_lines("a\n", "t"), V{"a"});
  EXPECT_EQ(split_lines("a\n\nb", "t"), (V{"a", "", "b"}));
  EXPECT_EQ(split_lines("\n", "t"), V{""});
  EXPECT_EQ(split_lines("\xEF\xBB\xBF" "a\r\nb\r\n", "t"), (V{"a", "b"}));  // BOM, CRLF
  EXPECT_EQ(split_lines("a\rb\n", "t"), V{"a\rb"});                          // inner \r kept
}

TEST(TextFile, FirstInvalidUtf8) {
  EXPECT_EQ(first_invalid_utf8("Grüße, 10 € und 𝄞"), -1);
  EXPECT_EQ(first_invalid_utf8(""), -1);
  EXPECT_EQ(first_invalid_utf8("ab\xC3\x28"), 2);          // bad continuation
  EXPECT_EQ(first_invalid_utf8("\xC0\x80"), 0);            // overlong NUL
  EXPECT_EQ(first_invalid_utf8("x\xE0\x80\xAF"), 1);       // overlong '/'
  EXPECT_EQ(first_invalid_utf8("\xED\xA0\x80"), 0);        // surrogate U+D800
  EXPECT_EQ(first_invalid_utf8("\xF4\x90\x80\x80"), 0);    // above U+10FFFF
  EXPECT_EQ(first_invalid_utf8("ok\xE2\x82"), 2);          // truncated €
  EXPECT_EQ(first_invalid_utf8("\x80"), 0);                // lone continuation
  EXPECT_EQ(first_invalid_utf8("\xF8\x88\x80\x80\x80"), 0);  // 5-byte form
}

TEST(ParallelCorpus, MismatchedLineCountsNameBothFiles) {
  const std::string src = scratch("three.en"), tgt = scratch("two.de");
  write_file(src, "one\ntwo\nthree\n");
  write_file(tgt, "eins\nzwei\n");
  expect_error([&] { read_parallel_corpus(src, tgt, tiny_tokenizer()); },
               {src + " has 3 lines", tgt + " has 2 lines"});
}

TEST(ParallelCorpus, InvalidUtf8NamesFileAndLine) {
  const std::string src = scratch("ok.en"), tgt = scratch("bad.de");
  write_file(src, "one\ntwo\nthree\n");
  write_file(tgt, "eins\nzw\xC3\x28i\ndrei\n");
  expect_error([&] { read_parallel_corpus(src, tgt, tiny_tokenizer()); },
               {tgt + ":2: invalid UTF-8", "byte 0xC3", "column 3"});
  expect_error([] { read_lines("/no/such/file.txt"); }, {"/no/such/file.txt"});
}

TEST(ParallelCorpus, TrainingSkipsEmptyAndLongEvaluationKeepsAll) {
  const Tokenizer& tok = tiny_tokenizer();
  std::string long_line;
  for (int i = 0; i < 40; ++i) long_line += "Datei ";
  const std::string src = scratch("mix.en"), tgt = scratch("mix.de");
  write_file(src, "Open file\n\nSave file\n" + long_line + "\nClose\n   \n");
  write_file(tgt, "Datei öffnen\nLeer\n\nDatei\nSchließen\nLeer\n");
  const int64_t max_len = 20;
  ASSERT_GT(static_cast<int64_t>(tok.encode(long_line).size()), max_len);

  ParallelCorpus train = read_parallel_corpus(src, tgt, tok, CorpusOptions::training(max_len));
  EXPECT_EQ(train.stats.lines, 6);
  EXPECT_EQ(train.stats.kept, 2);
  EXPECT_EQ(train.stats.skipped_empty, 3);  // empty source, empty target, spaces only
  EXPECT_EQ(train.stats.skipped_long, 1);
  ASSERT_EQ(train.examples.size(), 2u);
  EXPECT_EQ(train.examples[0].line, 0);
  EXPECT_EQ(train.examples[1].line, 4);
  EXPECT_EQ(train.examples[0].src, tok.encode("Open file"));
  EXPECT_EQ(train.examples[0].tgt, tok.encode("Datei öffnen"));
  EXPECT_EQ(train.stats.src_tokens,
            static_cast<int64_t>(tok.encode("Open file").size() + tok.encode("Close").size()));
  std::string d = describe(train.stats, max_len);
  EXPECT_NE(d.find("6 lines, 2 kept (skipped: 3 empty, 1 longer than 20 tokens)"),
            std::string::npos) << d;

  ParallelCorpus eval = read_parallel_corpus(src, tgt, tok, CorpusOptions::evaluation());
  ASSERT_EQ(eval.examples.size(), 6u);
  for (int64_t k = 0; k < 6; ++k) EXPECT_EQ(eval.examples[k].line, k);
  EXPECT_TRUE(eval.examples[1].src.empty());
  EXPECT_TRUE(eval.examples[5].src.empty());
}

TEST(ParallelCorpus, RealDevSet) {
  const Tokenizer& tok = slice_tokenizer();
  ParallelCorpus dev = read_parallel_corpus(mt_dir() + "dev.en", mt_dir() + "dev.de", tok,
                                            CorpusOptions::evaluation());
  ASSERT_EQ(dev.examples.size(), 1790u);
  auto en = read_lines(mt_dir() + "dev.en");
  auto de = read_lines(mt_dir() + "dev.de");
  for (size_t k = 0; k < en.size(); ++k) {  // encoded in parallel, equal to one by one
    ASSERT_EQ(dev.examples[k].line, static_cast<int64_t>(k));
    ASSERT_EQ(dev.examples[k].src, tok.encode(en[k])) << "line " << k + 1;
    ASSERT_EQ(dev.examples[k].tgt, tok.encode(de[k])) << "line " << k + 1;
  }
  std::printf("dev with the slice tokenizer: %s\n", describe(dev.stats, 0).c_str());
}

}  // namespace
}  // namespace attn::data
