// x W^T for a few rows of x, reading W in place (include/attn/kernels/gemm_few_rows.h): the checks
// and the split of the columns among threads; the kernel (gemm_few_rows_impl.h) is in the table of
// the CPU's Isa (none for generic).
#include "attn/kernels/gemm_few_rows.h"

#include <algorithm>

#include "attn/error.h"
#include "attn/parallel.h"
#include "gemm_backends.h"
#include "gemm_few_rows_impl.h"
#include "kernel_table.h"

namespace attn {

namespace detail {

// No generic form: gemm() keeps dnnl_sgemm.
template <>
void fill_gemm_few_rows<Isa::generic>(KernelTable&) {}

}  // namespace detail

namespace {

// Multiply-adds (m n k) from which the columns are split among threads.
constexpr int64_t kParallelWork = int64_t{1} << 16;

}  // namespace

bool few_rows_available() { return detail::kernel_table().few_rows_columns != nullptr; }

void gemm_few_rows(const GemmArgs& g) {
  detail::check_gemm_args(g, "gemm_few_rows");
  check(!g.trans_a && g.trans_b, "gemm_few_rows: needs A [m, k] and B [n, k] (x W^T)");
  const auto run_columns = detail::kernel_table().few_rows_columns;
  check(run_columns != nullptr, "gemm_few_rows: needs AVX-512 or AVX2 + FMA (this CPU, or ATTN_ISA, gives ",
        isa_name(active_isa()), ")");
  if (g.m == 0 || g.n == 0) return;
  check(g.m <= detail::few_rows::kMaxTiles * detail::few_rows::kMaxTileRows, "gemm_few_rows: m = ", g.m, " is not few");
  // contiguous column ranges, each a multiple of 8 (whole tiles) but the last
  on_each_thread(g.m * g.n * g.k >= kParallelWork, [&](int t, int threads) {
    const int64_t blocks = (g.n + 7) / 8;
    const int64_t j0 = std::min(g.n, blocks * t / threads * 8), j1 = std::min(g.n, blocks * (t + 1) / threads * 8);
    if (j0 < j1) run_columns(g, j0, j1);
  });
}

}  // namespace attn
