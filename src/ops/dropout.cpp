#include "attn/ops/dropout.h"
#include "attn/ops/relu_dropout.h"

#include <algorithm>
#include <cmath>

#include "attn/error.h"
#include "attn/kernels/dropout_bits.h"
#include "attn/kernels/elementwise.h"
#include "attn/ops/elementwise.h"
#include "grad_target.h"

namespace attn {
namespace {

// Rows of a flat dropout: a fixed length (a multiple of 32), so that the mask words of row r
// start at word r * kFlatRow / 32 and the split is the same for any thread count.
constexpr int64_t kFlatRow = 4096;

// The elements of x as rows of kFlatRow (the last one shorter): y = x m (relu: times [x > 0]),
// the keep bits (times [x > 0]) into a fresh mask of one bit per element.
Tensor dropout_flat(const float* x, float* y, int64_t n, bool relu, const DropoutStream& s) {
  Tensor bits = Tensor::empty({(n + 31) / 32}, DType::i32);  // 32-bit words, one bit an element
  uint32_t* pb = reinterpret_cast<uint32_t*>(bits.data<int32_t>());
  const int64_t rows = (n + kFlatRow - 1) / kFlatRow;
  parallel_for(rows, 4, [=](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t b = r * kFlatRow, cols = std::min(kFlatRow, n - b);
      dropout_row(x + b, nullptr, y + b, cols, relu, s, static_cast<uint64_t>(b), pb + b / 32);
    }
  });
  return bits;
}

// dx = dy m, where m is the saved (dropout or ReLU-and-dropout) mask, as bits.
void record_bits_backward(const Var& x, const Var& y, const Tensor& bits, float keep, int64_t n) {
  record_backward([x, y, bits, keep, n]() mutable {
    if (!y.grad().defined()) return;
    Tensor gy = y.grad().contiguous();
    Tensor gx = Tensor::empty(gy.shape());
    const float* pg = gy.data<float>();
    const uint32_t* pb = reinterpret_cast<const uint32_t*>(bits.data<int32_t>());
    float* px = gx.data<float>();
    parallel_for((n + kFlatRow - 1) / kFlatRow, 4, [=](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t b = r * kFlatRow;
        dropout_row_backward(pg + b, pb + b / 32, keep, px + b, std::min(kFlatRow, n - b));
      }
    });
    detail::give_grad(x, std::move(gx));
  });
}

// y = x m (relu: max(0, x) m) with m drawn as it is used; the backward multiplies by the same m.
Var dropout_op(const Var& x, float p, Rng& rng, bool relu) {
  Tensor xv = x.value().contiguous();
  int64_t n = xv.numel();
  const DropoutStream s = dropout_stream(p, rng.seed, rng.take(static_cast<uint64_t>(n)));
  Tensor out = Tensor::empty(xv.shape());
  Tensor bits = dropout_flat(xv.data<float>(), out.data<float>(), n, relu, s);
  bool grad = needs_grad({&x});
  Var y = make_output(out, grad);
  if (grad) record_bits_backward(x, y, bits, s.keep, n);
  return y;
}

}  // namespace

void dropout_mask(float* mask, int64_t n, float p, uint64_t seed, uint64_t first) {
  const DropoutStream s = dropout_stream(p, seed, first);
  parallel_for((n + 31) / 32, 512, [=](int64_t w0, int64_t w1) {
    for (int64_t w = w0; w < w1; ++w) {
      const int64_t b = 32 * w, count = std::min<int64_t>(32, n - b);
      const uint32_t bits = keep_bits(s, static_cast<uint64_t>(b), static_cast<int>(count));
      for (int64_t l = 0; l < count; ++l) mask[b + l] = (bits >> l) & 1u ? s.keep : 0.0f;
    }
  });
}

// y = x m,  m_i = [u_i >= p] / (1 - p);  dx = dy m
Var dropout(const Var& x, float p, Rng& rng, bool training) {
  check(p >= 0.0f && p < 1.0f, "dropout: p must be in [0, 1), got ", p);
  if (!training || p == 0.0f) return x;
  return dropout_op(x, p, rng, false);
}

// y = max(0, x) m;  dx = dy m [x > 0]: one pass each way, and one saved bit an element.
Var relu_dropout(const Var& x, float p, Rng& rng, bool training) {
  check(p >= 0.0f && p < 1.0f, "relu_dropout: p must be in [0, 1), got ", p);
  if (!training || p == 0.0f) return relu(x);
  return dropout_op(x, p, rng, true);
}

}  // namespace attn
