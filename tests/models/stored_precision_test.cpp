// Model files in int8 or bf16 (attn convert, models/stored_precision.h): through the command line,
// each model kind's converted directory computes the same bits as the fp32 directory quantized at
// load, is smaller, and says its precision; a bad file names the tensor.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "attn/data/char_vocab.h"
#include "attn/error.h"
#include "attn/io/io.h"
#include "attn/io/json.h"
#include "attn/io/safetensors.h"
#include "attn/kernels/gemm_int8.h"
#include "attn/models/classifier_dir.h"
#include "attn/models/seq2seq.h"
#include "attn/models/stored_precision.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

std::string temp_dir(const std::string& name) {
  std::string d = (fs::temp_directory_path() / ("attn_stored_" + name + "_" + std::to_string(::getpid()))).string();
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

int convert(const std::string& precision, const std::string& in, const std::string& out) {
  const std::string cmd = std::string(ATTN_BINARY) + " convert --precision " + precision + " " + in + " " + out +
                          " 2>" + out + ".log";
  return std::system(cmd.c_str());
}

Tensor ids(int64_t rows, int64_t cols, int64_t vocab, int salt) {
  std::vector<int32_t> v(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) v[i] = static_cast<int32_t>(3 + (i * 31 + salt * 17) % (vocab - 3));
  for (int64_t i = 0; i < rows; ++i) v[i * cols] = salt == 1 ? 1 : v[i * cols];  // bos first on the target side
  return Tensor::from_ids(v, {rows, cols});
}

Tensor seq2seq_outputs(const std::string& dir, Precision p) {
  NoGrad no_grad;
  Seq2Seq m = load_seq2seq(dir);
  prepare(m, p, Use::inference);
  return seq2seq_logits(m, ids(4, 11, m.common().src_vocab, 0), ids(4, 8, m.common().tgt_vocab, 1), Context{}).value();
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.contiguous().raw_data(), b.contiguous().raw_data(), a.nbytes()) == 0;
}

// The fp32 directory and its int8 and bf16 copies: the same logits in that precision, files at
// most max_ratio of the fp32 one (the RNN's recurrent cells compute in f32 and stay so).
void expect_converted_like_quantized_at_load(const std::string& dir, const std::string& name, double max_ratio) {
  for (Precision p : {Precision::int8, Precision::bf16}) {
    const std::string out = dir + "/" + name + "-" + precision_name(p);
    ASSERT_EQ(convert(precision_name(p), dir + "/" + name, out), 0) << io::read_file(out + ".log");
    EXPECT_TRUE(same_bits(seq2seq_outputs(dir + "/" + name, p), seq2seq_outputs(out, p))) << name << " " << precision_name(p);
    EXPECT_LT(static_cast<double>(fs::file_size(out + "/model.safetensors")),
              max_ratio * static_cast<double>(fs::file_size(dir + "/" + name + "/model.safetensors")));
    const nlohmann::json c = io::parse_json(io::read_file(out + "/config.json"), "config.json");
    EXPECT_EQ(c["precision"], precision_name(p));
    // The copy differs from the fp32 model computed in fp32: the test could tell them apart.
    EXPECT_FALSE(same_bits(seq2seq_outputs(dir + "/" + name, Precision::fp32), seq2seq_outputs(out, p)));
  }
}

TEST(StoredPrecision, TransformerAndRnnFilesComputeWhatQuantizingAtLoadDoes) {
  const std::string dir = temp_dir("seq2seq");
  save_seq2seq(make_seq2seq(TransformerConfig{.src_vocab = 300, .tgt_vocab = 300, .d_model = 32, .heads = 4,
                                              .encoder_layers = 2, .decoder_layers = 2, .d_ff = 64},
                            3),
               dir + "/transformer");
  expect_converted_like_quantized_at_load(dir, "transformer", 0.75);
  save_seq2seq(make_seq2seq(TransformerConfig{.src_vocab = 300, .tgt_vocab = 280, .d_model = 32, .heads = 2,
                                              .encoder_layers = 1, .decoder_layers = 1, .d_ff = 48,
                                              .share_embeddings = false, .tie_output = false},
                            4),
               dir + "/untied");
  expect_converted_like_quantized_at_load(dir, "untied", 0.75);
  RnnConfig rnn;
  rnn.src_vocab = rnn.tgt_vocab = 300;
  rnn.d_model = 32;
  rnn.tie_output = false;
  save_seq2seq(make_seq2seq(rnn, 5), dir + "/rnn");
  expect_converted_like_quantized_at_load(dir, "rnn", 0.9);
  fs::remove_all(dir);
}

TEST(StoredPrecision, ClassifierFileComputesWhatQuantizingAtLoadDoes) {
  const std::string dir = temp_dir("classifier");
  ClassifierModel m;
  m.vocab = data::build_vocab({"the quick brown fox", "jumps over the lazy dog", "attention is all you need"}, {});
  m.labels = {"a", "b", "c"};
  ClassifierConfig c;
  c.vocab = m.vocab.size();
  c.classes = 3;
  c.pad_size = 12;
  c.d_model = 32;
  c.heads = 4;
  c.d_ff = 64;
  m.model = make_classifier(c, 6);
  save_classifier(m, dir + "/fp32");
  ASSERT_EQ(convert("int8", dir + "/fp32", dir + "/int8"), 0) << io::read_file(dir + "/int8.log");
  auto outputs = [&](const std::string& d) {
    NoGrad no_grad;
    ClassifierModel x = load_classifier(d);
    prepare(x.model, Precision::int8, Use::inference);
    return classifier_logits(x.model, ids(3, 12, c.vocab, 2), Context{}).value();
  };
  EXPECT_TRUE(same_bits(outputs(dir + "/fp32"), outputs(dir + "/int8")));
  EXPECT_TRUE(fs::exists(dir + "/int8/vocab.txt"));
  fs::remove_all(dir);
}

TEST(StoredPrecision, RefusesWhatItCannotConvertAndNamesBrokenTensors) {
  const std::string dir = temp_dir("refuse");
  save_seq2seq(make_seq2seq(TransformerConfig{.src_vocab = 50, .tgt_vocab = 50, .d_model = 16, .heads = 2,
                                              .encoder_layers = 1, .decoder_layers = 1, .d_ff = 32},
                            7),
               dir + "/m");
  ASSERT_EQ(convert("int8", dir + "/m", dir + "/q"), 0);
  EXPECT_NE(convert("int8", dir + "/m", dir + "/q"), 0);   // the output exists
  EXPECT_NE(convert("bf16", dir + "/q", dir + "/qq"), 0);  // stored in int8 already
  EXPECT_NE(io::read_file(dir + "/qq.log").find("int8 already"), std::string::npos);
  // An I8 weight whose scale is missing: the loader names it.
  auto tensors = io::load_safetensors_copied(dir + "/q/model.safetensors");
  tensors.erase("transformer.encoder.layers.0.linear1.weight.scale");
  io::save_safetensors(dir + "/q/model.safetensors", tensors);
  try {
    load_seq2seq(dir + "/q");
    FAIL() << "loaded a file without a scale";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("transformer.encoder.layers.0.linear1.weight.scale"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attn
