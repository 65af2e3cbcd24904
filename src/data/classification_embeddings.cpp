#include "attn/data/classification_embeddings.h"

#include <cstdlib>
#include <sstream>

#include "attn/data/text_file.h"
#include "attn/error.h"
#include "attn/io/io.h"

namespace attn::data {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Tensor from_npz(const std::string& path, const Tensor& init, int64_t* found) {
  auto arrays = io::load_npz(path);
  check(arrays.count("embeddings") || arrays.size() == 1, path, ": expected an array 'embeddings' (or a single array), found ",
        arrays.size(), " arrays");
  const std::string name = arrays.count("embeddings") ? "embeddings" : arrays.begin()->first;
  Tensor t = arrays.at(name);
  check(t.dtype() == DType::f32, path, ": array '", name, "' holds ", dtype_name(t.dtype()),
        " values; embeddings must be float32 (numpy: table.astype(np.float32))");
  if (!(t.shape() == init.shape()))
    fail(path, ": the table is ", shape_str(t.shape()), ", the model needs ",
         shape_str(init.shape()), " (vocabulary size, d_model)");
  *found = t.size(0);
  return t.contiguous().clone();
}

Tensor from_word2vec(const std::string& path, const CharVocab& vocab, const Tensor& init, int64_t* found) {
  Tensor out = init.clone();
  int64_t d = init.size(1);
  std::vector<std::string> lines = split_lines(io::read_file(path), path);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::istringstream in(lines[i]);
    std::string token;
    in >> token;
    std::vector<float> v;
    for (std::string x; in >> x;) v.push_back(std::strtof(x.c_str(), nullptr));
    if (i == 0 && v.size() == 1) continue;  // "count dim" header
    check(static_cast<int64_t>(v.size()) == d, path, ":", i + 1, ": ", v.size(), " values, d_model is ", d);
    auto it = vocab.ids.find(token);
    if (it == vocab.ids.end() || it->second < 3) continue;
    std::copy(v.begin(), v.end(), out.data<float>() + static_cast<int64_t>(it->second) * d);
    *found += 1;
  }
  return out;
}

}  // namespace

Tensor load_embeddings(const std::string& path, const CharVocab& vocab, const Tensor& init, int64_t* found) {
  int64_t n = 0;
  Tensor t = ends_with(path, ".npz") ? from_npz(path, init, &n) : from_word2vec(path, vocab, init, &n);
  const int64_t bad = first_non_finite(t);
  check(bad < 0, path, ": the embedding of token ", bad < 0 ? 0 : bad / t.size(1), " holds ",
        bad < 0 ? 0.0f : t.data<float>()[bad], " (every value must be finite)");
  if (found) *found = n;
  return t;
}

}  // namespace attn::data
