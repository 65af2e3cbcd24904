#include "form.h"

#include <httplib.h>

namespace attn::serve {

FormFields form_fields(const std::string& encoded) {
  FormFields fields;
  size_t start = 0;
  while (start <= encoded.size()) {
    size_t end = encoded.find('&', start);
    if (end == std::string::npos) end = encoded.size();
    if (end > start) {
      const std::string part = encoded.substr(start, end - start);
      const size_t eq = part.find('=');
      std::string name = part.substr(0, eq), value = eq == std::string::npos ? "" : part.substr(eq + 1);
      fields.emplace_back(httplib::detail::decode_url(name, true), httplib::detail::decode_url(value, true));
    }
    start = end + 1;
  }
  return fields;
}

}  // namespace attn::serve
