// Model files in a smaller precision (`attn convert --precision int8|bf16`). The weights of the
// linear layers, the only tensors an int8 or bf16 model multiplies in that precision, are stored
// as that precision computes with them:
//   int8  W_q = round(W / s) per output row in I8, and "<name>.scale" [out] in F32, with s and
//         the range of W_q exactly those inference quantization uses (kernels/gemm_int8.h);
//   bf16  W rounded to BF16.
// Everything else (embeddings, which are looked up, layer norms, biases) stays F32. A loader
// widens the stored weights back to F32 (q x s; the bf16 value): prepared in the stored precision
// they convert again to exactly the stored values (q x s is exact in f32 and quantizes back to q
// and s, kernels/quantize_s8_impl.h), so a converted file computes the same bits as the F32
// model quantized at load. config.json records "precision" (and int8's "int8_weight_max").
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "attn/kernels/precision.h"
#include "attn/tensor/tensor.h"

namespace attn {

// True for the tensor names of linear layers' weights (in_proj_weight, out_proj.weight,
// linear1/2.weight, generator.weight, fc.weight, the RNN's bridge, readout and attention.U).
bool is_linear_weight(const std::string& name);

// The tensors of a model, in F32, as a file in precision p (int8 or bf16) stores them; int8 rows
// have at most qmax in magnitude (int8_weight_max() by default: the range this CPU computes in).
std::map<std::string, Tensor> to_stored_precision(const std::map<std::string, Tensor>& tensors, Precision p,
                                                  int qmax);

// Widens a loaded file's I8 (with their ".scale") and BF16 weights to F32 in place; F32 tensors
// are left as they are. `source` names the file in errors (an I8 tensor without its scale...).
void from_stored_precision(std::map<std::string, Tensor>& tensors, const std::string& source);

// A model directory's model.safetensors at `path`, its stored weights widened to F32.
std::map<std::string, Tensor> load_model_weights(const std::string& path);

// The precision a model directory's config.json records ("precision"), fp32 when it has none.
Precision stored_precision(const nlohmann::json& config, const std::string& source);

}  // namespace attn
