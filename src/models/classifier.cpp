#include "attn/models/classifier.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "attn/enum_names.h"
#include "attn/error.h"
#include "attn/models/named_tensors.h"
#include "attn/nn/init.h"
#include "attn/nn/positional_encoding.h"
#include "attn/ops/add_layer_norm.h"
#include "attn/ops/attention.h"
#include "attn/models/config_keys.h"
#include "config_fields.h"

namespace attn {
namespace {

const EnumName<Pooling> kPoolings[] = {{Pooling::flatten, "flatten"}, {Pooling::mean, "mean"}, {Pooling::cls, "cls"}};
const EnumName<HeadSplit> kHeadSplits[] = {{HeadSplit::standard, "standard"}, {HeadSplit::seed, "seed"}};

// PyTorch's nn.Linear: weight and bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
ParamSpec linear(const std::string& key, Shape shape, int64_t fan_in) {
  return {key, std::move(shape), Init::uniform, 1.0f / std::sqrt(static_cast<float>(fan_in))};
}

std::vector<ParamSpec> param_specs(const ClassifierConfig& c) {
  int64_t d = c.d_model, ff = c.d_ff;
  std::vector<ParamSpec> s = {{"embedding.weight", {c.vocab, d}, Init::normal, 1.0f}};
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string p = "encoder.layers." + std::to_string(i) + ".";
    s.push_back(linear(p + "self_attn.in_proj_weight", {3 * d, d}, d));
    s.push_back(linear(p + "self_attn.in_proj_bias", {3 * d}, d));
    s.push_back(linear(p + "self_attn.out_proj.weight", {d, d}, d));
    s.push_back(linear(p + "self_attn.out_proj.bias", {d}, d));
    s.push_back(linear(p + "linear1.weight", {ff, d}, d));
    s.push_back(linear(p + "linear1.bias", {ff}, d));
    s.push_back(linear(p + "linear2.weight", {d, ff}, ff));
    s.push_back(linear(p + "linear2.bias", {d}, ff));
    for (const char* n : {"norm1", "norm2"}) {
      s.push_back({p + n + ".weight", {d}, Init::ones});
      s.push_back({p + n + ".bias", {d}, Init::zeros});
    }
  }
  s.push_back(linear("fc.weight", {c.classes, c.pooled_size()}, c.pooled_size()));
  s.push_back(linear("fc.bias", {c.classes}, c.pooled_size()));
  return s;
}

Classifier assemble(const ClassifierConfig& c, std::map<std::string, Var> named) {
  Classifier m;
  m.config = c;
  m.named = std::move(named);
  auto get = [&](const std::string& k) { return m.named.at(k); };
  m.embed = get("embedding.weight");
  if (c.freeze_embedding) m.embed.set_requires_grad(false);
  m.pe = sinusoid_table(c.pad_size, c.d_model);
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string p = "encoder.layers." + std::to_string(i) + ".";
    EncoderLayer l;
    l.self_attn.heads = c.heads;
    l.self_attn.split = c.head_split;
    l.self_attn.W_in = get(p + "self_attn.in_proj_weight");
    l.self_attn.b_in = get(p + "self_attn.in_proj_bias");
    l.self_attn.out = {get(p + "self_attn.out_proj.weight"), get(p + "self_attn.out_proj.bias")};
    l.ff.linear1 = {get(p + "linear1.weight"), get(p + "linear1.bias")};
    l.ff.linear2 = {get(p + "linear2.weight"), get(p + "linear2.bias")};
    l.norm1 = {get(p + "norm1.weight"), get(p + "norm1.bias")};
    l.norm2 = {get(p + "norm2.weight"), get(p + "norm2.bias")};
    m.layers.push_back(l);
  }
  m.fc = {get("fc.weight"), get("fc.bias")};
  return m;
}


