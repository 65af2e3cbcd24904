// Pre-trained embedding tables for the classifier, aligned to its vocabulary:
//  - .npz (as seed 002's embedding_SougouNews.npz, key "embeddings", [vocab, dim]): rows are taken
//    as they are, row i for id i, so the table must have been built for this vocabulary; the only
//    array of the file is used when there is no "embeddings" key.
//  - word2vec text format ("token v_1 ... v_dim" per line, an optional "count dim" first line):
//    rows are matched by token; tokens of the vocabulary not in the file keep their row of `init`.
#pragma once

#include <string>

#include "attn/data/char_vocab.h"
#include "attn/tensor/tensor.h"

namespace attn::data {

// init: the model's table [vocab, dim]; the result has its shape. Also reports how many rows
// were found in the file.
Tensor load_embeddings(const std::string& path, const CharVocab& vocab, const Tensor& init, int64_t* found = nullptr);

}  // namespace attn::data
