#include "attn/ops/matmul.h"

#include "attn/error.h"
#include "attn/kernels/elementwise.h"
#include "attn/kernels/gemm.h"

namespace attn {
namespace {

struct MatmulDims {
  int64_t batch, m, k, n;
  bool b_shared;  // b is 2-D and used by every batch item
};

MatmulDims matmul_dims(const Shape& a, const Shape& b, bool ta, bool tb) {
  if (!(a.size() >= 2 && b.size() >= 2))
    fail("matmul: operands need 2 or more dimensions, got ",
        shape_str(a), " and ", shape_str(b));
  MatmulDims d{};
  d.m = ta ? a[a.size() - 1] : a[a.size() - 2];
  d.k = ta ? a[a.size() - 2] : a[a.size() - 1];
  int64_t kb = tb ? b[b.size() - 1] : b[b.size() - 2];
  d.n = tb ? b[b.size() - 2] : b[b.size() - 1];
  if (!(d.k == kb))
    fail("matmul: inner dimensions differ: ", shape_str(a), (ta ? "^T" : ""), " x ",
        shape_str(b), (tb ? "^T" : ""));
  d.batch = shape_numel(a) / (d.m * d.k == 0 ? 1 : d.m * d.k);
  if (d.m * d.k == 0) d.batch = shape_numel(Shape(a.begin(), a.end() - 2));
  d.b_shared = b.size() == 2;
  if (!d.b_shared) {
    if (!(Shape(a.begin(), a.end() - 2) == Shape(b.begin(), b.end() - 2)))
      fail("matmul: batch dimensions differ: ", shape_str(a), " and ", shape_str(b));
  }
  return d;
}

// C (+)= op(A) op(B) for each of `batch` items; op(A) is [m, k], op(B) is [k, n], all dense.
// An operand with stride 0 is shared by every item.
void product(const float* A, const float* B, float* C, int64_t batch, int64_t m, int64_t k,
             int64_t n, bool ta, bool tb, float beta, int64_t stride_a, int64_t stride_b) {
  GemmArgs g{ta, tb, m, n, k, 1.0f, beta, A, ta ? m : k, B, tb ? k : n, C, n};
  if (batch == 1) return gemm(g);
  gemm_batched(g, batch, stride_a, stride_b, m * n);
}

}  // namespace

Var matmul(const Var& a, const Var& b, bool trans_a, bool trans_b) {
  Tensor av = a.value().contiguous(), bv = b.value().contiguous();
  MatmulDims d = matmul_dims(av.shape(), bv.shape(), trans_a, trans_b);
  Shape out_shape(av.shape().begin(), av.shape().end() - 2);
  out_shape.push_back(d.m);
  out_shape.push_back(d.n);
  Tensor out = Tensor::empty(out_shape);
  const float* A = av.data<float>();
  const float* B = bv.data<float>();
  int64_t sa = d.m * d.k, sb = d.b_shared ? 0 : d.k * d.n;
  if (d.b_shared && !trans_a) {
    // Fold the batch into the rows: one [batch*m, k] x [k, n] product.
    product(A, B, out.data<float>(), 1, d.batch * d.m, d.k, d.n, false, trans_b, 0.0f, 0, 0);
  } else {
    product(A, B, out.data<float>(), d.batch, d.m, d.k, d.n, trans_a, trans_b, 0.0f, sa, sb);
  }
  bool grad = needs_grad({&a, &b});
  Var y = make_output(out, grad);
  if (!grad) return y;
  record_backward([a, b, av, bv, y, d, trans_a, trans_b]() mutable {
    if (!y.grad().defined()) return;
    Tensor gy = y.grad().contiguous();
    const float* G = gy.data<float>();
    const float* A = av.data<float>();
    const float* B = bv.data<float>();
    int64_t sa = d.m * d.k, sb = d.b_shared ? 0 : d.k * d.n, sg = d.m * d.n;
    bool fold = d.b_shared && !trans_a;  // A and dC read as [batch*m, .] matrices
    int64_t batch = fold ? 1 : d.batch, m = fold ? d.batch * d.m : d.m;
    if (a.requires_grad()) {
      float* gA = a.grad_buffer().data<float>();
      if (!trans_a)  // dA = dC op(B)^T : [m, n] x [n, k]
        product(G, B, gA, batch, m, d.n, d.k, false, !trans_b, 1.0f, sg, sb);
      else           // dA = op(B) dC^T : [k, n] x [n, m]
        product(B, G, gA, batch, d.k, d.n, m, trans_b, true, 1.0f, sb, sg);
    }
    if (b.requires_grad()) {
      float* gB = b.grad_buffer().data<float>();
      // A shared B gathers the products of every item: one call per item when not folded.
      int64_t items = d.b_shared ? batch : 1, inner = d.b_shared ? 1 : batch;
      for (int64_t i = 0; i < items; ++i) {
        const float* Ai = A + i * sa;
        const float* Gi = G + i * sg;
        if (!trans_b)  // dB = op(A)^T dC : [k, m] x [m, n]
          product(Ai, Gi, gB, inner, d.k, m, d.n, !trans_a, false, 1.0f, sa, sg);
        else           // dB = dC^T op(A) : [n, m] x [m, k]
          product(Gi, Ai, gB, inner, d.n, m, d.k, true, trans_a, 1.0f, sg, sa);
      }
    }
  });
  return y;
}

Var linear(const Var& x, const Var& W, const Var& b) {
  Tensor xv = x.value().contiguous(), wv = W.value().contiguous();
  int64_t in = wv.size(1), out_features = wv.size(0);
  if (!(xv.size(-1) == in))
    fail("linear: input ", shape_str(xv.shape()), " does not match weight ",
        shape_str(wv.shape()));
  int64_t rows = xv.numel() / in;
  Shape out_shape = xv.shape();
  out_shape.back() = out_features;
  Tensor out = Tensor::empty(out_shape);
  float beta = 0.0f;
  if (b.defined()) {
    if (!(b.value().numel() == out_features))
      fail("linear: bias ", shape_str(b.shape()),
          " does not match weight ", shape_str(wv.shape()));
    Tensor bv = b.value().contiguous();
    float* po = out.data<float>();
    for (int64_t r = 0; r < rows; ++r)
      std::copy(bv.data<float>(), bv.data<float>() + out_features, po + r * out_features);
    beta = 1.0f;
  }
  // y = x W^T (+ b, already in y)
  GemmArgs g{false, true, rows, out_features, in, 1.0f, beta, xv.data<float>(), in,
             wv.data<float>(), in, out.data<float>(), out_features};
  gemm(g);
  bool grad = needs_grad({&x, &W, &b});
  Var y = make_output(out, grad);
  if (!grad) return y;
  record_backward([x, W, b, xv, wv, y, rows, in, out_features]() mutable {
    if (!y.grad().defined()) return;
    Tensor gy = y.grad().contiguous();
    const float* G = gy.data<float>();
    // dx = dy W
    if (x.requires_grad())
      gemm({false, false, rows, in, out_features, 1.0f, 1.0f, G, out_features, wv.data<float>(), in,
            x.grad_buffer().data<float>(), in});
    // dW = dy^T x
    if (W.requires_grad())
      gemm({true, false, out_features, in, rows, 1.0f, 1.0f, G, out_features, xv.data<float>(), in,
            W.grad_buffer().data<float>(), in});
    // db = sum over rows of dy
    if (b.defined() && b.requires_grad()) {
      float* gb = b.grad_buffer().data<float>();
      parallel_for(out_features, 256, [&](int64_t j0, int64_t j1) {
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t j = j0; j < j1; ++j) gb[j] += G[r * out_features + j];
      });
    }
  });
  return y;
}

}  // namespace attn
