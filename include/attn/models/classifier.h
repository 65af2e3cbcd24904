// The Transformer-encoder text classifier of seed 002 (Chinese-Text-Classification-Pytorch's
// Transformer.py, whose defaults these are):
//
//   x = Embed(ids) + PE;  x = Dropout(x)                           [batch, pad_size, d]
//   N x { x = LN(x + Dropout(MultiHead(x, x, x)));                 (post-LN, as the seed)
//         x = LN(x + Dropout(max(0, x W_1 + b_1) W_2 + b_2)) }
//   pooled = flatten(x) [batch, pad_size * d]  (seed)  | mean over positions | x[:, 0] ([CLS])
//   logits = pooled W_fc^T + b_fc                                   [batch, classes]
//
// Departures from the encoder of the paper, all the seed's: no sqrt(d_model) scaling of the
// embeddings, no dropout on the attention weights nor inside the FFN, no final LayerNorm, and
// PyTorch's default initialisation (Linear U(+-1/sqrt(fan_in)), Embedding N(0, 1), the <PAD> row 0).
// Options beyond the seed: a key-padding mask (the seed attends to padding), mean and [CLS]
// pooling, and the head split: "standard" is the paper's (each head sees every position, d_k
// features of it); "seed" is the seed's Q.view(batch * heads, -1, d_k) of a [batch, len, d]
// tensor, where "head" i attends over 60-feature slices of a run of consecutive positions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "attn/models/attention_maps.h"
#include "attn/models/transformer.h"

namespace attn {

// How the encoder's outputs [batch, pad_size, d] become one vector per text.
enum class Pooling { flatten, mean, cls };
// "standard": the paper's heads; "seed": the seed's view(batch * heads, -1, d_k).
const char* name(Pooling p);
const char* name(HeadSplit h);
void parse(std::string_view text, Pooling* out, std::string_view what = "pooling");
void parse(std::string_view text, HeadSplit* out, std::string_view what = "head_split");

struct ClassifierConfig {
  int64_t vocab = 5000;
  int64_t classes = 10;
  int64_t pad_size = 32;   // every text cut or padded to this many tokens
  int64_t d_model = 300;   // seed: embed = dim_model = 300
  int64_t heads = 5;
  int64_t layers = 2;      // seed's code: num_encoder 2 (its text says 5)
  int64_t d_ff = 1024;     // seed: hidden
  float dropout = 0.5f;
  Pooling pooling = Pooling::flatten;
  bool mask = false;                   // key-padding mask in attention (and mean pooling over tokens only)
  HeadSplit head_split = HeadSplit::standard;
  bool freeze_embedding = false;       // pre-trained table kept fixed

  int64_t pooled_size() const { return pooling == Pooling::flatten ? pad_size * d_model : d_model; }
  void validate() const;  // throws attn::Error naming the field
};

nlohmann::json classifier_config_to_json(const ClassifierConfig& c);
ClassifierConfig classifier_config_from_json(const nlohmann::json& j, const std::string& source);

struct Classifier {
  ClassifierConfig config;
  Var embed;  // [vocab, d_model] "embedding.weight"
  Tensor pe;  // [pad_size, d_model] sinusoids
  std::vector<EncoderLayer> layers;  // "encoder.layers.i.*", nn.TransformerEncoderLayer's names
  Linear fc;  // [classes, pooled_size]

  std::map<std::string, Var> named;  // every parameter by checkpoint key
  std::vector<std::pair<std::string, Var>> parameters() const;  // sorted by key
};

// PyTorch's default initialisation, from `seed`.
Classifier make_classifier(const ClassifierConfig& c, uint64_t seed);
// Around given tensors; every key must be present with its shape, extra keys are an error.
// Tensors the map alone holds become the parameters without a copy (adopt_or_copy).
Classifier classifier_from_tensors(const ClassifierConfig& c, std::map<std::string, Tensor> tensors,
                                   const std::string& source);

// ids [batch, pad_size] (i32, <PAD> = 0) -> logits [batch, classes]. maps, if given, receives each
// layer's self-attention weights (maps->encoder_self; with head_split "seed" a "head" attends over
// rows of a reshaped memory, not over positions).
Var classifier_logits(const Classifier& m, const Tensor& ids, const Context& ctx, AttentionMaps* maps = nullptr);

// Fixes how m's products run: precision p, for training or (frozen weights) inference. A model is
// built or loaded in fp32 for training; inference prepares it once after loading.
void prepare(Classifier& m, Precision p, Use use);

// Inference: softmax probabilities [batch, classes] of ids [n, pad_size], in batches.
Tensor classifier_probabilities(const Classifier& m, const Tensor& ids, int64_t batch = 256);

// Zeroes the gradient of the <PAD> row, as nn.Embedding(padding_idx=0) (no-op if none).
void zero_pad_gradient(const Classifier& m);

}  // namespace attn
