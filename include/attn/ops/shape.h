// Ops that move data without computing: reshape, transpose, slice (views where the layout
// allows), concat and split (copies). Their gradients route dy back to where x came from.
#pragma once

#include <vector>

#include "attn/autodiff/var.h"

namespace attn {

Var reshape(const Var& x, const Shape& shape);                  // one dim may be -1
Var transpose(const Var& x, int64_t a, int64_t b);              // a view
Var slice(const Var& x, int64_t dim, int64_t start, int64_t end);  // [start, end) along dim
Var concat(const std::vector<Var>& xs, int64_t dim);
std::vector<Var> split(const Var& x, const std::vector<int64_t>& sizes, int64_t dim);

}  // namespace attn
