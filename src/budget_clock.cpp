#include "attn/budget_clock.h"

#include "attn/enum_names.h"

namespace attn {
namespace {
const EnumName<BudgetClock> kClocks[] = {{BudgetClock::wall, "wall"}, {BudgetClock::cpu, "cpu"}};
}  // namespace

const char* name(BudgetClock c) { return name_in(kClocks, c); }
void parse(std::string_view text, BudgetClock* out, std::string_view what) { *out = parse_in(kClocks, text, what); }
BudgetClock parse_budget_clock(std::string_view text) {
  BudgetClock c;
  parse(text, &c, "train.clock");
  return c;
}

}  // namespace attn
