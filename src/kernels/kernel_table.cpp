// The three kernel tables, filled once, and the one active_isa() selects (kernel_table.h).
#include "kernel_table.h"

namespace attn::detail {

namespace {

template <Isa I>
KernelTable make_table() {
  KernelTable t;
  fill_vexp<I>(t);
  fill_attend_rows<I>(t);
  fill_gemm_small<I>(t);
  fill_gemm_few_rows<I>(t);
  fill_gemm_panels<I>(t);
  fill_gemm_s8_gemv<I>(t);
  fill_quantize_s8<I>(t);
  fill_dropout_bits<I>(t);
  fill_adam_update<I>(t);
  return t;
}

}  // namespace

const KernelTable& kernel_table(Isa isa) {
  static const KernelTable tables[] = {make_table<Isa::generic>(), make_table<Isa::avx2>(),
                                       make_table<Isa::avx512>()};
  return tables[static_cast<int>(isa)];
}

const KernelTable& kernel_table() { return kernel_table(active_isa()); }

}  // namespace attn::detail
