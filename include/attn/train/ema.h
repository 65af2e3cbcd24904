// An exponential moving average of the weights (Polyak averaging; Marian's
// --exponential-smoothing, fairseq's --ema-decay). After optimizer step t:
//
//   ema = d_t ema + (1 - d_t) theta,   d_t = min(decay, (1 + t) / (10 + t))
//
// The warm-up d_t (TensorFlow's ExponentialMovingAverage with num_updates) keeps the random
// initial weights from dominating the average of a short run. The average is kept in fp32 beside
// the weights the optimizer trains; validation and the saved model use it, the raw weights are
// saved beside it.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attn/autodiff/var.h"

namespace attn {

struct Ema {
  double decay = 0.0;  // 0: no average
  std::vector<std::pair<std::string, Tensor>> shadow;  // one per parameter, in the parameters' order
};

// A copy of the parameters' values as the average's start.
Ema make_ema(const std::vector<std::pair<std::string, Var>>& params, double decay);

// d_t above.
double ema_decay_at(double decay, int64_t step);

// The update after optimizer step `step` (1 for the first).
void ema_update(Ema& ema, const std::vector<std::pair<std::string, Var>>& params, int64_t step);

// The average by parameter name (sharing the shadow's storage), as checkpoints and models take it.
std::map<std::string, Tensor> ema_tensors(const Ema& ema);

// Sets the average from `tensors` (a checkpoint's ema.safetensors, read from `source`): the names
// and shapes must be the parameters'; errors name the source and tensor.
void restore_ema(Ema& ema, const std::map<std::string, Tensor>& tensors, const std::string& source);

// --resume's average: the checkpoint's ema.safetensors or, for a run that started without an
// average, the restored weights (said on stderr). Nothing when ema.decay is 0.
void restore_checkpoint_ema(Ema& ema, const std::vector<std::pair<std::string, Var>>& params,
                            const std::string& checkpoint);

}  // namespace attn
