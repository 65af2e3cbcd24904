// Hostile connections (issue 50): 1,000 slow-loris connections trickling a header a byte at a
// time, with idle ones beside them, hold no thread of the server, so 32 clients translating
// meanwhile get every answer promptly and a fresh connection gets /health at once (when 64
// threads served the connections, 500 trickling ones made the server unreachable for ~140 s);
// past the per-client limit the connection waiting longest is closed to make room.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "http_fixture.h"

namespace attn::serve {
namespace {

using namespace attn::serve::testing;
using Seconds = std::chrono::duration<double>;

int connect_to(int port) {
  const int sock = ::socket(AF_INET, SOCK_STREAM, 0);
  if (sock < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(sock, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(sock);
    return -1;
  }
  return sock;
}

// Seconds for GET /health on a fresh connection (-1: no answer).
double fresh_health(int port) {
  const auto start = std::chrono::steady_clock::now();
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(30, 0);
  c.set_read_timeout(30, 0);
  auto res = c.Get("/health");
  if (!res || res->status != 200) return -1;
  return Seconds(std::chrono::steady_clock::now() - start).count();
}

TEST(ServeConnections, ThousandSlowLorisAndIdleConnectionsLeaveTranslationsPrompt) {
  HttpOptions http;
  http.connection.header_ms = http.connection.request_ms = 30000;  // the trickle is never cut off here
  http.connection.idle_ms = 30000;
  http.connection.max_per_client = 5000;
  TestServer server({}, http);
  const int port = server.port();
  // 1,000 trickling a header, 200 silent since their connect, 100 idle after a request.
  std::vector<int> loris, idle;
  for (int i = 0; i < 1000; ++i) loris.push_back(connect_to(port));
  for (int i = 0; i < 200; ++i) idle.push_back(connect_to(port));
  const std::string health = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  for (int i = 0; i < 100; ++i) {
    const int s = connect_to(port);
    idle.push_back(s);
    if (s >= 0) ::send(s, health.data(), health.size(), MSG_NOSIGNAL);
  }
  const size_t refused = std::count(loris.begin(), loris.end(), -1) + std::count(idle.begin(), idle.end(), -1);
  ASSERT_EQ(refused, 0u) << "connections refused";
  const std::string header = "POST /v1/translate HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(100, 'a');
  std::atomic<bool> trickling{true};
  std::thread trickle([&] {  // a byte on every connection each 250 ms, for 6 s
    for (size_t round = 0; round < 24; ++round) {
      for (int s : loris) ::send(s, &header[round % header.size()], 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    trickling = false;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // every connection trickling
  // 32 clients, each request on a fresh connection (a held keep-alive connection would prove nothing)
  std::vector<std::vector<double>> seconds(32);
  std::vector<int> failed(32, 0);
  std::vector<std::thread> clients;
  const std::string body = R"({"model": "text", "text": ["A house.", "The cat sat."], "max_len": 8})";
  for (size_t c = 0; c < seconds.size(); ++c)
    clients.emplace_back([&, c] {
      for (int r = 0; r < 4; ++r) {
        const auto start = std::chrono::steady_clock::now();
        httplib::Client client("127.0.0.1", port);
        client.set_connection_timeout(30, 0);
        client.set_read_timeout(30, 0);
        auto res = client.Post("/v1/translate", body, "application/json");
        if (!res || res->status != 200) ++failed[c];
        seconds[c].push_back(Seconds(std::chrono::steady_clock::now() - start).count());
      }
    });
  for (auto& t : clients) t.join();
  const double health_s = fresh_health(port);
  const bool still = trickling;
  const size_t open = server.open_connections();
  trickle.join();
  for (int s : loris) ::close(s);
  for (int s : idle) ::close(s);
  std::vector<double> all;
  for (const auto& v : seconds) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  int failures = 0;
  for (int f : failed) failures += f;
  std::printf("1,000 slow-loris + 300 idle connections (%zu open at the end): %zu translations, %d failed, "
              "median %.3f s, slowest %.3f s; a fresh /health in %.3f s%s\n",
              open, all.size(), failures, all[all.size() / 2], all.back(), health_s,
              still ? "" : " (after the trickle ended: the measure is void)");
  EXPECT_TRUE(still) << "the clients took longer than the trickle: raise its rounds";
  EXPECT_GE(open, 1300u) << "the server closed trickling or idle connections within their deadlines";
  EXPECT_EQ(failures, 0);
  EXPECT_LT(all.back(), 3.0) << "a translation waited behind the slow connections";
  EXPECT_GE(health_s, 0);
  EXPECT_LT(health_s, 2.0);
}

TEST(ServeConnections, PastThePerClientLimitTheLongestWaitingIsClosed) {
  HttpOptions http;
  http.connection.max_per_client = 20;
  TestServer server({}, http);
  std::vector<int> idle;
  for (int i = 0; i < 40; ++i) {
    idle.push_back(connect_to(server.port()));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const double health_s = fresh_health(server.port());
  // The first ones were closed to make room: their reads end (0), the newest are still open.
  auto closed = [](int s) {
    timeval wait{2, 0};
    ::setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    char byte;
    return ::recv(s, &byte, 1, 0) == 0;
  };
  const bool first_closed = closed(idle.front());
  const size_t open = server.open_connections();
  for (int s : idle) ::close(s);
  std::printf("40 idle connections from one address, --max-connections-per-client 20: %zu open, the first closed: %d; "
              "/health in %.3f s\n", open, first_closed, health_s);
  EXPECT_GE(health_s, 0);
  EXPECT_LE(open, 20u);
  EXPECT_TRUE(first_closed);
}

}  // namespace
}  // namespace attn::serve
