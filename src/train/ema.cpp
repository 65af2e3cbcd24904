#include "attn/train/ema.h"

#include <algorithm>

#include <cstdio>

#include "attn/error.h"
#include "attn/train/checkpoint.h"

namespace attn {

Ema make_ema(const std::vector<std::pair<std::string, Var>>& params, double decay) {
  check(decay >= 0.0 && decay < 1.0, "train.ema_decay must be in [0, 1), got ", decay);
  Ema e;
  e.decay = decay;
  for (const auto& [name, p] : params) e.shadow.emplace_back(name, p.value().clone());
  return e;
}

double ema_decay_at(double decay, int64_t step) {
  return std::min(decay, (1.0 + static_cast<double>(step)) / (10.0 + static_cast<double>(step)));
}

void ema_update(Ema& ema, const std::vector<std::pair<std::string, Var>>& params, int64_t step) {
  check(ema.shadow.size() == params.size(), "ema_update: ", ema.shadow.size(), " averaged tensors for ",
        params.size(), " parameters");
  const float d = static_cast<float>(ema_decay_at(ema.decay, step)), w = 1.0f - d;
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor theta = params[i].second.value().contiguous();
    Tensor& avg = ema.shadow[i].second;
    const float* x = theta.data<float>();
    float* a = avg.data<float>();
    const int64_t n = avg.numel();
    // ema + (1 - d)(theta - ema) = d ema + (1 - d) theta, one rounding fewer
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t j = 0; j < n; ++j) a[j] += w * (x[j] - a[j]);
  }
}

std::map<std::string, Tensor> ema_tensors(const Ema& ema) {
  return {ema.shadow.begin(), ema.shadow.end()};
}

void restore_ema(Ema& ema, const std::map<std::string, Tensor>& tensors, const std::string& source) {
  for (auto& [name, avg] : ema.shadow) {
    auto it = tensors.find(name);
    check(it != tensors.end(), source, ": tensor '", name, "' is missing");
    check(it->second.shape() == avg.shape(), source, ": tensor '", name, "' has shape ",
          shape_str(it->second.shape()), ", the model has ", shape_str(avg.shape()));
    avg.copy_from(it->second);
  }
  check(tensors.size() == ema.shadow.size(), source, ": holds ", tensors.size(), " tensors, the model has ",
        ema.shadow.size());
}

void restore_checkpoint_ema(Ema& ema, const std::vector<std::pair<std::string, Var>>& params,
                            const std::string& checkpoint) {
  if (ema.decay == 0) return;
  const std::map<std::string, Tensor> saved = load_checkpoint_ema(checkpoint);
  if (saved.empty()) {
    std::fprintf(stderr, "%s has no moving average of the weights: train.ema_decay starts it from the restored weights\n",
                 checkpoint.c_str());
    ema = make_ema(params, ema.decay);
    return;
  }
  restore_ema(ema, saved, checkpoint + "/ema.safetensors");
}

}  // namespace attn
