#include "attn/nn/rnn.h"

#include "attn/enum_names.h"
#include "attn/error.h"

namespace attn {

namespace {
const EnumName<RnnCell> kRnnCells[] = {{RnnCell::lstm, "lstm"}, {RnnCell::gru, "gru"}};
}  // namespace

const char* name(RnnCell c) { return name_in(kRnnCells, c); }
void parse(std::string_view text, RnnCell* out, std::string_view what) { *out = parse_in(kRnnCells, text, what); }

std::string rnn_key(const std::string& prefix, const std::string& what, int64_t layer, bool reverse) {
  return prefix + "." + what + "_l" + std::to_string(layer) + (reverse ? "_reverse" : "");
}

std::vector<std::pair<std::string, Shape>> rnn_parameter_shapes(const std::string& prefix, RnnCell cell,
                                                                int64_t layers, bool bidirectional, int64_t in,
                                                                int64_t H) {
  const int64_t G = (cell == RnnCell::gru ? 3 : 4) * H, dirs = bidirectional ? 2 : 1;
  std::vector<std::pair<std::string, Shape>> out;
  for (int64_t l = 0; l < layers; ++l)
    for (int64_t d = 0; d < dirs; ++d) {
      const int64_t layer_in = l == 0 ? in : dirs * H;
      out.emplace_back(rnn_key(prefix, "weight_ih", l, d == 1), Shape{G, layer_in});
      out.emplace_back(rnn_key(prefix, "weight_hh", l, d == 1), Shape{G, H});
      out.emplace_back(rnn_key(prefix, "bias_ih", l, d == 1), Shape{G});
      out.emplace_back(rnn_key(prefix, "bias_hh", l, d == 1), Shape{G});
    }
  return out;
}

Rnn rnn_from(const std::map<std::string, Var>& named, const std::string& prefix, RnnCell cell,
             int64_t layers, bool bidirectional) {
  Rnn r{cell, layers, bidirectional, {}};
  for (int64_t l = 0; l < layers; ++l)
    for (int64_t d = 0; d < r.directions(); ++d) {
      auto at = [&](const std::string& what) {
        auto it = named.find(rnn_key(prefix, what, l, d == 1));
        check(it != named.end(), "rnn: parameter ", rnn_key(prefix, what, l, d == 1), " is missing");
        return it->second;
      };
      r.weights.push_back({at("weight_ih"), at("weight_hh"), at("bias_ih"), at("bias_hh")});
    }
  return r;
}

namespace {

RnnResult run_one(const Rnn& rnn, const Var& x, const Var& h0, const Var& c0, const RnnWeights& w,
                  const Tensor& lengths, bool reverse) {
  if (rnn.cell == RnnCell::gru) return gru(x, h0, w, lengths, reverse);
  return lstm(x, h0, c0, w, lengths, reverse);
}

Var state_at(const RnnState* s, const std::vector<Var> RnnState::*field, size_t i) {
  if (!s || (s->*field).size() <= i) return Var();
  return (s->*field)[i];
}

}  // namespace

Var forward(const Rnn& rnn, const Var& x, const Tensor& lengths, const Context& ctx, const RnnState* initial,
            RnnState* final) {
  Var input = x;  // [B, T, in]
  if (final) *final = RnnState{};
  for (int64_t l = 0; l < rnn.layers; ++l) {
    if (l > 0) input = apply_dropout(input, ctx);  // between layers, as nn.LSTM(dropout=p)
    std::vector<Var> outputs;
    for (int64_t d = 0; d < rnn.directions(); ++d) {
      size_t i = static_cast<size_t>(l * rnn.directions() + d);
      RnnResult r = run_one(rnn, input, state_at(initial, &RnnState::h, i), state_at(initial, &RnnState::c, i),
                            rnn.weights[i], lengths, d == 1);
      outputs.push_back(r.output);  // [B, T, H]
      if (final) {
        final->h.push_back(r.h_n);
        final->c.push_back(r.c_n);
      }
    }
    // Both directions side by side                            [B, T, directions * H]
    input = outputs.size() == 1 ? outputs[0] : concat(outputs, 2);
  }
  return input;
}

Var step(const Rnn& rnn, const Var& x, RnnState& state, const Context& ctx) {
  check(!rnn.bidirectional, "rnn step: a bidirectional stack cannot run one step at a time");
  check(static_cast<int64_t>(state.h.size()) == rnn.layers, "rnn step: state has ", state.h.size(),
        " layers, the stack ", rnn.layers);
  Var input = x;  // [B, in]
  for (int64_t l = 0; l < rnn.layers; ++l) {
    if (l > 0) input = apply_dropout(input, ctx);
    size_t i = static_cast<size_t>(l);
    if (rnn.cell == RnnCell::gru) {
      state.h[i] = gru_cell(input, state.h[i], rnn.weights[i]);
    } else {
      RnnResult r = lstm_cell(input, state.h[i], state.c[i], rnn.weights[i]);
      state.h[i] = r.h_n;
      state.c[i] = r.c_n;
    }
    input = state.h[i];
  }
  return input;  // [B, H]
}

}  // namespace attn
