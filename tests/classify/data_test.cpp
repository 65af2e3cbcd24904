// The classifier's data side: character, word and SentencePiece tokens, the vocabulary (reserved ids, size cap,
// minimum count, ties), padding and truncation, label files, metrics, pre-trained tables.
#include <algorithm>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

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
  // An int32 table (issue 50: refused later without naming the file) names the file and the array.
  Tensor ints = Tensor::empty({5, 2}, DType::i32);
  std::fill_n(ints.data<int32_t>(), 10, 1);
  io::save_npz(dir + "/attn_cls_emb.npz", {{"embeddings", ints}});
  try {
    load_embeddings(dir + "/attn_cls_emb.npz", v, init);
    ADD_FAILURE() << "an int32 table was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/attn_cls_emb.npz: array 'embeddings' holds I32 values; embeddings "
                                         "must be float32"), std::string::npos) << e.what();
  }
  std::filesystem::remove(dir + "/attn_cls_w2v.txt");
  std::filesystem::remove(dir + "/attn_cls_emb.npz");
}

}  // namespace
}  // namespace attn::data

namespace attn::data {
namespace {

TEST(ClassifierEmbeddings, SeedStyleCompressedFloat64Npz) {
  // np.savez_compressed(embeddings=float64 [5, 3]), as seed 002 writes embedding_SougouNews.npz
  CharVocab v = build_vocab({"ab"}, VocabOptions{});
  Tensor t = load_embeddings(std::string(ATTN_TEST_DATA) + "/classify/embeddings_seed_style.npz", v,
                             Tensor::zeros({5, 3}));
  ASSERT_EQ(t.shape(), (Shape{5, 3}));
  ASSERT_EQ(t.dtype(), DType::f32);
  for (int64_t i = 0; i < 15; ++i) EXPECT_EQ(t.data<float>()[i], static_cast<float>(i) / 8.0f) << "element " << i;
}

TEST(ClassifierVocab, WordTokensEncodeByWord) {
  VocabOptions o;
  o.level = "word";
  CharVocab v = build_vocab({"the cat sat", "the dog"}, o);
  ASSERT_EQ(v.size(), 7);
  EXPECT_EQ(v.tokens[3], "the");  // twice
  std::vector<int32_t> ids = v.encode("the  bird\tsat", 5);
  EXPECT_EQ(ids, (std::vector<int32_t>{3, kVocabUnk, v.id("sat"), kVocabPad, kVocabPad}));
  EXPECT_NE(v.id("sat"), kVocabUnk);
}

// A SentencePiece unigram model trained on a small English corpus: pieces become the vocabulary,
// vocab.txt and spm.model round-trip, and encoding goes through the pieces.
TEST(ClassifierVocab, SpmPiecesTrainSaveLoad) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("attn_cls_spm_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<std::string> texts;
  const char* words[] = {"walking", "talking", "walked", "talked", "jumping", "jumped", "the", "dog", "cat", "runs"};
  for (int i = 0; i < 300; ++i)
    texts.push_back(std::string(words[i % 10]) + " " + words[(i * 7 + 3) % 10] + " " + words[(i * 3 + 1) % 10]);
  std::shared_ptr<const Tokenizer> spm = train_piece_model(texts, (dir / "spm").string(), 30);
  ASSERT_TRUE(fs::exists(dir / "spm.model"));
  EXPECT_FALSE(fs::exists(dir / "spm.train.txt")) << "the training text is removed";
  VocabOptions o;
  o.level = "spm";
  EXPECT_THROW(build_vocab(texts, o), Error);  // spm without a model
  CharVocab v = build_vocab(texts, o, spm);
  EXPECT_GT(v.size(), 10);
  EXPECT_LE(v.size(), 3 + 30);
  std::vector<std::string> pieces = spm->encode_pieces("the dog walked");
  EXPECT_LT(pieces.size(), std::string("thedogwalked").size()) << "pieces longer than characters";
  std::vector<int32_t> ids = v.encode("the dog walked", 12);
  for (size_t i = 0; i < pieces.size(); ++i) EXPECT_EQ(ids[i], v.id(pieces[i])) << pieces[i];
  EXPECT_EQ(ids[pieces.size()], kVocabPad);
  save_vocab(v, (dir / "vocab.txt").string());
  fs::remove(dir / "spm.model");  // save_vocab writes it back
  save_vocab(v, (dir / "vocab.txt").string());
  ASSERT_TRUE(fs::exists(dir / "spm.model"));
  CharVocab r = load_vocab((dir / "vocab.txt").string());
  EXPECT_EQ(r.level, "spm");
  EXPECT_EQ(r.tokens, v.tokens);
  EXPECT_EQ(r.encode("the cat jumping runs", 10), v.encode("the cat jumping runs", 10));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attn::data
