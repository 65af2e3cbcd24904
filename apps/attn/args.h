// The command line of each subcommand, parsed by CLI11 (--name value, --name=value, flags,
// positionals, --help). The flags several subcommands share (--model, --threads, --precision,
// --batch, --beam) are declared here once, so they are spelled, checked and described alike.
// Numbers are read as decimal into their own type and checked against a range: 32.7 or
// 4294967297 for an int flag is an error naming the flag, never a truncated or wrapped value.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "attn/kernels/precision.h"
#include "attn/models/seq2seq.h"
#include "attn/option_table.h"
#include "attn/translate/options.h"  // parse_whole, parse_weights

namespace attn::cli {

// A subcommand's parser: "attn translate", its summary, and an example line closing its --help.
// A standalone program passes its own name ("bench_train").
void describe(CLI::App& app, const std::string& example);

// Parses argv (argv[0] is the command's name). Returns false when --help was asked for (and
// printed); a bad command line throws attn::Error naming the flag and value, pointing at --help.
bool parse(CLI::App& app, int argc, char** argv);

// A whole number in [min, max] into `value` (whose initial value is the default shown).
CLI::Option* add_int(CLI::App& app, const std::string& flag, int& value, int min, int max, const std::string& help);
// A finite number in [min, max].
CLI::Option* add_real(CLI::App& app, const std::string& flag, double& value, double min, double max,
                      const std::string& help);
// A file or directory name; each occurrence of a repeatable one adds a value.
CLI::Option* add_text(CLI::App& app, const std::string& flag, std::string& value, const std::string& help);
CLI::Option* add_repeated(CLI::App& app, const std::string& flag, std::vector<std::string>& values,
                          const std::string& help);

// --model DIR (required).
CLI::Option* add_model(CLI::App& app, std::string& dir, const std::string& help);
// --threads N, 1 .. attn::kMaxThreads; `fallback` (0: all cores) is shown as the default.
CLI::Option* add_threads(CLI::App& app, int& n, const std::string& fallback);
// --precision of inference, fp32, bf16 or int8, checked by attn::parse_precision; empty (the
// default): the model's own (model_precision).
CLI::Option* add_precision(CLI::App& app, std::string& name);
// The precision --precision names, or when it is empty the one model_dir/config.json records
// (attn convert's files), fp32 for a model that records none.
Precision model_precision(const std::string& flag, const std::string& model_dir);

// --batch N: sentences or texts computed together, 1 .. 65536.
CLI::Option* add_batch(CLI::App& app, int& n, const std::string& help);
// --beam K: the beam size, 1 (greedy) .. 1024.
CLI::Option* add_beam(CLI::App& app, int& k);

// Every option of a table of whole numbers (option_table.h) that the command line takes, as a
// flag of `app` with the table's help and default, whose value `b` sets (checked by the library
// as it is set, the message naming the flag).
template <class Options>
void add_option_flags(CLI::App& app, WholeOptionsBuilder<Options>& b, const std::vector<WholeOption<Options>>& fields) {
  for (const WholeOption<Options>& f : fields) {
    if ((f.front_ends & kCli) == 0) continue;
    app.add_option_function<std::string>(f.flag, [&b, &f](const std::string& text) { b.set(f, text); }, f.help)
        ->type_name("N")
        ->default_str(std::to_string(f.default_value()));
  }
}

// How the command line names an option of such a table in its messages: its flag.
template <class Options>
std::string flag_of(const WholeOption<Options>& f) {
  return f.flag;
}

}  // namespace attn::cli
