// Hugging Face Marian directories (transformers' MarianMTModel: the 1,000+ OPUS-MT models) read
// as attn Transformers. A Marian model is the paper's post-LN Transformer with
//   - no LayerNorm after either stack (final_norm false);
//   - sinusoidal positions with every sin in the first half of the vector and every cos in the
//     second (positions sinusoidal_halves), from position 0, not stored in the weights;
//   - swish (Marian's default) or GELU in the FFN;
//   - q, k and v as three projections (fused here into in_proj, q first);
//   - a bias of the output layer kept apart from it (final_logits_bias: generator.bias here);
//   - the decoder started on the pad token (decoder_start_token_id: bos_id here), eos 0.
// Its vocabulary (vocab.json, source.spm and target.spm) is read by the tokenizer, not here.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/models/transformer.h"

namespace attn {

// Whether dir/config.json says "model_type": "marian".
bool is_hf_marian(const std::string& dir);

// The attn configuration of a MarianConfig (config.json); an unsupported value is an error naming
// `source`, the key and the value.
TransformerConfig hf_marian_config(const nlohmann::json& config, const std::string& source);

// transformers' state_dict keys -> attn's (models/transformer.h), q, k and v fused; every tensor
// must be used, and every one attn needs present. `source` names the file for messages.
std::map<std::string, Tensor> hf_marian_tensors(const TransformerConfig& c, std::map<std::string, Tensor> hf,
                                                const std::string& source);

// dir/config.json and dir/model.safetensors (pytorch_model.bin is refused: save it with
// safe_serialization=True).
Transformer import_hf_marian(const std::string& dir);

// The tokens dir/generation_config.json never lets generate() output (its bad_words_ids of one
// token each: OPUS-MT's pad), for config.json's "suppress_ids"; none without the file. A
// sequence of several tokens is an error naming the file (attn suppresses single tokens).
std::vector<int32_t> hf_suppressed_tokens(const std::string& dir);

}  // namespace attn
