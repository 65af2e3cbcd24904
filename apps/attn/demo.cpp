// attn demo: a short tour of the core, for the README's first command until the translation
// model takes its place.
#include <cmath>
#include <cstdio>

#include "args.h"
#include "attn/ops.h"
#include "attn/runtime.h"

namespace attn::cli {

int run_demo(int argc, char** argv) {
  CLI::App args{"Shows the core at work: seed 004's attention example, then a small attention model\n"
                "fitted by the autodiff tape and Adam-free gradient descent.", "attn demo"};
  describe(args, "attn demo --steps 200");
  int threads = 2, steps = 200;
  add_threads(args, threads, "2");
  add_int(args, "--steps", steps, 0, 1 << 20, "descent steps");
  if (!parse(args, argc, argv)) return 0;
  set_threads(threads);

  // Seed 004: q.k1 = 112, q.k2 = 96, d_k = 64 -> 14, 12 -> softmax 0.8808, 0.1192.
  Tensor q = Tensor::zeros({1, 1, 1, 64}), k = Tensor::zeros({1, 1, 2, 64}), v = Tensor::zeros({1, 1, 2, 1});
  q.data<float>()[0] = 8;
  k.data<float>()[0] = 14;
  k.data<float>()[64] = 12;
  Tensor w;
  AttentionOptions opt;
  opt.weights = &w;
  scaled_dot_product_attention(Var(q), Var(k), Var(v), {}, opt);
  std::printf("seed 004: q.k = 112, 96; / sqrt(64) = 14, 12; softmax = %.4f, %.4f\n", w.at({0, 0, 0, 0}),
              w.at({0, 0, 0, 1}));

  // Learn to copy the first token of a sequence to every position: self-attention must learn
  // to look at position 0.
  Rng rng(1);
  const int64_t B = 16, T = 6, d = 16;
  Tensor pe = Tensor::zeros({T, d});
  for (int64_t p = 0; p < T; ++p) pe.data<float>()[p * d + p] = 4.0f;  // one-hot positions
  auto param = [&](Shape s, float scale) {
    Tensor t = Tensor::empty(s);
    fill_uniform(t, -scale, scale, rng);
    return Var(t, true);
  };
  Var Wq = param({d, d}, 0.3f), Wk = param({d, d}, 0.3f), Wv = param({d, d}, 0.3f), none;
  std::vector<Var> params{Wq, Wk, Wv};
  for (int step = 0; step <= steps; ++step) {
    Tensor x = Tensor::zeros({B, T, d});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t) {
        x.data<float>()[(b * T + t) * d + T + rng.below(d - T)] = 1.0f;
        for (int64_t i = 0; i < d; ++i) x.data<float>()[(b * T + t) * d + i] += pe.data<float>()[t * d + i];
      }
    Tensor target = x.slice(1, 0, 1).contiguous();
    Tape tape;
    TapeScope scope(tape);
    Var X(x);
    auto heads = [&](const Var& W) { return reshape(linear(X, W, none), {B, 1, T, d}); };
    Var out = reshape(scaled_dot_product_attention(heads(Wq), heads(Wk), heads(Wv), {}), {B, T, d});
    Var loss = mean(mul(sub(out, Var(target)), sub(out, Var(target))));
    tape.backward(loss);
    for (Var& p : params) {
      float* w = p.value().data<float>();
      const float* g = p.grad().data<float>();
      for (int64_t i = 0; i < p.value().numel(); ++i) w[i] -= 2.0f * g[i];
      p.zero_grad();
    }
    if (step % 50 == 0) std::printf("step %3d  loss %.5f\n", step, loss.value().data<float>()[0]);
  }
  return 0;
}

}  // namespace attn::cli
