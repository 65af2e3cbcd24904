// The loopback load test: 64 concurrent clients (threads with keep-alive connections) send
// single-sentence translation requests, 20,000 in three bursts (to 1,000, 10,000 and 20,000) in a
// bounded time. Every request is answered; no status but 200 or the documented 503 (retried after
// Retry-After) appears; each answer's tokens and text equal attn translate's on the same sentence
// and options (log-probs within 1e-4, service_test.cpp says why). After each burst the server is
// idle (it hands freed memory back then) and its resident memory and heap (/metrics:
// attn_serve_heap_bytes) are printed; the resident memory after 20,000 must be within 10% of after
// 10,000 (docs/serve.md, "Memory under load": the first thousands of requests fill caches of
// product shapes, which are bounded; past them serving must not grow).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <mutex>
#include <thread>

#include "http_fixture.h"

namespace attn::serve {
namespace {

using namespace attn::serve::testing;

// The server's resident memory and heap after a burst, once it has been idle long enough to hand
// freed memory back (Batcher::kIdleAfter).
double idle_resident_mib(ServerProcess& server, int answered) {
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  const double rss = server.resident_mib();
  auto m = server.client()->Get("/metrics");
  for (size_t at = m ? m->body.find("attn_serve_heap_bytes{") : std::string::npos; at != std::string::npos;
       at = m->body.find("attn_serve_heap_bytes{", at + 1))
    std::printf("after %d: %s\n", answered, m->body.substr(at, m->body.find('\n', at) - at).c_str());
  const size_t t = m ? m->body.find("attn_serve_tensor_bytes{kind=\"cached\"}") : std::string::npos;
  if (t != std::string::npos) std::printf("after %d: %s\n", answered, m->body.substr(t, m->body.find('\n', t) - t).c_str());
  std::printf("after %d: resident %.1f MiB\n", answered, rss);
  return rss;
}

TEST(ServeLoad, SixtyFourClientsEveryAnswerIsTheCliOne) {
  constexpr int kClients = 64, kRequests = 20000;
  constexpr int kBursts[] = {1000, 10000, kRequests};
  // At most kSeconds (20,000 take about 16 s on the 2-core machines measured); a sanitizer
  // (scripts/sanitize.sh) slows the server 5 to 15 times, and there what it checks is every answer
  // of at least kMinAnswered, not the rate or the memory (its quarantine keeps freed memory). The
  // plain build must answer all 20,000, so that the memory bound is checked in every run.
  constexpr double kSeconds = ATTN_SANITIZED ? 25 : 120;
  constexpr int kMinAnswered = ATTN_SANITIZED ? 100 : kRequests;
  ServerProcess server({"--model", "text=" + test_models().text, "--http-threads", std::to_string(kClients), "--threads", "2"});
  std::vector<std::string> pool;
  for (const std::string& s : shared_lines("mt-ende/dev.en", 400))
    if (s.size() < 120 && pool.size() < 64) pool.push_back(s);
  std::vector<std::vector<nlohmann::json>> want;  // [beam - 1][sentence]
  for (int beam : {1, 2})
    want.push_back(json_lines(run_attn("translate --model " + quote(test_models().text) + " --output-format jsonl --max-len 12 --beam " +
                                       std::to_string(beam), joined(pool))));
  std::atomic<int> sent{0}, answered{0}, refused{0}, wrong{0}, failed{0};
  std::mutex report;
  std::string first_wrong;
  double worst = 0;
  const auto start = std::chrono::steady_clock::now();
  auto client = [&](int c, int burst_end) {
    auto http = server.client();
    http->set_keep_alive(true);
    const int beam = 1 + c % 2;
    for (int i = c * 1000;; ++i) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (elapsed > kSeconds || sent.fetch_add(1) >= burst_end) return;
      const size_t k = static_cast<size_t>(c * 7 + i) % pool.size();
      const std::string body = nlohmann::json{{"model", "text"}, {"text", pool[k]}, {"beam", beam}, {"max_len", 12}}.dump();
      auto res = http->Post("/v1/translate", body, "application/json");
      for (int retry = 0; res && res->status == 503 && retry < 50; ++retry) {
        ++refused;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        res = http->Post("/v1/translate", body, "application/json");
      }
      if (!res || res->status != 200) {
        ++failed;
        continue;
      }
      const nlohmann::json got = nlohmann::json::parse(res->body)["translations"][0];
      const nlohmann::json& w = want[static_cast<size_t>(beam - 1)][k];
      const double d = std::fabs(got["logprob"].get<double>() - w["logprob"].get<double>());
      const bool same = got["ids"] == w["ids"] && got["text"] == w["text"] && got["tokens"] == w["tokens"] && d <= 1e-4;
      {
        std::lock_guard<std::mutex> lock(report);
        worst = std::max(worst, d);
        if (!same && first_wrong.empty()) first_wrong = got.dump() + " vs " + w.dump();
      }
      wrong += !same;
      ++answered;
    }
  };
  std::vector<double> rss;  // idle, after each burst
  double busy_seconds = 0;
  for (int burst_end : kBursts) {
    const auto burst_start = std::chrono::steady_clock::now();
    sent = answered.load();
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; ++c) clients.emplace_back(client, c, burst_end);
    for (auto& t : clients) t.join();
    busy_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - burst_start).count();
    rss.push_back(idle_resident_mib(server, answered.load()));
  }
  std::printf("%d clients, %.1f s busy: %d answered (%.0f requests/s), %d 503s retried, %d failed, %d differ from the "
              "CLI (log-prob max |diff| %.2e); idle resident %.1f MiB after 1,000, %.1f after 10,000, %.1f after "
              "20,000\n",
              kClients, busy_seconds, answered.load(), answered / busy_seconds, refused.load(), failed.load(),
              wrong.load(), worst, rss[0], rss[1], rss[2]);
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(wrong, 0) << first_wrong;
  EXPECT_GE(answered, kMinAnswered);
  // Memory flat once the shape caches are warm: the second 10,000 requests within 10% of the first
  // (a sanitizer's quarantine keeps freed memory, so only the plain build is held to it; it answers
  // all 20,000, checked above).
  if (!ATTN_SANITIZED) {
    EXPECT_LE(rss[2], 1.10 * rss[1]) << "resident memory grew by more than 10% over the second 10,000 requests";
  }
  auto metrics = server.client()->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("attn_serve_requests_total{route=\"/v1/translate\",code=\"200\"} " +
                               std::to_string(answered.load())), std::string::npos) << metrics->body.substr(0, 600);
  EXPECT_EQ(server.terminate(), 0) << server.log();
}

}  // namespace
}  // namespace attn::serve
