// Weight forms (include/attn/ops/weight_form.h) and the frozen weight behind an inference form.
#include "attn/ops/weight_form.h"

#include "attn/error.h"
#include "weight_forms.h"

namespace attn {

namespace {

// W as a frozen form keeps it: f32 [out, in] with unit column stride (a dense copy otherwise).
Tensor checked_weight(const Tensor& W) {
  if (!(W.dim() == 2 && W.dtype() == DType::f32))
    fail("inference_form: weight must be f32 [out, in], got ", dtype_name(W.dtype()), " ", shape_str(W.shape()));
  return W.strides()[1] == 1 ? W : W.contiguous();
}

}  // namespace

FrozenWeight::FrozenWeight(const Tensor& W, Precision p)
    : precision(p),
      w(checked_weight(W)),
      out(w.size(0)),
      in(w.size(1)),
      forms(p, w.data<float>(), out, in, w.strides()[0]) {}

int64_t converted_bytes(const WeightForm& form) { return form.frozen ? form.frozen->converted_bytes() : 0; }

WeightForm training_form(Precision p) {
  check(p != Precision::int8, "int8 is for inference only: a model built for training takes fp32 or bf16");
  return WeightForm{p, nullptr};
}

WeightForm inference_form(const Tensor& W, Precision p) {
  return WeightForm{p, std::make_shared<const FrozenWeight>(W, p)};
}

}  // namespace attn
