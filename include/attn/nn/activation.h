// The activation inside the position-wise feed-forward network (nn/feed_forward.h): the paper's
// ReLU, or those of models made elsewhere: GELU (BERT; OPUS-MT's and BART's option) and
// swish / SiLU, x sigmoid(x) (Marian's and OPUS-MT's default).
#pragma once

namespace attn {

enum class Activation { relu, gelu, swish };

}  // namespace attn
