// PackedWeights: converted weights cached per weight tensor for inference (gemm_int8.h).
#include "attn/error.h"
#include "attn/kernels/gemm_int8.h"

namespace attn {

std::shared_ptr<const PackedWeight> PackedWeights::get(const Tensor& W, Precision p) {
  if (!(W.dim() == 2 && W.dtype() == DType::f32))  // (shape_str only on failure: called per product)
    fail("PackedWeights: weight must be f32 [n, k], got ", dtype_name(W.dtype()), " ", shape_str(W.shape()));
  const int64_t n = W.size(0), k = W.size(1);
  if (!(W.strides()[1] == 1)) {  // not a row-major view: convert for this call only
    Tensor dense = W.contiguous();
    return pack_weight(p, dense.data<float>(), n, k, k);
  }
  const int64_t ld = W.strides()[0];
  const Key key{W.storage().get(), W.offset(), n, k, ld, static_cast<int>(p)};
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it != entries_.end()) return it->second.weight;
  auto packed = pack_weight(p, W.data<float>(), n, k, ld);
  entries_.emplace(key, Entry{W.storage(), packed});
  return packed;
}

size_t PackedWeights::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

void PackedWeights::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
}

}  // namespace attn
