// The JSON API without HTTP (apps/serve/service.h): every answer is what the CLI prints for the same
// input and options, whatever else shares its batch. The references are the attn binary's own
// output (translate --output-format jsonl, score, classify, attend --format json); the server
// reaches the same library calls through another path (its own parsing, batching and splitting).
//
// Log-probabilities are compared within 1e-4: the batched search sums in float32 over a batch
// whose shape depends on what else is in it (attn translate --batch 1 and --batch 32 differ by up
// to ~1e-5 in the same way); tokens, text, ids and alignments must be equal.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <thread>

#include "serve_fixture.h"

namespace attn::serve {
namespace {

using namespace attn::serve::testing;

constexpr double kLogprobTolerance = 1e-4;

// got == want, except numbers under "score" / "logprob" keys: within kLogprobTolerance.
void expect_same(const nlohmann::json& got, const nlohmann::json& want, const std::string& where, double& worst,
                 bool loose = false) {
  if (loose && want.is_number()) {
    ASSERT_TRUE(got.is_number()) << where << ": " << got.dump();
    const double d = std::fabs(got.get<double>() - want.get<double>());
    worst = std::max(worst, d);
    EXPECT_LE(d, kLogprobTolerance) << where;
    return;
  }
  if (want.is_number()) {
    ASSERT_TRUE(got.is_number()) << where << ": " << got.dump();
    EXPECT_EQ(got.get<double>(), want.get<double>()) << where;
    return;
  }
  ASSERT_EQ(got.type(), want.type()) << where << ": " << got.dump() << " vs " << want.dump();
  if (want.is_object()) {
    ASSERT_EQ(got.size(), want.size()) << where << ": " << got.dump() << " vs " << want.dump();
    for (const auto& [key, value] : want.items()) {
      ASSERT_TRUE(got.contains(key)) << where << ": no " << key;
      expect_same(got[key], value, where + "." + key, worst, key == "score" || key == "logprob");
    }
  } else if (want.is_array()) {
    ASSERT_EQ(got.size(), want.size()) << where;
    for (size_t i = 0; i < want.size(); ++i) expect_same(got[i], want[i], where + "[" + std::to_string(i) + "]", worst);
  } else {
    EXPECT_EQ(got, want) << where;
  }
}

// A translate request and the attn translate flags that ask for the same.
struct Case {
  nlohmann::json options;
  std::string flags;
};

TEST(ServeApi, TranslationsEqualTheCliJsonl) {
  auto service = make_service();
  const std::vector<std::string> src = shared_lines("mt-ende/dev.en", 12);
  const std::string model = test_models().text;
  const std::vector<Case> cases = {
      {{{"beam", 1}, {"max_len", 16}}, "--beam 1 --max-len 16"},
      {{{"beam", 4}, {"max_len", 16}, {"length_penalty", 1.0}}, "--beam 4 --max-len 16 --length-penalty 1"},
      {{{"beam", 3}, {"n_best", 2}, {"max_len", 12}, {"alignment", "soft"}},
       "--beam 3 --n-best 2 --max-len 12 --alignment soft"},
      {{{"beam", 2}, {"max_len", 12}, {"alignment", true}, {"alignment_words", true}},
       "--beam 2 --max-len 12 --alignment hard --alignment-words"},
  };
  double worst = 0;
  for (const Case& c : cases) {
    nlohmann::json body = c.options;
    body["model"] = "text";
    body["text"] = src;
    const Outcome got = service->translate(body);
    ASSERT_EQ(got.status, 200) << got.json.dump();
    const auto want = json_lines(run_attn("translate --model " + quote(model) + " --output-format jsonl " + c.flags, joined(src)));
    ASSERT_EQ(got.json["translations"].size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      expect_same(got.json["translations"][i], want[i], c.flags + " line " + std::to_string(i + 1), worst);
  }
  std::printf("4 option sets x 12 sentences: tokens, text, alignments equal; log-prob max |diff| %.2e (tolerance %.0e)\n",
              worst, kLogprobTolerance);
}

TEST(ServeApi, TokenIdsInAndOutEqualTheCli) {
  auto service = make_service();
  std::ifstream in(std::string(ATTN_TEST_DATA) + "/transformer/post_shared_l2_h4/src.txt");
  std::vector<std::string> lines;
  nlohmann::json ids = nlohmann::json::array();
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
    nlohmann::json row = nlohmann::json::array();
    std::istringstream s(line);
    for (int id; s >> id;) row.push_back(id);
    ids.push_back(row);
  }
  const Outcome got = service->translate({{"model", "ids"}, {"ids", ids}, {"beam", 4}, {"max_len", 20}});
  ASSERT_EQ(got.status, 200) << got.json.dump();
  const auto want = json_lines(run_attn("translate --ids --model " + quote(test_models().ids) +
                                        " --output-format jsonl --beam 4 --max-len 20", joined(lines)));
  double worst = 0;
  ASSERT_EQ(got.json["translations"].size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) expect_same(got.json["translations"][i], want[i], "ids line " + std::to_string(i + 1), worst);
}

// Sentences of concurrent requests share batches (the metrics count fewer batches than requests),
// and each answer is still the CLI's for that sentence.
TEST(ServeApi, ConcurrentRequestsShareBatchesAndEachAnswerIsTheCliOne) {
  ServiceOptions o;
  o.batch.max_wait_ms = 40;
  auto service = make_service(o);
  const std::vector<std::string> src = shared_lines("mt-ende/dev.en", 24, 3);
  const auto want = json_lines(run_attn("translate --model " + quote(test_models().text) +
                                        " --output-format jsonl --beam 2 --max-len 14", joined(src)));
  std::vector<Outcome> got(src.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < src.size(); ++i)
    clients.emplace_back([&, i] { got[i] = service->translate({{"model", "text"}, {"text", {src[i]}}, {"beam", 2}, {"max_len", 14}}); });
  for (auto& t : clients) t.join();
  double worst = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    ASSERT_EQ(got[i].status, 200) << got[i].json.dump();
    nlohmann::json line = want[i];
    line["line"] = 1;  // each request held one sentence
    expect_same(got[i].json["translations"][0], line, "sentence " + std::to_string(i + 1), worst);
  }
  const std::string metrics = service->metrics_text();
  const std::string key = "attn_serve_batch_sentences_count{model=\"text\"} ";
  const size_t at = metrics.find(key);
  ASSERT_NE(at, std::string::npos) << metrics;
  const int batches = std::stoi(metrics.substr(at + key.size()));
  std::printf("%zu concurrent requests computed in %d batches; log-prob max |diff| to the CLI %.2e\n", src.size(),
              batches, worst);
  EXPECT_LT(batches, static_cast<int>(src.size())) << "no two requests shared a batch";
}

TEST(ServeApi, ScoresEqualTheCli) {
  auto service = make_service();
  const auto src = shared_lines("mt-ende/dev.en", 8), tgt = shared_lines("mt-ende/dev.de", 8);
  const Outcome got = service->score({{"model", "text"}, {"source", src}, {"target", tgt}});
  ASSERT_EQ(got.status, 200) << got.json.dump();
  const fs::path dir = test_models().dir;
  std::ofstream(dir / "s.en") << joined(src);
  std::ofstream(dir / "s.de") << joined(tgt);
  std::istringstream want(run_attn("score --model " + quote(test_models().text) + " --src " + quote((dir / "s.en").string()) +
                                   " --tgt " + quote((dir / "s.de").string())));
  for (size_t i = 0; i < src.size(); ++i) {
    double w = 0;
    want >> w;
    EXPECT_NEAR(got.json["scores"][i].get<double>(), w, 2e-6 + kLogprobTolerance * 0) << "pair " << i + 1;  // CLI prints 6 decimals
  }
}

TEST(ServeApi, ClassesEqualTheCli) {
  auto service = make_service();
  const std::vector<std::string> texts = {"The jury said the election was conducted well.", "He ran to the ship.",
                                          "God is love.", "The committee approved the budget."};
  const Outcome got = service->classify({{"model", "cls"}, {"text", texts}, {"top_k", 2}});
  ASSERT_EQ(got.status, 200) << got.json.dump();
  std::istringstream want(run_attn("classify --model " + quote(test_models().classifier) + " --top-k 2", joined(texts)));
  for (size_t i = 0; i < texts.size(); ++i) {
    std::string line;
    std::getline(want, line);
    const nlohmann::json& c = got.json["classes"][i];
    char mine[256];
    std::snprintf(mine, sizeof mine, "%s\t%.4f\t%s\t%.4f", c["top"][0]["label"].get<std::string>().c_str(),
                  c["top"][0]["probability"].get<double>(), c["top"][1]["label"].get<std::string>().c_str(),
                  c["top"][1]["probability"].get<double>());
    EXPECT_EQ(mine, line) << "text " << i + 1;
    EXPECT_EQ(c["label"], c["top"][0]["label"]);
    double total = 0;
    for (const auto& [label, p] : c["probabilities"].items()) total += p.get<double>();
    EXPECT_NEAR(total, 1.0, 1e-5);
  }
}

TEST(ServeApi, AttentionEqualsAttendJson) {
  auto service = make_service();
  const std::string sentence = shared_lines("mt-ende/dev.en", 1)[0];
  const Outcome got = service->attention({{"model", "text"}, {"text", sentence}, {"beam", 2}, {"layer", 1}});
  ASSERT_EQ(got.status, 200) << got.json.dump();
  nlohmann::json want = nlohmann::json::parse(run_attn("attend --format json --beam 2 --layer 1 --model " +
                                                       quote(test_models().text) + " --src " + quote(sentence)));
  want["model"] = "text";
  double worst = 0;
  expect_same(got.json, want, "attention", worst);
  const Outcome page = service->attention({{"model", "cls"}, {"text", "The jury said."}, {"format", "html"}});
  ASSERT_EQ(page.status, 200) << page.json.dump();
  EXPECT_NE(page.html.find("<!DOCTYPE html>"), std::string::npos);
}

TEST(ServeApi, LibreTranslateAnswersTheTranslation) {
  auto service = make_service();
  const auto src = shared_lines("mt-ende/dev.en", 2);
  const Outcome plain = service->translate({{"model", "text"}, {"text", src}});
  const Outcome one = service->libretranslate({{"q", src[0]}, {"source", "en"}, {"target", "de"}});
  ASSERT_EQ(one.status, 200) << one.json.dump();
  EXPECT_EQ(one.json["translatedText"], plain.json["translations"][0]["text"]);
  const Outcome two = service->libretranslate({{"q", src}, {"source", "auto"}, {"target", "de"}, {"format", "text"}});
  ASSERT_EQ(two.status, 200) << two.json.dump();
  EXPECT_EQ(two.json["translatedText"][1], plain.json["translations"][1]["text"]);
}

// Numbers within 1e-4 of each other (the largest difference kept in `worst`), everything else equal.
bool close(const nlohmann::json& a, const nlohmann::json& b, double& worst) {
  if (a.is_number() && b.is_number()) {
    worst = std::max(worst, std::fabs(a.get<double>() - b.get<double>()));
    return std::fabs(a.get<double>() - b.get<double>()) <= kLogprobTolerance;
  }
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_object()) {
    for (const auto& [key, value] : b.items())
      if (!a.contains(key) || !close(a[key], value, worst)) return false;
    return true;
  }
  if (a.is_array()) {
    for (size_t i = 0; i < a.size(); ++i)
      if (!close(a[i], b[i], worst)) return false;
    return true;
  }
  return a == b;
}

