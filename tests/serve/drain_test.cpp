// SIGTERM drains: the binary stops accepting, answers the requests it has received (here several
// slow ones, sent just before the signal), then exits 0.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "http_fixture.h"

namespace attn::serve {
namespace {

using namespace attn::serve::testing;

TEST(ServeDrain, SigtermAnswersTheRequestsReceivedThenExitsZero) {
  ServerProcess server({"--model", "text=" + test_models().text, "--threads", "1", "--no-batching"});
  const std::string slow = nlohmann::json{{"model", "text"}, {"text", shared_lines("mt-ende/dev.en", 8)}, {"beam", 16},
                                          {"max_len", 120}}.dump();
  std::vector<int> status(3, 0);
  std::vector<std::chrono::steady_clock::time_point> answered(3);
  std::vector<std::thread> clients;
  for (size_t i = 0; i < status.size(); ++i)
    clients.emplace_back([&, i] {
      auto res = server.client()->Post("/v1/translate", slow, "application/json");
      status[i] = res ? res->status : -1;
      answered[i] = std::chrono::steady_clock::now();
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));  // received, queued or computing
  const auto start = std::chrono::steady_clock::now();
  const int code = server.terminate();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (auto& t : clients) t.join();
  int late = 0;
  for (const auto& t : answered) late += t > start;
  std::printf("SIGTERM with 3 slow requests sent: exit %d after %.2f s, answers %d %d %d, %d of them after the signal\n",
              code, seconds, status[0], status[1], status[2], late);
  EXPECT_EQ(code, 0) << server.log();
  for (int s : status) EXPECT_EQ(s, 200);
  EXPECT_GT(late, 0) << "every request was answered before the signal: nothing was in flight";
  EXPECT_NE(server.log().find("SIGTERM"), std::string::npos) << server.log();
  httplib::Client after("127.0.0.1", server.port());
  after.set_connection_timeout(2, 0);
  EXPECT_FALSE(after.Get("/health")) << "the server still accepts after exiting";
}

}  // namespace
}  // namespace attn::serve
