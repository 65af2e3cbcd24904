// attn translate's decoding options over /v1/translate (apps/serve/translate_request.h): sampling,
// target prefixes, length and repetition rules, n-best and a shortlist. Each answer must equal
// attn translate --output-format jsonl run by the binary on the same sentences with the same
// flags, also when requests of different options arrive at once and the batcher groups them.
// Sampling is keyed as the CLI keys it: sentence i of a request is sampled as line i of a file,
// so a request equals attn translate on a file of the request's sentences, whatever it is batched
// with (a one-sentence request equals the CLI's line 1).
#include <gtest/gtest.h>

#include <cmath>
#include <mutex>
#include <thread>

#include "serve_fixture.h"

namespace attn::serve {
namespace {

using namespace attn::serve::testing;

// A request's options and the flags of attn translate that ask for the same.
struct Case {
  nlohmann::json options;
  std::string flags;
};

std::vector<Case> option_cases() {
  return {
      {{{"sampling_topk", 10}, {"sampling_temperature", 0.8}, {"seed", 7}, {"max_len", 14}},
       "--sampling-topk 10 --sampling-temperature 0.8 --seed 7 --max-len 14"},
      {{{"sampling_topp", 0.9}, {"seed", 3}, {"num_hypotheses", 3}, {"max_len", 12}},
       "--sampling-topp 0.9 --seed 3 --n-best 3 --max-len 12"},
      {{{"beam_size", 3}, {"min_decoding_length", 9}, {"max_len_a", 0.5}, {"max_len_b", 6}},
       "--beam 3 --min-len 9 --max-len-a 0.5 --max-len-b 6"},
      {{{"beam", 2}, {"no_repeat_ngram_size", 2}, {"repetition_penalty", 1.5}, {"max_len", 16}},
       "--beam 2 --no-repeat-ngram 2 --repetition-penalty 1.5 --max-len 16"},
      {{{"beam", 4}, {"n_best", 3}, {"length_penalty", 1.0}, {"max_decoding_length", 12}},
       "--beam 4 --n-best 3 --length-penalty 1 --max-len 12"},
  };
}

// Numbers within 1e-4 (log-probs and scores, service_test.cpp says why; ids differ by 1 or more),
// everything else equal.
bool same(const nlohmann::json& got, const nlohmann::json& want, double& worst) {
  if (got.is_number() && want.is_number()) {
    const double d = std::fabs(got.get<double>() - want.get<double>());
    worst = std::max(worst, d);
    return d <= 1e-4;
  }
  if (got.type() != want.type() || got.size() != want.size()) return false;
  if (want.is_object()) {
    for (const auto& [key, value] : want.items())
      if (!got.contains(key) || !same(got[key], value, worst)) return false;
    return true;
  }
  if (want.is_array()) {
    for (size_t i = 0; i < want.size(); ++i)
      if (!same(got[i], want[i], worst)) return false;
    return true;
  }
  return got == want;
}

// The CLI's jsonl for `src` with `flags`.
std::vector<nlohmann::json> cli_lines(const std::vector<std::string>& src, const std::string& flags) {
  return json_lines(run_attn("translate --model " + quote(test_models().text) + " --output-format jsonl " + flags, joined(src)));
}

TEST(ServeOptions, EachOptionEqualsTheCli) {
  auto service = make_service();
  const std::vector<std::string> src = shared_lines("mt-ende/dev.en", 8, 5);
  double worst = 0;
  for (const Case& c : option_cases()) {
    nlohmann::json body = c.options;
    body["model"] = "text";
    body["text"] = src;
    const Outcome got = service->translate(body);
    ASSERT_EQ(got.status, 200) << c.flags << ": " << got.json.dump();
    const auto want = cli_lines(src, c.flags);
    ASSERT_EQ(got.json["translations"].size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_TRUE(same(got.json["translations"][i], want[i], worst))
          << c.flags << " line " << i + 1 << ":\n" << got.json["translations"][i].dump() << "\n" << want[i].dump();
  }
  std::printf("%zu option sets x %zu sentences equal the CLI (log-prob max |diff| %.2e)\n", option_cases().size(),
              src.size(), worst);
}

// A target prefix per sentence, as --prefix's lines (a blank line: none); for ids, lists of ids.
TEST(ServeOptions, TargetPrefixEqualsTheCliPrefixFile) {
  auto service = make_service();
  const std::vector<std::string> src = shared_lines("mt-ende/dev.en", 4, 7), tgt = shared_lines("mt-ende/dev.de", 4, 7);
  std::vector<std::string> starts;
  nlohmann::json prefixes = nlohmann::json::array();
  for (size_t i = 0; i < tgt.size(); ++i) {
    starts.push_back(i == 2 ? "" : tgt[i].substr(0, tgt[i].find(' ')));
    prefixes.push_back(i == 2 ? nlohmann::json(nullptr) : nlohmann::json(starts.back()));
  }
  const fs::path file = test_models().dir / "prefix.de";
  std::ofstream(file) << joined(starts);
  const Outcome got = service->translate({{"model", "text"}, {"text", src}, {"target_prefix", prefixes}, {"beam", 2},
                                          {"max_len", 14}, {"seed", 1}});
  ASSERT_EQ(got.status, 200) << got.json.dump();
  const auto want = cli_lines(src, "--beam 2 --max-len 14 --prefix " + quote(file.string()));
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(same(got.json["translations"][i], want[i], worst)) << got.json["translations"][i].dump() << "\n" << want[i].dump();
  EXPECT_EQ(got.json["translations"][0]["text"].get<std::string>().rfind(starts[0], 0), 0u) << "the output starts with its prefix";
}

// --shortlist NAME=FILE: decoded as attn translate --shortlist FILE; "use_vmap": false as without.
TEST(ServeOptions, ShortlistEqualsTheCli) {
  const TestModels& t = test_models();
  const std::string list = (t.dir / "list.safetensors").string();
  run_attn("shortlist --model " + quote(t.text) + " --corpus " + quote((t.dir / "train.en").string()) + " " +
           quote((t.dir / "train.de").string()) + " --output " + quote(list) + " --top-k 8 --frequent 20");
  std::vector<std::unique_ptr<ServedModel>> models;
  models.push_back(load_served_model({"text", t.text, ""}));
  load_served_shortlist("text=" + list, models);
  Service service(std::move(models), {});
  const std::vector<std::string> src = shared_lines("mt-ende/dev.en", 6, 3);
  double worst = 0;
  for (bool use : {true, false}) {
    const Outcome got = service.translate({{"model", "text"}, {"text", src}, {"beam", 3}, {"max_len", 14}, {"use_vmap", use}});
    ASSERT_EQ(got.status, 200) << got.json.dump();
    const auto want = cli_lines(src, "--beam 3 --max-len 14" + (use ? " --shortlist " + quote(list) : std::string()));
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_TRUE(same(got.json["translations"][i], want[i], worst)) << "use_vmap " << use << " line " << i + 1;
  }
  const auto full = cli_lines(src, "--beam 3 --max-len 14"), listed = cli_lines(src, "--beam 3 --max-len 14 --shortlist " + quote(list));
  size_t differ = 0;
  for (size_t i = 0; i < full.size(); ++i) differ += full[i]["ids"] != listed[i]["ids"];
  std::printf("the shortlist changes %zu of %zu translations (so the test tells them apart)\n", differ, full.size());
  EXPECT_GT(differ, 0u);
}

// Requests of five option sets (and plain beam search) at once, from 24 threads, in one-sentence
// and whole-list requests: the batcher may only group equal options, and every answer is the CLI's
// for its request (sampling: the whole list equals the CLI on the list; a one-sentence request of
// sentence k equals the CLI's line 1 on that sentence alone).
TEST(ServeOptions, MixedOptionsAtOnceEachEqualTheCli) {
  ServiceOptions o;
  o.batch.max_wait_ms = 30;
  auto service = make_service(o);
  const std::vector<std::string> src = shared_lines("mt-ende/dev.en", 6, 11);
  std::vector<Case> cases = option_cases();
  cases.push_back({{{"beam", 2}, {"max_len", 14}}, "--beam 2 --max-len 14"});
  std::vector<std::vector<nlohmann::json>> whole, alone;  // [case][sentence]
  for (const Case& c : cases) {
    whole.push_back(cli_lines(src, c.flags));
    alone.emplace_back();
    for (const std::string& s : src) alone.back().push_back(cli_lines({s}, c.flags)[0]);
  }
  std::mutex report;
  std::vector<std::string> wrong;
  double worst = 0;
  auto client = [&](size_t t) {
    for (size_t r = 0; r < 6; ++r) {
      const size_t c = (t + r) % cases.size(), k = (t * 5 + r) % src.size();
      const bool list = (t + r) % 4 == 0;
      nlohmann::json body = cases[c].options;
      body["model"] = "text";
      body["text"] = list ? nlohmann::json(src) : nlohmann::json::array({src[k]});
      const Outcome got = service->translate(body);
      std::lock_guard<std::mutex> lock(report);
      for (size_t i = 0; i < (list ? src.size() : 1); ++i) {
        const nlohmann::json& want = list ? whole[c][i] : alone[c][k];
        if (got.status != 200 || !same(got.json["translations"][i], want, worst))
          wrong.push_back(cases[c].flags + (list ? " list line " + std::to_string(i + 1) : " sentence " + std::to_string(k + 1)) +
                          ": " + got.json.dump().substr(0, 300) + " vs " + want.dump().substr(0, 300));
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 24; ++t) threads.emplace_back(client, t);
  for (auto& t : threads) t.join();
  EXPECT_TRUE(wrong.empty()) << wrong.size() << " differ; first: " << wrong.front();
  const std::string metrics = service->metrics_text();
  auto metric = [&](const std::string& name) {
    const std::string key = name + "{model=\"text\"} ";
    return std::stod(metrics.substr(metrics.find(key) + key.size()));
  };
  // per batch, or per step of a continuous batch: the sentences decoded together
  const double together = metric("attn_serve_batch_sentences_sum") / metric("attn_serve_batch_sentences_count");
  std::printf("144 requests of %zu option sets from 24 threads, %.1f sentences decoded together on average: all "
              "equal the CLI (log-prob max |diff| %.2e)\n", cases.size(), together, worst);
  EXPECT_GT(together, 1.5) << "requests were not decoded together";
}

// Options the CLI refuses are refused with its message, named as the body's fields.
TEST(ServeOptions, RefusedWithTheCliRulesNamedAsFields) {
  auto service = make_service();
  auto error_of = [&](nlohmann::json body) {
    body["model"] = "text";
    if (!body.contains("text")) body["text"] = {"A house.", "A tree."};
    try {
      const Outcome o = service->translate(body);
      return std::to_string(o.status) + " " + o.json.dump();
    } catch (const HttpError& e) {
      return std::to_string(e.status) + " " + e.what();
    }
  };
  const std::vector<std::pair<nlohmann::json, std::string>> cases = {
      {{{"sampling_topk", 5}, {"beam", 4}}, "400 sampling draws one token per step: \"beam\" must be 1, got 4"},
      {{{"sampling_topp", 2}}, "400 \"sampling_topp\" needs a number in"},
      {{{"beam_size", 2}, {"n_best", 3}}, "400 \"n_best\" must be between 1 and \"beam_size\" (2), got 3"},
      {{{"beam", 2}, {"beam_size", 2}}, "400 \"beam\" and \"beam_size\" are the same option: give one"},
      {{{"max_len", 5}, {"max_len_a", 1.5}}, "400 \"max_len\" is a fixed length; \"max_len_a\"/\"max_len_b\" give one per source"},
      {{{"seed", -1}}, "400 \"seed\" needs a whole number in 0 .. "},
      {{{"seed", "7"}}, "400 \"seed\" must be a whole number, got \"7\""},
      {{{"sampling_temperature", "hot"}}, "400 \"sampling_temperature\" must be a number, got \"hot\""},
      {{{"samplingtopk", 5}}, "400 unknown field \"samplingtopk\""},
      {{{"target_prefix", {"Ein"}}}, "400 \"target_prefix\" must be an array with one entry per sentence (2)"},
      {{{"target_prefix", {"Ein", 5}}}, "400 \"target_prefix\"[1] must be a string or null, got 5"},
      {{{"use_vmap", true}}, "400 model 'text' has no shortlist (attn serve --shortlist text=FILE)"},
      {{{"on_long", "error"}, {"text", {std::string(2000, 'a')}}}, "400 \"text\"[0]: "},
      {{{"attention", true}, {"seed", 1}, {"sampling_topk", 3}}, "400 \"attention\" searches the sentence again"},
  };
  for (const auto& [body, want] : cases) {
    const std::string got = error_of(body);
    EXPECT_EQ(got.rfind(want, 0), 0u) << body.dump() << "\n got: " << got << "\nwant: " << want << "...";
    std::printf("%-60s -> %s\n", body.dump().substr(0, 60).c_str(), got.c_str());
  }
}

}  // namespace
}  // namespace attn::serve
