// A small command-line parser for the subcommands: --name value, --name=value, flags,
// positionals, --help generated from the declarations, and an error that names the unknown or
// malformed option.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace attn::cli {

class Args {
 public:
  // `program command` names it in messages ("attn train"); a standalone tool passes program "".
  Args(std::string command, std::string summary, const std::string& program = "attn");

  // Declarations, in the order --help shows them.
  Args& option(const std::string& name, const std::string& help, const std::string& fallback = "");
  Args& flag(const std::string& name, const std::string& help);
  Args& repeated(const std::string& name, const std::string& help);  // may be given many times
  Args& positional(const std::string& name, const std::string& help, bool required = true);

  // Returns false when --help was asked for (and printed); throws attn::Error on bad input.
  bool parse(int argc, char** argv);

  bool has(const std::string& name) const;  // given on the command line (or a positional)
  std::string str(const std::string& name) const;
  int integer(const std::string& name) const;
  double real(const std::string& name) const;
  bool on(const std::string& name) const;  // a flag
  std::vector<std::string> all(const std::string& name) const;
  std::string help() const;

 private:
  struct Spec {
    std::string name, help, fallback;
    enum Kind { Option, Flag, Repeated, Positional } kind;
    bool required = false;
  };
  const Spec* find(const std::string& name) const;
  std::string command_, summary_;
  std::vector<Spec> specs_;
  std::map<std::string, std::vector<std::string>> given_;
};

}  // namespace attn::cli
