// The bad-request table of docs/serve.md, one test a row, over HTTP: each bad request gets its
// status and a JSON {"error": ...} naming what is wrong, and the server answers /health and a good
// translation afterwards (it never dies). Limits are set small here so that each is reached.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "http_fixture.h"

namespace attn::serve {
namespace {

using namespace attn::serve::testing;

ServiceOptions small_limits() {
  ServiceOptions o;
  o.limits.max_body_bytes = 4096;
  o.limits.max_sentences = 4;
  o.limits.max_line_bytes = 200;
  return o;
}

class BadRequest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    HttpOptions http;
    http.connection.request_ms = 1000;
    server_ = new TestServer(small_limits(), http);
  }
  static void TearDownTestSuite() { delete server_; }

  // POSTs body and checks the status and that the answer is {"error": "...<expect>..."}.
  static void expect_refused(const std::string& path, const std::string& body, int status, const std::string& expect,
                             const std::string& type = "application/json") {
    auto res = server_->client()->Post(path.c_str(), body, type.c_str());
    ASSERT_TRUE(res) << "no answer to " << body.substr(0, 80);
    EXPECT_EQ(res->status, status) << res->body;
    nlohmann::json j = nlohmann::json::parse(res->body, nullptr, false);
    ASSERT_TRUE(j.is_object() && j.contains("error") && j["error"].is_string()) << res->body;
    EXPECT_NE(j["error"].get<std::string>().find(expect), std::string::npos) << j["error"];
    std::printf("%-52s -> %d %s\n", (path + " " + body.substr(0, 36)).c_str(), res->status, res->body.substr(0, 110).c_str());
  }

  // The server still answers, a good request included.
  void TearDown() override {
    auto c = server_->client();
    auto health = c->Get("/health");
    ASSERT_TRUE(health) << "the server died";
    EXPECT_EQ(health->status, 200);
    auto good = c->Post("/v1/translate", R"({"model": "text", "text": ["A house."], "max_len": 5})", "application/json");
    ASSERT_TRUE(good);
    EXPECT_EQ(good->status, 200) << good->body;
  }

  static TestServer* server_;
};

TestServer* BadRequest::server_ = nullptr;

// issue 50: with cpp-httplib's SO_REUSEPORT two servers bound one port and shared its connections.
TEST_F(BadRequest, SecondServerOnAPortInUseIsRefused) {
  HttpOptions o;
  o.port = server_->port();
  HttpServer second(server_->service(), o);
  try {
    second.bind();
    FAIL() << "a second server bound port " << o.port << ", which the first is listening on";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen on 127.0.0.1:" + std::to_string(o.port)), std::string::npos)
        << e.what();
  }
}

TEST_F(BadRequest, MalformedJsonIs400) {
  expect_refused("/v1/translate", R"({"model": "text", "text": ["a")", 400, "the body: not valid JSON");
  expect_refused("/v1/translate", "[1, 2]", 400, "must be a JSON object");
  expect_refused("/v1/translate", "", 400, "the body: not valid JSON");
}

TEST_F(BadRequest, WrongTypesAre400) {
  expect_refused("/v1/translate", R"({"model": "text", "text": 5})", 400, "\"text\" must be a string or an array");
  expect_refused("/v1/translate", R"({"model": "text", "text": ["a", 7]})", 400, "\"text\"[1] must be a string");
  expect_refused("/v1/translate", R"({"model": "text", "text": "a", "beam": "4"})", 400, "\"beam\" must be a whole number");
  expect_refused("/v1/translate", R"({"model": "text", "text": "a", "beam": 2.5})", 400, "\"beam\"");
  expect_refused("/v1/translate", R"({"model": "text", "text": "a", "beam": 0})", 400, "\"beam\"");
  expect_refused("/v1/translate", R"({"model": "text", "text": "a", "length_penalty": "x"})", 400, "length_penalty");
  expect_refused("/v1/translate", R"({"model": 3, "text": "a"})", 400, "\"model\" must be a string");
  expect_refused("/v1/translate", R"({"model": "ids", "ids": [[1, "2"]]})", 400, "token ids");
  expect_refused("/v1/translate", R"({"model": "ids", "ids": [[1, 99999]]})", 400, "token ids");
  expect_refused("/v1/classify", R"({"model": "text", "text": "a"})", 400, "not a classifier");
}

TEST_F(BadRequest, UnknownModelIs404) {
  expect_refused("/v1/translate", R"({"model": "fr-en", "text": "a"})", 404, "no model named 'fr-en'");
  expect_refused("/v1/no-such-route", "{}", 404, "no route");
}

TEST_F(BadRequest, EmptyTextIs400) {
  expect_refused("/v1/translate", R"({"model": "text", "text": []})", 400, "empty");
  expect_refused("/v1/translate", R"({"model": "text", "text": "   "})", 400, "empty");
  expect_refused("/v1/translate", R"({"model": "text"})", 400, "\"text\" is missing");
  expect_refused("/v1/translate", R"({"model": "text", "text": "two\nlines"})", 400, "line break");
}

TEST_F(BadRequest, OversizedRequestsAre413) {
  expect_refused("/v1/translate", R"({"model": "text", "text": ")" + std::string(5000, 'a') + "\"}", 413, "--max-body-bytes");
  expect_refused("/v1/translate", R"({"model": "text", "text": ["a", "b", "c", "d", "e"]})", 413, "--max-sentences");
  expect_refused("/v1/translate", R"({"model": "text", "text": ")" + std::string(300, 'a') + "\"}", 413, "--max-line-bytes");
}

