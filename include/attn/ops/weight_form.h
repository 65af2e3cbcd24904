// How the products of one weight matrix W [out, in] run: the precision of its model, and for a
// model prepared for inference, W converted once. Models fix it for every weight when they are
// loaded or built for training (prepare() in models/seq2seq.h, models/classifier.h); linear layers
// carry it and hand it to the ops (linear, linear_relu, linear_dropout in ops/matmul.h), so nothing
// about precision is ambient.
//   fp32  W itself. Frozen (inference): W also packed once for the products the dispatch table
//         plans on a packed W (kernels/linear.h, FrozenForms: oneDNN's layout from 2 rows on
//         AVX-512, panels for 12-48 rows on AVX2), made the first time one runs.
//   bf16  training: W rounded to bf16 at each forward (it changes every step), the copy kept for
//         the backward. Frozen: rounded once, in oneDNN's layout.
//   int8  inference only: W quantized once per output row (kernels/gemm_int8.h).
#pragma once

#include <cstdint>
#include <memory>

#include "attn/kernels/precision.h"
#include "attn/tensor/tensor.h"

namespace attn {

struct FrozenWeight;  // W's converted forms (src/ops/weight_form.cpp)

struct WeightForm {
  Precision precision = Precision::fp32;
  // Inference only, null in training: the forms of a weight that no longer changes. Shared by
  // every thread that runs the model; made once, never modified after.
  std::shared_ptr<const FrozenWeight> frozen;
};

// What a model is prepared for: training (its weights change at every step) or inference (they
// are frozen, and converted once).
enum class Use { training, inference };

// The form of a trained weight: products in precision p (fp32 or bf16; int8 cannot train).
WeightForm training_form(Precision p);
// The form of a weight frozen for inference in precision p. W: f32 [out, in], any row stride;
// it must not change while the form is in use (the form holds its storage alive).
WeightForm inference_form(const Tensor& W, Precision p);
// The bytes a form holds beside W itself (its converted copies; fp32's panels once made).
int64_t converted_bytes(const WeightForm& form);
// One of the two, by use.
inline WeightForm weight_form(const Tensor& W, Precision p, Use use) {
  return use == Use::inference ? inference_form(W, p) : training_form(p);
}

}  // namespace attn
