#include "attn/ops/linear_dropout.h"

#include <algorithm>

#include "attn/error.h"
#include "attn/kernels/dropout_bits.h"
#include "attn/kernels/elementwise.h"
#include "attn/ops/matmul.h"
#include "affine.h"
#include "column_sums.h"

namespace attn {

// y = Dropout(act(x W^T + b)):  z = x W^T;  y_ij = act(z_ij + b_j) m_ij
// dz = dy m [z + b > 0 with ReLU];  db = sum over rows of dz;  then dx = dz W, dW = dz^T x
Var linear_dropout(const Var& x, const Var& W, const Var& b, bool relu, float p, Rng& rng, bool training,
                   const WeightForm& form) {
  check(p >= 0.0f && p < 1.0f, "linear_dropout: p must be in [0, 1), got ", p);
  if (!training || p == 0.0f) return relu ? linear_relu(x, W, b, form) : linear(x, W, b, form);
  const bool grad = needs_grad({&x, &W, &b});
  detail::Affine a = detail::affine_forward(x, W, Var(), form, grad);  // z = x W^T (the bias comes next)
  const int64_t rows = a.rows, n = a.out_features, words = mask_words_per_row(n);
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1));  // rows a chunk
  Tensor bv;
  if (b.defined()) {
    if (!(b.value().numel() == n))
      fail("linear_dropout: bias ", shape_str(b.shape()), " does not match weight ", shape_str(a.wv.shape()));
    bv = b.value().contiguous();
  }
  const float* pb = b.defined() ? bv.data<float>() : nullptr;
  const DropoutStream s = dropout_stream(p, rng.seed, rng.take(static_cast<uint64_t>(rows * n)));
  Tensor bits = Tensor::empty({rows, words}, DType::i32);  // 32-bit words of mask bits, rows apart
  uint32_t* pm = reinterpret_cast<uint32_t*>(bits.data<int32_t>());
  float* z = a.out.data<float>();  // y overwrites z
  parallel_for(rows, grain, [=](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      dropout_row(z + r * n, pb, z + r * n, n, relu, s, static_cast<uint64_t>(r * n), pm + r * words);
  });
  Var y = make_output(a.out, grad);
  if (!grad) return y;
  a.out = Tensor();  // the backward needs the mask, not the output
  const float keep = s.keep;
  record_backward([x, W, b, a, y, bits, keep, rows, n, words, grain]() mutable {
    if (!y.grad().defined()) return;
    Tensor gy = y.grad().contiguous();
    Tensor gz = Tensor::empty({rows, n});
    const float* g = gy.data<float>();
    const uint32_t* m = reinterpret_cast<const uint32_t*>(bits.data<int32_t>());
    float* dz = gz.data<float>();
    auto rows_of_dz = [=](int64_t r0, int64_t r1, float* acc) {
      for (int64_t r = r0; r < r1; ++r) {
        dropout_row_backward(g + r * n, m + r * words, keep, dz + r * n, n);
        if (!acc) continue;
        float* __restrict sum = acc;
        const float* __restrict row = dz + r * n;
        for (int64_t j = 0; j < n; ++j) sum[j] += row[j];
      }
    };
    if (b.defined() && b.requires_grad())  // dz and db = sum over rows of dz, in one pass
      detail::add_column_sums(rows, n, b.grad_buffer().data<float>(), rows_of_dz);
    else
      parallel_for(rows, grain, [=](int64_t r0, int64_t r1) { rows_of_dz(r0, r1, nullptr); });
    detail::affine_backward(x, W, Var(), a, dz);
  });
  return y;
}

}  // namespace attn
