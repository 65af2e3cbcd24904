// CTranslate2 model directories (model.bin, config.json and the vocabularies) read as attn
// Transformers: what `ct2-transformers-converter` makes of an OPUS-MT model, and the model/ of an
// Argos Translate package. The spec (CTranslate2's specs/transformer_spec.py) maps onto attn's
// Transformer (models/transformer.h):
//   - encoder/layer_N/self_attention/linear_0 is q, k and v fused (attn's in_proj), linear_1 its
//     output; decoder/layer_N/attention/linear_0 is the cross-attention's q and linear_1 its k and
//     v (stacked into in_proj), linear_2 its output; ffn/linear_0 and linear_1 the FFN;
//     self_attention/layer_norm, attention/layer_norm and ffn/layer_norm the sub-layers' norms;
//   - pre_norm, activation, num_heads, scale_embeddings and an encoder/decoder layer_norm (the
//     stacks' final norms) are scalars and variables of the spec;
//   - a stored position table (position_encodings/encodings) is attn's table of learned
//     positions; without one, CTranslate2's computed sinusoid (OpenNMT-tf's: from position 1, sin
//     half and cos half) is computed into that table;
//   - int8 weights (with their per-row weight_scale), int16, float16 and bfloat16 ones are read
//     back to float32 (w = q / scale): the model computes in the precision asked when translating.
// CTranslate2's vocabularies have no padding token (the Marian converter drops OPUS-MT's); attn
// pads batches with one, so the model gains id V: a zero embedding row and an output bias of
// -1e30 (exp() of it is 0 in float32), which leaves every distribution over the other V tokens as
// CTranslate2 computes it.
// A decoder that starts from a zero embedding (decoder/start_from_zero_embedding, Marian's) starts
// on that padding id, whose embedding is zero.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/io/ct2_model_bin.h"
#include "attn/models/transformer.h"

namespace attn {

// Whether dir holds model.bin (config.json, which CTranslate2 writes since 3.0, is optional).
bool is_ct2_dir(const std::string& dir);

// The model of a CTranslate2 directory, its tokenizer entry (decode/text.h; null when the
// directory has no SentencePiece model: source.spm and target.spm as `--copy_files` puts them,
// or `sentencepiece` given), the files that entry names, and CTranslate2's search as attn's
// translate_defaults (translate/model_defaults.h): translate_batch's defaults (beam 2, length
// penalty 1, min_decoding_length 1, log-probs renormalised after the masking, the output cut at
// max_decoding_length 256 or the position table, no eos forced) and its rules for finishing
// hypotheses (search_rules "ctranslate2", decode/search.h). An unsupported spec names the file
// and the variable.
struct Ct2Model {
  Transformer model;
  nlohmann::json tokenizer;          // null: token ids in and out
  std::vector<std::pair<std::string, std::string>> files;  // (path, name in the model directory) to copy
  nlohmann::json translate_defaults;
};
// `sentencepiece`: the path of a SentencePiece model both sides share ("": dir's source.spm and
// target.spm, if it has them).
Ct2Model import_ct2(const std::string& dir, const std::string& sentencepiece = "");

// The configuration of a model.bin (exposed for tests). `pad`: the id of a padding token the
// vocabulary has (config.json's "pad_token", which attn export writes), or -1: one is added.
TransformerConfig ct2_config(const io::Ct2ModelBin& m, const nlohmann::json& config, const std::string& dir,
                             int32_t pad = -1);

// attn export --to ct2: the CTranslate2 directory of an attn Transformer model directory, which
// ctranslate2.Translator runs and import_ct2 reads back to the same tensors: model.bin (float32;
// attn's in_proj as the fused linear_0, cross-attention's rows split into q and k/v, the position
// table stored, shared weights as aliases), config.json (the tokens of bos, eos, unk and the
// decoder start; add_source_eos as attn's tokenizer appends eos; attn's "pad_token"),
// shared_vocabulary.json (or source_ and target_vocabulary.json), and the SentencePiece models as
// source.spm and target.spm. Written under a temporary name and renamed into place.
void export_ct2(const std::string& model_dir, const std::string& out_dir);
// The model.bin variables of a Transformer (exposed for tests).
io::Ct2ModelBin ct2_model_bin(const Transformer& m);

}  // namespace attn
