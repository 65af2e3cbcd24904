// Training throughput of the translation Transformer: target tokens per second of full
// optimizer steps (forward, label-smoothed cross-entropy, backward, Adam), the loop of
// attn train (src/train/translation_trainer.cpp) on random ids, so that the figure can be set
// beside PyTorch's twin (bench/torch_bench.py train) on the same configuration.
//
//   bench_train [--config base|small] [--threads N] [--batch B] [--len T] [--steps S]
//               [--warmup W] [--peak | --peak-only] [--precision fp32[,bf16...]]
//
// base: d_model 512, 6+6 layers, 8 heads, d_ff 2048; small: 256, 3+3, 4 heads, 1024; both
// vocabulary 8000, dropout 0.1, label smoothing 0.1, batch B sentences of T source and T target
// tokens (default 128 x 32, no padding). --peak also measures the fp32 GEMM peak, just before the
// timed steps and just after them, and reports their mean (--peak-only: one measurement, nothing
// else): the machine's speed drifts by a quarter over minutes, so a fraction of the peak wants a
// peak of the same minutes. --precision (kernels/precision.h) takes a comma-separated list: the
// steps then alternate between the precisions on the same model (fp32, bf16, fp32, bf16, ...:
// interleaved, so that load from other processes hits both alike), each timed on its own. Prints
// one JSON line per precision:
// {"precision", "tokens_per_s", "step_s", "cpu_step_s", "steps", "peak_rss_mb", "gemm_peak_gflops",
// "gemm_peak_before", "gemm_peak_after"};
// cpu_step_s is the process's CPU time per step (all threads), the figure to compare when other
// jobs share the cores.
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attn/runtime.h"
#include "bench_args.h"
#include "attn/error.h"
#include "attn/kernels/gemm.h"
#include "attn/kernels/precision.h"
#include "attn/train/progress.h"
#include "attn/models/transformer.h"
#include "attn/ops/loss.h"
#include "attn/train/adam.h"

using namespace attn;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string config = "small";
  int threads = 2;
  int64_t batch = 128, len = 32;
  int steps = 5, warmup = 1;
  bool peak = false, peak_only = false;
  std::vector<Precision> precisions{Precision::fp32};
};

// Returns false when --help was asked for.
bool parse(int argc, char** argv, Options& o) {
  CLI::App a{"Training throughput of the translation Transformer on random ids.", "bench_train"};
  bench::describe(a, "bench_train --config base --threads 2 --precision fp32,bf16");
  std::string precision = "fp32";
  int batch = static_cast<int>(o.batch), len = static_cast<int>(o.len);
  a.add_option("--config", o.config, "base or small");
  a.add_option("--threads", o.threads, "threads for the matrix products and attn\'s loops")->check(CLI::Range(1, kMaxThreads));
  a.add_option("--batch", batch, "sentences a step")->check(CLI::Range(1, 65536));
  a.add_option("--len", len, "source and target tokens a sentence")->check(CLI::Range(1, 1 << 16));
  a.add_option("--steps", o.steps, "timed steps")->check(CLI::Range(1, 1 << 20));
  a.add_option("--warmup", o.warmup, "untimed steps first")->check(CLI::Range(0, 1 << 20));
  a.add_option("--precision", precision, "comma-separated list: fp32, bf16 (interleaved steps)");
  a.add_flag("--peak", o.peak, "also measure the fp32 GEMM peak (before and after the steps; their mean)");
  a.add_flag("--peak-only", o.peak_only, "only measure the fp32 GEMM peak");
  if (!bench::parse(a, argc, argv)) return false;
  o.batch = batch, o.len = len;
  o.precisions = parse_precision_list(precision, "bench_train --precision");
  o.peak = o.peak || o.peak_only;
  return true;
}

TransformerConfig config_named(const std::string& name) {
  TransformerConfig c;  // the paper's base model
  if (name == "small") {
    c.d_model = 256;
    c.encoder_layers = c.decoder_layers = 3;
    c.heads = 4;
    c.d_ff = 1024;
  } else if (name != "base") {
    fail("bench_train: --config must be base or small, got ", name);
  }
  c.max_len = 512;
  return c;
}

