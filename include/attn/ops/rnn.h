// Recurrent layers as ops: one direction of one layer of an LSTM (Hochreiter and Schmidhuber
// 1997) or a GRU (Cho et al. 2014) over a whole sequence, the forward and its hand-written
// backpropagation through time side by side (src/ops/lstm.cpp, src/ops/gru.cpp).
//
// The equations and the weight layout are PyTorch's nn.LSTM / nn.GRU, so weights load one to one
// (weight_ih_l0 [G*H, in], weight_hh_l0 [G*H, H], bias_ih_l0 [G*H], bias_hh_l0 [G*H]):
//   LSTM, gates in the order i, f, g, o (G = 4):
//     i = sigma(W_ii x + b_ii + W_hi h + b_hi)    f = sigma(W_if x + b_if + W_hf h + b_hf)
//     g = tanh(W_ig x + b_ig + W_hg h + b_hg)     o = sigma(W_io x + b_io + W_ho h + b_ho)
//     c' = f * c + i * g                          h' = o * tanh(c')
//   GRU, gates in the order r, z, n (G = 3):
//     r = sigma(W_ir x + b_ir + W_hr h + b_hr)    z = sigma(W_iz x + b_iz + W_hz h + b_hz)
//     n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
//     h' = (1 - z) * n + z * h
//
// The input projections of every time step are one GEMM (x W_ih^T for [batch*T, in]); the
// recurrent step is one [batch, H] x [H, G*H] GEMM and a fused element-wise pass.
//
// Padding: with `lengths`, row b is a sequence of lengths[b] steps, as PyTorch's packed
// sequences: its state stops changing after its last real step (the forward direction's final
// state is that of step lengths[b]-1; the reverse direction starts at step lengths[b]-1), and its
// output at padded steps is 0.
#pragma once

#include "attn/autodiff/var.h"

namespace attn {

struct RnnWeights {
  Var w_ih;  // [G*H, in]
  Var w_hh;  // [G*H, H]
  Var b_ih;  // [G*H]
  Var b_hh;  // [G*H]
};

struct RnnResult {
  Var output;  // [batch, T, H]: h at every step (0 at padded steps)
  Var h_n;     // [batch, H]: the final hidden state
  Var c_n;     // [batch, H]: the final cell state (LSTM only)
};

// x [batch, T, in]; h0, c0 [batch, H] (undefined: zeros); lengths i32 [batch] in [1, T] or
// undefined (every row has T steps); reverse: run from the last step to the first.
RnnResult lstm(const Var& x, const Var& h0, const Var& c0, const RnnWeights& w,
               const Tensor& lengths = {}, bool reverse = false);
RnnResult gru(const Var& x, const Var& h0, const RnnWeights& w, const Tensor& lengths = {},
              bool reverse = false);

// One step (a decoder's): x [batch, in], h and c [batch, H] -> the new state.
RnnResult lstm_cell(const Var& x, const Var& h, const Var& c, const RnnWeights& w);
Var gru_cell(const Var& x, const Var& h, const RnnWeights& w);

}  // namespace attn
