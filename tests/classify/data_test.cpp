// The classifier's data side: character and word tokens, the vocabulary (reserved ids, size cap,
// minimum count, ties), padding and truncation, label files, metrics.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "attn/data/char_vocab.h"
#include "attn/data/classification_data.h"
#include "attn/data/classification_metrics.h"
#include "attn/error.h"

namespace attn::data {
namespace {

TEST(ClassifierVocab, CharTokensAreCodePoints) {
  EXPECT_EQ(split_tokens("床前明月光", "char"), (std::vector<std::string>{"床", "前", "明", "月", "光"}));
  EXPECT_EQ(split_tokens("a é", "char"), (std::vector<std::string>{"a", " ", "é"}));
  EXPECT_EQ(split_tokens("  The  cat\tsat ", "word"), (std::vector<std::string>{"The", "cat", "sat"}));
  EXPECT_THROW(split_tokens("x", "bpe"), Error);
}

TEST(ClassifierVocab, FrequencyOrderCapAndMinCount) {
  VocabOptions o;
  o.max_size = 5;  // 3 reserved + 2
  CharVocab v = build_vocab({"月月月光光明", "月光前"}, o);
  ASSERT_EQ(v.size(), 5);
  EXPECT_EQ(v.tokens[3], "月");  // 4 times
  EXPECT_EQ(v.tokens[4], "光");  // 3 times
  EXPECT_EQ(v.id("明"), kVocabUnk);  // cut by the cap
  o.max_size = 100;
  o.min_count = 2;
  EXPECT_EQ(build_vocab({"月月月光光明", "月光前"}, o).size(), 5);  // 明 and 前 seen once
  o.min_count = 1;
  CharVocab all = build_vocab({"月月月光光明", "月光前"}, o);
  EXPECT_EQ(all.size(), 7);
  EXPECT_LT(all.id("前"), all.id("明"));  // a tie is broken by the bytes: 前 E5 89 8D < 明 E6 98 8E
}

TEST(ClassifierVocab, EncodePadsTruncatesAndSavesRoundTrip) {
  VocabOptions o;
  CharVocab v = build_vocab({"abc"}, o);
  int32_t a = v.id("a"), b = v.id("b");
  EXPECT_EQ(v.encode("ab", 4), (std::vector<int32_t>{a, b, kVocabPad, kVocabPad}));
  EXPECT_EQ(v.encode("abz", 2), (std::vector<int32_t>{a, b}));
  EXPECT_EQ(v.encode("azb", 4, true), (std::vector<int32_t>{kVocabCls, a, kVocabUnk, b}));
  std::string path = (std::filesystem::temp_directory_path() / "attn_cls_vocab.txt").string();
  CharVocab w = build_vocab({"床 前", "明月"}, o);
  save_vocab(w, path);
  CharVocab r = load_vocab(path);
  EXPECT_EQ(r.tokens, w.tokens);
  EXPECT_EQ(r.level, "char");
  EXPECT_EQ(r.id(" "), w.id(" "));
  std::filesystem::remove(path);
}

TEST(ClassifierData, LabelledFileAndMissingTabError) {
  std::string path = (std::filesystem::temp_directory_path() / "attn_cls_rows.tsv").string();
  std::ofstream(path) << "tang\t床前明月光\nsong\ta\tb\n";
  auto rows = read_labelled(path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].label, "song");
  EXPECT_EQ(rows[1].text, "a\tb");
  EXPECT_EQ(label_set(rows), (std::vector<std::string>{"song", "tang"}));
  EXPECT_THROW(label_ids(rows, {"tang"}, path), Error);
  std::ofstream(path) << "tang\tok\nno tab here\n";
  try {
    read_labelled(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(":2:"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(ClassifierMetrics, HandComputedReport) {
  // truth 0 0 0 1 1 2, predicted 0 0 1 1 2 2
  ClassificationReport r = classification_report({0, 0, 0, 1, 1, 2}, {0, 0, 1, 1, 2, 2}, 3);
  EXPECT_DOUBLE_EQ(r.accuracy, 4.0 / 6);
  EXPECT_EQ(r.confusion[0][1], 1);
  EXPECT_EQ(r.confusion[1][2], 1);
  EXPECT_DOUBLE_EQ(r.classes[0].precision, 1.0);
  EXPECT_DOUBLE_EQ(r.classes[0].recall, 2.0 / 3);
  EXPECT_DOUBLE_EQ(r.classes[1].f1, 0.5);
  EXPECT_DOUBLE_EQ(r.classes[2].precision, 0.5);
  EXPECT_NEAR(r.macro_f1, (0.8 + 0.5 + 2.0 / 3) / 3, 1e-12);
  std::string text = format_report(r, {"a", "b", "c"});
  EXPECT_NE(text.find("accuracy 0.6667"), std::string::npos) << text;
}

}  // namespace
}  // namespace attn::data

#include "attn/data/classification_embeddings.h"
#include "attn/io/io.h"

namespace attn::data {
namespace {

TEST(ClassifierEmbeddings, Word2vecByTokenAndNpzById) {
  CharVocab v = build_vocab({"ab"}, VocabOptions{});  // <PAD> <UNK> <CLS> a b
  Tensor init = Tensor::full({5, 2}, 9.0f);
  std::string dir = std::filesystem::temp_directory_path().string();
  std::ofstream(dir + "/attn_cls_w2v.txt") << "3 2\nb 1.5 -2\nzz 7 7\na 0.25 4\n";
  int64_t found = 0;
  Tensor t = load_embeddings(dir + "/attn_cls_w2v.txt", v, init, &found);
  EXPECT_EQ(found, 2);
  EXPECT_EQ(t.to_vector(), (std::vector<float>{9, 9, 9, 9, 9, 9, 0.25f, 4, 1.5f, -2}));
  EXPECT_EQ(init.at({3, 0}), 9.0f) << "init must not change";
  io::save_npz(dir + "/attn_cls_emb.npz", {{"embeddings", Tensor::full({5, 2}, 0.5f)}});
  EXPECT_EQ(load_embeddings(dir + "/attn_cls_emb.npz", v, init).to_vector(), std::vector<float>(10, 0.5f));
  io::save_npz(dir + "/attn_cls_emb.npz", {{"embeddings", Tensor::full({4, 2}, 0.5f)}});
  EXPECT_THROW(load_embeddings(dir + "/attn_cls_emb.npz", v, init), Error);
  std::filesystem::remove(dir + "/attn_cls_w2v.txt");
  std::filesystem::remove(dir + "/attn_cls_emb.npz");
}

}  // namespace
}  // namespace attn::data
