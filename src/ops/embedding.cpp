#include "attn/ops/embedding.h"

#include <algorithm>
#include <cstring>

#include "attn/error.h"
#include "attn/kernels/elementwise.h"

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
  for (int64_t i = 0; i < n; ++i)
    check(pid[i] >= 0 && pid[i] < vocab, "embedding: id ", pid[i], " out of range for vocabulary ", vocab);
  float* po = out.data<float>();
  const float* pt = tv.data<float>();
  parallel_for(n, std::max<int64_t>(1, 16384 / d), [=](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) std::memcpy(po + i * d, pt + pid[i] * d, d * sizeof(float));
  });
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
    // Threads split the columns (each row's additions stay in order: deterministic).
    parallel_for(d, 64, [=](int64_t j0, int64_t j1) {
      for (int64_t i = 0; i < n; ++i) {
        float* dst = gt + static_cast<int64_t>(pid[i]) * d;
        const float* src = pg + i * d;
        for (int64_t j = j0; j < j1; ++j) dst[j] += src[j];
      }
    });
  });
  return y;
}

}  // namespace attn
