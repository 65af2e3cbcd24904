// attn attend's per-head summary (attn/attend/attend.h): entropy in bits and the mean weight on
// the previous, same and next position and on eos, on heads whose answer is known.
#include <gtest/gtest.h>

#include <cmath>

#include "attn/attend/attend.h"

namespace attn::cli {
namespace {

TEST(AttendSummary, PreviousPositionHeadIsPositional) {
  // query i puts all its weight on i - 1 (query 0 on itself)
  const std::vector<std::vector<float>> w = {{1, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}};
  const HeadSummary s = summarize_head(w, {"a", "b", "c", "</s>"}, true, "</s>");
  EXPECT_DOUBLE_EQ(s.entropy, 0.0);
  EXPECT_DOUBLE_EQ(s.previous, 0.75);
  EXPECT_DOUBLE_EQ(s.same, 0.25);
  EXPECT_DOUBLE_EQ(s.next, 0.0);
  EXPECT_TRUE(s.has_eos);
  EXPECT_DOUBLE_EQ(s.eos, 0.0);
}

TEST(AttendSummary, UniformHeadHasLogNBitsAndItsShareOnEos) {
  const std::vector<std::vector<float>> w(3, std::vector<float>(4, 0.25f));
  const HeadSummary s = summarize_head(w, {"a", "b", "c", "</s>"}, false, "</s>");
  EXPECT_NEAR(s.entropy, 2.0, 1e-6);
  EXPECT_NEAR(s.eos, 0.25, 1e-6);
  EXPECT_FALSE(s.positional);
  const HeadSummary none = summarize_head(w, {"a", "b", "c", "d"}, false, "</s>");
  EXPECT_FALSE(none.has_eos);
}

}  // namespace
}  // namespace attn::cli
