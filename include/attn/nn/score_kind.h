// The four attention score functions (nn/attention_score.h), by name.
#pragma once

#include <string>

namespace attn {

enum class ScoreKind { scaled_dot, dot, additive, bilinear };

ScoreKind parse_score(const std::string& name);  // an error lists the four names
const char* score_name(ScoreKind kind);
inline const char* name(ScoreKind kind) { return score_name(kind); }  // as every named enum spells it

}  // namespace attn
