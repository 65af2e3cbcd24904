// GRU over a sequence (PyTorch's nn.GRU, one layer, one direction): forward and
// backpropagation through time. Shape letters: B batch, T steps, H hidden, G = 3 gates (r, z, n).
#include <algorithm>
#include <cmath>

#include "attn/error.h"
#include "attn/kernels/elementwise.h"
#include "attn/kernels/gemm.h"
#include "attn/ops/rnn.h"
#include "attn/ops/shape.h"
#include "rnn_common.h"

namespace attn {

using namespace rnn_detail;

namespace {

// What the backward needs from the forward, all [B, T, .] in time order.
struct GruSaved {
  Tensor gates;  // [B, T, 3H]: r, z, n after their activations
  Tensor hn;     // [B, T, H]: W_hn h + b_hn (the part r multiplies)
  Tensor hprev;  // [B, T, H]: h before each step
};

// BPTT: returns dL/d(input pre-activations) [B, T, 3H] and fills dgh, dL/d(h W_hh^T + b_hh);
// dh ends as dL/dh0.
Tensor gru_bptt(const GruSaved& s, const Tensor& dout, Tensor& dh, Tensor& dgh, const Tensor& whh,
                const std::vector<int32_t>& len, const RnnDims& d, bool reverse) {
  const int64_t B = d.B, T = d.T, H = d.H, G3 = 3 * H;
  Tensor dgx = Tensor::zeros({B, T, G3});
  dgh = Tensor::zeros({B, T, G3});
  bptt_steps(
      d, len, reverse,
      [&](int64_t b, int64_t t) {
        const int64_t at = b * T + t;
        const float* g = s.gates.data<float>() + at * G3;
        const float* hn = s.hn.data<float>() + at * H;
        const float* hp = s.hprev.data<float>() + at * H;
        const float* dy = dout.defined() ? dout.data<float>() + at * H : nullptr;
        float* gx = dgx.data<float>() + at * G3;
        float* gh = dgh.data<float>() + at * G3;
        float* dhb = dh.data<float>() + b * H;
        for (int64_t j = 0; j < H; ++j) {
          float r = g[j], z = g[H + j], n = g[2 * H + j];
          float dht = dhb[j] + (dy ? dy[j] : 0.0f);
          // h' = (1 - z) n + z h
          float dn = dht * (1.0f - z) * (1.0f - n * n);  // through n = tanh(.)
          float dz = dht * (hp[j] - n) * z * (1.0f - z);  // through z = sigma(.)
          // n = tanh(W_in x + b_in + r (W_hn h + b_hn))
          float dr = dn * hn[j] * r * (1.0f - r);  // through r = sigma(.)
          gx[j] = dr, gx[H + j] = dz, gx[2 * H + j] = dn;
          gh[j] = dr, gh[H + j] = dz, gh[2 * H + j] = dn * r;
          dhb[j] = dht * z;  // the direct path; the GEMM below adds the gates' path
        }
      },
      [&](int64_t t) {
        // dh += d(h W_hh^T + b_hh)_t W_hh
        gemm({false, false, B, H, G3, 1.0f, 1.0f, dgh.data<float>() + t * G3, T * G3, whh.data<float>(), H,
              dh.data<float>(), H});
      });
  return dgx;
}

}  // namespace

RnnResult gru(const Var& x, const Var& h0, const RnnWeights& w, const Tensor& lengths, bool reverse) {
  const RnnDims d = rnn_dims("gru", x, w, 3);
  const int64_t B = d.B, T = d.T, H = d.H, G3 = 3 * H;
  const std::vector<int32_t> len = sequence_lengths("gru", lengths, B, T);
  Tensor xv = x.value().contiguous(), whh = w.w_hh.value().contiguous();
  Tensor bhh = w.b_hh.value().contiguous();
  GruSaved s;
  // x W_ih^T + b_ih for every step in one GEMM              [B, T, 3H]
  s.gates = input_projection(xv, w, d, false);
  s.hn = Tensor::zeros({B, T, H});
  s.hprev = Tensor::empty({B, T, H});
  Tensor out = Tensor::zeros({B, T, H});
  Tensor h = initial_state("gru", h0, B, H);  // [B, H]
  Tensor hp = Tensor::empty({B, G3});         // h W_hh^T + b_hh of one step
  for (int64_t step = 0; step < T; ++step) {
    const int64_t t = reverse ? T - 1 - step : step;
    for (int64_t b = 0; b < B; ++b) std::copy(bhh.data<float>(), bhh.data<float>() + G3, hp.data<float>() + b * G3);
    gemm({false, true, B, G3, H, 1.0f, 1.0f, h.data<float>(), H, whh.data<float>(), H, hp.data<float>(), G3});
    parallel_for(B, 4, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t at = b * T + t;
        float* hb = h.data<float>() + b * H;
        std::copy(hb, hb + H, s.hprev.data<float>() + at * H);
        if (t >= len[static_cast<size_t>(b)]) continue;  // padded: state unchanged, output 0
        float* g = s.gates.data<float>() + at * G3;
        const float* ph = hp.data<float>() + b * G3;
        float* hn = s.hn.data<float>() + at * H;
        float* y = out.data<float>() + at * H;
        for (int64_t j = 0; j < H; ++j) {
          float r = sigmoidf(g[j] + ph[j]);
          float z = sigmoidf(g[H + j] + ph[H + j]);
          float n = std::tanh(g[2 * H + j] + r * ph[2 * H + j]);
          g[j] = r, g[H + j] = z, g[2 * H + j] = n;
          hn[j] = ph[2 * H + j];
          hb[j] = (1.0f - z) * n + z * hb[j];  // h' = (1 - z) n + z h
          y[j] = hb[j];
        }
      }
    });
  }
  const bool grad = needs_grad({&x, &h0, &w.w_ih, &w.w_hh, &w.b_ih, &w.b_hh});
  RnnResult r{make_output(out, grad), make_output(h, grad), Var()};
  if (!grad) return r;
  record_backward([x, h0, w, xv, whh, s, len, d, reverse, r]() {
    if (!r.output.grad().defined() && !r.h_n.grad().defined()) return;
    Tensor dout = r.output.grad().defined() ? r.output.grad().contiguous() : Tensor();
    Tensor dh = r.h_n.grad().defined() ? r.h_n.grad().clone() : Tensor::zeros({d.B, d.H});
    Tensor dgh;
    Tensor dgx = gru_bptt(s, dout, dh, dgh, whh, len, d, reverse);
    if (h0.defined() && h0.requires_grad()) h0.accumulate_grad(dh);
    input_projection_backward(x, xv, w, dgx, d, false);
    recurrent_weight_backward(w, dgh, s.hprev, d);
    bias_backward(w.b_hh, dgh.data<float>(), d.B * d.T, 3 * d.H);
  });
  return r;
}

Var gru_cell(const Var& x, const Var& h, const RnnWeights& w) {
  if (!(x.dim() == 2)) fail("gru_cell: input must be [batch, in], got ", shape_str(x.shape()));
  return gru(reshape(x, {x.size(0), 1, x.size(1)}), h, w).h_n;
}

}  // namespace attn
