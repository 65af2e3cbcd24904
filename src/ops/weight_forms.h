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

  // fp32: W packed (pack_weight: panels on AVX2, oneDNN's layout elsewhere), made by the first
  // caller, once: a model decoded one sentence at a time never needs it.
  const PackedWeight& f32_packed() const;
  int64_t converted_bytes() const;

 private:
  mutable std::once_flag packed_once;
  mutable std::shared_ptr<const PackedWeight> packed_f32;
  mutable std::atomic<bool> packed_made{false};
};

}  // namespace attn
