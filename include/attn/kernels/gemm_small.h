// gemm_small: C = alpha op(A) op(B) + beta C on the calling thread, for the small products of one
// attention block (Tq x Tk x d_k with lengths and d_k of tens to a few hundred), which run inside
// a parallel loop over the blocks. oneDNN's sgemm reaches 30-60% of one core's peak on these
// (a 32 x 32 x 64 product is ~130 kFLOP, about a microsecond of work, and sgemm's set-up and
// packing cost as much again); this kernel packs nothing but a transposed B and keeps a
// 6 x 32 tile of C in registers over the whole k.
#pragma once

#include "attn/kernels/gemm.h"

namespace attn {

// Same arguments and result as gemm(g) (beta == 0: C is not read), on one thread, any size;
// meant for m, n and k up to a few hundred. On AVX2 CPUs (active_isa(), kernels/cpu.h) the
// tile is 6 x 16; generic: plain loops.
void gemm_small(const GemmArgs& g);

}  // namespace attn
