// The metrics' count of answers by status (what fuzz/http.cpp watches for 500s) equals the
// requests counted, over every route, and the rendered text says the same.
#include <gtest/gtest.h>

#include <string>

#include "metrics.h"

namespace attn::serve {
namespace {

TEST(ServeMetrics, AnswersByStatusCountEveryRoute) {
  Metrics m({"a"});
  m.request("/v1/translate", 500);
  m.request("/translate", 500);
  m.request("/v1/translate", 200);
  m.request("/v1/translate", 500);
  EXPECT_EQ(m.answers(500), 3u);
  EXPECT_EQ(m.answers(200), 1u);
  EXPECT_EQ(m.answers(404), 0u);
  const std::string text = m.render([](const std::string&) { return size_t{0}; }, Clock::now());
  EXPECT_NE(text.find("route=\"/v1/translate\",code=\"500\"} 2"), std::string::npos) << text;
}

}  // namespace
}  // namespace attn::serve
