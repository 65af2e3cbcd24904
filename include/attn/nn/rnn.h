// A stack of recurrent layers, as PyTorch's nn.LSTM / nn.GRU(num_layers, bidirectional, dropout):
// layer l reads layer l-1's outputs (both directions concatenated), with dropout between layers.
// Weights are the ops of ops/rnn.h, named by PyTorch's keys (weight_ih_l0, weight_ih_l0_reverse...).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "attn/nn/layers.h"
#include "attn/nn/rnn_cell.h"
#include "attn/ops/rnn.h"

namespace attn {

struct Rnn {
  RnnCell cell = RnnCell::lstm;
  int64_t layers = 1;
  bool bidirectional = false;
  std::vector<RnnWeights> weights;  // [layer * directions + direction]

  int64_t directions() const { return bidirectional ? 2 : 1; }
  int64_t gates() const { return cell == RnnCell::gru ? 3 : 4; }
  int64_t hidden() const { return weights.front().w_hh.size(1); }
};

// PyTorch's key of one weight: "<prefix>.weight_ih_l1_reverse" for what = "weight_ih", layer 1,
// the backward direction.
std::string rnn_key(const std::string& prefix, const std::string& what, int64_t layer, bool reverse);

// Every key with its shape, for an input of size `in` and hidden size H.
std::vector<std::pair<std::string, Shape>> rnn_parameter_shapes(const std::string& prefix, RnnCell cell,
                                                                int64_t layers, bool bidirectional, int64_t in,
                                                                int64_t H);

// The stack around named parameters.
Rnn rnn_from(const std::map<std::string, Var>& named, const std::string& prefix, RnnCell cell,
             int64_t layers, bool bidirectional);

// The state of every layer and direction: h (and c for an LSTM) [B, H] at [layer * directions + d].
struct RnnState {
  std::vector<Var> h, c;
};

// x [B, T, in] -> [B, T, directions * H]. lengths: i32 [B] or undefined. `initial` may be null
// (zeros); `final` (if given) receives each layer's and direction's last state.
Var forward(const Rnn& rnn, const Var& x, const Tensor& lengths, const Context& ctx,
            const RnnState* initial = nullptr, RnnState* final = nullptr);

// One step of a unidirectional stack: x [B, in] -> the top layer's new h [B, H]; `state` is
// updated.
Var step(const Rnn& rnn, const Var& x, RnnState& state, const Context& ctx);

}  // namespace attn
