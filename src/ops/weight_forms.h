// Private to src/ops: what an inference form holds (include/attn/ops/weight_form.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "attn/kernels/gemm_int8.h"
#include "attn/ops/weight_form.h"

namespace attn {

struct FrozenWeight {
  FrozenWeight(const Tensor& W, Precision p);

  Precision precision;
  Tensor w;  // the f32 weight, row-major (a view of the model's storage, or a dense copy)
  int64_t out = 0, in = 0;
  std::shared_ptr<const PackedWeight> packed;  // bf16 or int8: W converted, made at once

  // fp32: W packed into panels (kernels/gemm_panels.h), made by the first caller, once.
  const PackedWeight& f32_panels() const;
  int64_t converted_bytes() const;

 private:
  mutable std::once_flag panels_once;
  mutable std::shared_ptr<const PackedWeight> panels;
  mutable std::atomic<bool> panels_made{false};
};

}  // namespace attn
