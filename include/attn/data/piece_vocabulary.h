// A vocabulary of its own between SentencePiece's pieces and a model's token ids, as the models
// other toolkits made carry one: OPUS-MT's vocab.json ({"piece": id}, transformers'
// MarianTokenizer), CTranslate2's vocabulary.json / shared_vocabulary.json (a list of pieces) or
// vocabulary.txt (a piece a line). Token id i is pieces[i]; the SentencePiece model only cuts text
// into pieces and glues pieces back into text.
//
// Its rules are MarianTokenizer's (transformers 4.46, tokenization_marian.py and
// tokenization_utils.py), which CTranslate2's and Argos' use of SentencePiece agrees with on
// ordinary text:
//   encode: the text is cut at each special token written in it ("</s>" is the eos token, not
//     four characters); each remaining part loses a language code ">>fr<<" (regex ">>.+<<") and,
//     when the code is at its start, begins with the code's own token; the part's SentencePiece
//     pieces follow, a piece not in the vocabulary becoming unk;
//   decode: special tokens are skipped, the pieces are glued by SentencePiece, "▁" becomes a
//     space and the text is stripped; with clean_up_spaces, transformers' clean_up_tokenization
//     (" ." -> ".", " n't" -> "n't", ...).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attn::data {

struct VocabularyRules {
  std::vector<std::string> specials = {"</s>", "<unk>", "<pad>"};  // whole tokens, skipped when decoding
  std::string unk = "<unk>";    // the token of a piece the vocabulary lacks
  bool language_codes = false;  // ">>xx<<" codes (MarianTokenizer's language_code_re)
  bool clean_up_spaces = false; // tokenizer_config.json's clean_up_tokenization_spaces
};

struct PieceVocabulary {
  std::vector<std::string> pieces;                  // id -> piece
  std::unordered_map<std::string, int32_t> ids;     // piece -> id
  std::string source;                               // the file it came from, for messages

  int32_t size() const { return static_cast<int32_t>(pieces.size()); }
  // The id of `piece`, or -1.
  int32_t find(const std::string& piece) const;
};

// Reads a vocabulary file: JSON {"piece": id, ...} with ids 0 .. n-1 each once (vocab.json), a
// JSON list of pieces (CTranslate2's vocabulary.json), or a piece a line (vocabulary.txt). Errors
// name the file and the entry.
PieceVocabulary read_piece_vocabulary(const std::string& path);
// From JSON text already read (`source` names it in messages).
PieceVocabulary piece_vocabulary_from_json(std::string_view text, const std::string& source);

// transformers' clean_up_tokenization: the spaces English tokenisers put before punctuation and
// clitics removed.
std::string clean_up_tokenization(std::string text);

// Text cut where a special token is written in it: (part, -1) for plain text, ("", id) for a
// special token; empty parts are dropped (transformers' tokens_trie.split, longest match first).
std::vector<std::pair<std::string, int32_t>> split_on_specials(const std::string& text, const PieceVocabulary& v,
                                                               const VocabularyRules& rules);

// MarianTokenizer.remove_language_code: the code at the start of `text` ("" when there is none)
// and the text with every match of ">>.+<<" removed.
std::pair<std::string, std::string> remove_language_code(const std::string& text);

}  // namespace attn::data
