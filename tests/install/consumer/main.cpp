// Calls the installed library: BLEU of a sentence against itself is 100, and a tensor sum.
#include <cstdio>

#include "attn/metrics/bleu.h"
#include "attn/ops.h"

int main() {
  const double bleu = attn::metrics::corpus_bleu({"The cat sat on the mat."}, {"The cat sat on the mat."}).score;
  attn::Tensor t = attn::Tensor::full({2, 3}, 1.0f);
  const float total = attn::sum(attn::Var(t)).value().data<float>()[0];
  std::printf("bleu %.1f, sum %.1f\n", bleu, total);
  return bleu > 99.99 && total == 6.0f ? 0 : 1;
}