// [batch, len, d] -> [batch, pooled_size]
Var pool(const ClassifierConfig& c, const Var& x, const Tensor& ids) {
  int64_t B = x.size(0), L = x.size(1), d = x.size(2);
  if (c.pooling == Pooling::flatten) return reshape(x, {B, L * d});  // out.view(batch, -1)
  if (c.pooling == Pooling::cls) return reshape(slice(x, 1, 0, 1), {B, d});
  if (!c.mask) return mean(x, 1);
  // mean over the tokens only: sum_t x_t [id_t != PAD] / #tokens
  Tensor w = Tensor::zeros({B, L, 1});
  const int32_t* id = ids.data<int32_t>();
  for (int64_t b = 0; b < B; ++b) {
    int64_t n = std::count_if(id + b * L, id + (b + 1) * L, [](int32_t t) { return t != 0; });
    for (int64_t t = 0; t < L; ++t) w.data<float>()[b * L + t] = id[b * L + t] != 0 ? 1.0f / std::max<int64_t>(n, 1) : 0.0f;
  }
  return sum(mul(x, Var(w)), 1);
}

}  // namespace

const char* name(Pooling p) { return name_in(kPoolings, p); }
const char* name(HeadSplit h) { return name_in(kHeadSplits, h); }
void parse(std::string_view text, Pooling* out, std::string_view what) { *out = parse_in(kPoolings, text, what); }
void parse(std::string_view text, HeadSplit* out, std::string_view what) { *out = parse_in(kHeadSplits, text, what); }

namespace {

std::vector<ConfigKey<ClassifierConfig>> make_classifier_keys() {
  using C = ClassifierConfig;
  const Limits& L = kLimits;
  return {
      {{"vocab", "vocabulary size, <PAD> <UNK> <CLS> included", between(4, L.vocab)}, [](C& c) -> Field { return &c.vocab; }},
      {{"classes", "labels", between(2, L.vocab)}, [](C& c) -> Field { return &c.classes; }},
      {{"pad_size", "every text cut or padded to this many tokens", between(1, L.positions)}, [](C& c) -> Field { return &c.pad_size; }},
      {{"d_model", "embedding and model width", between(1, L.width)}, [](C& c) -> Field { return &c.d_model; }},
      {{"heads", "attention heads (d_k = d_model / heads)", between(1, L.width)}, [](C& c) -> Field { return &c.heads; }},
      {{"layers", "encoder layers (the seed's code: 2; its text: 5)", between(0, L.layers)}, [](C& c) -> Field { return &c.layers; }},
      {{"d_ff", "FFN inner size", between(1, L.inner)}, [](C& c) -> Field { return &c.d_ff; }},
      {{"dropout", "dropout after positions and on each sub-layer output", fraction_below_one()}, [](C& c) -> Field { return &c.dropout; }},
      {{"pooling", "flatten ([batch, pad_size*d], the seed), mean or cls", {}, {"flatten", "mean", "cls"}}, [](C& c) -> Field { return &c.pooling; }},
      {{"mask", "key-padding mask in attention (the seed has none)"}, [](C& c) -> Field { return &c.mask; }},
      {{"head_split", "standard, or seed (the seed's view(batch*heads, -1, d_k))", {}, {"standard", "seed"}}, [](C& c) -> Field { return &c.head_split; }},
      {{"freeze_embedding", "keep the pre-trained embeddings fixed"}, [](C& c) -> Field { return &c.freeze_embedding; }},
  };
}

}  // namespace

const std::vector<ConfigKey<ClassifierConfig>>& classifier_config_keys() {
  static const std::vector<ConfigKey<ClassifierConfig>> keys = make_classifier_keys();
  return keys;
}

void ClassifierConfig::validate() const {
  ClassifierConfig c = *this;
  check_fields(bind(classifier_config_keys(), c), "classifier");
  check(d_model % heads == 0, "classifier: d_model ", d_model, " must be a positive multiple of heads ", heads);
  check(!(mask && head_split == HeadSplit::seed), "classifier: a padding mask needs head_split standard (the seed's "
        "split mixes positions within a head)");
  const double d = static_cast<double>(d_model);
  config_fields::check_fits_in_memory(static_cast<double>(vocab) * d + static_cast<double>(layers) * (4 * d * d +
                                          2 * d * static_cast<double>(d_ff)) +
                                          static_cast<double>(classes) * static_cast<double>(pooled_size()),
                                      "classifier");
}

nlohmann::json classifier_config_to_json(const ClassifierConfig& c) {
  ClassifierConfig copy = c;
  return fields_json(bind(classifier_config_keys(), copy));
}

ClassifierConfig classifier_config_from_json(const nlohmann::json& j, const std::string& source) {
  ClassifierConfig c;
  config_fields::read_fields(j, bind(classifier_config_keys(), c), {}, source, "a classifier");
  try {
    c.validate();
  } catch (const Error& e) {
    fail(source, ": ", e.what());
  }
  return c;
}