// [rows, len] random ids in [3, vocab) (no padding, bos or eos: every position is a token).
Tensor random_ids(int64_t rows, int64_t len, int64_t vocab, Rng& rng) {
  Tensor t = Tensor::empty({rows, len}, DType::i32);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<int32_t>()[i] = 3 + static_cast<int32_t>(rng.below(static_cast<uint64_t>(vocab - 3)));
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options o;
    if (!parse(argc, argv, o)) return 0;
    set_num_threads(o.threads);
    const double peak_before = o.peak ? measure_gemm_peak_gflops(o.threads) : 0.0;
    if (o.peak_only) {
      std::printf("{\"gemm_peak_gflops\": %.1f, \"threads\": %d}\n", peak_before, o.threads);
      return 0;
    }
    TransformerConfig c = config_named(o.config);
    Transformer model = make_transformer(c, 1);
    Adam adam(model.parameters());
    Rng data_rng(5), dropout_rng(7);
    Tensor src = random_ids(o.batch, o.len, c.src_vocab, data_rng);
    Tensor tgt_in = random_ids(o.batch, o.len, c.tgt_vocab, data_rng);
    Tensor tgt_out = random_ids(o.batch, o.len, c.tgt_vocab, data_rng);
    Tensor src_pad = padding_mask(src, c.pad_id);
    Context ctx{true, c.dropout, &dropout_rng};
    float last_loss = 0.0f;
    // One model per precision, the same weights (one optimizer), each prepared for training in it.
    const size_t np = o.precisions.size();
    std::vector<Transformer> models(np, model);
    for (size_t j = 0; j < np; ++j) prepare(models[j], o.precisions[j], Use::training);
    auto step = [&](const Transformer& m) {
      Tape tape;
      TapeScope scope(tape);
      Var memory = encode(m, src, ctx);
      Var logits = decode(m, tgt_in, memory, src_pad, ctx);
      Var loss = cross_entropy(logits, tgt_out, 0.1f, c.pad_id);
      tape.backward(loss);
      adam.update(1e-4f);
      adam.zero_grad();
      last_loss = loss.value().data<float>()[0];
    };
    for (int i = 0; i < o.warmup; ++i)
      for (const Transformer& m : models) step(m);
    std::vector<double> seconds(np, 0.0), cpu(np, 0.0);
    std::vector<float> losses(np, 0.0f);
    for (int i = 0; i < o.steps; ++i)
      for (size_t j = 0; j < np; ++j) {
        auto t0 = Clock::now();
        const double c0 = process_cpu_seconds();
        step(models[j]);
        seconds[j] += std::chrono::duration<double>(Clock::now() - t0).count();
        cpu[j] += process_cpu_seconds() - c0;
        losses[j] = last_loss;
      }
    const double peak_after = o.peak ? measure_gemm_peak_gflops(o.threads) : 0.0;
    const double peak = (peak_before + peak_after) / 2;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    for (size_t j = 0; j < np; ++j) {
      double step_s = seconds[j] / o.steps;
      std::printf("{\"system\": \"attn\", \"config\": \"%s\", \"precision\": \"%s\", \"threads\": %d, "
                  "\"tokens_per_s\": %.2f, \"step_s\": %.4f, \"cpu_step_s\": %.4f, \"steps\": %d, \"last_loss\": %.4f, "
                  "\"peak_rss_mb\": %.1f, \"gemm_peak_gflops\": %.1f, \"gemm_peak_before\": %.1f, "
                  "\"gemm_peak_after\": %.1f}\n",
                  o.config.c_str(), precision_name(o.precisions[j]), o.threads,
                  static_cast<double>(o.batch * o.len) / step_s, step_s, cpu[j] / o.steps, o.steps, losses[j],
                  ru.ru_maxrss / 1024.0, peak, peak_before, peak_after);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_train: %s\n", e.what());
    return 1;
  }
}
