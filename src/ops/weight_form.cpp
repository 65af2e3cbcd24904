// Weight forms (include/attn/ops/weight_form.h) and the frozen weight behind an inference form.
#include "attn/ops/weight_form.h"

#include <atomic>
#include <mutex>

#include "attn/error.h"
#include "attn/kernels/gemm_int8.h"
#include "weight_forms.h"

namespace attn {

FrozenWeight::FrozenWeight(const Tensor& W, Precision p) : precision(p) {
  if (!(W.dim() == 2 && W.dtype() == DType::f32))
    fail("inference_form: weight must be f32 [out, in], got ", dtype_name(W.dtype()), " ", shape_str(W.shape()));
  w = W.strides()[1] == 1 ? W : W.contiguous();
  out = w.size(0);
  in = w.size(1);
  if (p != Precision::fp32) packed = pack_weight(p, w.data<float>(), out, in, w.strides()[0]);
}

const PackedWeight& FrozenWeight::f32_packed() const {
  std::call_once(packed_once, [this] {
    packed_f32 = pack_weight(Precision::fp32, w.data<float>(), out, in, w.strides()[0]);
    packed_made.store(true, std::memory_order_release);
  });
  return *packed_f32;
}

int64_t FrozenWeight::converted_bytes() const {
  int64_t bytes = packed ? packed_weight_bytes(*packed) : 0;
  // packed_f32 is written once, under packed_once, before packed_made is set
  return bytes + (packed_made.load(std::memory_order_acquire) ? packed_weight_bytes(*packed_f32) : 0);
}

int64_t converted_bytes(const WeightForm& form) { return form.frozen ? form.frozen->converted_bytes() : 0; }

WeightForm training_form(Precision p) {
  check(p != Precision::int8, "int8 is for inference only: a model built for training takes fp32 or bf16");
  return WeightForm{p, nullptr};
}

WeightForm inference_form(const Tensor& W, Precision p) {
  return WeightForm{p, std::make_shared<const FrozenWeight>(W, p)};
}

}  // namespace attn
