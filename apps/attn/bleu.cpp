// attn bleu: corpus BLEU (and chrF) of a hypothesis file against reference files, printed the
// way sacreBLEU prints its text form.
//   attn bleu --ref newstest.de [--ref second.de] [--chrf] < hyp.de
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "args.h"
#include "attn/error.h"
#include "attn/metrics/bleu.h"
#include "attn/metrics/chrf.h"
#include "attn/metrics/lines.h"

namespace attn::cli {
namespace {

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  check(in.good(), "cannot open '", path, "'");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return metrics::split_lines_as_sacrebleu(text, path);
}

std::vector<std::string> read_stdin_lines() {
  std::ostringstream buffer;
  buffer << std::cin.rdbuf();
  return metrics::split_lines_as_sacrebleu(buffer.str(), "<stdin>");
}

// sacreBLEU's hint: BLEU wants detokenized text, and " ." line ends suggest tokenized output.
void warn_if_tokenized(const std::vector<std::string>& hyps) {
  size_t tokenized = 0;
  for (const auto& h : hyps) tokenized += h.size() >= 2 && h.compare(h.size() - 2, 2, " .") == 0;
  if (tokenized >= 100)
    std::fprintf(stderr,
                 "attn bleu: warning: %zu hypothesis lines end in a tokenized period (' .'); BLEU "
                 "expects detokenized text, as sacreBLEU does\n",
                 tokenized);
}

}  // namespace

int run_bleu(int argc, char** argv) {
  CLI::App args{"Scores a translation against reference translations with sacreBLEU's corpus BLEU\n"
                "(13a tokenizer, exp smoothing) and optionally chrF2; one sentence per line, UTF-8.",
                "attn bleu"};
  describe(args, "attn bleu --ref newstest.de --chrf < hyp.de");
  std::vector<std::string> ref_paths;
  std::string hyp_path;
  bool chrf = false, score_only = false;
  add_repeated(args, "--ref", ref_paths, "reference file, one line per hypothesis line (repeat for more references)")
      ->required();
  add_text(args, "--hyp", hyp_path, "hypothesis file (default: standard input)");
  args.add_flag("--chrf", chrf, "also print chrF2");
  args.add_flag("--score-only", score_only, "print only the numbers, one per line");
  if (!parse(args, argc, argv)) return 0;

  const std::string hyp_name = hyp_path.empty() ? "<stdin>" : hyp_path;
  const std::vector<std::string> hyps =
      hyp_path.empty() ? read_stdin_lines() : read_lines(hyp_path);
  std::vector<std::vector<std::string>> refs;
  for (const auto& path : ref_paths) {
    refs.push_back(read_lines(path));
    size_t n_ref = refs.back().size();
    if (n_ref != hyps.size()) {
      bool ref_longer = n_ref > hyps.size();
      fail("line counts differ: hypothesis ", hyp_name, " has ", hyps.size(), " lines, reference ",
           path, " has ", n_ref, "; first unpaired line: ", ref_longer ? path : hyp_name, ":",
           std::min(n_ref, hyps.size()) + 1);
    }
  }

  warn_if_tokenized(hyps);
  metrics::BleuScore bleu = metrics::corpus_bleu_multi(hyps, refs);
  if (score_only) std::printf("%.2f\n", bleu.score);
  else std::printf("%s\n", bleu.signature_like_text().c_str());
  if (chrf) {
    double chrf = metrics::corpus_chrf_multi(hyps, refs);
    if (score_only) std::printf("%.2f\n", chrf);
    else std::printf("%s\n", metrics::chrf_signature_like_text(chrf).c_str());
  }
  return 0;
}

}  // namespace attn::cli
