// A model is a directory (as in CTranslate2): config.json, model.safetensors, and later the
// tokenizer's files. Weights are read through mmap and written atomically.
//
// Interchange with PyTorch: torch_ref.py's directory holds config.json (its own keys) and
// weights.npz (its state_dict, tied keys included).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "attn/models/transformer.h"

namespace attn {

Transformer load_transformer(const std::string& dir);
// Writes config.json and model.safetensors (tied parameters once, under their first key).
// Keys of `extra` (e.g. "tokenizer") are added to config.json.
void save_transformer(const Transformer& m, const std::string& dir,
                      const nlohmann::json& extra = nlohmann::json::object());

Transformer import_torch(const std::string& ref_dir);
void export_torch(const Transformer& m, const std::string& ref_dir);

// The config.json of a model directory, parsed; errors name the file.
nlohmann::json read_json_file(const std::string& path);

}  // namespace attn
