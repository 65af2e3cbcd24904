// Training and inference samples/s of seed 002's classifier (vocab 5000, 4 classes, pad 32,
// d 300, 5 heads, 2 layers, FFN 1024, dropout 0.5, flatten head, batch 128, Adam), the figure
// to set beside PyTorch's: /usr/bin/python3 tests/classify/torch_classifier.py --bench
//   bench_classifier [threads] [seconds per measurement] [precision: fp32, bf16 or int8]
// The precision (kernels/precision.h) applies to training and inference; int8 to inference only
// (training is then skipped). Inference converts the weights once (prepare, Use::inference).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "attn/kernels/gemm.h"
#include "attn/kernels/precision.h"
#include "attn/models/classifier.h"
#include "attn/ops/loss.h"
#include "attn/train/adam.h"

using namespace attn;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  if (argc > 1 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::printf("usage: bench_classifier [threads (2)] [seconds per measurement (10)] [precision: fp32, bf16, int8]\n\n"
                "Training and inference samples/s of seed 002's classifier on random ids; PyTorch's figure:\n"
                "  /usr/bin/python3 tests/classify/torch_classifier.py --bench\n");
    return 0;
  }
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  double budget = argc > 2 ? std::atof(argv[2]) : 10.0;
  const Precision precision = argc > 3 ? parse_precision(argv[3], "bench_classifier precision") : Precision::fp32;
  std::printf("precision %s\n", precision_name(precision));
  set_num_threads(threads);
  ClassifierConfig c;
  c.vocab = 5000;
  c.classes = 4;
  Classifier m = make_classifier(c, 1);
  Adam adam(m.parameters(), AdamOptions{0.9f, 0.999f, 1e-8f, 0.0f});
  const int64_t B = 128;
  Rng rng(7);
  Tensor ids = Tensor::empty({B, c.pad_size}, DType::i32), labels = Tensor::empty({B}, DType::i32);
  for (int64_t i = 0; i < ids.numel(); ++i) ids.data<int32_t>()[i] = 3 + static_cast<int32_t>(rng.below(4997));
  for (int64_t i = 0; i < B; ++i) labels.data<int32_t>()[i] = static_cast<int32_t>(rng.below(4));
  auto measure = [&](const char* what, auto&& step) {
    step();  // warm-up
    auto t0 = Clock::now();
    int n = 0;
    double s = 0;
    do {
      step();
      ++n;
      s = std::chrono::duration<double>(Clock::now() - t0).count();
    } while (s < budget);
    std::printf("%-9s batch %lld: %6.1f ms/batch  %7.0f samples/s  (%d batches, %d threads)\n", what,
                static_cast<long long>(B), 1000 * s / n, n * B / s, n, threads);
  };
  if (precision != Precision::int8) prepare(m, precision, Use::training);
  if (precision != Precision::int8) measure("train", [&] {
    Context ctx{true, c.dropout, &rng};
    Tape tape;
    TapeScope scope(tape);
    Var loss = cross_entropy(classifier_logits(m, ids, ctx), labels);
    tape.backward(loss);
    adam.update(5e-4f);
    adam.zero_grad();
  });
  Classifier inference = m;  // the trained weights, frozen and converted once
  prepare(inference, precision, Use::inference);
  measure("inference", [&] {
    NoGrad no_grad;
    classifier_logits(inference, ids, Context{});
  });
  return 0;
}
