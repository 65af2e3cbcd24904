// Translation throughput: output tokens per second of greedy or beam search (the KV-cached
// batched search of attn translate, src/decode/search.cpp) over a file of source ids, with a
// model in torch_ref.py's layout (or an attn model directory), so that PyTorch (bench/torch_bench.py translate) and
// CTranslate2 (bench/ct2_bench.py) run the same model on the same input.
//
//   bench_translate --model DIR --src IDS [--out IDS] [--beam K] [--batch B] [--max-len N]
//                   [--alpha A] [--threads N] [--repeat R] [--precision fp32[,bf16,int8]] [--stream]
//
// Sentences are taken in file order, B at a time. --stream: continuous batching instead
// (decode/stream.h, as attn serve decodes), B sentences in flight, the next one of the file joining
// at the step after one finishes (a server's steady load of B clients). Output tokens are the generated ids without
// eos. Prints one JSON line per precision: {"precision", "tokens_per_s", "seconds", "tokens",
// "same_as_first", "peak_rss_mb"}; --out writes the best hypothesis of each sentence as ids, one a
// line (for the token-by-token comparison; the first precision's). With several precisions
// (kernels/precision.h) each repeat runs them one after the other (interleaved); bf16 and int8
// weights are converted once, before the clock starts (the first batch decoded for one step), as
// CTranslate2 converts them when it loads a model; the time is the best repeat's. same_as_first: the
// fraction of sentences whose output equals the first precision's. cpu_seconds: the process's
// CPU time over the best repeat (all threads), the figure to compare on a machine shared with
// other jobs, where wall time depends on the share of the cores a run gets.
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "attn/decode/id_lines.h"
#include "attn/decode/search.h"
#include "attn/decode/stream.h"
#include "attn/runtime.h"
#include "bench_args.h"
#include "attn/error.h"
#include "attn/kernels/gemm.h"
#include "attn/kernels/precision.h"
#include "attn/train/progress.h"
#include "attn/models/model_dir.h"

using namespace attn;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string model, src, out;
  int beam = 1, threads = 2, repeat = 1;
  size_t batch = 1;
  int max_len = 32;
  double alpha = 0.0;
  bool stream = false;
  std::vector<Precision> precisions{Precision::fp32};
};

// Returns false when --help was asked for.
bool parse(int argc, char** argv, Options& o) {
  CLI::App a{"Translation throughput: output tokens/s of greedy or beam search over source ids.", "bench_translate"};
  bench::describe(a, "bench_translate --model runs/base --src newstest.ids --beam 4 --batch 32");
  std::string precision = "fp32";
  int batch = static_cast<int>(o.batch);
  a.add_option("--model", o.model, "model directory (attn's or torch_ref.py's weights.npz)");
  a.add_option("--src", o.src, "source ids, one sentence a line");
  a.add_option("--out", o.out, "write the best hypothesis of each sentence as ids");
  a.add_option("--beam", o.beam, "beam size K (1: greedy)")->check(CLI::Range(1, 1024));
  a.add_option("--batch", batch, "sentences at a time")->check(CLI::Range(1, 65536));
  a.add_option("--max-len", o.max_len, "longest output (0: source length + 50, as attn translate)")->check(CLI::Range(0, 1 << 20));
  a.add_option("--alpha", o.alpha, "length penalty")->check(CLI::Range(0, 100));
  a.add_option("--threads", o.threads, "threads for the matrix products and attn\'s loops")->check(CLI::Range(1, kMaxThreads));
  a.add_option("--repeat", o.repeat, "runs; the best is reported")->check(CLI::Range(1, 1 << 20));
  a.add_option("--precision", precision, "comma-separated list: fp32, bf16, int8 (interleaved)");
  a.add_flag("--stream", o.stream, "continuous batching: --batch sentences in flight, each finished one replaced");
  if (!bench::parse(a, argc, argv)) return false;
  o.batch = static_cast<size_t>(batch);
  o.precisions = parse_precision_list(precision, "bench_translate --precision");
  check(!o.model.empty() && !o.src.empty(), "bench_translate: --model and --src are needed");
  check(o.batch >= 1, "bench_translate: --batch must be >= 1");
  return true;
}

