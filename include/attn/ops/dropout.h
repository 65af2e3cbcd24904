// Inverted dropout (Srivastava et al. 2014; the paper's P_drop): in training each element is
// zeroed with probability p and the rest scaled by 1/(1-p); in evaluation it is the identity.
// The mask comes from a counter-based stream, so it is the same for any thread count.
#pragma once

#include "attn/autodiff/var.h"
#include "attn/tensor/random.h"

namespace attn {

Var dropout(const Var& x, float p, Rng& rng, bool training);

// The keep mask (0 or 1/(1-p)) dropout uses for n elements starting at stream index `first`.
void dropout_mask(float* mask, int64_t n, float p, uint64_t seed, uint64_t first);

}  // namespace attn
