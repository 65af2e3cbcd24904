// Translates stdin with a model through the installed library: beam 4, the 2 best, alignments.
// Prints each hypothesis as attn translate's n-best lines: "i ||| text ||| score ||| links".
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/translate/translator.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL_DIR < sentences\n", argv[0]);
    return 2;
  }
  try {
    const attn::Translator translator({.models = {argv[1]}});
    attn::TranslateOptions options;
    options.search.beam = 4;
    options.search.n_best = 2;
    options.all_hypotheses = true;  // every hypothesis, not only the best
    options.alignment = attn::AlignmentKind::hard;
    std::vector<std::string> lines;
    for (std::string line; std::getline(std::cin, line);) lines.push_back(line);
    for (const attn::TranslationResult& r : translator.translate_text(lines, options))
      for (const attn::TranslationHypothesis& h : r.hypotheses)
        std::printf("%lld ||| %s ||| %.6f ||| %s\n", static_cast<long long>(r.line - 1), h.text.c_str(), h.score,
                    attn::format_hard(attn::hard_alignment(h.alignment)).c_str());
  } catch (const attn::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
