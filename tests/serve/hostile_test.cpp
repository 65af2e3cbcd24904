// The hostile harness of issue 50 (docs/reliability.md has its table): a client written here sends
// what an attacker or a careless caller would (values nested 100,000 deep, huge and odd numbers,
// repeated form keys, bad options mixed into batches of good requests, answers that would be huge)
// to a real `attn serve` process, so that a crash shows as a dead server and not a dead test. Each
// row expects its status and an error naming the field, and the server answering afterwards.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "attn/io/json.h"
#include "http_fixture.h"

namespace attn::serve {
namespace {

using namespace attn::serve::testing;

struct Answer {
  int status = 0;  // 0: no answer (the server died or closed the connection)
  std::string body;
  nlohmann::json json;
};

class Hostile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const TestModels& t = test_models();
    server_ = new ServerProcess({"--model", "text=" + t.text, "--model", "ids=" + t.ids, "--model", "cls=" + t.classifier,
                                 "--threads", "1"});
  }
  static void TearDownTestSuite() { delete server_; }

  static Answer post(const std::string& path, const std::string& body, const std::string& type = "application/json") {
    auto res = server_->client()->Post(path.c_str(), body, type.c_str());
    Answer a;
    if (!res) return a;
    a.status = res->status;
    a.body = res->body;
    a.json = nlohmann::json::parse(res->body, nullptr, false);
    return a;
  }

  // The answer is `status` with {"error": "...<expect>..."}.
  static void expect_error(const Answer& a, int status, const std::string& expect, const std::string& what) {
    ASSERT_NE(a.status, 0) << what << ": no answer (the server died?)\n" << server_->log().substr(0, 2000);
    EXPECT_EQ(a.status, status) << what << ": " << a.body.substr(0, 300);
    ASSERT_TRUE(a.json.is_object() && a.json.contains("error") && a.json["error"].is_string())
        << what << ": " << a.body.substr(0, 300);
    EXPECT_NE(a.json["error"].get<std::string>().find(expect), std::string::npos) << what << ": " << a.json["error"];
  }

  // After every test the server is alive and translates.
  void TearDown() override {
    auto c = server_->client();
    auto health = c->Get("/health");
    ASSERT_TRUE(health) << "the server died: " << server_->log().substr(0, 2000);
    auto good = c->Post("/v1/translate", R"({"model": "text", "text": ["A house."], "max_len": 5})", "application/json");
    ASSERT_TRUE(good);
    EXPECT_EQ(good->status, 200) << good->body;
  }

  static ServerProcess* server_;
};

ServerProcess* Hostile::server_ = nullptr;

// "[[[...]]]" nested `depth` levels.
std::string nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// issue 50: a value nested 100,000 deep in a field whose error quotes it was serialised whole, by
// recursion on the connection thread's stack, and killed the server (SIGSEGV). Now the body is
// refused as it is parsed, before anything recurses.
TEST_F(Hostile, ValuesNested100000DeepAre400InEveryField) {
  const std::string deep = nested(100000);
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"/v1/translate", R"({"model": "text", "text": )" + deep + "}"},
      {"/v1/translate", R"({"model": "text", "text": "a", "beam": )" + deep + "}"},
      {"/v1/translate", R"({"model": )" + deep + R"(, "text": "a"})"},
      {"/v1/translate", R"({"model": "text", "text": "a", "target_prefix": )" + deep + "}"},
      {"/v1/translate", R"({"model": "text", "text": "a", "length_penalty": )" + deep + "}"},
      {"/v1/translate", R"({"model": "ids", "ids": )" + deep + "}"},
      {"/v1/score", R"({"model": "text", "source": )" + deep + R"(, "target": "a"})"},
      {"/v1/score", R"({"model": "text", "source": "a", "target": )" + deep + "}"},
      {"/v1/attention", R"({"model": "text", "text": )" + deep + "}"},
      {"/v1/attention", R"({"model": "text", "text": "a", "layer": )" + deep + "}"},
      {"/v1/classify", R"({"model": "cls", "text": )" + deep + "}"},
      {"/translate", R"({"q": )" + deep + R"(, "source": "en", "target": "de"})"},
      {"/translate", R"({"q": "a", "source": )" + deep + R"(, "target": "de"})"},
      {"/v1/translate", deep},
  };
  for (const auto& [path, body] : rows)
    expect_error(post(path, body), 400, "nested more than 64 levels deep", path + " " + body.substr(0, 60));
  // 64 levels is the bound: 63 inside the body's object parse, and the field is then refused for its type.
  expect_error(post("/v1/translate", R"({"model": "text", "text": )" + nested(63) + "}"), 400, "\"text\"[0] must be a string",
               "63 levels");
}

// issue 50: "alignment_layer" 99 on a 2-layer model passed the request's checks, joined a batch,
// and failed it after the search: the good requests batched with it got a 500 with its error.
// Now the option is checked against the model before the request is queued.
TEST_F(Hostile, ABadOptionMixedIntoGoodRequestsFailsOnlyItself) {
  const std::string good = R"({"model": "text", "text": ["A house.", "The file."], "max_len": 6, "alignment": true})";
  const std::string bad = R"({"model": "text", "text": ["A house."], "max_len": 6, "alignment": true, "alignment_layer": 99})";
  std::vector<Answer> answers(13);
  std::vector<std::thread> clients;
  for (size_t i = 0; i < answers.size(); ++i)
    clients.emplace_back([&, i] { answers[i] = post("/v1/translate", i == 6 ? bad : good); });
  for (auto& c : clients) c.join();
  for (size_t i = 0; i < answers.size(); ++i) {
    if (i == 6) continue;
    EXPECT_EQ(answers[i].status, 200) << i << ": " << answers[i].body.substr(0, 300);
  }
  expect_error(answers[6], 400, "\"alignment_layer\" 99 is more than the 2 encoder-decoder attention layers",
               "alignment_layer 99");
}

