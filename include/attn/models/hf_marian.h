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

// An OPUS-MT model's generation settings, read as transformers does: generation_config.json, or
// without it the generation keys of config.json (GenerationConfig.from_model_config), each
// absent key at GenerationConfig's default (num_beams 1, max_length 20, ...):
//   - translate_defaults (translate/model_defaults.h): search_rules transformers, beam_size
//     (num_beams), length_penalty, early_stopping, renormalize_logits, eos_at_max_len
//     (forced_eos_token_id is the eos), max_decoding_length (max_new_tokens, or max_length less
//     the decoder's start token; within the positions), min_decoding_length (min_length less the
//     start token), no_repeat_ngram_size;
//   - suppressed: bad_words_ids of one token each (OPUS-MT's pad), config.json's "suppress_ids".
// A setting whose search attn does not reproduce (sampling, beam groups, a repetition penalty on
// logits, bad words of several tokens, early_stopping "never") is an error naming the file and key.
struct HfGeneration {
  nlohmann::json translate_defaults = nlohmann::json::object();
  std::vector<int32_t> suppressed;
};
HfGeneration hf_generation(const std::string& dir, const TransformerConfig& c);

// A Marian directory's tokenizer as an attn model keeps it: the files to copy beside the weights
// (source.spm, target.spm, vocab.json, and target_vocab.json with separate_vocabs) and config.json's
// "tokenizer" object naming them (decode/text.h), with MarianTokenizer's rules: its special
// tokens (tokenizer_config.json's eos/unk/pad tokens), language codes, and
// clean_up_tokenization_spaces. `entry` is null when the directory has no source.spm (the model
// then reads and writes token ids).
struct HfTokenizer {
  nlohmann::json entry;
  std::vector<std::string> files;
};
HfTokenizer hf_marian_tokenizer(const std::string& dir);

}  // namespace attn
