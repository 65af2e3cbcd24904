// The fuzz targets: each feeds one input (arbitrary bytes) to one of attn's parsers through its
// public entry point, the one the attn command reaches. A clean refusal (attn::Error) is the
// expected answer to a bad input; anything else (a crash, a sanitizer report, another exception
// escaping, a broken round trip) is a finding. libFuzzer drives them (fuzz/main_*.cpp, clang
// only); tests/fuzz replays the kept inputs of fuzz/regressions/ through the same functions with
// any compiler.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace attn::fuzz {

struct Target {
  const char* name;  // the folder under fuzz/corpus and fuzz/regressions
  void (*run)(std::string_view bytes);
};

void safetensors(std::string_view bytes);    // a model.safetensors / checkpoint file
void npz(std::string_view bytes);            // an .npz archive (embedding tables, PyTorch weights)
void npy(std::string_view bytes);            // one .npy image
void model_config(std::string_view bytes);   // a model directory's config.json (both families)
void yaml(std::string_view bytes);           // a train --config file
void sentencepiece(std::string_view bytes);  // a tokenizer .model file
void tsv(std::string_view bytes);            // classification data: label<TAB>text lines
void ids(std::string_view bytes);            // --ids input: token ids, one sentence a line
void http(std::string_view bytes);           // one connection's bytes to attn serve (fuzz/http.cpp)

const std::vector<Target>& targets();

}  // namespace attn::fuzz
