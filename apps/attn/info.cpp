// attn info: what attn runs on here, and (--kernels) the dispatch table as it resolves on this CPU.
#include <cstdio>

#include "args.h"
#include "attn/kernels/dispatch.h"
#include "attn/kernels/runtime_info.h"

namespace attn::cli {

int run_info(int argc, char** argv) {
  CLI::App args{"Prints the CPU, the instruction set of attn's kernels, the libraries' versions, threads\n"
                "and the precisions' hardware support; with --kernels, the dispatch table: which\n"
                "kernel computes each class of product, and which rules apply on this CPU.",
                "attn info"};
  describe(args, "attn info --kernels");
  bool kernels = false, table_only = false;
  args.add_flag("--kernels", kernels, "print the kernel dispatch table");
  args.add_flag("--table-only", table_only,
                "print only the dispatch table, unmarked: the same on every CPU (docs/performance.md)");
  if (!parse(args, argc, argv)) return 0;
  if (table_only) {
    std::printf("%s", describe_dispatch_table(false).c_str());
    return 0;
  }
  std::printf("%s", describe_runtime().c_str());
  if (kernels) std::printf("\nkernel dispatch (first matching rule wins):\n%s", describe_dispatch_table().c_str());
  return 0;
}

}  // namespace attn::cli
