// Cancellation (issue 50): a request given up, at its deadline or by its client closing the
// connection, stops its work. Its job leaves the batcher's stream at the next step (its rows with
// it), so the request behind it is answered as soon as it would be on an idle server, and
// /metrics counts the cancelled requests and sentences. The long request here keeps the one
// batcher busy for tens of seconds when nothing cancels it (measured and printed first), so a
// batcher freed late cannot pass the bounds, which leave seconds to spare on a loaded machine.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <thread>

#include "http_fixture.h"

namespace attn::serve {
namespace {

using namespace attn::serve::testing;
using Seconds = std::chrono::duration<double>;

// 64 dev sentences at beam 16 and 120 tokens each: about 10 s of one batcher's work on a loaded
// 2-core machine (the test models are tiny; the rows make it long).
std::string long_request() {
  return nlohmann::json{{"model", "text"}, {"text", shared_lines("mt-ende/dev.en", 64)}, {"beam", 16},
                        {"max_len", 120}, {"min_decoding_length", 119}}
      .dump();
}

const std::string kShort = R"({"model": "text", "text": ["A house."], "max_len": 5})";

ServiceOptions one_batcher(int timeout_ms) {
  ServiceOptions o;
  o.batch.batchers = 1;
  o.timeout_ms = timeout_ms;
  return o;
}

// A metric's value in /metrics (-1 when absent).
double metric(TestServer& server, const std::string& name) {
  auto res = server.client()->Get("/metrics");
  if (!res) return -1;
  std::smatch m;
  const std::regex line(name + "\\{model=\"text\"\\} ([0-9.e+]+)");
  return std::regex_search(res->body, m, line) ? std::stod(m[1]) : -1;
}

// Seconds to answer the short request.
double short_answer(TestServer& server, int& status) {
  const auto start = std::chrono::steady_clock::now();
  auto res = server.client()->Post("/v1/translate", kShort, "application/json");
  status = res ? res->status : -1;
  return Seconds(std::chrono::steady_clock::now() - start).count();
}

TEST(ServeCancel, ARequestPastItsDeadlineFreesItsBatcher) {
  TestServer server(one_batcher(500));
  const auto start = std::chrono::steady_clock::now();
  auto res = server.client()->Post("/v1/translate", long_request(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 504) << res->body.substr(0, 200);
  const double timed_out = Seconds(std::chrono::steady_clock::now() - start).count();
  int status = 0;
  const double next = short_answer(server, status);
  std::printf("long request: %d after %.2f s (--timeout-ms 500); the next request: %d in %.2f s\n", res->status,
              timed_out, status, next);
  EXPECT_EQ(status, 200);
  EXPECT_LT(next, 3.0) << "the batcher kept computing the request that timed out";
  EXPECT_GE(metric(server, "attn_serve_cancelled_requests_total"), 1);
  EXPECT_GE(metric(server, "attn_serve_cancelled_sentences_total"), 1);
}

TEST(ServeCancel, AClientThatDisconnectsFreesItsBatcher) {
  TestServer server(one_batcher(120000));
  const int sock = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(server.port()));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(sock, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  const std::string body = long_request();
  const std::string request = "POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;
  ASSERT_EQ(::send(sock, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // received and computing
  ::close(sock);
  int status = 0;
  const double next = short_answer(server, status);
  std::printf("client closed its connection mid-request; the next request: %d in %.2f s\n", status, next);
  EXPECT_EQ(status, 200);
  EXPECT_LT(next, 3.0) << "the batcher kept computing for a client that had gone";
  EXPECT_GE(metric(server, "attn_serve_cancelled_requests_total"), 1);
  EXPECT_GE(metric(server, "attn_serve_cancelled_sentences_total"), 1);
}

}  // namespace
}  // namespace attn::serve