// issue 50: a form's repeated `q` lost its repeats (cpp-httplib keeps one copy of a repeated
// name=value pair): q=A&q=B&q=A gave two translations, two identical q a string, and 65 copies of
// one q passed --max-sentences 64. Every q is now kept, in order.
TEST_F(Hostile, RepeatedFormKeysAreEachKept) {
  const std::string form = "application/x-www-form-urlencoded";
  const Answer three = post("/translate", "q=A+house.&q=The+file.&q=A+house.&source=en&target=de", form);
  ASSERT_EQ(three.status, 200) << three.body;
  ASSERT_TRUE(three.json["translatedText"].is_array()) << three.body;
  ASSERT_EQ(three.json["translatedText"].size(), 3u) << three.body;
  EXPECT_EQ(three.json["translatedText"][0], three.json["translatedText"][2]);
  const Answer two = post("/translate", "q=A+house.&q=A+house.&source=en&target=de", form);
  ASSERT_EQ(two.status, 200) << two.body;
  EXPECT_TRUE(two.json["translatedText"].is_array() && two.json["translatedText"].size() == 2) << two.body;
  // the same through the URL's query string
  const Answer query = post("/translate?q=A+house.&q=A+house.&source=en&target=de", "", form);
  ASSERT_EQ(query.status, 200) << query.body;
  EXPECT_TRUE(query.json["translatedText"].is_array() && query.json["translatedText"].size() == 2) << query.body;
  std::string many;
  for (int i = 0; i < 65; ++i) many += "q=A+house.&";
  expect_error(post("/translate", many + "source=en&target=de", form), 413, "--max-sentences", "65 copies of one q");
}

// The quoting itself is bounded whatever it is given (a value built in memory, not parsed): at most
// 60 characters and "...", without recursion.
TEST(HostileQuoting, AnyValueIsQuotedInAtMost60Characters) {
  nlohmann::json deep = nlohmann::json::array();
  nlohmann::json* inner = &deep;
  for (int i = 0; i < 100000; ++i) inner = &inner->emplace_back(nlohmann::json::array());
  EXPECT_EQ(shown(deep), std::string(60, '[') + "...");
  EXPECT_EQ(shown(nlohmann::json(std::string(1 << 20, 'a'))), std::string("\"") + std::string(59, 'a') + "...");
  EXPECT_EQ(shown(nlohmann::json::parse(R"({"a": [1, 2.5, "x", null, true], "b": {}})")), R"({"a":[1,2.5,"x",null,true],"b":{}})");
  EXPECT_EQ(shown(nlohmann::json::parse("[[], {}, []]")), "[[],{},[]]");
  // cut before a character, never inside one: 30 two-byte characters are 62 bytes with the quote
  const std::string e_acute = "\xc3\xa9";
  std::string thirty;
  for (int i = 0; i < 30; ++i) thirty += e_acute;
  const std::string s = shown(nlohmann::json(thirty));
  EXPECT_EQ(s, std::string("\"") + thirty.substr(0, 58) + "...") << s;
}

// issue 50: the first request after "listening" took ~5 s (each batcher warming its model) while
// /health already said ok. Now /health is 503 "loading" until every batcher has warmed, then ok.
// A wide batch (--max-batch-sentences 256: 1,024 rows warmed per batcher) makes the warm-up last.
TEST(HostileStart, HealthSaysLoadingUntilTheModelsAreWarm) {
  ServerProcess server({"--model", "text=" + test_models().text, "--threads", "1", "--max-batch-sentences", "256"}, false);
  auto c = server.client();
  auto first = c->Get("/health");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 503) << first->body;
  EXPECT_EQ(nlohmann::json::parse(first->body, nullptr, false).value("status", ""), "loading") << first->body;
  int status = 0;
  for (int i = 0; i < 6000 && status != 200; ++i) {
    if (i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto h = c->Get("/health");
    status = h ? h->status : 0;
  }
  EXPECT_EQ(status, 200) << "never ready: " << server.log().substr(0, 1000);
  auto good = c->Post("/v1/translate", R"({"model": "text", "text": "A house.", "max_len": 5})", "application/json");
  ASSERT_TRUE(good);
  EXPECT_EQ(good->status, 200) << good->body;
}

// issue 50: a number past a double's range was a 500 carrying the JSON library's message.
TEST_F(Hostile, HugeNumbersAre400NamingTheBody) {
  for (const std::string& body : {std::string(R"({"model": "text", "text": "a", "beam": 1e400})"),
                                  std::string(R"({"model": "text", "text": "a", "max_len": -1e400})"),
                                  std::string(R"({"model": "text", "text": "a", "beam": 18446744073709551616})")}) {
    const Answer a = post("/v1/translate", body);
    ASSERT_NE(a.status, 0) << body;
    EXPECT_EQ(a.status, 400) << body << ": " << a.body.substr(0, 300);
  }
}

}  // namespace
}  // namespace attn::serve
