// A classifier model directory: config.json ({"task": "classification", "model": {...},
// "labels": [...], "vocab": "vocab.txt", ...}), model.safetensors and vocab.txt.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/data/char_vocab.h"
#include "attn/models/classifier.h"

namespace attn {

struct ClassifierModel {
  Classifier model;
  data::CharVocab vocab;
  std::vector<std::string> labels;  // class id -> label
};

// Writes the three files (atomically each). Keys of `extra` are added to config.json.
void save_classifier(const ClassifierModel& m, const std::string& dir,
                     const nlohmann::json& extra = nlohmann::json::object());
// Only the weights (the config and vocabulary are already there).
void save_classifier_weights(const Classifier& m, const std::string& dir);
ClassifierModel load_classifier(const std::string& dir);

// Encodes texts for the model: ids [n, pad_size] ([CLS] first with cls pooling).
Tensor encode_texts(const ClassifierModel& m, const std::vector<std::string>& texts);

}  // namespace attn
