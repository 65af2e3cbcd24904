// Crash-safe checkpoints. A checkpoint is a directory DIR/checkpoints/step-00001234/ holding
// model.safetensors (the parameters), optimizer.safetensors (Adam's moments) and state.json
// (step, random streams, data position, clocks: whatever the trainer needs to continue exactly).
// It is written into a temporary directory, every file fsynced, then renamed into place and the
// parent fsynced: after a kill -9 at any moment, every step-* directory is complete.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/train/adam.h"

namespace attn {

// Writes the checkpoint of `step` under root/checkpoints/ and deletes all but the newest `keep`
// (keep <= 0 keeps all). Returns its path.
std::string save_checkpoint(const std::string& root, int64_t step, const Adam& adam,
                            const nlohmann::json& state, int keep);

// The newest complete checkpoint under root/checkpoints/, or "" if there is none.
std::string latest_checkpoint(const std::string& root);
// Every complete checkpoint, oldest first.
std::vector<std::string> list_checkpoints(const std::string& root);

// Restores parameters and Adam's moments in place (names and shapes must match; errors name the
// file and tensor) and returns state.json.
nlohmann::json load_checkpoint(const std::string& path, Adam& adam);

}  // namespace attn

namespace attn {

// The element-wise mean of the parameters of `paths` (model.safetensors of each; all must hold
// the same tensors), summed in double.
std::map<std::string, Tensor> average_checkpoints(const std::vector<std::string>& paths);

}  // namespace attn
