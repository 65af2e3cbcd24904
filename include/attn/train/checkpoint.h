// Crash-safe checkpoints. A checkpoint is a directory DIR/checkpoints/step-00001234/ holding
// model.safetensors (the parameters), optimizer.safetensors (Adam's moments) and state.json
// (step, random streams, data position, clocks: whatever the trainer needs to continue exactly).
// It is written into a temporary directory, every file fsynced, then renamed into place and the
// parent fsynced: after a kill -9 at any moment, every step-* directory is complete.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/train/adam.h"

namespace attn {

// The checkpoints a run keeps unless told (train.keep_checkpoints of every task): the newest few, so a
// run can resume from one of them while a crash during a write leaves an older one whole.
inline constexpr int kKeepCheckpoints = 5;

// Writes the checkpoint of `step` under root/checkpoints/ and deletes all but the newest `keep`
// (keep <= 0 keeps all). `ema`, when not empty, is the weights' moving average (train/ema.h), kept
// in ema.safetensors. Returns its path.
std::string save_checkpoint(const std::string& root, int64_t step, const Adam& adam,
                            const nlohmann::json& state, int keep, const std::map<std::string, Tensor>& ema = {});

// The newest complete checkpoint under root/checkpoints/, or "" if there is none.
std::string latest_checkpoint(const std::string& root);
// Every complete checkpoint, oldest first.
std::vector<std::string> list_checkpoints(const std::string& root);

// Restores parameters and Adam's moments in place (names and shapes must match; errors name the
// file and tensor) and returns state.json.
nlohmann::json load_checkpoint(const std::string& path, Adam& adam);
// The checkpoint's ema.safetensors; empty when it has none (a run that started without an average).
std::map<std::string, Tensor> load_checkpoint_ema(const std::string& path);

// --resume's choice: tries `restore` on the newest checkpoint under root, then on the older ones
// while it throws (each refusal reported on stderr with its reason: a corrupt newest checkpoint
// does not lose the run). Returns the checkpoint restored, or "" when root has none (the caller
// says "nothing to resume"); throws, naming them, when every checkpoint fails.
std::string restore_newest_valid(const std::string& root, const std::function<void(const std::string&)>& restore);

// The first key, dotted ("heads", "rnn.cell"), whose value differs between two JSON objects
// (a key missing on one side differs); "" when they are equal.
std::string first_changed_key(const nlohmann::json& saved, const nlohmann::json& requested,
                              const std::string& prefix = "");

// Refuses to resume a run whose model settings changed: `saved` (the run's config.json model) and
// `requested` (this command line's) must agree; the error names the key, both values and `source`.
void check_same_model(const nlohmann::json& saved, const nlohmann::json& requested, const std::string& source,
                      const std::string& key_prefix);

}  // namespace attn

namespace attn {

// The element-wise mean of the parameters of `paths` (model.safetensors of each; all must hold
// the same tensors), summed in double.
std::map<std::string, Tensor> average_checkpoints(const std::vector<std::string>& paths);

}  // namespace attn
