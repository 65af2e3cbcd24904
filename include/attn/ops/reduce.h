// Sums and means, over everything or over one dimension.
#pragma once

#include "attn/autodiff/var.h"

namespace attn {

Var sum(const Var& x);                                   // a scalar
Var mean(const Var& x);                                  // a scalar
Var sum(const Var& x, int64_t dim, bool keepdim = false);
Var mean(const Var& x, int64_t dim, bool keepdim = false);

}  // namespace attn