TEST_F(BadRequest, InvalidUtf8Is400) {
  expect_refused("/v1/translate", "{\"model\": \"text\", \"text\": \"caf\xc3 \xff\"}", 400, "UTF-8");
  expect_refused("/translate", "q=caf%C3&source=en&target=de", 400, "not valid UTF-8", "application/x-www-form-urlencoded");
}

// A client that sends its request a byte at a time is cut off after --request-ms (1 s here), and
// meanwhile the server answers others at once.
// A socket connected to the test server (-1 if it cannot connect).
int connect_to(int port) {
  const int sock = ::socket(AF_INET, SOCK_STREAM, 0);
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

TEST_F(BadRequest, SlowLorisIsCutOffAndOthersAreServed) {
  const int sock = connect_to(server_->port());
  ASSERT_GE(sock, 0);
  const std::string request = "POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Length: 30\r\n\r\n";
  const auto start = std::chrono::steady_clock::now();
  bool cut = false;
  double health_ms = 0;
  for (size_t i = 0; i < request.size() * 3 && !cut; ++i) {
    const char c = request[i % request.size()];
    cut = ::send(sock, &c, 1, MSG_NOSIGNAL) != 1;
    if (i == 3) {
      const auto t = std::chrono::steady_clock::now();
      auto h = server_->client()->Get("/health");
      health_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
      ASSERT_TRUE(h);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    char byte;
    const ssize_t n = ::recv(sock, &byte, 1, MSG_DONTWAIT);
    cut = cut || n == 0;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::close(sock);
  std::printf("slow-loris client cut off after %.2f s (--request-ms 1000); /health answered meanwhile in %.1f ms\n",
              seconds, health_ms);
  EXPECT_TRUE(cut) << "the server kept a byte-a-time client for " << seconds << " s";
  EXPECT_LT(seconds, 3.0);
  EXPECT_LT(health_ms, 500.0);
}

// Requests that arrive together (a client that sends the next before the answer, or two in one
// packet) are each answered, in order: the connection reads ahead into a buffer and serves what
// the buffer holds before it waits on the socket again.
TEST_F(BadRequest, RequestsSentTogetherAreEachAnswered) {
  const int sock = connect_to(server_->port());
  ASSERT_GE(sock, 0);
  const std::string body = R"({"model": "text", "text": []})";
  const std::string bad = "POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  const std::string requests = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n" + bad +
                               "GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  const timeval wait{10, 0};  // recv gives up after 10 s if the server neither answers nor closes
  ::setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  ASSERT_EQ(::send(sock, requests.data(), requests.size(), MSG_NOSIGNAL), static_cast<ssize_t>(requests.size()));
  std::string got;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(sock, buffer, sizeof buffer, 0)) > 0;)  // until the server closes (Connection: close)
    got.append(buffer, static_cast<size_t>(n));
  ::close(sock);
  const size_t first = got.find("HTTP/1.1 200"), second = got.find("HTTP/1.1 400", first),
               third = got.find("HTTP/1.1 200", second == std::string::npos ? 0 : second);
  EXPECT_NE(first, std::string::npos) << got;
  EXPECT_NE(second, std::string::npos) << got;
  EXPECT_NE(third, std::string::npos) << got;
  EXPECT_NE(got.find("\"models\""), std::string::npos) << got;
}

// A full queue answers 503 with Retry-After; a request past its deadline, 504.
TEST(ServeLimits, AFullQueueIs503WithRetryAfterAndALateAnswer504) {
  ServiceOptions o;
  o.batch.max_queue = 2;
  o.batch.batching = false;
  TestServer server(o);
  const std::string slow = nlohmann::json{{"model", "text"}, {"text", shared_lines("mt-ende/dev.en", 1)}, {"beam", 8},
                                          {"max_len", 100}}.dump();
  std::vector<int> status(16, 0);
  std::vector<std::string> retry(16);
  std::vector<std::thread> clients;
  for (size_t i = 0; i < status.size(); ++i)
    clients.emplace_back([&, i] {
      auto res = server.client()->Post("/v1/translate", slow, "application/json");
      if (res) {
        status[i] = res->status;
        retry[i] = res->get_header_value("Retry-After");
      }
    });
  for (auto& t : clients) t.join();
  int ok = 0, full = 0;
  for (size_t i = 0; i < status.size(); ++i) {
    ok += status[i] == 200;
    full += status[i] == 503;
    if (status[i] == 503) {
      EXPECT_EQ(retry[i], "1");
    }
  }
  std::printf("16 concurrent requests on a queue of 2: %d answered, %d refused with 503\n", ok, full);
  EXPECT_EQ(ok + full, 16) << "a status other than 200 or 503";
  EXPECT_GT(full, 0);
  EXPECT_GT(ok, 0);

  ServiceOptions late;
  late.timeout_ms = 1;
  TestServer hurried(late);
  auto res = hurried.client()->Post("/v1/translate", slow, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 504) << res->body;
  EXPECT_EQ(hurried.client()->Get("/health")->status, 200);
}

}  // namespace
}  // namespace attn::serve
