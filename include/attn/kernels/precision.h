// The compute precision of the model's matrix products (linear, linear_relu, matmul in
// include/attn/ops/matmul.h):
//   fp32  every product in f32 (the default; bit-identical to attn without this setting)
//   bf16  operands rounded to bfloat16, products accumulated in f32, outputs f32. In training
//         the master weights, gradients, Adam, layer norm, softmax and the loss stay f32: each
//         weight is rounded once per forward and that copy serves the backward.
//   int8  inference only: weights quantized to s8 per output row, activations per row at each
//         call (dynamic), s32 accumulation (VNNI/AMX through oneDNN), f32 outputs.
//
// The setting is per thread, like the autodiff tape: a PrecisionScope sets it for the calling
// thread for its lifetime; threads with no scope use the process-wide default (fp32 unless
// set_default_precision changed it). The ops run on the thread that calls them, so a scope
// around a training step or a decode covers all of its products.
//
// Inference converts each weight once when the scope is given a PackedWeights cache
// (include/attn/kernels/gemm_int8.h): the caller owns it beside the loaded model and must not
// change the weights while it is installed. Without one (training, validation during training) weights are
// converted at every forward, so a weight that changes is never served stale.
#pragma once

#include <string_view>
#include <vector>

namespace attn {

enum class Precision { fp32, bf16, int8 };

const char* precision_name(Precision p);  // "fp32", "bf16", "int8"
// Parses a name as precision_name writes it; throws attn::Error naming `what` and the accepted
// values otherwise.
Precision parse_precision(std::string_view name, std::string_view what = "precision");
// A comma-separated list of names ("fp32,bf16"), each parsed as above.
std::vector<Precision> parse_precision_list(std::string_view list, std::string_view what = "precision");

// True when this CPU multiplies bf16 natively (AVX512-BF16 or AMX), as oneDNN detects it.
bool cpu_has_native_bf16();
// True when oneDNN runs matmuls on bf16 inputs here (AVX512-core and newer). Elsewhere (AVX2 CPUs)
// attn's bf16 products widen their bf16 inputs to f32 and multiply in f32: the same products of
// the same rounded inputs, accumulated in f32 as before, at f32 speed.
bool onednn_has_bf16_matmul();
// True when the CPU sums u8 x s8 products straight into s32 (AVX512-VNNI or AVX-VNNI). Without it
// oneDNN's int8 products pair them in saturating s16 (vpmaddubsw), so int8 weights are quantized
// to 7 bits there (int8_weight_max(), include/attn/kernels/gemm_int8.h): no sum can saturate.
bool cpu_has_int8_dot();
// A training precision: fp32, bf16, or auto (bf16 where cpu_has_native_bf16(), else fp32).
Precision parse_training_precision(std::string_view name, std::string_view what = "train.precision");

Precision default_precision();
void set_default_precision(Precision p);  // process-wide, atomic
Precision current_precision();            // this thread's scope, else the default

class PackedWeights;
PackedWeights* current_packed_weights();  // this thread's inference cache, or nullptr

// Sets this thread's precision (and inference weight cache, may be nullptr) for its lifetime,
// restoring the previous ones after. Scopes nest.
class PrecisionScope {
 public:
  explicit PrecisionScope(Precision p, PackedWeights* weights = nullptr);
  ~PrecisionScope();
  PrecisionScope(const PrecisionScope&) = delete;
  PrecisionScope& operator=(const PrecisionScope&) = delete;

 private:
  Precision previous_precision_;
  bool previous_set_;
  PackedWeights* previous_weights_;
};

}  // namespace attn
