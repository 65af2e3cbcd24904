#include "request.h"

#include "attn/data/text_file.h"
#include "attn/io/json.h"

namespace attn::serve {
std::string shown(const nlohmann::json& v) { return io::quoted_json(v, 60); }

nlohmann::json parse_body(const std::string& body) {
  nlohmann::json j;
  try {
    j = io::parse_json(body, "the body");  // nested at most io::kMaxNesting deep: see io/json.h
  } catch (const Error& e) {
    throw HttpError(400, e.what());
  }
  if (!j.is_object()) throw HttpError(400, "the body must be a JSON object, got " + std::string(j.type_name()));
  return j;
}

int64_t int_field(const nlohmann::json& body, const std::string& key, int64_t fallback, int64_t min, int64_t max) {
  if (!body.contains(key)) return fallback;
  const nlohmann::json& v = body[key];
  if (!v.is_number_integer() || v.get<int64_t>() < min || v.get<int64_t>() > max ||
      (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(max)))
    throw HttpError(400, "\"" + key + "\" must be a whole number in " + std::to_string(min) + " .. " +
                             std::to_string(max) + ", got " + shown(v));
  return v.get<int64_t>();
}

double real_field(const nlohmann::json& body, const std::string& key, double fallback, double min, double max) {
  if (!body.contains(key)) return fallback;
  const nlohmann::json& v = body[key];
  if (!v.is_number() || v.get<double>() < min || v.get<double>() > max)
    throw HttpError(400, "\"" + key + "\" must be a number in " + shown(min) + " .. " + shown(max) + ", got " + shown(v));
  return v.get<double>();
}

bool bool_field(const nlohmann::json& body, const std::string& key, bool fallback) {
  if (!body.contains(key)) return fallback;
  if (!body[key].is_boolean()) throw HttpError(400, "\"" + key + "\" must be true or false, got " + shown(body[key]));
  return body[key].get<bool>();
}

std::string string_field(const nlohmann::json& body, const std::string& key, const std::string& fallback,
                         bool required) {
  if (!body.contains(key)) {
    if (required) throw HttpError(400, "\"" + key + "\" is missing");
    return fallback;
  }
  if (!body[key].is_string()) throw HttpError(400, "\"" + key + "\" must be a string, got " + shown(body[key]));
  return body[key].get<std::string>();
}

std::vector<std::string> sentences_field(const nlohmann::json& body, const std::string& key,
                                         const RequestLimits& limits) {
  if (!body.contains(key)) throw HttpError(400, "\"" + key + "\" is missing");
  const nlohmann::json& v = body[key];
  if (!v.is_string() && !v.is_array())
    throw HttpError(400, "\"" + key + "\" must be a string or an array of strings, got " + shown(v));
  std::vector<std::string> out;
  if (v.is_string()) out.push_back(v.get<std::string>());
  else if (v.empty()) throw HttpError(400, "\"" + key + "\" is empty: nothing to compute");
  else if (v.size() > limits.max_sentences)
    throw HttpError(413, "\"" + key + "\" has " + std::to_string(v.size()) + " sentences, more than the " +
                             std::to_string(limits.max_sentences) + " a request may hold (--max-sentences)");
  for (size_t i = 0; v.is_array() && i < v.size(); ++i) {
    if (!v[i].is_string()) throw HttpError(400, "\"" + key + "\"[" + std::to_string(i) + "] must be a string, got " + shown(v[i]));
    out.push_back(v[i].get<std::string>());
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const std::string where = "\"" + key + "\"[" + std::to_string(i) + "]";
    if (data::is_blank(out[i])) throw HttpError(400, where + " is empty: nothing to compute");
    if (out[i].size() > limits.max_line_bytes)
      throw HttpError(413, where + " has " + std::to_string(out[i].size()) + " bytes, more than the " +
                               std::to_string(limits.max_line_bytes) + " a sentence may have (--max-line-bytes)");
    if (out[i].find_first_of("\r\n") != std::string::npos)
      throw HttpError(400, where + " holds a line break: send one sentence per element");
    if (data::first_invalid_utf8(out[i]) >= 0) throw HttpError(400, where + " is not valid UTF-8");
  }
  return out;
}

std::vector<std::vector<int32_t>> ids_field(const nlohmann::json& body, const std::string& key, int64_t vocab,
                                            const RequestLimits& limits) {
  const nlohmann::json& v = body[key];
  if (!v.is_array() || v.empty()) throw HttpError(400, "\"" + key + "\" must be a non-empty array of arrays of token ids");
  if (v.size() > limits.max_sentences)
    throw HttpError(413, "\"" + key + "\" has " + std::to_string(v.size()) + " sentences, more than the " +
                             std::to_string(limits.max_sentences) + " a request may hold (--max-sentences)");
  std::vector<std::vector<int32_t>> rows;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string where = "\"" + key + "\"[" + std::to_string(i) + "]";
    if (!v[i].is_array() || v[i].empty()) throw HttpError(400, where + " must be a non-empty array of token ids");
    if (v[i].size() > limits.max_line_bytes / 2)
      throw HttpError(413, where + " has " + std::to_string(v[i].size()) + " ids, more than a sentence may have");
    rows.emplace_back();
    for (const nlohmann::json& id : v[i]) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= vocab)
        throw HttpError(400, where + ": token ids must be whole numbers in 0 .. " + std::to_string(vocab - 1) +
                                 ", got " + shown(id));
      rows.back().push_back(static_cast<int32_t>(id.get<int64_t>()));
    }
  }
  return rows;
}

}  // namespace attn::serve
