#include "attn/train/adam.h"

#include <algorithm>
#include <cmath>

#include "attn/kernels/elementwise.h"
#include "../kernels/lane_mask.h"

namespace attn {
namespace {

// r_i = sqrt(v_i), correctly rounded either way (std::sqrt's errno check keeps a plain loop
// scalar; the AVX-512 instruction gives the same values 16 at a time).
void sqrt_into(const float* v, float* r, int64_t n) {
#if defined(__AVX512F__)
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = detail::lane_mask(n - i);
    detail::store16(r + i, k, _mm512_maskz_sqrt_ps(k, _mm512_maskz_loadu_ps(k, v + i)));
  }
#else
  for (int64_t i = 0; i < n; ++i) r[i] = std::sqrt(v[i]);
#endif
}

struct AdamStep {
  float b1, b2, eps, wd, step_size, bc2_sqrt;
};

// The update of elements [b, e) of one parameter, in chunks that stay in L1; every loop
// vectorises (pointers and scalars by value, sqrt apart).
void adam_range(float* w, const float* g, float* m, float* v, int64_t b, int64_t e, AdamStep s) {
  constexpr int64_t kChunk = 256;
  float root[kChunk];
  for (int64_t j0 = b; j0 < e; j0 += kChunk) {
    const int64_t n = std::min(kChunk, e - j0);
    float* W = w + j0;
    const float* G = g + j0;
    float* M = m + j0;
    float* V = v + j0;
    for (int64_t j = 0; j < n; ++j) {
      float gj = G[j] + s.wd * W[j];
      M[j] = s.b1 * M[j] + (1.0f - s.b1) * gj;
      V[j] = s.b2 * V[j] + (1.0f - s.b2) * gj * gj;
    }
    sqrt_into(V, root, n);
    for (int64_t j = 0; j < n; ++j) W[j] -= s.step_size * M[j] / (root[j] / s.bc2_sqrt + s.eps);
  }
}

}  // namespace

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
    parallel_for(p.value().numel(), 1 << 14, [=](int64_t b, int64_t e) { adam_range(w, g, pm, pv, b, e, s); });
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
