#include "attn/io/json.h"

#include "attn/error.h"

namespace attn::io {

nlohmann::json parse_json(std::string_view text, const std::string& source) {
  // nlohmann's parser keeps its own stack on the heap and reports each value's depth to this
  // callback before the value is built, so a deep file is refused before anything recurses.
  auto bound = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    if (event == nlohmann::json::parse_event_t::object_start ||
        event == nlohmann::json::parse_event_t::array_start)
      check(depth < kMaxNesting, source, ": nested more than ", kMaxNesting,
            " levels deep (attn reads at most ", kMaxNesting, ")");
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), bound);
  } catch (const nlohmann::json::exception& e) {
    fail(source, ": not valid JSON (", e.what(), ")");
  }
}

}  // namespace attn::io
