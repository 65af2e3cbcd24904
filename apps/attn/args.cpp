#include "args.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "attn/error.h"
#include "attn/kernels/precision.h"
#include "attn/models/model_dir.h"
#include "attn/models/stored_precision.h"
#include "attn/runtime.h"
#include "attn/translate/translator.h"

namespace attn::cli {
namespace {

std::string range_text(double min, double max) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%g .. %g", min, max);
  return buf;
}

}  // namespace

void describe(CLI::App& app, const std::string& example) {
  app.footer("example:\n  " + example);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // the last one given counts
}

bool parse(CLI::App& app, int argc, char** argv) {
  const std::string hint = " (see " + app.get_name() + " --help)";
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return false;
  } catch (const CLI::ParseError& e) {
    fail(e.what(), hint);
  } catch (const Error& e) {
    fail(e.what(), hint);
  }
  return true;
}

CLI::Option* add_int(CLI::App& app, const std::string& flag, int& value, int min, int max, const std::string& help) {
  auto set = [&value, flag, min, max](const std::string& text) {
    value = static_cast<int>(parse_whole(flag, text, min, max));
  };
  return app.add_option_function<std::string>(flag, set, help)
      ->type_name("N")
      ->default_str(std::to_string(value));
}

CLI::Option* add_real(CLI::App& app, const std::string& flag, double& value, double min, double max,
                      const std::string& help) {
  auto set = [&value, flag, min, max](const std::string& text) {
    char* end = nullptr;
    double x = std::strtod(text.c_str(), &end);
    check(!text.empty() && end == text.c_str() + text.size() && std::isfinite(x) && x >= min && x <= max, flag,
          " needs a number in ", range_text(min, max), ", got '", text, "'");
    value = x;
  };
  char shown[32];
  std::snprintf(shown, sizeof shown, "%g", value);
  return app.add_option_function<std::string>(flag, set, help)->type_name("X")->default_str(shown);
}

CLI::Option* add_text(CLI::App& app, const std::string& flag, std::string& value, const std::string& help) {
  CLI::Option* o = app.add_option(flag, value, help);
  if (!value.empty()) o->default_str(value);
  return o;
}

CLI::Option* add_repeated(CLI::App& app, const std::string& flag, std::vector<std::string>& values,
                          const std::string& help) {
  return app.add_option(flag, values, help)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);  // one value per occurrence: --ref a --ref b
}

CLI::Option* add_model(CLI::App& app, std::string& dir, const std::string& help) {
  return app.add_option("--model", dir, help)->type_name("DIR")->required();
}

CLI::Option* add_threads(CLI::App& app, int& n, const std::string& fallback) {
  return add_int(app, "--threads", n, 1, kMaxThreads, "threads for the matrix products and attn's loops")
      ->default_str(fallback);
}

CLI::Option* add_precision(CLI::App& app, std::string& name) {
  auto known = [](const std::string& text) {
    parse_precision(text, "--precision");  // throws naming the accepted values
    return std::string();
  };
  return app.add_option("--precision", name,
                        "fp32, bf16 or int8: precision of the linear layers' products (bf16/int8: weights "
                        "converted once, f32 accumulation and outputs; default: the model's, fp32 unless "
                        "attn convert stored it in another)")
      ->check(CLI::Validator(known, "fp32|bf16|int8", "precision"));
}

Precision model_precision(const std::string& flag, const std::string& model_dir) {
  if (!flag.empty()) return parse_precision(flag, "--precision");
  return attn::model_precision(std::nullopt, model_dir);
}

CLI::Option* add_batch(CLI::App& app, int& n, const std::string& help) { return add_int(app, "--batch", n, 1, 65536, help); }

CLI::Option* add_beam(CLI::App& app, int& k) { return add_int(app, "--beam", k, 1, 1024, "beam size K (1: greedy)"); }


}  // namespace attn::cli
