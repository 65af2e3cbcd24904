#include "rnn_common.h"

#include <algorithm>

#include "attn/error.h"
#include "attn/kernels/elementwise.h"
#include "attn/kernels/gemm.h"

namespace attn::rnn_detail {

RnnDims rnn_dims(const char* op, const Var& x, const RnnWeights& w, int64_t gates) {
  if (!(x.dim() == 3)) fail(op, ": input must be [batch, T, in], got ", shape_str(x.shape()));
  check(w.w_ih.defined() && w.w_hh.defined(), op, ": weight_ih and weight_hh are needed");
  RnnDims d{x.size(0), x.size(1), x.size(2), w.w_hh.size(1), gates};
  if (!(w.w_hh.shape() == Shape{gates * d.H, d.H}))
    fail(op, ": weight_hh ", shape_str(w.w_hh.shape()),
         " should be [", gates, "*H, H]");
  if (!(w.w_ih.shape() == Shape{gates * d.H, d.in}))
    fail(op, ": weight_ih ", shape_str(w.w_ih.shape()),
         " does not match input ", shape_str(x.shape()), " and hidden size ", d.H);
  for (const Var* b : {&w.b_ih, &w.b_hh})
    check(b->defined() && b->shape() == Shape{gates * d.H}, op, ": biases must be [", gates * d.H, "]");
  if (!(d.T > 0 && d.B > 0)) fail(op, ": empty input ", shape_str(x.shape()));
  return d;
}

std::vector<int32_t> sequence_lengths(const char* op, const Tensor& lengths, int64_t B, int64_t T) {
  std::vector<int32_t> len(static_cast<size_t>(B), static_cast<int32_t>(T));
  if (!lengths.defined()) return len;
  if (!(lengths.dtype() == DType::i32 && lengths.numel() == B))
    fail(op, ": lengths must be i32 [", B,
         "], got ", dtype_name(lengths.dtype()), " ", shape_str(lengths.shape()));
  Tensor l = lengths.contiguous();
  for (int64_t b = 0; b < B; ++b) {
    len[static_cast<size_t>(b)] = l.data<int32_t>()[b];
    check(len[static_cast<size_t>(b)] >= 1 && len[static_cast<size_t>(b)] <= T, op, ": length ",
          len[static_cast<size_t>(b)], " of row ", b, " outside [1, ", T, "]");
  }
  return len;
}

Tensor initial_state(const char* op, const Var& s, int64_t B, int64_t H) {
  if (!s.defined()) return Tensor::zeros({B, H});
  if (!(s.shape() == Shape{B, H}))
    fail(op, ": initial state ", shape_str(s.shape()), " should be [", B, ", ", H, "]");
  return s.value().clone();
}

Tensor input_projection(const Tensor& x, const RnnWeights& w, const RnnDims& d, bool add_hh) {
  int64_t rows = d.B * d.T, n = d.G * d.H;
  Tensor out = Tensor::empty({d.B, d.T, n});
  Tensor bih = w.b_ih.value().contiguous(), bhh = w.b_hh.value().contiguous();
  std::vector<float> bias(bih.data<float>(), bih.data<float>() + n);
  if (add_hh)
    for (int64_t j = 0; j < n; ++j) bias[static_cast<size_t>(j)] += bhh.data<float>()[j];
  float* o = out.data<float>();
  for (int64_t r = 0; r < rows; ++r) std::copy(bias.begin(), bias.end(), o + r * n);
  Tensor wih = w.w_ih.value().contiguous();
  // x W_ih^T + bias                                        [B*T, G*H]
  gemm({false, true, rows, n, d.in, 1.0f, 1.0f, x.data<float>(), d.in, wih.data<float>(), d.in, o, n});
  return out;
}

void bias_backward(const Var& b, const float* g, int64_t rows, int64_t n) {
  if (!b.requires_grad()) return;
  float* gb = b.grad_buffer().data<float>();
  parallel_for(n, 256, [&](int64_t j0, int64_t j1) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = j0; j < j1; ++j) gb[j] += g[r * n + j];
  });
}

void input_projection_backward(const Var& x, const Tensor& xv, const RnnWeights& w, const Tensor& dg,
                               const RnnDims& d, bool add_hh) {
  int64_t rows = d.B * d.T, n = d.G * d.H;
  const float* G = dg.data<float>();
  // dx = dg W_ih
  if (x.requires_grad()) {
    Tensor wih = w.w_ih.value().contiguous();
    gemm({false, false, rows, d.in, n, 1.0f, 1.0f, G, n, wih.data<float>(), d.in,
          x.grad_buffer().data<float>(), d.in});
  }
  // dW_ih = dg^T x
  if (w.w_ih.requires_grad())
    gemm({true, false, n, d.in, rows, 1.0f, 1.0f, G, n, xv.data<float>(), d.in,
          w.w_ih.grad_buffer().data<float>(), d.in});
  bias_backward(w.b_ih, G, rows, n);
  if (add_hh) bias_backward(w.b_hh, G, rows, n);
}

void recurrent_weight_backward(const RnnWeights& w, const Tensor& dg, const Tensor& hprev, const RnnDims& d) {
  if (!w.w_hh.requires_grad()) return;
  int64_t rows = d.B * d.T, n = d.G * d.H;
  // dW_hh = sum_t dg_t^T h_{t-1}
  gemm({true, false, n, d.H, rows, 1.0f, 1.0f, dg.data<float>(), n, hprev.data<float>(), d.H,
        w.w_hh.grad_buffer().data<float>(), d.H});
}

}  // namespace attn::rnn_detail
