// attn: one binary, one subcommand per task. Each subcommand lives in apps/attn/ and registers
// itself in cli::commands(); this file only dispatches and turns errors into messages.
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "command.h"
#include "attn/error.h"
#include "attn/runtime.h"

int main(int argc, char** argv) {
  using namespace attn::cli;
  attn::flush_denormals_everywhere();  // denormals slow the GEMMs ~50x
  const auto& cmds = commands();
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    std::printf("attn: the Transformer of 'Attention Is All You Need' on the CPU\n\n"
                "usage: attn COMMAND [options]   (attn COMMAND --help for each)\n\ncommands:\n");
    for (const auto& c : cmds) std::printf("  %-14s %s\n", c.name.c_str(), c.summary.c_str());
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("attn 0.1.0\n");
    return 0;
  }
  for (const auto& c : cmds) {
    if (c.name != argv[1]) continue;
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const attn::Error& e) {
      std::fprintf(stderr, "attn %s: error: %s\n", argv[1], e.what());
      return 1;
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "attn %s: error: out of memory: the machine could not give what this run needs (a smaller "
                   "--batch, --beam or model needs less)\n", argv[1]);
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "attn %s: error: %s\n", argv[1], e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "attn: unknown command '%s' (see attn --help)\n", argv[1]);
  return 2;
}