std::vector<std::pair<std::string, Var>> Classifier::parameters() const {
  return {named.begin(), named.end()};
}

Classifier make_classifier(const ClassifierConfig& c, uint64_t seed) {
  c.validate();
  Rng rng(seed);
  std::map<std::string, Var> named;
  for (const ParamSpec& s : param_specs(c)) named[s.key] = Var(init_parameter(s, rng), true);
  named.at("embedding.weight").value().select(0, 0).fill(0.0f);  // padding_idx: the <PAD> row is 0
  return assemble(c, std::move(named));
}

Classifier classifier_from_tensors(const ClassifierConfig& c, std::map<std::string, Tensor> tensors,
                                   const std::string& source) {
  c.validate();
  std::map<std::string, Var> named;
  for (const ParamSpec& s : param_specs(c)) {
    auto it = tensors.find(s.key);
    check(it != tensors.end(), source, ": tensor '", s.key, "' is missing");
    if (!(it->second.shape() == s.shape && it->second.dtype() == DType::f32))
      fail(source, ": tensor '", s.key,
           "' is ", dtype_name(it->second.dtype()), " ", shape_str(it->second.shape()), ", expected F32 ",
           shape_str(s.shape));
    check_finite(it->second, s.key, source);
    named[s.key] = Var(adopt_or_copy(std::move(it->second)), true);  // owned: training updates it
  }
  check(named.size() == tensors.size(), source, ": holds ", tensors.size(), " tensors, the classifier has ",
        named.size());
  return assemble(c, std::move(named));
}

Var classifier_logits(const Classifier& m, const Tensor& ids, const Context& ctx, AttentionMaps* maps) {
  const ClassifierConfig& c = m.config;
  if (!(ids.dim() == 2 && ids.size(1) == c.pad_size && ids.dtype() == DType::i32))
    fail("classifier: ids must be I32 [batch, ",
         c.pad_size, "], got ", dtype_name(ids.dtype()), " ", shape_str(ids.shape()));
  Tensor id = ids.contiguous();
  // x = Dropout(Embed(ids) + PE)                               [batch, pad_size, d]
  Var x = apply_dropout(add(embedding(m.embed, id), Var(m.pe)), ctx);
  AttentionMask mask;
  if (c.mask) mask.key_padding = padding_mask(id, 0);
  for (const EncoderLayer& l : m.layers) {
    // x = LN(x + Dropout(MultiHead(x, x, x)))
    Tensor* weights = maps ? &maps->encoder_self.emplace_back() : nullptr;
    // nn's layer, without dropout on the attention weights (the seed has none): no context of its own
    x = add_layer_norm(x, apply_dropout(self_attention(l.self_attn, x, mask, Context{}, weights), ctx), l.norm1.gamma,
                       l.norm1.beta);
    // x = LN(x + Dropout(max(0, x W_1 + b_1) W_2 + b_2))
    Var h = forward(l.ff.linear2, linear_relu(x, l.ff.linear1.W, l.ff.linear1.b, l.ff.linear1.form));
    x = add_layer_norm(x, apply_dropout(h, ctx), l.norm2.gamma, l.norm2.beta);
  }
  // logits = pool(x) W_fc^T + b                                [batch, classes]
  return forward(m.fc, pool(c, x, id));
}

Tensor classifier_probabilities(const Classifier& m, const Tensor& ids, int64_t batch) {
  NoGrad no_grad;
  int64_t n = ids.size(0);
  Tensor out = Tensor::empty({n, m.config.classes});
  for (int64_t b = 0; b < n; b += batch) {
    int64_t e = std::min(n, b + batch);
    Var p = softmax(classifier_logits(m, ids.slice(0, b, e), Context{}));
    out.slice(0, b, e).copy_from(p.value());
  }
  return out;
}

void prepare(Classifier& m, Precision p, Use use) {
  for (EncoderLayer& l : m.layers) {
    prepare(l.self_attn, AttentionKind::self, p, use);
    prepare(l.ff, p, use);
  }
  prepare(m.fc, p, use);
}

void zero_pad_gradient(const Classifier& m) {
  if (m.config.freeze_embedding || !m.embed.grad().defined()) return;
  m.embed.grad_buffer().select(0, 0).fill(0.0f);
}

}  // namespace attn
