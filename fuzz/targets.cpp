#include "targets.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

#include "attn/data/char_vocab.h"
#include "attn/data/classification_data.h"
#include "attn/data/text_file.h"
#include "attn/data/tokenizer.h"
#include "attn/decode/id_lines.h"
#include "attn/error.h"
#include "attn/io/io.h"
#include "attn/io/yaml.h"
#include "attn/models/classifier_dir.h"
#include "attn/models/seq2seq.h"

namespace attn::fuzz {
namespace {

namespace fs = std::filesystem;

// A scratch folder of this process, for the loaders that read files; removed at exit.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("attn_fuzz_" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

const fs::path& scratch() {
  static const Scratch s;
  return s.dir;
}

std::string put(const std::string& name, std::string_view bytes) {
  std::string path = (scratch() / name).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

// A finding that is no crash: the fuzzer reports it as one (an escaping exception aborts).
void require(bool ok, const char* what) {
  if (!ok) throw std::logic_error(std::string("fuzz property broken: ") + what);
}

bool same(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  Tensor x = a.contiguous(), y = b.contiguous();
  return x.nbytes() == 0 || std::memcmp(x.raw_data(), y.raw_data(), static_cast<size_t>(x.nbytes())) == 0;
}

bool same(const std::map<std::string, Tensor>& a, const std::map<std::string, Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [k, t] : a) {
    auto it = b.find(k);
    if (it == b.end() || !same(t, it->second)) return false;
  }
  return true;
}

// Runs `body`; a refusal with attn::Error is the expected outcome for most inputs.
template <typename F>
void refusal_allowed(F&& body) {
  try {
    body();
  } catch (const Error&) {
  }
}

}  // namespace

void safetensors(std::string_view bytes) {
  refusal_allowed([&] {
    std::map<std::string, std::string> meta;
    std::string path = put("in.safetensors", bytes);
    auto borrowed = io::load_safetensors(path, &meta);
    auto copied = io::load_safetensors_copied(path);
    require(same(borrowed, copied), "borrowed and copied loads differ");
    // What loads, saves and loads back the same.
    std::string again = (scratch() / "again.safetensors").string();
    io::save_safetensors(again, copied, meta);
    std::map<std::string, std::string> meta2;
    require(same(io::load_safetensors(again, &meta2), copied), "safetensors round trip changed tensors");
  });
}

void npz(std::string_view bytes) {
  refusal_allowed([&] {
    auto arrays = io::load_npz(put("in.npz", bytes));
    std::string again = (scratch() / "again.npz").string();
    io::save_npz(again, arrays);
    require(same(io::load_npz(again), arrays), "npz round trip changed arrays");
  });
}

void npy(std::string_view bytes) {
  refusal_allowed([&] {
    Tensor t = io::parse_npy(bytes, "fuzz.npy");
    require(same(io::parse_npy(io::npy_bytes(t), "again.npy"), t), "npy round trip changed the array");
  });
}

void model_config(std::string_view bytes) {
  // A model directory with this config.json and a small vocab.txt but no weights: whatever the
  // config says, loading ends in a refusal (at the latest: no model.safetensors).
  put("config.json", bytes);
  put("vocab.txt", "#level=char\n<PAD>\n<UNK>\n<CLS>\na\nb\n");
  std::error_code ec;
  fs::remove(scratch() / "model.safetensors", ec);
  const std::string dir = scratch().string();
  refusal_allowed([&] { load_seq2seq(dir); });
  refusal_allowed([&] { load_classifier(dir); });
}

void yaml(std::string_view bytes) {
  refusal_allowed([&] { io::parse_yaml(std::string(bytes), "fuzz.yaml"); });
}

void sentencepiece(std::string_view bytes) {
  refusal_allowed([&] {
    data::Tokenizer tok = data::Tokenizer::from_serialized(std::string(bytes), "fuzz.model");
    // A model that loads must work on ordinary text.
    std::vector<int32_t> ids = tok.encode("Ein kleiner Test, 12 Wörter: über alles.");
    for (int32_t id : ids) require(id >= 0 && id < tok.vocab_size(), "encode gave an id outside the vocabulary");
    tok.decode(ids);
    for (int32_t id = 0; id < std::min(tok.vocab_size(), 64); ++id) tok.piece(id);
  });
}

void tsv(std::string_view bytes) {
  refusal_allowed([&] {
    std::vector<data::LabelledText> rows = data::read_labelled(put("in.tsv", bytes));
    std::vector<std::string> labels = data::label_set(rows);
    std::vector<int32_t> ids = data::label_ids(rows, labels, "in.tsv");
    require(ids.size() == rows.size(), "one class id per row");
    std::vector<std::string> texts;
    for (const auto& r : rows) texts.push_back(r.text);
    for (const char* level : {"char", "word"}) {
      data::VocabOptions o;
      o.level = level;
      o.max_size = 50;
      data::CharVocab v = data::build_vocab(texts, o);
      data::ClassificationSet s = data::encode_set(rows, labels, v, 8, true, "in.tsv");
      require(s.size() == static_cast<int64_t>(rows.size()) && s.ids.size() == rows.size() * 8, "set shape");
      for (int32_t id : s.ids) require(id >= 0 && id < v.size(), "token id outside the vocabulary");
    }
  });
}

void ids(std::string_view bytes) {
  refusal_allowed([&] {
    std::vector<std::string> lines = data::split_lines(bytes, "in.ids");
    for (size_t i = 0; i < lines.size(); ++i) {
      std::vector<int32_t> v = parse_ids(lines[i], 8000, "in.ids:" + std::to_string(i + 1));
      for (int32_t id : v) require(id >= 0 && id < 8000, "id out of range accepted");
      require(parse_ids(format_ids(v), 8000, "again") == v, "ids round trip changed the ids");
    }
  });
}

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {
      {"safetensors", safetensors}, {"npz", npz}, {"npy", npy}, {"model_config", model_config}, {"yaml", yaml},
      {"sentencepiece", sentencepiece}, {"tsv", tsv}, {"ids", ids}, {"http", http}};
  return all;
}

}  // namespace attn::fuzz
