// Embedding lookup: row ids[i] of the table. The backward scatters into the rows used only.
#pragma once

#include "attn/autodiff/var.h"

namespace attn {

// table: [vocab, d]; ids: i32 of any shape; result: [ids..., d].
Var embedding(const Var& table, const Tensor& ids);

}  // namespace attn
