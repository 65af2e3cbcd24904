// Learning-rate schedules (train/schedule.h): the paper's formula at known points, and the decay
// to zero at the end of the budget.
#include <gtest/gtest.h>

#include <cmath>

#include "attn/error.h"
#include "attn/train/schedule.h"

namespace attn {
namespace {

TEST(Schedule, NoamIsThePapersFormula) {
  LrSchedule s;  // noam, factor 1, warmup 4000, d_model 512
  // lrate = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)
  EXPECT_NEAR(learning_rate(s, 1), 1.0 / std::sqrt(512.0) * 1.0 / std::pow(4000.0, 1.5), 1e-15);
  EXPECT_NEAR(learning_rate(s, 4000), 1.0 / std::sqrt(512.0) / std::sqrt(4000.0), 1e-12);  // the peak
  EXPECT_NEAR(learning_rate(s, 16000), 1.0 / std::sqrt(512.0) / 128.0 * 1.0, 1e-4);
  EXPECT_NEAR(learning_rate(s, 16000), 0.5 * learning_rate(s, 4000), 1e-12);
}

TEST(Schedule, DecayScalesTheScheduleToZeroAtTheEndOfTheBudget) {
  LrSchedule s{"constant", 1.0, 1e-3, 0, 512, "linear"};
  EXPECT_DOUBLE_EQ(learning_rate(s, 10, 0.0), 1e-3);
  EXPECT_DOUBLE_EQ(learning_rate(s, 10, 0.25), 0.75e-3);
  EXPECT_DOUBLE_EQ(learning_rate(s, 10, 1.0), 0.0);
  EXPECT_DOUBLE_EQ(learning_rate(s, 10, 1.7), 0.0);  // past the budget: clamped, never negative
  s.decay = "cosine";
  EXPECT_NEAR(learning_rate(s, 10, 0.5), 0.5e-3, 1e-15);
  EXPECT_NEAR(learning_rate(s, 10, 0.25), 1e-3 * (1 + std::cos(M_PI / 4)) / 2, 1e-15);
  EXPECT_NEAR(learning_rate(s, 10, 1.0), 0.0, 1e-18);
  s.decay = "none";
  EXPECT_DOUBLE_EQ(learning_rate(s, 10, 0.9), 1e-3);
  LrSchedule noam{"noam", 2.0, 0, 400, 256, "linear"};
  LrSchedule plain{"noam", 2.0, 0, 400, 256, "none"};
  EXPECT_DOUBLE_EQ(learning_rate(noam, 100, 0.6), 0.4 * learning_rate(plain, 100));
}

TEST(Schedule, UnknownDecayIsAnErrorNamingIt) {
  LrSchedule s;
  s.decay = "exponentail";
  try {
    learning_rate(s, 5, 0.5);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("exponentail"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attn
