// The clock a time budget runs on (train.max_minutes, decay, checkpoint_minutes, elapsed): wall
// time, or this process's CPU time summed over threads, which a shared or oversubscribed machine
// (other jobs, a hypervisor's steal time) does not stretch. On a quiet machine one thread's CPU time
// equals its wall time; with T threads it is up to T times the wall time.
#pragma once

#include <string_view>

namespace attn {

enum class BudgetClock { wall, cpu };
const char* name(BudgetClock c);
// "wall" or "cpu"; anything else is an attn::Error naming `what` and both.
void parse(std::string_view text, BudgetClock* out, std::string_view what = "clock");
BudgetClock parse_budget_clock(std::string_view text);  // parse() as train.clock

}  // namespace attn
