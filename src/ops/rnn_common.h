// What the LSTM and GRU ops share: shape checks, the per-row sequence lengths, and the input
// projection of the whole sequence (one GEMM) with its backward.
#pragma once

#include <cmath>
#include <vector>

#include "attn/kernels/elementwise.h"
#include "attn/ops/rnn.h"

namespace attn::rnn_detail {

struct RnnDims {
  int64_t B = 0, T = 0, in = 0, H = 0, G = 0;  // batch, steps, input size, hidden size, gates
};

// Checks x [B, T, in] against the weights' shapes for `gates` gates.
RnnDims rnn_dims(const char* op, const Var& x, const RnnWeights& w, int64_t gates);

// lengths[b] (each in [1, T]), or T for every row when `lengths` is undefined.
std::vector<int32_t> sequence_lengths(const char* op, const Tensor& lengths, int64_t B, int64_t T);

// Backpropagation through time, from the forward pass's last step back to its first: at each step t,
// cell(b, t) for every sequence b that is running at t (a padded step passes the state through),
// in parallel over b, then recurrent(t) (the state's gradient through W_hh, one GEMM for the batch).
template <class Cell, class Recurrent>
void bptt_steps(const RnnDims& d, const std::vector<int32_t>& len, bool reverse, Cell cell, Recurrent recurrent) {
  for (int64_t step = d.T - 1; step >= 0; --step) {
    const int64_t t = reverse ? d.T - 1 - step : step;
    parallel_for(d.B, 4, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)
        if (t < len[static_cast<size_t>(b)]) cell(b, t);
    });
    recurrent(t);
  }
}

// A dense [B, H] copy of an initial state, or zeros when it is undefined.
Tensor initial_state(const char* op, const Var& s, int64_t B, int64_t H);

// x W_ih^T + b_ih (+ b_hh when add_hh): [B*T, G*H] as [B, T, G*H].
Tensor input_projection(const Tensor& x, const RnnWeights& w, const RnnDims& d, bool add_hh);

// Given d(pre-activations) dg [B, T, G*H] of the input projection: dx += dg W_ih,
// dW_ih += dg^T x, db_ih += sum_rows dg (and db_hh too when add_hh).
void input_projection_backward(const Var& x, const Tensor& xv, const RnnWeights& w, const Tensor& dg,
                               const RnnDims& d, bool add_hh);

// dW += dg^T h over B*T rows: dg [B*T, G*H], h [B*T, H] (the recurrent weight's gradient).
void recurrent_weight_backward(const RnnWeights& w, const Tensor& dg, const Tensor& hprev, const RnnDims& d);

// sum over rows of a [rows, n] matrix into b's gradient.
void bias_backward(const Var& b, const float* g, int64_t rows, int64_t n);

inline float sigmoidf(float v) { return 1.0f / (1.0f + std::exp(-v)); }

}  // namespace attn::rnn_detail
