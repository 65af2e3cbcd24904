// Translation throughput: output tokens per second of greedy or beam search (the KV-cached
// batched search of attn translate, src/decode/search.cpp) over a file of source ids, with a
// model in torch_ref.py's layout, so that PyTorch (bench/torch_bench.py translate) and
// CTranslate2 (bench/ct2_bench.py) run the same model on the same input.
//
//   bench_translate --model DIR --src IDS [--out IDS] [--beam K] [--batch B] [--max-len N]
//                   [--alpha A] [--threads N] [--repeat R]
//
// Sentences are taken in file order, B at a time. Output tokens are the generated ids without
// eos. Prints one JSON line: {"tokens_per_s", "seconds", "tokens", "peak_rss_mb"}; --out writes
// the best hypothesis of each sentence as ids, one a line (for the token-by-token comparison).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "attn/decode/id_lines.h"
#include "attn/decode/search.h"
#include "attn/error.h"
#include "attn/kernels/gemm.h"
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
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) fail("bench_translate: ", a, " needs a value");
      return argv[++i];
    };
    if (a == "--model") o.model = next();
    else if (a == "--src") o.src = next();
    else if (a == "--out") o.out = next();
    else if (a == "--beam") o.beam = std::atoi(next());
    else if (a == "--batch") o.batch = static_cast<size_t>(std::atoll(next()));
    else if (a == "--max-len") o.max_len = std::atoi(next());
    else if (a == "--alpha") o.alpha = std::atof(next());
    else if (a == "--threads") o.threads = std::atoi(next());
    else if (a == "--repeat") o.repeat = std::atoi(next());
    else fail("bench_translate: unknown argument ", a);
  }
  check(!o.model.empty() && !o.src.empty(), "bench_translate: --model and --src are needed");
  check(o.batch >= 1, "bench_translate: --batch must be >= 1");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options o = parse(argc, argv);
    set_num_threads(o.threads);
    Transformer model = import_torch(o.model);
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
    std::vector<std::vector<int32_t>> outputs(sources.size());
    int64_t tokens = 0;
    double seconds = 0.0;
    for (int r = 0; r < o.repeat; ++r) {
      tokens = 0;
      auto t0 = Clock::now();
      for (size_t first = 0; first < sources.size(); first += o.batch) {
        size_t last = std::min(sources.size(), first + o.batch);
        std::vector<std::vector<int32_t>> chunk(sources.begin() + first, sources.begin() + last);
        auto hyps = search(model, chunk, so);
        for (size_t i = 0; i < hyps.size(); ++i) {
          outputs[first + i] = hyps[i][0].tokens;
          tokens += static_cast<int64_t>(hyps[i][0].tokens.size());
        }
      }
      double s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (r == 0 || s < seconds) seconds = s;  // best of the repeats
    }
    if (!o.out.empty()) {
      std::ofstream out(o.out);
      for (const auto& ids : outputs) out << format_ids(ids) << "\n";
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    std::printf("{\"system\": \"attn\", \"beam\": %d, \"batch\": %zu, \"threads\": %d, \"tokens_per_s\": %.2f, "
                "\"seconds\": %.4f, \"tokens\": %lld, \"peak_rss_mb\": %.1f}\n",
                o.beam, o.batch, o.threads, tokens / seconds, seconds, static_cast<long long>(tokens),
                ru.ru_maxrss / 1024.0);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_translate: %s\n", e.what());
    return 1;
  }
}