// Three models' batchers compute at once (each its own thread and OpenMP team, the tensor cache
// and the product caches shared), requests of one model batched together: every answer equals
// the one the same request got alone (tokens, labels exactly; numbers within 1e-4).
TEST(ServeApi, ModelsComputingAtOnceAnswerAsAlone) {
  auto service = make_service();
  const auto src = shared_lines("mt-ende/dev.en", 6);
  std::vector<std::function<Outcome()>> requests = {
      [&] { return service->translate({{"model", "text"}, {"text", src}, {"beam", 3}, {"max_len", 16}}); },
      [&] { return service->translate({{"model", "ids"}, {"ids", {{5, 9, 14, 7, 2}, {31, 22, 2}}}, {"beam", 2}, {"max_len", 12}}); },
      [&] { return service->classify({{"model", "cls"}, {"text", src}, {"top_k", 3}}); },
      [&] { return service->score({{"model", "text"}, {"source", src}, {"target", src}}); }};
  std::vector<nlohmann::json> alone;
  for (auto& r : requests) alone.push_back(r().json);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(requests.size() * 4, 0);
  std::vector<double> worst(mismatches.size(), 0.0);
  for (size_t t = 0; t < mismatches.size(); ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) mismatches[t] += !close(requests[t % requests.size()]().json, alone[t % requests.size()], worst[t]);
    });
  for (auto& t : threads) t.join();
  for (size_t t = 0; t < mismatches.size(); ++t) EXPECT_EQ(mismatches[t], 0) << "request kind " << t % requests.size();
  std::printf("16 threads x 5 requests over 3 models at once: numbers max |diff| to alone %.2e\n",
              *std::max_element(worst.begin(), worst.end()));
}

}  // namespace
}  // namespace attn::serve
