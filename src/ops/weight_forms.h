// Private to src/ops: what an inference form holds (include/attn/ops/weight_form.h).
#pragma once

#include <cstdint>

#include "attn/kernels/linear.h"
#include "attn/ops/weight_form.h"

namespace attn {

struct FrozenWeight {
  FrozenWeight(const Tensor& W, Precision p);

  Precision precision;
  Tensor w;  // the f32 weight, row-major (a view of the model's storage, or a dense copy)
  int64_t out = 0, in = 0;
  // W's converted forms, as the dispatch table plans them (kernels/linear.h): bf16 or int8 made at
  // once; fp32 packed by the first product that runs on it
  FrozenForms forms;

  int64_t converted_bytes() const { return forms.converted_bytes(); }
};

}  // namespace attn
