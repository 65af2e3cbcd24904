// attn attend --model M --src "..." [--tgt "..."] [--output page.html] [--format html|svg|json]
//             [--layer L] [--head H] [--ids] [--beam K]
// Every attention weight of a model on one sentence (models/attention_maps.h), drawn
// (attend_page.cpp) or written as JSON. See attend.h for the document.
#include "attend.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "args.h"
#include "attn/data/tokenizer.h"
#include "attn/decode/id_lines.h"
#include "attn/decode/search.h"
#include "attn/decode/text.h"
#include "attn/error.h"
#include "attn/io/atomic_file.h"
#include "attn/models/classifier_dir.h"
#include "attn/models/model_dir.h"
#include "attn/models/teacher_forced_attention.h"
#include "attn/runtime.h"

namespace attn::cli {

HeadSummary summarize_head(const std::vector<std::vector<float>>& weights, const std::vector<std::string>& keys,
                           bool self_attention, const std::string& eos_token) {
  HeadSummary s;
  s.positional = self_attention;
  for (const std::string& k : keys) s.has_eos = s.has_eos || k == eos_token;
  if (weights.empty()) return s;
  for (size_t i = 0; i < weights.size(); ++i) {
    const std::vector<float>& row = weights[i];
    for (size_t j = 0; j < row.size(); ++j) {
      const double p = row[j];
      if (p > 0) s.entropy -= p * std::log2(p);
      if (j < keys.size() && keys[j] == eos_token) s.eos += p;
      if (j + 1 == i) s.previous += p;
      if (j == i) s.same += p;
      if (j == i + 1) s.next += p;
    }
  }
  const double n = static_cast<double>(weights.size());
  for (double* x : {&s.entropy, &s.eos, &s.previous, &s.same, &s.next}) *x /= n;
  return s;
}

namespace {

struct AttendFlags {
  AttendRequest request;
  std::string output, format = "html";
  int threads = 1;
};

constexpr const char* kEos = "</s>";

nlohmann::json summary_json(const HeadSummary& s) {
  nlohmann::json j = {{"entropy", s.entropy}};
  j["previous"] = s.positional ? nlohmann::json(s.previous) : nlohmann::json();
  j["same"] = s.positional ? nlohmann::json(s.same) : nlohmann::json();
  j["next"] = s.positional ? nlohmann::json(s.next) : nlohmann::json();
  j["eos"] = s.has_eos ? nlohmann::json(s.eos) : nlohmann::json();
  return j;
}

// One stack's layers (1-based `layer` / `head` keep only that one; 0 keeps all), each map
// [1, heads, queries, keys] cut to `queries` x keys.size() positions.
nlohmann::json stack_json(const std::string& id, const std::string& title, const std::vector<Tensor>& maps,
                          const std::vector<std::string>& queries, const std::vector<std::string>& keys,
                          const std::pair<std::string, std::string>& sides, const AttendRequest& f) {
  nlohmann::json stack = {{"id", id}, {"title", title}, {"queries", sides.first}, {"keys", sides.second}};
  stack["layers"] = nlohmann::json::array();
  const int layers = static_cast<int>(maps.size());
  check(f.layer <= layers, "--layer ", f.layer, ": the ", title, " has ", layers, " layers");
  for (int l = 1; l <= layers; ++l) {
    if (f.layer && l != f.layer) continue;
    const Tensor& map = maps[static_cast<size_t>(l - 1)];
    const int heads = static_cast<int>(map.size(1));
    check(f.head <= heads, "--head ", f.head, ": the ", title, " has ", heads, " heads");
    nlohmann::json layer = {{"layer", l}, {"heads", nlohmann::json::array()}};
    for (int h = 1; h <= heads; ++h) {
      if (f.head && h != f.head) continue;
      std::vector<std::vector<float>> w = head_matrix(map, 0, h - 1);
      w.resize(queries.size());
      for (auto& row : w) row.resize(keys.size());
      const HeadSummary s = summarize_head(w, keys, sides.first == sides.second, kEos);
      layer["heads"].push_back({{"head", h}, {"weights", w}, {"summary", summary_json(s)}});
    }
    stack["layers"].push_back(layer);
  }
  return stack;
}

std::vector<std::string> token_strings(const data::Tokenizer* tok, const std::vector<int32_t>& ids) {
  std::vector<std::string> out;
  for (int32_t id : ids) out.push_back(tok ? tok->piece(id) : std::to_string(id));
  return out;
}

}  // namespace

nlohmann::json translation_doc(const Seq2Seq& m, const data::Tokenizer* tok, const AttendRequest& f) {
  const Seq2SeqCommon c = m.common();
  std::vector<int32_t> src = tok ? tok->encode(f.src) : parse_ids(f.src, c.src_vocab, "--src");
  if (tok) src.push_back(c.eos_id);  // the model's source is x + eos, as in training
  check(!src.empty(), "--src is empty");
  std::vector<int32_t> tgt;
  if (!f.tgt.empty()) tgt = tok ? tok->encode(f.tgt) : parse_ids(f.tgt, c.tgt_vocab, "--tgt");
  else tgt = search(m, {src}, f.search).front().front().tokens;
  std::vector<int32_t> tgt_in = {c.bos_id}, outputs = tgt;
  tgt_in.insert(tgt_in.end(), tgt.begin(), tgt.end());
  // A searched translation that fills every position was cut there, eos never chosen: its last
  // token was output at the last position, and no position is left to read it (nor an eos to show).
  if (f.tgt.empty() && static_cast<int64_t>(tgt.size()) >= c.max_len) tgt_in.pop_back();
  else outputs.push_back(c.eos_id);
  check(static_cast<int64_t>(std::max(src.size(), tgt_in.size())) <= c.max_len, "the sentence is longer than the model's max_len ", c.max_len);
  const AttentionMaps maps = teacher_forced_attention(m, src, tgt_in);
  const std::vector<std::string> s = token_strings(tok, src), t = token_strings(tok, tgt_in);
  nlohmann::json doc = {{"kind", m.kind() == ModelKind::rnn ? "rnn" : "transformer"}, {"model", f.model}};
  doc["source"] = {{"text", f.src}, {"tokens", s}};
  doc["target"] = {{"text", tok ? tok->decode(tgt) : format_ids(tgt)}, {"tokens", t},
                   {"outputs", token_strings(tok, outputs)}, {"given", !f.tgt.empty()}};
  doc["stacks"] = nlohmann::json::array();
  if (!maps.encoder_self.empty())
    doc["stacks"].push_back(stack_json("encoder_self", "Encoder self-attention", maps.encoder_self, s, s, {"source", "source"}, f));
  if (!maps.decoder_self.empty())
    doc["stacks"].push_back(stack_json("decoder_self", "Decoder self-attention (masked)", maps.decoder_self, t, t, {"target", "target"}, f));
  doc["stacks"].push_back(stack_json("cross", m.kind() == ModelKind::rnn ? "Attention over the source (alpha_t)" : "Encoder-decoder attention",
                                     maps.cross, t, s, {"target", "source"}, f));
  return doc;
}

nlohmann::json classifier_doc(const ClassifierModel& m, const AttendRequest& f) {
  check(f.tgt.empty(), "--tgt applies to translation models, not to a classifier");
  check(m.model.config.head_split == HeadSplit::standard, f.model, ": head_split '", name(m.model.config.head_split),
        "' attends over rows of a reshaped memory, not over positions: nothing to draw per token");
  const ClassifierConfig& c = m.model.config;
  std::vector<std::string> tokens = m.vocab.split(f.src);
  if (c.pooling == Pooling::cls) tokens.insert(tokens.begin(), "<CLS>");
  if (static_cast<int64_t>(tokens.size()) > c.pad_size) tokens.resize(static_cast<size_t>(c.pad_size));
  check(!tokens.empty(), "--src has no tokens");
  AttentionMaps maps;
  Tensor p;
  {
    NoGrad no_grad;
    p = softmax(classifier_logits(m.model, encode_texts(m, {f.src}), Context{}, &maps)).value();
  }
  int64_t best = 0;
  for (int64_t k = 1; k < p.size(1); ++k)
    if (p.data<float>()[k] > p.data<float>()[best]) best = k;
  nlohmann::json doc = {{"kind", "classifier"}, {"model", f.model}};
  doc["source"] = {{"text", f.src}, {"tokens", tokens}};
  doc["prediction"] = {{"label", m.labels[static_cast<size_t>(best)]}, {"probability", p.data<float>()[best]}};
  doc["stacks"] = {stack_json("encoder_self", "Encoder self-attention", maps.encoder_self, tokens, tokens,
                              {"source", "source"}, f)};
  return doc;
}

namespace {

bool parse_flags(int argc, char** argv, AttendFlags& flags) {
  AttendRequest& f = flags.request;
  CLI::App args{"Writes every attention weight of a model on one sentence: a self-contained HTML page (hover or\n"
                "click a token to see where it attends; heatmaps of every layer and head; a per-head summary), a\n"
                "static SVG of the heatmaps, or JSON. Translation models: encoder self-attention, masked decoder\n"
                "self-attention and encoder-decoder attention over --tgt, or over the model's own translation\n"
                "(--beam) when --tgt is absent; RNN models: the attention over the source at each step;\n"
                "classifiers: the encoder's self-attention and the predicted label.",
                "attn attend"};
  describe(args, "attn attend --model runs/ende --src \"The animal didn't cross the street because it was too "
                 "tired\" --output animal.html");
  add_model(args, f.model, "model directory: a translation model or a classifier");
  args.add_option("--src", f.src, "the source sentence (or the classifier's text)")->required();
  args.add_option("--tgt", f.tgt, "the target, teacher-forced (default: the model's own translation)");
  add_text(args, "--output", flags.output, "file to write (default: standard output)");
  args.add_option("--format", flags.format, "html (default), svg or json");
  add_int(args, "--layer", f.layer, 0, 1 << 16, "only this layer, 1-based (0: all)");
  add_int(args, "--head", f.head, 0, 1 << 16, "only this head, 1-based (0: all)");
  args.add_flag("--ids", f.ids, "--src and --tgt are space-separated token ids (no eos added)");
  f.search.beam = 1;  // greedy unless asked
  add_beam(args, f.search.beam);
  add_threads(args, flags.threads, "1");
  if (!parse(args, argc, argv)) return false;
  check(flags.format == "html" || flags.format == "svg" || flags.format == "json",
        "--format must be html, svg or json, got '", flags.format, "'");
  return true;
}

// The document of the model directory `f.model`, loaded in fp32.
nlohmann::json attend_doc(const AttendRequest& f) {
  const nlohmann::json cfg = read_json_file(f.model + "/config.json");
  if (cfg.value("task", "") == "classification") {
    check(!f.ids, "--ids applies to translation models; a classifier reads text");
    ClassifierModel m = load_classifier(f.model);
    prepare(m.model, Precision::fp32, Use::inference);
    return classifier_doc(m, f);
  }
  std::optional<TranslationModel> text_model;
  if (!f.ids) text_model.emplace(load_translation_model(f.model));
  Seq2Seq m = f.ids ? load_seq2seq(f.model) : text_model->model;
  prepare(m, Precision::fp32, Use::inference);
  return translation_doc(m, f.ids ? nullptr : &text_model->tokenizer, f);
}

}  // namespace

int run_attend(int argc, char** argv) {
  AttendFlags f;
  if (!parse_flags(argc, argv, f)) return 0;
  set_threads(f.threads);
  const nlohmann::json doc = attend_doc(f.request);
  const std::string text = f.format == "json"  ? doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                           : f.format == "svg" ? attend_svg(doc)
                                               : attend_html(doc);
  if (f.output.empty()) std::fputs(text.c_str(), stdout);
  else io::write_file_atomic(f.output, text);
  return 0;
}

}  // namespace attn::cli
