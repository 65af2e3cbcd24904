#include "attn/train/adam.h"

#include <algorithm>
#include <cmath>

#include "attn/kernels/adam_update.h"
#include "attn/kernels/elementwise.h"

namespace attn {

Adam::Adam(std::vector<std::pair<std::string, Var>> parameters, AdamOptions opt)
    : options(opt), params(std::move(parameters)) {
  for (const auto& [name, p] : params) {
    m.push_back(Tensor::zeros(p.shape()));
    v.push_back(Tensor::zeros(p.shape()));
  }
}

void Adam::update(float lr) {
  ++step;
  const float b1 = options.beta1, b2 = options.beta2, eps = options.eps, wd = options.weight_decay;
  const float bc1 = 1.0f - std::pow(b1, static_cast<float>(step));
  const float bc2 = 1.0f - std::pow(b2, static_cast<float>(step));
  const float step_size = lr / bc1, bc2_sqrt = std::sqrt(bc2);
  for (size_t i = 0; i < params.size(); ++i) {
    const Var& p = params[i].second;
    if (!p.grad().defined()) continue;
    Tensor weight = p.value();  // a handle: updates land in the parameter
    float* w = weight.data<float>();
    const float* g = p.grad().data<float>();
    float* pm = m[i].data<float>();
    float* pv = v[i].data<float>();
    const AdamStep s{b1, b2, eps, wd, step_size, bc2_sqrt};
    parallel_for(p.value().numel(), 1 << 14,
                 [=](int64_t b, int64_t e) { adam_update(w + b, g + b, pm + b, pv + b, e - b, s); });
  }
}

void Adam::zero_grad() {
  for (auto& [name, p] : params) p.zero_grad();
}

double grad_norm(const std::vector<std::pair<std::string, Var>>& params) {
  double s = 0.0;
  for (const auto& [name, p] : params) {
    if (!p.grad().defined()) continue;
    const float* g = p.grad().data<float>();
    for (int64_t j = 0; j < p.grad().numel(); ++j) s += static_cast<double>(g[j]) * g[j];
  }
  return std::sqrt(s);
}

double clip_grad_norm(const std::vector<std::pair<std::string, Var>>& params, double max_norm) {
  double norm = grad_norm(params);
  if (norm <= max_norm || norm == 0.0) return norm;
  float f = static_cast<float>(max_norm / (norm + 1e-6));
  for (const auto& [name, p] : params) {
    if (!p.grad().defined()) continue;
    float* g = p.grad_buffer().data<float>();
    for (int64_t j = 0; j < p.grad().numel(); ++j) g[j] *= f;
  }
  return norm;
}

}  // namespace attn
