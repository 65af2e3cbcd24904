#include "attn/io/json.h"

#include <vector>

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

std::string quoted_json(const nlohmann::json& v, size_t max_chars) {
  using json = nlohmann::json;
  std::string out;
  // A scalar's text; a string is cut before it is written, so a long one costs max_chars too.
  auto scalar = [&](const json& x) {
    if (x.is_string()) {
      const std::string& s = x.get_ref<const std::string&>();
      out += json(s.substr(0, max_chars + 1)).dump(-1, ' ', false, json::error_handler_t::replace);
    } else {
      out += x.dump(-1, ' ', false, json::error_handler_t::replace);
    }
  };
  struct Open {  // an array or object being written, and its next item
    const json* value;
    json::const_iterator next;
  };
  std::vector<Open> open;
  auto put = [&](const json& x) {
    if (x.is_array() || x.is_object()) {
      out += x.is_array() ? '[' : '{';
      open.push_back({&x, x.cbegin()});
    } else {
      scalar(x);
    }
  };
  put(v);
  while (!open.empty() && out.size() <= max_chars) {
    Open& o = open.back();
    if (o.next == o.value->cend()) {
      out += o.value->is_array() ? ']' : '}';
      open.pop_back();
      continue;
    }
    if (o.next != o.value->cbegin()) out += ',';
    const json::const_iterator item = o.next++;
    if (o.value->is_object()) {
      scalar(json(item.key()));
      out += ':';
    }
    put(*item);  // may grow `open`: `o` is not used after this
  }
  if (out.size() <= max_chars) return out;
  size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return out.substr(0, cut) + "...";
}

}  // namespace attn::io
