// The attention weights of a translation model on one sentence pair, teacher-forced: the source
// through the encoder and the given target (bos first) through the decoder, every weight kept
// (models/attention_maps.h). What attn attend draws and word alignments are read from.
#pragma once

#include <cstdint>
#include <vector>

#include "attn/models/attention_maps.h"
#include "attn/models/seq2seq.h"

namespace attn {

// src: the encoder's ids (eos included if the model expects it); tgt_in: bos + target ids.
// Transformer: every layer of encoder_self, decoder_self and cross, each [1, heads, *, *].
// RNN: cross holds one map [1, 1, tgt_len, src_len], alpha_t of each decoding step t as row t.
AttentionMaps teacher_forced_attention(const Seq2Seq& m, const std::vector<int32_t>& src,
                                       const std::vector<int32_t>& tgt_in);
AttentionMaps teacher_forced_attention(const Transformer& m, const std::vector<int32_t>& src,
                                       const std::vector<int32_t>& tgt_in);
AttentionMaps teacher_forced_attention(const RnnSeq2Seq& m, const std::vector<int32_t>& src,
                                       const std::vector<int32_t>& tgt_in);

}  // namespace attn
