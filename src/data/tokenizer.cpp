// Tokenizer over SentencePiece: load, train with attn's special ids, encode, decode.
#include "attn/data/tokenizer.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <unordered_map>
#include <utility>

#include "attn/data/text_file.h"
#include "attn/error.h"
#include "attn/tensor/random.h"

namespace attn::data {
namespace {

// Every model attn uses has these ids and pieces (pad first, so padding is id 0).
struct SpecialPiece {
  const char* what;
  int32_t id;
  const char* piece;
};
constexpr SpecialPiece kSpecials[] = {
    {"pad", kPadId, "<pad>"}, {"bos", kBosId, "<s>"}, {"eos", kEosId, "</s>"}, {"unk", kUnkId, "<unk>"}};

// A list for a comma-separated trainer flag; an item with a comma could not be passed.
std::string join_flag(const std::vector<std::string>& items, const char* flag) {
  std::string out;
  for (const auto& item : items) {
    check(item.find(',') == std::string::npos, "tokenizer training: ", flag, " item '", item,
          "' contains a comma, which SentencePiece's list flag cannot carry");
    check(!item.empty(), "tokenizer training: empty item in ", flag);
    if (!out.empty()) out += ',';
    out += item;
  }
  return out;
}

// The non-empty lines of all inputs (UTF-8 checked), or a seeded sample of input_sentence_size
// of them. attn samples itself: SentencePiece 0.1.97's own sampling ignores the seed.
std::vector<std::string> training_lines(const TokenizerTrainOptions& o) {
  std::vector<std::string> all;
  for (const auto& path : o.inputs) {
    for (auto& line : read_lines(path))
      if (!line.empty()) all.push_back(std::move(line));
  }
  const auto n = static_cast<int64_t>(all.size());
  if (o.input_sentence_size == 0 || o.input_sentence_size >= n) return all;
  // Partial Fisher-Yates: the first k places get a uniform sample without replacement.
  std::vector<int64_t> index(n);
  std::iota(index.begin(), index.end(), 0);
  Rng rng(o.seed);
  const int64_t k = o.input_sentence_size;
  for (int64_t i = 0; i < k; ++i)
    std::swap(index[i], index[i + static_cast<int64_t>(rng.below(static_cast<uint64_t>(n - i)))]);
  std::sort(index.begin(), index.begin() + k);  // keep the file order
  std::vector<std::string> sample(k);
  for (int64_t i = 0; i < k; ++i) sample[i] = std::move(all[index[i]]);
  return sample;
}

// Feeds lines held in memory to the SentencePiece trainer.
class LineIterator : public sentencepiece::SentenceIterator {
 public:
  explicit LineIterator(std::vector<std::string> lines) : lines_(std::move(lines)) {}
  bool empty() const { return lines_.empty(); }
  bool done() const override { return next_ >= lines_.size(); }
  void Next() override { ++next_; }
  const std::string& value() const override { return lines_[next_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  std::vector<std::string> lines_;
  size_t next_ = 0;
};

void check_options(const TokenizerTrainOptions& o) {
  check(!o.inputs.empty(), "tokenizer training: no input files");
  check(!o.model_prefix.empty(), "tokenizer training: model_prefix is empty");
  check(o.model_type == "unigram" || o.model_type == "bpe", "tokenizer training: model_type '",
        o.model_type, "' is not 'unigram' or 'bpe'");
  int64_t reserved = 4 + static_cast<int64_t>(o.user_defined_symbols.size());
  check(o.vocab_size > reserved, "tokenizer training: vocab_size ", o.vocab_size,
        " leaves no room beside ", reserved, " special and user-defined pieces");
  check(o.character_coverage > 0 && o.character_coverage <= 1,
        "tokenizer training: character_coverage ", o.character_coverage, " not in (0, 1]");
  check(o.input_sentence_size >= 0, "tokenizer training: input_sentence_size ",
        o.input_sentence_size, " is negative");
  check(o.threads >= 1, "tokenizer training: threads ", o.threads, " < 1");
}

void check_specials(const sentencepiece::SentencePieceProcessor& sp, const std::string& name) {
  const int got[] = {sp.pad_id(), sp.bos_id(), sp.eos_id(), sp.unk_id()};
  for (size_t k = 0; k < 4; ++k) {
    check(got[k] == kSpecials[k].id, "tokenizer ", name, ": ", kSpecials[k].what, " id is ", got[k],
          ", attn needs pad=0 bos=1 eos=2 unk=3 (train with --pad_id=0 --bos_id=1 --eos_id=2 "
          "--unk_id=3, or let attn train it)");
  }
}

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<sentencepiece::SentencePieceProcessor> sp, std::string name)
    : sp_(std::move(sp)), name_(std::move(name)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

namespace {

// SentencePiece reports most bad models through its status, but some (a piece of zero length,
// found by fuzzing) throw from inside its trie builder; both become attn's error naming `what`.
template <typename Load>
sentencepiece::util::Status load_model(Load load, const std::string& what) {
  try {
    return load();
  } catch (const std::exception& e) {
    fail("tokenizer: cannot load SentencePiece model ", what, ": ", e.what());
  }
}

}  // namespace

Tokenizer Tokenizer::load(const std::string& path) {
  auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
  auto status = load_model([&] { return sp->Load(path); }, path);
  check(status.ok(), "tokenizer: cannot load SentencePiece model ", path, ": ", status.ToString());
  check_specials(*sp, path);
  return Tokenizer(std::move(sp), path);
}

Tokenizer Tokenizer::from_serialized(const std::string& bytes, const std::string& name) {
  auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
  auto status = load_model([&] { return sp->LoadFromSerializedProto(bytes); }, "from " + name);
  check(status.ok(), "tokenizer: cannot load SentencePiece model from ", name, ": ",
        status.ToString());
  check_specials(*sp, name);
  return Tokenizer(std::move(sp), name);
}

void Tokenizer::train(const TokenizerTrainOptions& o) {
  check_options(o);
  LineIterator lines(training_lines(o));
  check(!lines.empty(), "tokenizer training: the inputs have no non-empty lines");
  std::unordered_map<std::string, std::string> args = {
      {"model_prefix", o.model_prefix},
      {"vocab_size", std::to_string(o.vocab_size)},
      {"model_type", o.model_type},
      {"character_coverage", std::to_string(o.character_coverage)},
      {"num_threads", std::to_string(o.threads)},
      {"normalization_rule_name", o.normalization},
      {"minloglevel", o.verbose ? "0" : "2"},
  };
  for (const auto& s : kSpecials) {
    args[std::string(s.what) + "_id"] = std::to_string(s.id);
    args[std::string(s.what) + "_piece"] = s.piece;
  }
  if (!o.user_defined_symbols.empty())
    args["user_defined_symbols"] = join_flag(o.user_defined_symbols, "user_defined_symbols");

  auto status = sentencepiece::SentencePieceTrainer::Train(args, &lines);
  if (!status.ok() && status.ToString().find("required_chars") != std::string::npos)
    fail("tokenizer training (prefix ", o.model_prefix, "): a vocabulary of ", o.vocab_size,
         " pieces cannot hold every distinct character of the training text (Chinese has thousands): "
         "raise the vocabulary size or lower character_coverage. SentencePiece said: ", status.ToString());
  check(status.ok(), "tokenizer training (prefix ", o.model_prefix, "): ", status.ToString());
}

Tokenizer Tokenizer::with_vocabulary(const std::string& spm_path, PieceVocabulary vocabulary, VocabularyRules rules) {
  auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
  auto status = load_model([&] { return sp->Load(spm_path); }, spm_path);
  check(status.ok(), "tokenizer: cannot load SentencePiece model ", spm_path, ": ", status.ToString());
  check(vocabulary.find(rules.unk) >= 0, vocabulary.source, ": no unknown token \"", rules.unk,
        "\" (a piece the vocabulary lacks is read as it)");
  Tokenizer t(std::move(sp), spm_path + " with " + vocabulary.source);
  t.vocabulary_ = std::move(vocabulary);
  t.rules_ = std::move(rules);
  return t;
}

bool Tokenizer::same_as(const Tokenizer& other) const {
  if (serialized() != other.serialized() || (vocabulary_ != std::nullopt) != (other.vocabulary_ != std::nullopt))
    return false;
  return !vocabulary_ || (vocabulary_->pieces == other.vocabulary_->pieces &&
                          rules_.specials == other.rules_.specials && rules_.unk == other.rules_.unk &&
                          rules_.language_codes == other.rules_.language_codes &&
                          rules_.clean_up_spaces == other.rules_.clean_up_spaces);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  if (vocabulary_) return encode_with_vocabulary(text);
  std::vector<int> ids;
  auto status = sp_->Encode(text, &ids);
  check(status.ok(), "tokenizer ", name_, ": encode failed: ", status.ToString());
  return std::vector<int32_t>(ids.begin(), ids.end());
}

// data/piece_vocabulary.h's rules: specials written in the text, a language code, then pieces.
std::vector<int32_t> Tokenizer::encode_with_vocabulary(std::string_view text) const {
  const PieceVocabulary& v = *vocabulary_;
  const int32_t unk = v.find(rules_.unk);
  std::vector<int32_t> ids;
  for (auto& [part, special] : split_on_specials(std::string(text), v, rules_)) {
    if (special >= 0) {
      ids.push_back(special);
      continue;
    }
    auto [code, rest] = rules_.language_codes ? remove_language_code(part) : std::make_pair(std::string(), part);
    if (!code.empty()) ids.push_back(v.find(code) >= 0 ? v.find(code) : unk);
    std::vector<std::string> pieces;
    auto status = sp_->Encode(rest, &pieces);
    check(status.ok(), "tokenizer ", name_, ": encode failed: ", status.ToString());
    for (const std::string& p : pieces) {
      const int32_t id = v.find(p);
      ids.push_back(id >= 0 ? id : unk);
    }
  }
  return ids;
}

std::vector<std::string> Tokenizer::encode_pieces(std::string_view text) const {
  if (vocabulary_) {  // the vocabulary's pieces of the ids, so that pieces and ids agree one to one
    std::vector<std::string> pieces;
    for (int32_t id : encode_with_vocabulary(text)) pieces.push_back(vocabulary_->pieces[id]);
    return pieces;
  }
  std::vector<std::string> pieces;
  auto status = sp_->Encode(text, &pieces);
  check(status.ok(), "tokenizer ", name_, ": encode failed: ", status.ToString());
  return pieces;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  const int32_t n = vocab_size();
  for (size_t i = 0; i < ids.size(); ++i)
    check(ids[i] >= 0 && ids[i] < n, "tokenizer ", name_, ": decode: id ", ids[i], " at position ",
          i, " out of range for vocabulary ", n);
  if (vocabulary_) return decode_with_vocabulary(ids);
  std::string text;
  auto status = sp_->Decode(std::vector<int>(ids.begin(), ids.end()), &text);
  check(status.ok(), "tokenizer ", name_, ": decode failed: ", status.ToString());
  return text;
}

// MarianTokenizer.decode(skip_special_tokens=True): specials skipped, the pieces glued by
// SentencePiece, "▁" -> " ", stripped, then optionally transformers' clean-up.
std::string Tokenizer::decode_with_vocabulary(const std::vector<int32_t>& ids) const {
  std::vector<std::string> pieces;
  for (int32_t id : ids) {
    const std::string& p = vocabulary_->pieces[id];
    if (std::find(rules_.specials.begin(), rules_.specials.end(), p) == rules_.specials.end()) pieces.push_back(p);
  }
  std::string glued;
  auto status = sp_->Decode(pieces, &glued);
  check(status.ok(), "tokenizer ", name_, ": decode failed: ", status.ToString());
  std::string text;
  const std::string space = "\xe2\x96\x81";  // U+2581, SentencePiece's word boundary
  for (size_t i = 0; i < glued.size();) {
    if (glued.compare(i, 3, space) == 0) {
      text += ' ';
      i += 3;
    } else {
      text += glued[i++];
    }
  }
  const char* ws = " \t\n\r\f\v";
  const size_t first = text.find_first_not_of(ws);
  text = first == std::string::npos ? "" : text.substr(first, text.find_last_not_of(ws) - first + 1);
  return rules_.clean_up_spaces ? clean_up_tokenization(std::move(text)) : text;
}

int32_t Tokenizer::vocab_size() const { return vocabulary_ ? vocabulary_->size() : sp_->GetPieceSize(); }

std::string Tokenizer::piece(int32_t id) const {
  check(id >= 0 && id < vocab_size(), "tokenizer ", name_, ": piece id ", id,
        " out of range for vocabulary ", vocab_size());
  return vocabulary_ ? vocabulary_->pieces[id] : sp_->IdToPiece(id);
}

int32_t Tokenizer::piece_to_id(const std::string& piece) const {
  if (!vocabulary_) return sp_->PieceToId(piece);
  const int32_t id = vocabulary_->find(piece);
  return id >= 0 ? id : vocabulary_->find(rules_.unk);
}

std::string Tokenizer::serialized() const { return sp_->serialized_model_proto(); }

}  // namespace attn::data
