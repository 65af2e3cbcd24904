// Text placed inside SVG or HTML (training curves, attention pictures): the five characters XML
// gives a meaning, written as entities.
#pragma once

#include <string>
#include <string_view>

namespace attn::io {

std::string xml_escaped(std::string_view text);

}  // namespace attn::io
