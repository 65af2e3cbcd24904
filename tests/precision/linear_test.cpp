// bf16 and int8 products of linear / linear_relu / matmul against f32 and against exact
// references of each scheme (operands rounded or quantized as the scheme says, products in f64).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "attn/error.h"
#include "attn/kernels/bf16.h"
#include "attn/kernels/gemm_int8.h"
#include "attn/kernels/precision.h"
#include "attn/ops/matmul.h"
#include "attn/tensor/random.h"

namespace attn {
namespace {

Tensor random_tensor(const Shape& s, uint64_t seed, float scale = 1.0f) {
  Tensor t = Tensor::empty(s);
  Rng rng(seed);
  fill_normal(t, 0.0f, scale, rng);
  return t;
}

// max |a - b| / max |b|
double max_rel_diff(const Tensor& a, const Tensor& b) {
  std::vector<float> x = a.to_vector(), y = b.to_vector();
  EXPECT_EQ(x.size(), y.size());
  double d = 0, s = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    d = std::max(d, std::fabs(static_cast<double>(x[i]) - y[i]));
    s = std::max(s, std::fabs(static_cast<double>(y[i])));
  }
  return d / s;
}

std::vector<float> rounded(const Tensor& t) {
  std::vector<float> v = t.to_vector();
  for (float& x : v) x = bf16_to_float(float_to_bf16(x));
  return v;
}

// C[i, j] = sum_p A[i, p] B[j, p] in f64 (A [m, k], B [n, k]), as a tensor [m, n].
Tensor abt(const std::vector<float>& A, const std::vector<float>& B, int64_t m, int64_t n, int64_t k) {
  Tensor c = Tensor::empty({m, n});
  float* pc = c.data<float>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += static_cast<double>(A[i * k + p]) * B[j * k + p];
      pc[i * n + j] = static_cast<float>(s);
    }
  return c;
}

std::vector<float> transposed(const std::vector<float>& a, int64_t rows, int64_t cols) {
  std::vector<float> t(a.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) t[j * rows + i] = a[i * cols + j];
  return t;
}

struct LinearRun {
  Tensor y, dx, dW, db;
};

// y = linear(x, W, b) (or linear_relu) and its gradients for dy, in precision p.
LinearRun run_linear(Precision p, const Tensor& x, const Tensor& W, const Tensor& b, const Tensor& dy,
                     bool relu) {
  const WeightForm form = training_form(p);
  Var vx(x.clone(), true), vW(W.clone(), true), vb(b.clone(), true);
  Tape tape;
  Var y;
  {
    TapeScope ts(tape);
    y = relu ? linear_relu(vx, vW, vb, form) : linear(vx, vW, vb, form);
    tape.backward(y, dy);
  }
  return {y.value(), vx.grad(), vW.grad(), vb.grad()};
}

constexpr int64_t kRows = 37, kIn = 96, kOut = 80;

