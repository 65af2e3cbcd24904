// Central finite-difference gradient check for the ops.
//
// For a function f(inputs) -> y and a fixed random weighting w, L = sum(y * w). The analytic
// gradient dL/dx comes from the tape; the numeric one is (L(x + h e_i) - L(x - h e_i)) / 2h,
// with L accumulated in double. They must agree within |a - n| <= atol + rtol |n|.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "attn/autodiff/var.h"
#include "attn/tensor/random.h"

namespace attn::testing {

struct GradCheckOptions {
  float h = 1e-2f;      // step (float32 inputs: a larger step than in double)
  float atol = 2e-4f;
  float rtol = 2e-3f;
};

inline Tensor random_tensor(const Shape& shape, uint64_t seed, float scale = 1.0f) {
  Tensor t = Tensor::empty(shape);
  Rng rng(seed);
  fill_uniform(t, -scale, scale, rng);
  return t;
}

// Returns the largest violation ratio |a - n| / (atol + rtol |n|) (<= 1 passes).
inline double grad_check(const std::string& name, std::vector<Tensor> inputs,
                         const std::function<Var(const std::vector<Var>&)>& f,
                         GradCheckOptions opt = {}) {
  // Analytic gradients.
  std::vector<Var> vars;
  for (auto& t : inputs) vars.emplace_back(t.clone(), true);
  Tape tape;
  Tensor w;
  {
    TapeScope scope(tape);
    Var y = f(vars);
    w = random_tensor(y.shape(), 987654321, 1.0f);
    tape.backward(y, w);  // dL/dy = w
  }
  auto loss_at = [&](const std::vector<Tensor>& xs) {
    std::vector<Var> vs;
    for (const auto& t : xs) vs.emplace_back(t, false);
    Tensor y = f(vs).value().contiguous();
    double l = 0;
    for (int64_t i = 0; i < y.numel(); ++i) l += static_cast<double>(y.data<float>()[i]) * w.data<float>()[i];
    return l;
  };
  double worst = 0, max_diff = 0;
  for (size_t a = 0; a < inputs.size(); ++a) {
    Tensor analytic = vars[a].grad().defined() ? vars[a].grad().contiguous() : Tensor::zeros(inputs[a].shape());
    for (int64_t i = 0; i < inputs[a].numel(); ++i) {
      std::vector<Tensor> plus, minus;
      for (const auto& t : inputs) {
        plus.push_back(t.clone());
        minus.push_back(t.clone());
      }
      plus[a].data<float>()[i] += opt.h;
      minus[a].data<float>()[i] -= opt.h;
      double numeric = (loss_at(plus) - loss_at(minus)) / (2.0 * opt.h);
      double an = analytic.data<float>()[i];
      double diff = std::fabs(an - numeric);
      max_diff = std::max(max_diff, diff);
      double ratio = diff / (opt.atol + opt.rtol * std::fabs(numeric));
      if (ratio > worst) worst = ratio;
      if (ratio > 1.0)
        ADD_FAILURE() << name << ": input " << a << " element " << i << " analytic " << an
                      << " numeric " << numeric;
    }
  }
  std::printf("[gradcheck] %-28s max|diff| %.2e (tolerance %.0e + %.0e|n|) %s\n", name.c_str(),
              max_diff, opt.atol, opt.rtol, worst <= 1.0 ? "ok" : "FAIL");
  return worst;
}

}  // namespace attn::testing
