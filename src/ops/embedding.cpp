#include "attn/ops/embedding.h"

#include <cstring>

#include "attn/error.h"

namespace attn {

Var embedding(const Var& table, const Tensor& ids) {
  check(ids.dtype() == DType::i32, "embedding: ids must be I32, got ", dtype_name(ids.dtype()));
  if (!(table.dim() == 2))
    fail("embedding: table must be [vocab, d], got ", shape_str(table.shape()));
  Tensor tv = table.value().contiguous();
  Tensor idc = ids.contiguous();
  int64_t vocab = tv.size(0), d = tv.size(1), n = idc.numel();
  Shape out_shape = idc.shape();
  out_shape.push_back(d);
  Tensor out = Tensor::empty(out_shape);
  const int32_t* pid = idc.data<int32_t>();
  for (int64_t i = 0; i < n; ++i) {
    check(pid[i] >= 0 && pid[i] < vocab, "embedding: id ", pid[i], " out of range for vocabulary ", vocab);
    std::memcpy(out.data<float>() + i * d, tv.data<float>() + pid[i] * d, d * sizeof(float));
  }
  bool grad = needs_grad({&table});
  Var y = make_output(out, grad);
  if (!grad) return y;
  // dtable[ids[i]] += dy[i]; rows no id names stay untouched
  record_backward([table, y, idc, n, d]() mutable {
    if (!y.grad().defined()) return;
    Tensor gy = y.grad().contiguous();
    float* gt = table.grad_buffer().data<float>();
    const int32_t* pid = idc.data<int32_t>();
    const float* pg = gy.data<float>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < d; ++j) gt[pid[i] * d + j] += pg[i * d + j];
  });
  return y;
}

}  // namespace attn
