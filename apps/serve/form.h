// HTML form fields as a browser or curl sends them (application/x-www-form-urlencoded, and the
// query string of a URL), every field kept in order, repeated names included. cpp-httplib's own
// reading (Request::params) keeps one copy of a repeated name=value pair, so `q=A&q=B&q=A` lost
// its second A.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace attn::serve {

using FormFields = std::vector<std::pair<std::string, std::string>>;

// The fields of "a=1&b=x+y&a=%C3%A9": percent-escapes and '+' decoded; a part without '=' is a
// name with an empty value; empty parts ("a=1&&b=2") are skipped.
FormFields form_fields(const std::string& encoded);

}  // namespace attn::serve