TEST(PrecisionTest, Bf16LinearForwardBackward) {
  const Tensor x = random_tensor({kRows, kIn}, 1), W = random_tensor({kOut, kIn}, 2, 0.1f);
  const Tensor b = random_tensor({kOut}, 3), dy = random_tensor({kRows, kOut}, 4);
  for (bool relu : {false, true}) {
    LinearRun f = run_linear(Precision::fp32, x, W, b, dy, relu);
    LinearRun h = run_linear(Precision::bf16, x, W, b, dy, relu);
    const char* name = relu ? "linear_relu" : "linear";
    // Against f32: bf16 keeps 8 significant bits (relative rounding 2^-9 per operand). With the
    // ReLU, pre-activations near 0 may change sign, which moves whole gradient entries: there
    // the gradients are checked against the exact scheme only.
    const double ry = max_rel_diff(h.y, f.y);
    std::printf("[bf16 %s] max rel diff vs f32: y %.2e (tolerance 1e-2)\n", name, ry);
    EXPECT_LT(ry, 1e-2);
    EXPECT_GT(ry, 1e-5) << "bf16 gave f32's result: was it applied?";
    if (!relu) {
      const double rx = max_rel_diff(h.dx, f.dx), rw = max_rel_diff(h.dW, f.dW);
      std::printf("[bf16 %s] max rel diff vs f32: dx %.2e dW %.2e (tolerance 1e-2)\n", name, rx, rw);
      EXPECT_LT(rx, 1e-2);
      EXPECT_LT(rw, 1e-2);
    }
    // The exact scheme: operands rounded to bf16 once, f32 accumulation; the bias and its
    // gradient in f32. G = dy, masked by the bf16 output's ReLU.
    std::vector<float> x16 = rounded(x), W16 = rounded(W), G = dy.to_vector(), hy = h.y.to_vector();
    if (relu)
      for (size_t i = 0; i < G.size(); ++i) G[i] = hy[i] > 0.0f ? G[i] : 0.0f;
    Tensor db_ref = Tensor::zeros({kOut});
    for (int64_t i = 0; i < kRows; ++i)
      for (int64_t j = 0; j < kOut; ++j) db_ref.data<float>()[j] += G[i * kOut + j];
    for (float& g : G) g = bf16_to_float(float_to_bf16(g));
    Tensor y_ref = abt(x16, W16, kRows, kOut, kIn);
    float* py = y_ref.data<float>();
    for (int64_t i = 0; i < kRows; ++i)
      for (int64_t j = 0; j < kOut; ++j) {
        float& v = py[i * kOut + j];
        v += b.data<float>()[j];
        if (relu) v = v > 0.0f ? v : 0.0f;
      }
    Tensor dx_ref = abt(G, transposed(W16, kOut, kIn), kRows, kIn, kOut);
    Tensor dW_ref = abt(transposed(G, kRows, kOut), transposed(x16, kRows, kIn), kOut, kIn, kRows);
    const double ey = max_rel_diff(h.y, y_ref), ex = max_rel_diff(h.dx, dx_ref), ew = max_rel_diff(h.dW, dW_ref);
    const double eb = max_rel_diff(h.db, db_ref);
    std::printf("[bf16 %s] max rel diff vs bf16-rounded operands in f64: y %.2e dx %.2e dW %.2e db %.2e "
                "(tolerance 2e-6)\n", name, ey, ex, ew, eb);
    EXPECT_LT(ey, 2e-6);
    EXPECT_LT(ex, 2e-6);
    EXPECT_LT(ew, 2e-6);
    EXPECT_LT(eb, 2e-6);
  }
}

TEST(PrecisionTest, Bf16BatchedMatmul) {
  const Tensor a = random_tensor({2, 3, 5, 16}, 5), b = random_tensor({2, 3, 7, 16}, 6);
  const Tensor dy = random_tensor({2, 3, 5, 7}, 7);
  Tensor out[2], da[2], db[2];
  for (int i = 0; i < 2; ++i) {
    const Precision precision = i ? Precision::bf16 : Precision::fp32;
    Var va(a.clone(), true), vb(b.clone(), true);
    Tape tape;
    TapeScope ts(tape);
    Var y = matmul(va, vb, false, true, precision);
    tape.backward(y, dy);
    out[i] = y.value();
    da[i] = va.grad();
    db[i] = vb.grad();
  }
  const double ry = max_rel_diff(out[1], out[0]), ra = max_rel_diff(da[1], da[0]), rb = max_rel_diff(db[1], db[0]);
  std::printf("[bf16 matmul] max rel diff vs f32: y %.2e da %.2e db %.2e (tolerance 1e-2)\n", ry, ra, rb);
  EXPECT_LT(ry, 1e-2);
  EXPECT_LT(ra, 1e-2);
  EXPECT_LT(rb, 1e-2);
  EXPECT_GT(ry, 1e-5);
}

