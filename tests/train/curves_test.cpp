// Training curves (include/attn/train/curves.h): a real run's log read into series, unreadable
// lines named by number, a resumed run's repeated steps replaced, and the SVG holding a line per
// run and figure with its points.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "attn/io/atomic_file.h"
#include "attn/train/curves.h"

namespace attn {
namespace {

// The polyline of (run, metric) in an SVG and its number of points; -1 when there is none.
int points_of(const std::string& svg, const std::string& run, const std::string& metric) {
  const std::string head = "data-run=\"" + run + "\" data-metric=\"" + metric + "\"";
  const size_t at = svg.find(head);
  if (at == std::string::npos) return -1;
  const size_t begin = svg.find("points=\"", at) + 8, end = svg.find('"', begin);
  const std::string points = svg.substr(begin, end - begin);
  static const std::regex pair("-?[0-9.e+-]+,-?[0-9.e+-]+");
  return static_cast<int>(std::distance(std::sregex_iterator(points.begin(), points.end(), pair), std::sregex_iterator()));
}

TEST(Curves, ReadsARealTranslationLog) {
  std::vector<std::string> warnings;
  RunCurves run = read_train_log(std::string(ATTN_TEST_DATA) + "/training/quickstart_train_log.jsonl", "quick", warnings);
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(run.series["loss"].size(), 1u);
  EXPECT_DOUBLE_EQ(run.series["loss"][0].value, 8.989091000358679);
  EXPECT_EQ(run.series["loss"][0].step, 27);
  EXPECT_DOUBLE_EQ(run.series["loss"][0].elapsed, 60.996272607);
  EXPECT_EQ(run.series["lr"].size(), 1u);
  EXPECT_EQ(run.series["tokens_per_s"].size(), 1u);
  ASSERT_EQ(run.series["dev_loss"].size(), 1u);
  EXPECT_DOUBLE_EQ(run.series["dev_loss"][0].value, 8.594813741962087);
  EXPECT_EQ(run.series["dev_bleu"].size(), 1u);
  EXPECT_EQ(run.series["dev_chrf"].size(), 1u);
  EXPECT_EQ(run.series.count("dev_accuracy"), 0u);
}

TEST(Curves, BadLinesAreNamedByNumberAndLeftOut) {
  const std::string log =
      "{\"event\":\"train\",\"step\":1,\"loss\":5.0,\"lr\":1e-4,\"elapsed\":1}\n"
      "{\"event\":\"train\",\"step\":2,\"lo\n"  // a line cut by a kill
      "\n"
      "[1,2]\n"
      "{\"event\":\"train\",\"step\":\"three\",\"loss\":4.0}\n"
      "{\"event\":\"train\",\"step\":3,\"loss\":null,\"lr\":2e-4}\n"
      "{\"event\":\"skipped\",\"step\":4}\n"
      "{\"event\":\"valid\",\"step\":3,\"dev_loss\":3.5,\"dev_accuracy\":0.5}\n";
  std::vector<std::string> warnings;
  RunCurves run = parse_train_log(log, "run", warnings);
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_EQ(warnings[0].rfind("run:2: not valid JSON", 0), 0u) << warnings[0];
  EXPECT_EQ(warnings[1].rfind("run:4: not a JSON object", 0), 0u) << warnings[1];
  EXPECT_EQ(warnings[2].rfind("run:5: ", 0), 0u) << warnings[2];
  EXPECT_EQ(run.series["loss"].size(), 1u) << "null (not finite) is left out";
  EXPECT_EQ(run.series["lr"].size(), 2u);
  ASSERT_EQ(run.series["dev_accuracy"].size(), 1u);
  EXPECT_DOUBLE_EQ(run.series["dev_accuracy"][0].value, 50.0) << "in percent";
}

// A run killed after logging steps 4-6 and resumed from its step-3 checkpoint logs 4-6 again.
TEST(Curves, AResumedRunsRepeatedStepsReplaceTheEarlierOnes) {
  std::string log;
  for (int step : {1, 2, 3, 4, 5, 6, 4, 5, 6, 7})
    log += "{\"event\":\"train\",\"step\":" + std::to_string(step) + ",\"loss\":" + std::to_string(10 - step) + "}\n";
  std::vector<std::string> warnings;
  RunCurves run = parse_train_log(log, "r", warnings);
  ASSERT_EQ(run.series["loss"].size(), 7u);
  for (size_t i = 0; i < 7; ++i) EXPECT_EQ(run.series["loss"][i].step, static_cast<double>(i + 1));
}

TEST(Curves, SvgHasALinePerRunAndFigureAndALegend) {
  std::vector<std::string> warnings;
  std::string a, b;
  for (int s = 1; s <= 20; ++s)
    a += "{\"event\":\"train\",\"step\":" + std::to_string(s) + ",\"loss\":" + std::to_string(5.0 / s) +
         ",\"lr\":0.001,\"tgt_tokens_per_s\":900,\"elapsed\":" + std::to_string(s) + "}\n";
  a += "{\"event\":\"valid\",\"step\":10,\"dev_nll\":3,\"dev_bleu\":1.5,\"dev_chrf\":20}\n"
       "{\"event\":\"valid\",\"step\":20,\"dev_nll\":2,\"dev_bleu\":4.5,\"dev_chrf\":30}\n";
  for (int s = 1; s <= 8; ++s) b += "{\"event\":\"train\",\"step\":" + std::to_string(s * 2) + ",\"loss\":" + std::to_string(6.0 / s) + "}\n";
  std::vector<RunCurves> runs = {parse_train_log(a, "base <&>", warnings), parse_train_log(b, "big", warnings)};
  const std::string svg = curves_svg(runs, CurveAxis::step);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(svg.find("http", 20), std::string::npos) << "nothing fetched";
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(points_of(svg, "base &lt;&amp;&gt;", "loss"), 20);
  EXPECT_EQ(points_of(svg, "big", "loss"), 8);
  EXPECT_EQ(points_of(svg, "base &lt;&amp;&gt;", "dev_bleu"), 2);
  EXPECT_EQ(points_of(svg, "base &lt;&amp;&gt;", "dev_loss"), 2);
  EXPECT_EQ(points_of(svg, "big", "lr"), -1) << "run b logs no rate";
  EXPECT_EQ(points_of(svg, "base &lt;&amp;&gt;", "dev_accuracy"), -1);
  EXPECT_NE(svg.find(">big</text>"), std::string::npos) << "legend";
  EXPECT_NE(svg.find("data-metric=\"tokens_per_s\""), std::string::npos);
  const std::string html = curves_html(runs, CurveAxis::time);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("time (seconds)"), std::string::npos);
}

}  // namespace
}  // namespace attn
