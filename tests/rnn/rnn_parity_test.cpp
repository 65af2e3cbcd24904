// PyTorch parity of the recurrent layers and of the attention scores, on the fixtures of
// tests/rnn/make_rnn_fixtures.py: nn.LSTM and nn.GRU (2 layers, bidirectional, a packed padded
// batch, given initial states) and one attention step per score function. Outputs and the
// gradients of every input and weight.
#include <gtest/gtest.h>

#include "attn/nn/attention_score.h"
#include "attn/nn/rnn.h"
#include "attn/ops.h"
#include "rnn_test_util.h"

namespace attn {
namespace {

using testing::expect_close;
using testing::load_rnn_fixture;

constexpr double kTol = 1e-5;

// [layers*dirs, B, H] -> the i-th [B, H]
Var state_slice(const Var& s, int64_t i) { return Var(s.value().select(0, i).contiguous(), true); }

void check_stack(const std::string& cell) {
  auto t = load_rnn_fixture(cell);
  std::map<std::string, Var> named;
  for (auto& [k, v] : t)
    if (k.rfind("rnn.", 0) == 0) named["rnn." + k.substr(4)] = Var(v.clone(), true);
  RnnCell kind;
  parse(cell, &kind);
  Rnn rnn = rnn_from(named, "rnn", kind, 2, true);
  const bool lstm = cell == "lstm";
  Var x(t["x"].clone(), true);
  RnnState initial;
  for (int64_t i = 0; i < 4; ++i) {
    initial.h.push_back(state_slice(Var(t["h0"]), i));
    if (lstm) initial.c.push_back(state_slice(Var(t["c0"]), i));
  }
  Tape tape;
  RnnState final;
  Var out;
  {
    TapeScope scope(tape);
    out = forward(rnn, x, t["lengths"], Context{}, &initial, &final);
    // L = sum(out * d_out) + sum(h_n * d_h_n) (+ sum(c_n * d_c_n))
    Var loss = sum(mul(out, Var(t["d_out"])));
    for (int64_t i = 0; i < 4; ++i) {
      loss = add(loss, sum(mul(final.h[static_cast<size_t>(i)], Var(t["d_h_n"].select(0, i).contiguous()))));
      if (lstm) loss = add(loss, sum(mul(final.c[static_cast<size_t>(i)], Var(t["d_c_n"].select(0, i).contiguous()))));
    }
    tape.backward(loss);
  }
  expect_close(cell + " output", out.value(), t["out"], kTol);
  for (int64_t i = 0; i < 4; ++i) {
    expect_close(cell + " h_n[" + std::to_string(i) + "]", final.h[static_cast<size_t>(i)].value(),
                 t["h_n"].select(0, i).contiguous(), kTol);
    if (lstm)
      expect_close(cell + " c_n[" + std::to_string(i) + "]", final.c[static_cast<size_t>(i)].value(),
                   t["c_n"].select(0, i).contiguous(), kTol);
    expect_close(cell + " grad h0[" + std::to_string(i) + "]", initial.h[static_cast<size_t>(i)].grad(),
                 t["grad.h0"].select(0, i).contiguous(), kTol);
    if (lstm)
      expect_close(cell + " grad c0[" + std::to_string(i) + "]", initial.c[static_cast<size_t>(i)].grad(),
                   t["grad.c0"].select(0, i).contiguous(), kTol);
  }
  expect_close(cell + " grad x", x.grad(), t["grad.x"], kTol);
  int checked = 0;
  for (auto& [k, v] : named) {
    expect_close(cell + " grad " + k, v.grad(), t["grad." + k], kTol);
    ++checked;
  }
  EXPECT_EQ(checked, 16) << "weights of 2 layers x 2 directions";
}

TEST(RnnParity, LstmTwoLayersBidirectionalPacked) { check_stack("lstm"); }
TEST(RnnParity, GruTwoLayersBidirectionalPacked) { check_stack("gru"); }

TEST(ScoreParity, EveryScoreFunction) {
  for (const char* kind : {"scaled_dot", "dot", "additive", "bilinear"}) {
    auto t = load_rnn_fixture(std::string("score_") + kind);
    AttentionScore s;
    s.kind = parse_score(kind);
    std::map<std::string, Var> p;
    for (auto& [k, v] : t)
      if (k.rfind("attention.", 0) == 0) p[k] = Var(v.clone(), true);
    auto get = [&](const std::string& k) { return p.count(k) ? p.at(k) : Var(); };
    s.W = get("attention.W");
    s.U = Linear{get("attention.U.weight"), get("attention.U.bias"), {}};
    s.v = get("attention.v");
    Var q(t["q"].clone(), true), k(t["k"].clone(), true);
    Tensor pad = t["pad"].reshape({t["pad"].size(0), 1, t["pad"].size(1)});
    Tape tape;
    Var out;
    {
      TapeScope scope(tape);
      out = attend(s, q, score_keys(s, k), k, pad);
      tape.backward(out, t["d_out"]);
    }
    std::string name = std::string("score ") + kind;
    expect_close(name + " out", out.value(), t["out"], kTol);
    expect_close(name + " grad q", q.grad(), t["grad.q"], kTol);
    expect_close(name + " grad k", k.grad(), t["grad.k"], kTol);
    for (auto& [key, v] : p) expect_close(name + " grad " + key, v.grad(), t["grad." + key], kTol);
  }
}

}  // namespace
}  // namespace attn
