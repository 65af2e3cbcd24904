// A model's parameters by checkpoint key, filled from the tensors of a file (safetensors, npz),
// with checks that name the file and the tensor at fault. The Transformer and the RNN
// encoder-decoder both load through it.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attn/autodiff/var.h"
#include "attn/models/transformer_config.h"
#include "attn/tensor/tensor.h"

namespace attn {

struct TensorSpec {
  std::string key;
  Shape shape;
};

// The tied keys of a seq2seq model and the key whose Var each shares (shared embeddings, tied
// output projection): the same for the Transformer and the RNN encoder-decoder.
std::vector<std::pair<std::string, std::string>> tied_aliases(bool share_embeddings, bool tie_output);

// Fills `named` with the f32 tensors `specs` lists (each checked for presence, dtype and shape),
// makes every alias the same Var as its target (a stored alias must equal its target: tied
// weights), and fails on any tensor the configuration does not use. A tensor in dense storage of
// attn's own that nothing but `tensors` holds (a map straight from a loader) is moved into
// `named`; any other is copied, so that training, which updates the parameters in place, never
// writes into a tensor the caller still holds or into a mapped file.
void load_named_tensors(const std::vector<TensorSpec>& specs,
                        const std::vector<std::pair<std::string, std::string>>& aliases,
                        std::map<std::string, Tensor>&& tensors, const std::string& source,
                        std::map<std::string, Var>& named);

// Fails naming source, key and the first index when the f32 tensor t holds a NaN or an infinity.
void check_finite(const Tensor& t, const std::string& key, const std::string& source);

// `t` itself if nothing else holds its storage and the storage is attn's own and exactly t's
// (then the caller's handle is the only one), else a dense copy: a parameter to own.
Tensor adopt_or_copy(Tensor&& t);

}  // namespace attn
