// The command lines of the bench programs: CLI11's own options with their ranges (CLI::Range),
// --help printed, a bad flag an attn::Error naming it. Benchmarks are clients of the library only.
#pragma once

#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "attn/error.h"

namespace attn::bench {

// An example line closing --help; the last of a repeated flag counts.
inline void describe(CLI::App& app, const std::string& example) {
  app.footer("example:\n  " + example);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// False when --help was asked for (and printed).
inline bool parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return false;
  } catch (const CLI::ParseError& e) {
    fail(e.what(), " (see ", app.get_name(), " --help)");
  }
  return true;
}

}  // namespace attn::bench
