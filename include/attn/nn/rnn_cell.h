// The recurrent cell of an RNN layer (nn/rnn.h), by name.
#pragma once

#include <string_view>

namespace attn {

enum class RnnCell { lstm, gru };

const char* name(RnnCell c);
// Throws attn::Error naming `what` and the accepted names.
void parse(std::string_view text, RnnCell* out, std::string_view what = "rnn_cell");

}  // namespace attn
