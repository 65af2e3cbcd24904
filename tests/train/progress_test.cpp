// The clocks a training budget runs on (train.clock) and the ETA and duration formats of progress lines.
#include "attn/train/progress.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "attn/error.h"

namespace attn {
namespace {

// Spins for `seconds` of wall time, using the CPU.
double burn(double seconds) {
  auto t0 = std::chrono::steady_clock::now();
  volatile double x = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) x = x + 1.0;
  return x;
}

TEST(Stopwatch, CpuClockIgnoresTimeSpentWaiting) {
  // Let any worker threads of earlier tests in this process go to sleep first.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  Stopwatch cpu(BudgetClock::cpu), wall(BudgetClock::wall);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // Asleep, the process uses (almost) no CPU: the wall clock moved 0.3 s, the CPU clock hardly.
  EXPECT_GE(wall.seconds(), 0.29);
  EXPECT_LT(cpu.seconds(), 0.1);
  double before = cpu.seconds();
  burn(0.2);
  // Busy, the CPU clock moves (at most as fast as the wall clock on one thread; less if preempted).
  EXPECT_GT(cpu.seconds() - before, 0.02);
  EXPECT_LE(cpu.seconds() - before, wall.seconds());
}

TEST(Stopwatch, ParsesItsNames) {
  EXPECT_EQ(parse_budget_clock("wall"), BudgetClock::wall);
  EXPECT_EQ(parse_budget_clock("cpu"), BudgetClock::cpu);
  EXPECT_THROW(parse_budget_clock("cycles"), Error);
}

TEST(Progress, BudgetIsSpentWhenAnyLimitIsReached) {
  EXPECT_FALSE(budget_spent(9, 10.0, 0, 10, 0.0, 0));
  EXPECT_TRUE(budget_spent(10, 10.0, 0, 10, 0.0, 0));       // steps
  EXPECT_TRUE(budget_spent(1, 60.0, 0, 10, 60.0, 0));       // time
  EXPECT_TRUE(budget_spent(1, 1.0, 2, 0, 0.0, 2));          // epochs
  EXPECT_FALSE(budget_spent(1000000, 1e9, 99, 0, 0.0, 0));  // no budget: never
}

TEST(Progress, EtaStepBudgetCountsAnEpochBudgetInSteps) {
  EXPECT_EQ(eta_step_budget(0, 0, 50, 1), 0);      // no budget
  EXPECT_EQ(eta_step_budget(120, 0, 50, 1), 120);  // steps only
  EXPECT_EQ(eta_step_budget(0, 2, 50, 1), 100);    // 2 epochs of 50 batches
  EXPECT_EQ(eta_step_budget(0, 2, 51, 4), 26);     // 102 batches, 4 a step: the 26th step ends them
  EXPECT_EQ(eta_step_budget(80, 2, 50, 1), 80);    // the nearer of the two
  EXPECT_EQ(eta_step_budget(300, 2, 50, 1), 100);
}

TEST(Progress, EtaIsTheNearerBudget) {
  // 100 steps in 50 s since the start: 0.5 s a step; 900 steps left = 450 s; the time budget leaves 550 s.
  EXPECT_DOUBLE_EQ(eta_seconds(50.0, 100, 0, 0.0, 1000, 600.0), 450.0);
  EXPECT_DOUBLE_EQ(eta_seconds(50.0, 100, 0, 0.0, 1000, 100.0), 50.0);
  EXPECT_DOUBLE_EQ(eta_seconds(50.0, 100, 0, 0.0, 0, 0.0), INFINITY);
  EXPECT_EQ(format_duration(42.0), "42s");
  EXPECT_EQ(format_duration(185.0), "3m05s");
  EXPECT_EQ(format_duration(3720.0), "1h02m");
}

}  // namespace
}  // namespace attn
