// The subcommands of the attn binary. Each apps/attn/<name>.cpp defines a run function and adds
// itself to the table in command.cpp.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace attn::cli {

struct Command {
  std::string name;
  std::string summary;
  std::function<int(int argc, char** argv)> run;  // argv[0] is the command's name
};

const std::vector<Command>& commands();

}  // namespace attn::cli
