// Cross-entropy over logits, fused with the log-softmax, exactly PyTorch's
// nn.CrossEntropyLoss(label_smoothing=eps, ignore_index=i, reduction='mean'):
//   loss = 1/n sum_{t_r != i} [ (1 - eps) (-log p_r[t_r]) + eps/V sum_j (-log p_r[j]) ]
// with n the number of rows whose target is not ignored (eps/V: the smoothing mass is spread
// over all V classes, the true one included, as PyTorch and Szegedy et al. do).
#pragma once

#include "attn/autodiff/var.h"

namespace attn {

struct CrossEntropyStats {
  double nll_sum = 0.0;  // sum of -log p[target] over counted rows (for perplexity)
  int64_t count = 0;     // rows whose target is not ignored
  int64_t correct = 0;   // rows whose argmax is the target
};

// logits: [N, V] (or [..., V], flattened); targets: i32 with N elements.
// When every target is ignored the loss is 0 (PyTorch gives NaN).
Var cross_entropy(const Var& logits, const Tensor& targets, float label_smoothing = 0.0f,
                  int32_t ignore_index = -100, CrossEntropyStats* stats = nullptr);

}  // namespace attn
