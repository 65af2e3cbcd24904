// LSTM over a sequence (PyTorch's nn.LSTM, one layer, one direction): forward and
// backpropagation through time. Shape letters: B batch, T steps, H hidden, G = 4 gates (i, f, g, o).
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
struct LstmSaved {
  Tensor gates;   // [B, T, 4H]: i, f, g, o after their activations
  Tensor hprev;   // [B, T, H]: h before each step
  Tensor cprev;   // [B, T, H]: c before each step
  Tensor tanh_c;  // [B, T, H]: tanh(c') after each step
};

// BPTT: from dL/doutput, dL/dh_n, dL/dc_n to dL/d(gate pre-activations) [B, T, 4H]; dh, dc end as
// dL/dh0, dL/dc0.
Tensor lstm_bptt(const LstmSaved& s, const Tensor& dout, Tensor& dh, Tensor& dc, const Tensor& whh,
                 const std::vector<int32_t>& len, const RnnDims& d, bool reverse) {
  const int64_t B = d.B, T = d.T, H = d.H, G4 = 4 * H;
  Tensor dg = Tensor::zeros({B, T, G4});
  bptt_steps(
      d, len, reverse,
      [&](int64_t b, int64_t t) {
        const int64_t at = b * T + t;
        const float* g = s.gates.data<float>() + at * G4;
        const float* cp = s.cprev.data<float>() + at * H;
        const float* tc = s.tanh_c.data<float>() + at * H;
        const float* dy = dout.defined() ? dout.data<float>() + at * H : nullptr;
        float* dgr = dg.data<float>() + at * G4;
        float* dhb = dh.data<float>() + b * H;
        float* dcb = dc.data<float>() + b * H;
        for (int64_t j = 0; j < H; ++j) {
          float i = g[j], f = g[H + j], gg = g[2 * H + j], o = g[3 * H + j];
          // h' = o tanh(c'):  dh' arrives from the next step and from the output
          float dht = dhb[j] + (dy ? dy[j] : 0.0f);
          // c' = f c + i g:   dc' from the next step and through h'
          float dct = dcb[j] + dht * o * (1.0f - tc[j] * tc[j]);
          dgr[j] = dct * gg * i * (1.0f - i);               // i = sigma(.)
          dgr[H + j] = dct * cp[j] * f * (1.0f - f);        // f = sigma(.)
          dgr[2 * H + j] = dct * i * (1.0f - gg * gg);      // g = tanh(.)
          dgr[3 * H + j] = dht * tc[j] * o * (1.0f - o);    // o = sigma(.)
          dcb[j] = dct * f;
          dhb[j] = 0.0f;  // filled by the GEMM below
        }
      },
      [&](int64_t t) {
        // dh = d(gates_t) W_hh  (padded rows: their dg is 0 and dh kept its value)
        gemm({false, false, B, H, G4, 1.0f, 1.0f, dg.data<float>() + t * G4, T * G4, whh.data<float>(), H,
              dh.data<float>(), H});
      });
  return dg;
}

}  // namespace

RnnResult lstm(const Var& x, const Var& h0, const Var& c0, const RnnWeights& w, const Tensor& lengths,
               bool reverse) {
  const RnnDims d = rnn_dims("lstm", x, w, 4);
  const int64_t B = d.B, T = d.T, H = d.H, G4 = 4 * H;
  const std::vector<int32_t> len = sequence_lengths("lstm", lengths, B, T);
  Tensor xv = x.value().contiguous(), whh = w.w_hh.value().contiguous();
  LstmSaved s;
  // x W_ih^T + b_ih + b_hh for every step in one GEMM        [B, T, 4H]
  s.gates = input_projection(xv, w, d, true);
  s.hprev = Tensor::empty({B, T, H});
  s.cprev = Tensor::empty({B, T, H});
  s.tanh_c = Tensor::zeros({B, T, H});
  Tensor out = Tensor::zeros({B, T, H});
  Tensor h = initial_state("lstm", h0, B, H), c = initial_state("lstm", c0, B, H);  // [B, H]
  for (int64_t step = 0; step < T; ++step) {
    const int64_t t = reverse ? T - 1 - step : step;
    // gates_t += h W_hh^T                                    [B, 4H]
    gemm({false, true, B, G4, H, 1.0f, 1.0f, h.data<float>(), H, whh.data<float>(), H,
          s.gates.data<float>() + t * G4, T * G4});
    parallel_for(B, 4, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t at = b * T + t;
        float* hb = h.data<float>() + b * H;
        float* cb = c.data<float>() + b * H;
        std::copy(hb, hb + H, s.hprev.data<float>() + at * H);
        std::copy(cb, cb + H, s.cprev.data<float>() + at * H);
        if (t >= len[static_cast<size_t>(b)]) continue;  // padded: state unchanged, output 0
        float* g = s.gates.data<float>() + at * G4;
        float* tc = s.tanh_c.data<float>() + at * H;
        float* y = out.data<float>() + at * H;
        for (int64_t j = 0; j < H; ++j) {
          float i = sigmoidf(g[j]), f = sigmoidf(g[H + j]), gg = std::tanh(g[2 * H + j]),
                o = sigmoidf(g[3 * H + j]);
          g[j] = i, g[H + j] = f, g[2 * H + j] = gg, g[3 * H + j] = o;
          cb[j] = f * cb[j] + i * gg;  // c' = f c + i g
          tc[j] = std::tanh(cb[j]);
          hb[j] = o * tc[j];           // h' = o tanh(c')
          y[j] = hb[j];
        }
      }
    });
  }
  const bool grad = needs_grad({&x, &h0, &c0, &w.w_ih, &w.w_hh, &w.b_ih, &w.b_hh});
  RnnResult r{make_output(out, grad), make_output(h, grad), make_output(c, grad)};
  if (!grad) return r;
  record_backward([x, h0, c0, w, xv, whh, s, len, d, reverse, r]() {
    if (!r.output.grad().defined() && !r.h_n.grad().defined() && !r.c_n.grad().defined()) return;
    Tensor dout = r.output.grad().defined() ? r.output.grad().contiguous() : Tensor();
    Tensor dh = r.h_n.grad().defined() ? r.h_n.grad().clone() : Tensor::zeros({d.B, d.H});
    Tensor dc = r.c_n.grad().defined() ? r.c_n.grad().clone() : Tensor::zeros({d.B, d.H});
    Tensor dg = lstm_bptt(s, dout, dh, dc, whh, len, d, reverse);
    if (h0.defined() && h0.requires_grad()) h0.accumulate_grad(dh);
    if (c0.defined() && c0.requires_grad()) c0.accumulate_grad(dc);
    input_projection_backward(x, xv, w, dg, d, true);
    recurrent_weight_backward(w, dg, s.hprev, d);
  });
  return r;
}

RnnResult lstm_cell(const Var& x, const Var& h, const Var& c, const RnnWeights& w) {
  if (!(x.dim() == 2)) fail("lstm_cell: input must be [batch, in], got ", shape_str(x.shape()));
  RnnResult r = lstm(reshape(x, {x.size(0), 1, x.size(1)}), h, c, w);
  r.output = r.h_n;
  return r;
}

}  // namespace attn