// The int8 scheme exactly: per-row symmetric s8 quantization of x and W, integer products.
Tensor int8_reference(const Tensor& x, const Tensor& W, const Tensor& b, int64_t m, int64_t n, int64_t k) {
  std::vector<int8_t> qx(m * k), qw(n * k);
  std::vector<float> sx(m), sw(n);
  quantize_rows_s8(x.data<float>(), m, k, k, qx.data(), sx.data());
  quantize_rows_s8(W.data<float>(), n, k, k, qw.data(), sw.data(), int8_weight_max());
  Tensor y = Tensor::empty({m, n});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += static_cast<int64_t>(qx[i * k + p]) * qw[j * k + p];
      y.data<float>()[i * n + j] = static_cast<float>(sx[i] * sw[j] * static_cast<double>(acc)) + b.data<float>()[j];
    }
  return y;
}

TEST(PrecisionTest, Int8LinearInference) {
  const Tensor W = random_tensor({kOut, kIn}, 12, 0.1f), b = random_tensor({kOut}, 13);
  Var vW(W, true), vb(b, true);  // parameters, but no tape: inference
  // int8 with W not frozen (quantized at each call), and W frozen (quantized once, here)
  const WeightForm per_call{Precision::int8, nullptr}, frozen = inference_form(W, Precision::int8);
  for (int64_t rows : {int64_t{1}, int64_t{4}, kRows}) {
    const Tensor x = random_tensor({rows, kIn}, 11 + rows);
    Tensor f = linear(Var(x), vW, vb).value();
    Tensor once = linear(Var(x), vW, vb, per_call).value();
    Tensor cached = linear(Var(x), vW, vb, frozen).value();
    const Tensor ref = int8_reference(x, W, b, rows, kOut, kIn);
    const double r = max_rel_diff(once, f), e = max_rel_diff(once, ref), c = max_rel_diff(cached, once);
    std::printf("[int8 linear] rows %lld: max rel diff vs f32 %.2e (tolerance 3e-2), vs exact int8 "
                "scheme %.2e (tolerance 1e-6), cached vs uncached %.2e\n",
                static_cast<long long>(rows), r, e, c);
    EXPECT_LT(r, 3e-2);
    EXPECT_GT(r, 1e-5);
    EXPECT_LT(e, 1e-6);
    EXPECT_EQ(c, 0.0);
  }
  EXPECT_GE(converted_bytes(frozen), kOut * kIn) << "the weight is quantized once for all row counts";
  // int8 refuses to train.
  EXPECT_THROW(training_form(Precision::int8), Error);
  Tape tape;
  TapeScope ts(tape);
  EXPECT_THROW(linear(Var(random_tensor({2, kIn}, 9)), vW, vb, per_call), Error);
}

TEST(PrecisionTest, Bf16InferenceCacheMatchesPerCallRounding) {
  const Tensor W = random_tensor({kOut, kIn}, 22, 0.1f), b = random_tensor({kOut}, 23);
  Var vW(W), vb(b);
  const WeightForm frozen = inference_form(W, Precision::bf16);
  // 300 rows: past kOnednnNarrowRows, the packed product runs 256 rows and then 44 (onednn_rows.h)
  for (int64_t rows : {int64_t{1}, kRows, int64_t{300}}) {
    const Tensor x = random_tensor({rows, kIn}, 21 + rows);
    Tensor per_call = linear_relu(Var(x), vW, vb, WeightForm{Precision::bf16, nullptr}).value();
    Tensor cached = linear_relu(Var(x), vW, vb, frozen).value();
    const double d = max_rel_diff(cached, per_call);
    std::printf("[bf16 inference] rows %lld: packed (cached) vs per-call rounding max rel diff %.2e "
                "(tolerance 1e-6)\n", static_cast<long long>(rows), d);
    EXPECT_LT(d, 1e-6);
  }
  EXPECT_GE(converted_bytes(frozen), 2 * kOut * kIn) << "the weight is rounded to bf16 once";
}

}  // namespace
}  // namespace attn
