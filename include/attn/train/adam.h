// Adam (Kingma and Ba 2015) as PyTorch's torch.optim.Adam computes it, with the paper's
// beta_1 = 0.9, beta_2 = 0.98, eps = 1e-9 (§5.3) as defaults:
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   p -= (lr / (1 - b1^t)) m / (sqrt(v) / sqrt(1 - b2^t) + eps)
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "attn/autodiff/var.h"

namespace attn {

struct AdamOptions {
  float beta1 = 0.9f, beta2 = 0.98f, eps = 1e-9f;
  float weight_decay = 0.0f;  // L2 added to the gradient, as torch.optim.Adam
};

struct Adam {
  AdamOptions options;
  std::vector<std::pair<std::string, Var>> params;
  std::vector<Tensor> m, v;  // first and second moments, one per parameter
  int64_t step = 0;

  Adam(std::vector<std::pair<std::string, Var>> parameters, AdamOptions opt = {});
  // One update with learning rate lr from the gradients now held; parameters without a
  // gradient are left alone.
  void update(float lr);
  void zero_grad();
};

// sqrt(sum of squared gradients) over the parameters.
double grad_norm(const std::vector<std::pair<std::string, Var>>& params);
// Scales every gradient so that their global norm is at most max_norm; returns the norm before.
double clip_grad_norm(const std::vector<std::pair<std::string, Var>>& params, double max_norm);

}  // namespace attn
