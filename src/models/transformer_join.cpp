// Continuous batching on the Transformer's incremental decoder: sentences join a DecoderState
// that is already running (include/attn/models/transformer.h, add_sentences).
#include <algorithm>

#include "attn/error.h"
#include "attn/models/transformer.h"

namespace attn {
namespace {

// The memory keys or values [rows, heads, width, d_k] in a buffer of `rows` x `width` (the old
// ones in its first rows and positions; the rest zero, behind the padding mask).
Tensor grown(const Tensor& t, int64_t rows, int64_t width) {
  Tensor g = Tensor::zeros({rows, t.size(1), width, t.size(3)});
  g.slice(0, 0, t.size(0)).slice(2, 0, t.size(2)).copy_from(t);
  return g;
}

// The padding mask [rows, width], new places padding (1).
Tensor grown_mask(const Tensor& pad, int64_t rows, int64_t width) {
  Tensor g = Tensor::empty({rows, width}, DType::i32);
  int32_t* out = g.data<int32_t>();
  std::fill(out, out + rows * width, 1);
  const int32_t* in = pad.data<int32_t>();
  for (int64_t r = 0; r < pad.size(0); ++r) std::copy(in + r * pad.size(1), in + (r + 1) * pad.size(1), out + r * width);
  return g;
}

// Memory rows no decoder row reads any more, then new ones (the buffers grown by half again, so
// that a steady stream of sentences reuses rows instead of growing them), `n` in all; the buffers
// as wide as `width` positions.
std::vector<int64_t> memory_rows_for(DecoderState& s, int64_t n, int64_t width) {
  const int64_t rows = s.src_pad.size(0), old_width = s.src_pad.size(1);
  std::vector<char> read(static_cast<size_t>(rows), 0);
  for (int64_t r : s.memory_rows) read[static_cast<size_t>(r)] = 1;
  std::vector<int64_t> free;
  for (int64_t r = 0; r < rows; ++r)
    if (!read[static_cast<size_t>(r)]) free.push_back(r);
  const int64_t missing = n - static_cast<int64_t>(free.size());
  const int64_t new_rows = missing > 0 ? rows + std::max(missing, rows / 2) : rows;
  const int64_t new_width = std::max(old_width, width);
  if (new_rows > rows || new_width > old_width) {
    for (Tensor& k : s.memory_k) k = grown(k, new_rows, new_width);
    for (Tensor& v : s.memory_v) v = grown(v, new_rows, new_width);
    s.src_pad = grown_mask(s.src_pad, new_rows, new_width);
    for (int64_t r = rows; r < new_rows; ++r) free.push_back(r);
  }
  free.resize(static_cast<size_t>(n));
  return free;
}

}  // namespace

void add_sentences(const Transformer& m, DecoderState& s, const Tensor& memory, const Tensor& src_pad) {
  const int64_t n = memory.size(0), len = memory.size(1);
  const int64_t rows = static_cast<int64_t>(s.memory_rows.size());
  check(src_pad.shape() == Shape{n, len} && src_pad.dtype() == DType::i32, "add_sentences: padding mask ",
        shape_str(src_pad.shape()), " for memory ", shape_str(memory.shape()));
  DecoderState fresh = start_decoding(m, memory, src_pad);
  const std::vector<int64_t> at = memory_rows_for(s, n, len);
  const int64_t width = s.src_pad.size(1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = at[static_cast<size_t>(i)];
    for (size_t l = 0; l < s.memory_k.size(); ++l) {
      s.memory_k[l].slice(0, r, r + 1).slice(2, 0, len).copy_from(fresh.memory_k[l].slice(0, i, i + 1));
      s.memory_v[l].slice(0, r, r + 1).slice(2, 0, len).copy_from(fresh.memory_v[l].slice(0, i, i + 1));
    }
    // the keys past the sentence's own (another's, or zero) are padding, never read
    int32_t* pad = s.src_pad.data<int32_t>() + r * width;
    const int32_t* own = fresh.src_pad.contiguous().data<int32_t>() + i * len;
    std::copy(own, own + len, pad);
    std::fill(pad + len, pad + width, 1);
    s.memory_rows.push_back(r);
  }
  for (KVCache& c : s.self) add_rows(c, rows, n);  // each new row at position 0: no keys cached
}

}  // namespace attn