// The file `batch` sentences at a time, in order. best[i] gets sentence i's best hypothesis.
void batch_search(const Transformer& m, const std::vector<std::vector<int32_t>>& sources, const SearchOptions& so,
                  size_t batch, std::vector<std::vector<int32_t>>& best) {
  for (size_t first = 0; first < sources.size(); first += batch) {
    const size_t last = std::min(sources.size(), first + batch);
    const auto hyps = search(m, {sources.begin() + first, sources.begin() + last}, so);
    for (size_t i = 0; i < hyps.size(); ++i) best[first + i] = hyps[i][0].tokens;
  }
}

// Continuous batching over the file: `in_flight` sentences decode together, the next joining at
// the step after one finishes. best[i] gets sentence i's best hypothesis.
void stream_search(const Transformer& m, const std::vector<std::vector<int32_t>>& sources, const SearchOptions& so,
                   size_t in_flight, std::vector<std::vector<int32_t>>& best) {
  SearchStream stream(m, so);
  size_t next = 0;
  while (next < sources.size() || stream.size() > 0) {
    for (; next < sources.size() && stream.size() < in_flight; ++next) stream.add(next, sources[next]);
    for (StreamResult& r : stream.step()) best[r.id] = r.hypotheses[0].tokens;
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options o;
    if (!parse(argc, argv, o)) return 0;
    set_num_threads(o.threads);
    // An attn model directory (model.safetensors), else torch_ref.py's layout (weights.npz).
    Transformer model = std::filesystem::exists(o.model + "/model.safetensors") ? load_transformer(o.model)
                                                                               : import_torch(o.model);
    std::vector<std::vector<int32_t>> sources;
    std::ifstream in(o.src);
    check(in.good(), "bench_translate: cannot read ", o.src);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      sources.push_back(parse_ids(line, model.config.src_vocab, o.src + ":" + std::to_string(n)));
    SearchOptions so;
    so.beam = o.beam;
    so.length_penalty = o.alpha;
    so.max_len = o.max_len;
    const size_t np = o.precisions.size();
    std::vector<std::vector<std::vector<int32_t>>> outputs(np, std::vector<std::vector<int32_t>>(sources.size()));
    std::vector<int64_t> tokens(np, 0);
    std::vector<double> seconds(np, 0.0), cpu(np, 0.0);
    // The model prepared for each precision (sharing the f32 weights), its weights converted
    // before the clock as CTranslate2 converts them when it loads; then the first batch decoded
    // for one step, which lays out every weight the search uses.
    std::vector<Transformer> models(np, model);
    for (size_t p = 0; p < np; ++p) {
      prepare(models[p], o.precisions[p], Use::inference);
      if (o.precisions[p] == Precision::fp32 || sources.empty()) continue;
      SearchOptions one = so;
      one.max_len = 1;
      search(models[p], {sources.begin(), sources.begin() + std::min(sources.size(), o.batch)}, one);
    }
    for (int r = 0; r < o.repeat; ++r)
      for (size_t p = 0; p < np; ++p) {
        tokens[p] = 0;
        auto t0 = Clock::now();
        const double c0 = process_cpu_seconds();
        if (o.stream)
          stream_search(models[p], sources, so, o.batch, outputs[p]);
        else
          batch_search(models[p], sources, so, o.batch, outputs[p]);
        for (const auto& ids : outputs[p]) tokens[p] += static_cast<int64_t>(ids.size());
        double s = std::chrono::duration<double>(Clock::now() - t0).count();
        if (r == 0 || s < seconds[p]) seconds[p] = s, cpu[p] = process_cpu_seconds() - c0;  // best of the repeats
      }
    if (!o.out.empty()) {
      std::ofstream out(o.out);
      for (const auto& ids : outputs[0]) out << format_ids(ids) << "\n";
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    for (size_t p = 0; p < np; ++p) {
      size_t same = 0;
      for (size_t i = 0; i < sources.size(); ++i) same += outputs[p][i] == outputs[0][i];
      std::printf("{\"system\": \"attn\", \"precision\": \"%s\", \"beam\": %d, \"batch\": %zu, \"threads\": %d, "
                  "\"tokens_per_s\": %.2f, \"seconds\": %.4f, \"cpu_seconds\": %.4f, \"tokens\": %lld, \"same_as_first\": %.3f, "
                  "\"peak_rss_mb\": %.1f}\n",
                  precision_name(o.precisions[p]), o.beam, o.batch, o.threads, tokens[p] / seconds[p], seconds[p], cpu[p],
                  static_cast<long long>(tokens[p]),
                  sources.empty() ? 1.0 : static_cast<double>(same) / static_cast<double>(sources.size()),
                  ru.ru_maxrss / 1024.0);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_translate: %s\n", e.what());
    return 1;
  }
}
