#include "attn/ops/dropout.h"

#include <cmath>

#include "attn/error.h"
#include "attn/kernels/elementwise.h"
#include "grad_target.h"

namespace attn {

void dropout_mask(float* mask, int64_t n, float p, uint64_t seed, uint64_t first) {
  const float keep = 1.0f / (1.0f - p);
  const uint64_t key = stream_key(seed);
  // u_i < p  <=>  the top 24 bits of the i-th number < p 2^24 (random_uniform's definition)
  const uint64_t threshold = static_cast<uint64_t>(std::ceil(static_cast<double>(p) * 16777216.0));
  parallel_for(n, 1 << 14, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      mask[i] = (random_bits_keyed(key, first + static_cast<uint64_t>(i)) >> 40) < threshold ? 0.0f : keep;
  });
}

// y = x m,  m_i = [u_i >= p] / (1 - p);  dx = dy m
Var dropout(const Var& x, float p, Rng& rng, bool training) {
  check(p >= 0.0f && p < 1.0f, "dropout: p must be in [0, 1), got ", p);
  if (!training || p == 0.0f) return x;
  Tensor xv = x.value().contiguous();
  int64_t n = xv.numel();
  Tensor mask = Tensor::empty(xv.shape());
  dropout_mask(mask.data<float>(), n, p, rng.seed, rng.take(static_cast<uint64_t>(n)));
  Tensor out = Tensor::empty(xv.shape());
  const float* pm = mask.data<float>();
  const float* px = xv.data<float>();
  float* py = out.data<float>();
  parallel_for(n, 1 << 14, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) py[i] = px[i] * pm[i];
  });
  bool grad = needs_grad({&x});
  Var y = make_output(out, grad);
  if (!grad) return y;
  record_backward([x, y, mask, n]() mutable {
    if (!y.grad().defined()) return;
    Tensor gy = y.grad().contiguous();
    Tensor gx = Tensor::empty(gy.shape());
    const float* pg = gy.data<float>();
    const float* pm = mask.data<float>();
    float* px = gx.data<float>();
    parallel_for(n, 1 << 14, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) px[i] = pg[i] * pm[i];
    });
    detail::give_grad(x, std::move(gx));
  });
  return y;
}

}  // namespace attn
