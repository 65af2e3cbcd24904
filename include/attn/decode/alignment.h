// Word alignment read from the encoder-decoder attention (Marian's --alignment): the weights of
// one layer, heads averaged, of a teacher-forced pass over the final hypothesis.
//
// Target token j (0-based, eos left out) is the decoder position fed y_{j-1} (bos for j = 0) that
// predicts y_j; its row is that position's attention over the source tokens. The source's eos
// column is left out, so a row sums to at most 1 (eos is where many heads park their weight).
//   hard: for each target token j, the source token i of most weight: the pair "i-j";
//   soft: the rows themselves.
// Over whitespace words (words = true): a target word's row is the mean of its tokens' rows, a
// source word's column the sum of its tokens' columns; hard links are then taken over words.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attn/models/attention_maps.h"

namespace attn {

using Matrix = std::vector<std::vector<float>>;

// The layer alignments are read from by default: the second-to-last (1-based; 1 with one layer).
int default_alignment_layer(int layers);

// Rows for the first tgt_tokens decoder positions, columns for the first src_tokens source
// positions, of cross-attention layer `layer` (1-based) of maps (batch row 0), heads averaged.
Matrix alignment_matrix(const AttentionMaps& maps, int layer, int64_t src_tokens, int64_t tgt_tokens);

// For each target row j, the column of most weight (ties: the first): pairs (source i, target j).
std::vector<std::pair<int64_t, int64_t>> hard_alignment(const Matrix& a);

// Word index of each SentencePiece piece: a piece starting with U+2581 ("▁") begins a word.
std::vector<int64_t> words_of_pieces(const std::vector<std::string>& pieces);
// The matrix over words: rows averaged over each target word's tokens, columns summed over each
// source word's tokens. src_word[i] / tgt_word[j]: the word of token i / j (non-decreasing from 0).
Matrix word_matrix(const Matrix& a, const std::vector<int64_t>& src_word, const std::vector<int64_t>& tgt_word);

// "0-0 1-2 2-1": source-target pairs, in target order.
std::string format_hard(const std::vector<std::pair<int64_t, int64_t>>& links);
// Marian's soft format: rows separated by spaces, a row's weights by commas ("0.91,0.05 0.10,0.85").
std::string format_soft(const Matrix& a);

}  // namespace attn
