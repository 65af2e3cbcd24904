// GET / of attn serve: one self-contained HTML page (inline style and script, nothing fetched but
// the server's own API). A model selector, a text box translated (or classified) as you type, one
// sentence a line, debounced; a click on a word of a translation opens the attention page of
// that sentence (GET /v1/attention, attn attend's page) over the page, with that word clicked.
//
// For tests the page writes what it did into <body> attributes: data-models (how many listed),
// data-translated (answers shown, counting up), data-attention ("loaded" once the overlay's page
// has drawn).
#pragma once

#include <string>

namespace attn::serve {

const std::string& page_html();

}  // namespace attn::serve
