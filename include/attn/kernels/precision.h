// The compute precision of the model's matrix products (linear, linear_relu, matmul in
// include/attn/ops/matmul.h):
//   fp32  every product in f32 (the default; bit-identical to attn without this setting)
//   bf16  operands rounded to bfloat16, products accumulated in f32, outputs f32. In training
//         the master weights, gradients, Adam, layer norm, softmax and the loss stay f32: each
//         weight is rounded once per forward and that copy serves the backward.
//   int8  inference only: weights quantized to s8 per output row, activations per row at each
//         call (dynamic), s32 accumulation (VNNI/AMX through oneDNN), f32 outputs.
//
// A model's precision is fixed when it is loaded or built for training (prepare() in
// models/seq2seq.h and models/classifier.h) and reaches the ops as an argument
// (ops/weight_form.h): no precision is held per thread or process, so models of different
// precisions run side by side, from any threads.
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

}  // namespace attn
