#include "attn/train/adam.h"

#include <algorithm>
#include <cmath>
#include <vector>

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

namespace {

// Squares are summed in blocks of this many values, each block on one thread, and the blocks'
// sums added in order: the norm does not depend on the number of threads.
constexpr int64_t kNormBlock = 1 << 15;

// The sum of squares of x[0 .. n) in double, in 8 running sums (one vector of doubles: the
// compiler vectorises the inner loop, which one running sum would keep serial).
double sum_squares(const float* x, int64_t n) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] += static_cast<double>(x[i + j]) * x[i + j];
  for (; i < n; ++i) acc[0] += static_cast<double>(x[i]) * x[i];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

}  // namespace

double grad_norm(const std::vector<std::pair<std::string, Var>>& params) {
  struct Block {
    const float* x;
    int64_t n;
  };
  std::vector<Block> blocks;
  for (const auto& [name, p] : params) {
    if (!p.grad().defined()) continue;
    const float* g = p.grad().data<float>();
    const int64_t n = p.grad().numel();
    for (int64_t k = 0; k < n; k += kNormBlock) blocks.push_back({g + k, std::min(kNormBlock, n - k)});
  }
  std::vector<double> sums(blocks.size());
  parallel_for(static_cast<int64_t>(blocks.size()), 2, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) sums[static_cast<size_t>(k)] = sum_squares(blocks[k].x, blocks[k].n);
  });
  double s = 0.0;
  for (double x : sums) s += x;
  return std::sqrt(s);
}

double clip_grad_norm(const std::vector<std::pair<std::string, Var>>& params, double max_norm) {
  double norm = grad_norm(params);
  if (norm <= max_norm || norm == 0.0) return norm;
  float f = static_cast<float>(max_norm / (norm + 1e-6));
  for (const auto& [name, p] : params) {
    if (!p.grad().defined()) continue;
    float* g = p.grad_buffer().data<float>();
    parallel_for(p.grad().numel(), 1 << 14, [=](int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j) g[j] *= f;
    });
  }
  return norm;
}

}  // namespace attn
