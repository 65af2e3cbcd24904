// Interchange of the RNN encoder-decoder (`model: rnn`) with PyTorch: a directory holding
// config.json (the keys tests/rnn/torch_rnn.py's RnnSeq2Seq(c) reads) and weights.npz (its
// state_dict: attn's checkpoint keys, tied keys included), as `attn export-torch` / `import-torch`
// write and read for the Transformer (models/model_dir.h).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "attn/models/rnn_seq2seq.h"

namespace attn {

// torch_rnn.py's config dict of `c` (model "rnn").
nlohmann::json rnn_torch_config(const RnnConfig& c);

void export_torch_rnn(const RnnSeq2Seq& m, const std::string& ref_dir);
RnnSeq2Seq import_torch_rnn(const std::string& ref_dir);

}  // namespace attn
