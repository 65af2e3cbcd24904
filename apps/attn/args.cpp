#include "args.h"

#include <cstdio>
#include <cstdlib>

#include "attn/error.h"

namespace attn::cli {

Args::Args(std::string command, std::string summary, const std::string& program)
    : command_(program.empty() ? std::move(command) : program + " " + command), summary_(std::move(summary)) {}

Args& Args::option(const std::string& name, const std::string& help, const std::string& fallback) {
  specs_.push_back({name, help, fallback, Spec::Option});
  return *this;
}
Args& Args::flag(const std::string& name, const std::string& help) {
  specs_.push_back({name, help, "", Spec::Flag});
  return *this;
}
Args& Args::repeated(const std::string& name, const std::string& help) {
  specs_.push_back({name, help, "", Spec::Repeated});
  return *this;
}
Args& Args::positional(const std::string& name, const std::string& help, bool required) {
  specs_.push_back({name, help, "", Spec::Positional, required});
  return *this;
}

const Args::Spec* Args::find(const std::string& name) const {
  for (const auto& s : specs_)
    if (s.name == name && s.kind != Spec::Positional) return &s;
  return nullptr;
}

bool Args::parse(int argc, char** argv) {
  std::vector<const Spec*> positionals;
  for (const auto& s : specs_)
    if (s.kind == Spec::Positional) positionals.push_back(&s);
  size_t next_positional = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(help().c_str(), stdout);
      return false;
    }
    if (a.size() > 2 && a.compare(0, 2, "--") == 0) {
      std::string name = a.substr(2), value;
      bool inline_value = false;
      if (auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        inline_value = true;
      }
      const Spec* s = find(name);
      check(s != nullptr, "unknown option --", name, " (see ", command_, " --help)");
      if (s->kind == Spec::Flag) {
        check(!inline_value, "option --", name, " takes no value");
        given_[name].push_back("1");
        continue;
      }
      if (!inline_value) {
        check(i + 1 < argc, "option --", name, " needs a value");
        value = argv[++i];
      }
      if (s->kind == Spec::Option) given_[name].clear();
      given_[name].push_back(value);
      continue;
    }
    check(next_positional < positionals.size(), "unexpected argument '", a, "' (see ",
          command_, " --help)");
    given_[positionals[next_positional++]->name].push_back(a);
  }
  for (; next_positional < positionals.size(); ++next_positional)
    check(!positionals[next_positional]->required, "missing argument ",
          positionals[next_positional]->name, " (see ", command_, " --help)");
  return true;
}

bool Args::has(const std::string& name) const { return given_.count(name) > 0; }

std::string Args::str(const std::string& name) const {
  auto it = given_.find(name);
  if (it != given_.end()) return it->second.back();
  for (const auto& s : specs_)
    if (s.name == name) return s.fallback;
  fail("internal: option --", name, " was never declared");
}

int Args::integer(const std::string& name) const {
  std::string v = str(name);
  char* end = nullptr;
  long x = std::strtol(v.c_str(), &end, 10);
  check(!v.empty() && end && *end == 0, "option --", name, " needs a whole number, got '", v, "'");
  return static_cast<int>(x);
}

double Args::real(const std::string& name) const {
  std::string v = str(name);
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  check(!v.empty() && end && *end == 0, "option --", name, " needs a number, got '", v, "'");
  return x;
}

bool Args::on(const std::string& name) const { return has(name); }

std::vector<std::string> Args::all(const std::string& name) const {
  auto it = given_.find(name);
  return it == given_.end() ? std::vector<std::string>{} : it->second;
}

std::string Args::help() const {
  std::string usage = "usage: " + command_;
  for (const auto& s : specs_)
    if (s.kind == Spec::Positional) usage += s.required ? " " + s.name : " [" + s.name + "]";
  usage += " [options]\n\n" + summary_ + "\n";
  std::string pos, opt;
  for (const auto& s : specs_) {
    std::string left = s.kind == Spec::Positional ? "  " + s.name
                       : s.kind == Spec::Flag      ? "  --" + s.name
                                                   : "  --" + s.name + " VALUE";
    if (left.size() < 26) left.resize(26, ' ');
    else left += "\n" + std::string(26, ' ');
    std::string line = left + s.help;
    if (!s.fallback.empty()) line += " (default: " + s.fallback + ")";
    (s.kind == Spec::Positional ? pos : opt) += line + "\n";
  }
  if (!pos.empty()) usage += "\narguments:\n" + pos;
  usage += "\noptions:\n" + opt + "  --help                  this text\n";
  return usage;
}

}  // namespace attn::cli
