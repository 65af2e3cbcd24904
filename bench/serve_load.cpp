// bench_serve_load: concurrent clients for attn serve, in C++ so that on a machine of few cores
// the load costs the server little of its CPU (a Python client of 32 threads took about a tenth
// of a core at 300 requests/s, CPU the server then lacks; this one, measured the same way, prints
// its own CPU time). --clients threads, each with one keep-alive connection, POST the bodies of
// --bodies (one JSON request a line, taken in turn: client c sends lines c, c + clients, ...) to
// --path until --seconds have passed; each sends its next request when the previous is answered.
// A 503 (the queue full) is retried after 50 ms, as Retry-After asks, and counts in the latency;
// any other status but 200, or no answer, is an error. Prints one JSON line:
//   {"answered", "errors", "first_error", "seconds", "p50_ms", "p99_ms", "client_cpu_seconds"}
//   bench_serve_load --port P --bodies FILE [--clients 32] [--seconds 8] [--path /v1/translate]
#include <httplib.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int port = 0, clients = 32;
  double seconds = 8;
  std::string bodies, path = "/v1/translate";
};

struct Results {
  std::mutex lock;
  std::vector<double> latencies;  // seconds, every answered request
  int errors = 0;
  std::string first_error;

  void error(const std::string& what) {
    std::lock_guard<std::mutex> g(lock);
    if (errors++ == 0) first_error = what;
  }
};

// One client: requests in turn until the deadline; its latencies are added at the end.
void client(const Options& o, const std::vector<std::string>& bodies, int c, Clock::time_point deadline,
            Results& out) {
  httplib::Client http("127.0.0.1", o.port);
  http.set_keep_alive(true);
  // headers and body go out in two writes: with Nagle's algorithm the body would wait for the
  // server's delayed ACK of the headers (40 ms on Linux)
  http.set_tcp_nodelay(true);
  http.set_read_timeout(120, 0);
  std::vector<double> mine;
  for (size_t i = static_cast<size_t>(c); Clock::now() < deadline; i += static_cast<size_t>(o.clients)) {
    const std::string& body = bodies[i % bodies.size()];
    const auto t0 = Clock::now();
    auto res = http.Post(o.path, body, "application/json");
    for (int retry = 0; res && res->status == 503 && retry < 100; ++retry) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      res = http.Post(o.path, body, "application/json");
    }
    if (!res) {
      out.error("no answer: " + httplib::to_string(res.error()));
      continue;
    }
    if (res->status != 200) {
      out.error("status " + std::to_string(res->status) + ": " + res->body.substr(0, 200));
      continue;
    }
    mine.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::lock_guard<std::mutex> g(out.lock);
  out.latencies.insert(out.latencies.end(), mine.begin(), mine.end());
}

double percentile(std::vector<double> xs, double p) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  return xs[std::min(xs.size() - 1, static_cast<size_t>(p / 100 * static_cast<double>(xs.size())))];
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

int usage(const char* why) {
  std::fprintf(stderr,
               "bench_serve_load: %s\nusage: bench_serve_load --port P --bodies FILE [--clients 32] [--seconds 8] "
               "[--path /v1/translate]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--port") o.port = std::atoi(v.c_str());
    else if (a == "--clients") o.clients = std::atoi(v.c_str());
    else if (a == "--seconds") o.seconds = std::atof(v.c_str());
    else if (a == "--bodies") o.bodies = v;
    else if (a == "--path") o.path = v;
    else return usage(("unknown option " + a).c_str());
  }
  if (argc % 2 == 0) return usage("every option takes a value");
  if (o.port <= 0 || o.clients < 1 || o.seconds <= 0 || o.bodies.empty())
    return usage("--port, --bodies, --clients >= 1 and --seconds > 0 are needed");
  std::vector<std::string> bodies;
  std::ifstream in(o.bodies);
  if (!in) return usage(("cannot read " + o.bodies).c_str());
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) bodies.push_back(line);
  if (bodies.empty()) return usage((o.bodies + " has no request").c_str());

  Results results;
  const double cpu0 = cpu_seconds();
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  std::vector<std::thread> threads;
  for (int c = 0; c < o.clients; ++c)
    threads.emplace_back(client, std::cref(o), std::cref(bodies), c, deadline, std::ref(results));
  for (std::thread& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  nlohmann::json j = {{"answered", results.latencies.size()},
                      {"errors", results.errors},
                      {"first_error", results.first_error},
                      {"seconds", seconds},
                      {"p50_ms", 1000 * percentile(results.latencies, 50)},
                      {"p99_ms", 1000 * percentile(results.latencies, 99)},
                      {"client_cpu_seconds", cpu_seconds() - cpu0}};
  std::printf("%s\n", j.dump().c_str());
  return results.errors == 0 ? 0 : 1;
}
