// attn serve --model NAME=DIR[:fp32|bf16|int8] [--model ...] [--shortlist NAME=FILE] [--host 127.0.0.1] [--port 8080]
//            [--max-batch-sentences 32] [--max-batch-tokens 4096] [--max-wait-ms 5] [--no-batching] [--max-queue 1024]
//            [--max-body-bytes 1048576] [--max-sentences 64] [--max-line-bytes 4096] [--timeout-ms 30000]
//            [--batchers N] [--threads 1] [--http-threads 64] [--header-ms 5000] [--request-ms 10000]
//            [--max-answer-mib 32] [--answer-memory-mib 256] [--idle-ms 5000] [--max-header-bytes 16384] [--max-connections 10000] [--max-connections-per-client 512]
// Serves models over HTTP (apps/serve/: routes in http.h, batching in batcher.h, docs/serve.md).
// SIGTERM or SIGINT: stop accepting, answer every request already received, exit 0.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

#include "args.h"
#include "attn/error.h"
#include "attn/runtime.h"
#include "http.h"
#include "models.h"
#include "service.h"

namespace attn::cli {
namespace {

int g_stop_pipe[2] = {-1, -1};  // the stop signals' pipe: written by the handler, read by one thread

void on_stop_signal(int sig) {
  const ssize_t n = ::write(g_stop_pipe[1], &sig, sizeof sig);  // async-signal-safe
  (void)n;
}

struct ServeFlags {
  std::vector<std::string> models, shortlists;
  serve::ServiceOptions service;
  serve::HttpOptions http;
  int max_batch_sentences = 32, max_batch_tokens = 4096, max_queue = 1024, max_body = 1 << 20, max_sentences = 64, max_line = 4096;
  int max_answer_mib = 32, max_answer_memory_mib = 256;
  int max_header = 16384, max_connections = 10000, max_per_client = 512;
  bool no_batching = false;
};

bool parse_flags(int argc, char** argv, ServeFlags& f) {
  CLI::App args{"Serves translation models and classifiers over HTTP: a JSON API (/v1/translate, /v1/score,\n"
                "/v1/classify, /v1/attention, /v1/models, /health, /metrics), LibreTranslate's POST /translate,\n"
                "and a page to try the models in a browser (GET /). Sentences of concurrent requests are\n"
                "decoded together (dynamic batching). Answers equal attn translate's --output-format jsonl.\n"
                "See docs/serve.md.",
                "attn serve"};
  describe(args, "attn serve --model en-de=runs/ende --model en-de-int8=runs/ende:int8 --port 8080");
  add_repeated(args, "--model", f.models, "NAME=DIR[:fp32|bf16|int8], repeatable: a model and the name requests use "
                                          "(precision: the directory's own unless given)")->required();
  add_repeated(args, "--shortlist", f.shortlists, "NAME=FILE, repeatable: model NAME decodes over the shortlist "
               "FILE (attn shortlist), as attn translate --shortlist FILE does; a request may send "
               "\"use_vmap\": false to decode over the whole vocabulary (e.g. --shortlist en-de=runs/ende/list.safetensors)")
      ->type_name("NAME=FILE");
  add_text(args, "--host", f.http.host, "address to listen on");
  add_int(args, "--port", f.http.port, 0, 65535, "port to listen on (0: any free one, printed)");
  add_int(args, "--max-batch-sentences", f.max_batch_sentences, 1, 65536,
          "sentences decoded together at most (as attn translate --batch; a larger request is sorted by "
          "length into searches of this many)");
  add_int(args, "--max-batch-tokens", f.max_batch_tokens, 1, 1 << 24, "source tokens decoded together at most");
  add_int(args, "--max-wait-ms", f.service.batch.max_wait_ms, 0, 10000,
          "longest a sentence waits for others to join its batch (counted from its arrival or from the end "
          "of the previous batch, whichever is later)");
  args.add_flag("--no-batching", f.no_batching, "decode one request at a time (to compare)");
  add_int(args, "--max-queue", f.max_queue, 1, 1 << 24, "sentences queued per model; more: 503 with Retry-After");
  add_int(args, "--max-body-bytes", f.max_body, 1, 1 << 30, "largest request body (413 past it)");
  add_int(args, "--max-sentences", f.max_sentences, 1, 1 << 20, "sentences in one request (413 past it)");
  add_int(args, "--max-line-bytes", f.max_line, 1, 1 << 24, "bytes of one sentence (413 past it)");
  add_int(args, "--max-answer-mib", f.max_answer_mib, 1, 1 << 20,
          "MiB of one answer's text at most, bounded before it is computed from what the request asks "
          "(413 past it, saying what to ask for instead: /v1/attention's \"layer\" or \"head\", fewer sentences)")
      ->type_name("MIB");
  add_int(args, "--answer-memory-mib", f.max_answer_memory_mib, 1, 1 << 20,
          "MiB the answers in flight may hold between them (each reserves twice its bound until it is sent; "
          "past it requests wait, then 503)")
      ->type_name("MIB");
  add_int(args, "--timeout-ms", f.service.timeout_ms, 1, 3600000, "a request unanswered by then gets 504");
  add_int(args, "--header-ms", f.http.connection.header_ms, 1, 3600000,
          "time to receive a request's line and headers (from its first byte; a new connection's from its "
          "accept); a slower client's connection is closed (slow-loris)");
  add_int(args, "--request-ms", f.http.connection.request_ms, 1, 3600000,
          "time to receive one whole request, body included; a slower client's connection is closed");
  add_int(args, "--idle-ms", f.http.connection.idle_ms, 1, 3600000,
          "how long an idle keep-alive connection stays open for its next request");
  add_int(args, "--max-header-bytes", f.max_header, 256, 1 << 24, "a request's line and headers at most (431 past it)");
  add_int(args, "--max-connections", f.max_connections, 1, 1 << 24,
          "connections open at once (within the open-file limit, raised to its hard limit); past it the one "
          "waiting longest without a whole request is closed");
  add_int(args, "--max-connections-per-client", f.max_per_client, 1, 1 << 24,
          "connections open at once from one client address; past it that address's one waiting longest "
          "without a whole request is closed");
  add_int(args, "--http-threads", f.http.threads, 1, 4096,
          "whole requests handled at once (waiting connections hold no thread: one thread reads them all); "
          "each thread holds ~1 MiB");
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  f.service.batch.batchers = std::min(cores, 8);
  f.service.threads = 1;
  add_int(args, "--batchers", f.service.batch.batchers, 1, 64,
          "threads computing batches of each model at once, one forming the next batch while the others "
          "compute (default: the cores, at most 8; 1 with --no-batching)")->default_str("cores");
  add_threads(args, f.service.threads, "1")->description(
      "threads of each batcher's products (batchers x threads should not pass the cores)");
  if (!parse(args, argc, argv)) return false;
  f.service.batch.max_batch_tokens = static_cast<size_t>(f.max_batch_tokens);
  f.service.batch.max_batch_sentences = static_cast<size_t>(f.max_batch_sentences);
  f.service.batch.max_queue = static_cast<size_t>(f.max_queue);
  f.service.batch.batching = !f.no_batching;
  f.service.limits = {static_cast<size_t>(f.max_body), static_cast<size_t>(f.max_sentences), static_cast<size_t>(f.max_line),
                      static_cast<size_t>(f.max_answer_mib) << 20};
  f.service.max_answer_memory = static_cast<size_t>(f.max_answer_memory_mib) << 20;
  f.http.connection.max_header_bytes = static_cast<size_t>(f.max_header);
  f.http.connection.max_connections = static_cast<size_t>(f.max_connections);
  f.http.connection.max_per_client = static_cast<size_t>(f.max_per_client);
  return true;
}

}  // namespace

int run_serve(int argc, char** argv) {
  ServeFlags f;
  if (!parse_flags(argc, argv, f)) return 0;
  // SIGTERM and SIGINT may reach any thread (OpenMP's workers exist already): the handler only
  // writes the signal's number to a pipe, which one thread reads to start the drain.
  check(::pipe(g_stop_pipe) == 0, "cannot make a pipe for the stop signals");
  struct sigaction on_stop {};
  on_stop.sa_handler = on_stop_signal;
  sigemptyset(&on_stop.sa_mask);
  sigaction(SIGTERM, &on_stop, nullptr);
  sigaction(SIGINT, &on_stop, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a broken connection is an error on its socket, not a signal
  steady_memory();
  std::vector<std::unique_ptr<serve::ServedModel>> models;
  for (const std::string& spec : f.models) {
    models.push_back(serve::load_served_model(serve::parse_model_spec(spec)));
    for (const auto& m : models)
      check(m == models.back() || m->name != models.back()->name, "--model: the name '", m->name, "' is used twice");
    std::fprintf(stderr, "attn serve: model '%s' (%s, %s) from %s\n", models.back()->name.c_str(),
                 models.back()->kind().c_str(), precision_name(models.back()->precision), models.back()->dir.c_str());
  }
  for (const std::string& s : f.shortlists) serve::load_served_shortlist(s, models);
  serve::Service service(std::move(models), f.service);
  serve::HttpServer http(service, f.http);
  const int port = http.bind();
  std::fprintf(stderr, "attn serve: listening on http://%s:%d/\n", f.http.host.c_str(), port);
  std::thread waiter([&] {
    int sig = 0;
    while (::read(g_stop_pipe[0], &sig, sizeof sig) < 0 && errno == EINTR) {
    }
    if (sig > 0)
      std::fprintf(stderr, "attn serve: %s: answering the requests received, then exiting\n",
                   sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : strsignal(sig));
    http.drain();
  });
  http.listen();  // returns once drained
  on_stop_signal(0);  // listening ended without a signal (it failed): end the waiter
  service.stop();
  waiter.join();
  std::fprintf(stderr, "attn serve: stopped\n");
  return 0;
}

}  // namespace attn::cli
