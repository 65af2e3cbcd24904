#include "attn/ops/padding.h"

#include <algorithm>
#include <cstring>

#include "attn/error.h"
#include "attn/kernels/elementwise.h"

namespace attn {
namespace {

// dst row rows[i] (or i) = src row i (or rows[i]), rows of C floats.
void copy_rows(const float* src, float* dst, int64_t c, const std::vector<int64_t>& rows, bool scatter) {
  parallel_for(static_cast<int64_t>(rows.size()), std::max<int64_t>(1, 16384 / std::max<int64_t>(c, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t i = begin; i < end; ++i) {
                   const int64_t r = rows[static_cast<size_t>(i)];
                   std::memcpy(dst + (scatter ? r : i) * c, src + (scatter ? i : r) * c, sizeof(float) * c);
                 }
               });
}

}  // namespace

RealRows real_rows(const Tensor& key_padding) {
  if (!(key_padding.dim() == 2 && key_padding.dtype() == DType::i32))
    fail("real_rows: needs an i32 [batch, len] mask, got ",
         shape_str(key_padding.shape()));
  const Tensor pad = key_padding.contiguous();
  RealRows r;
  r.batch = pad.size(0);
  r.len = pad.size(1);
  const int32_t* p = pad.data<int32_t>();
  for (int64_t i = 0; i < r.batch * r.len; ++i)
    if (p[i] == 0) r.rows.push_back(i);
  return r;
}

Tensor remove_padding(const Tensor& x, const RealRows& r) {
  if (!(x.dim() == 3 && x.size(0) == r.batch && x.size(1) == r.len))
    fail("remove_padding: x ", shape_str(x.shape()),
         " for a batch of ", r.batch, " x ", r.len);
  const Tensor c = x.contiguous();
  const int64_t C = c.size(2);
  Tensor out = Tensor::empty({1, static_cast<int64_t>(r.rows.size()), C});
  copy_rows(c.data<float>(), out.data<float>(), C, r.rows, false);
  return out;
}

Tensor restore_padding(const Tensor& x, const RealRows& r) {
  if (!(x.dim() == 3 && x.size(0) == 1 && x.size(1) == static_cast<int64_t>(r.rows.size())))
    fail("restore_padding: x ", shape_str(x.shape()), " for ", r.rows.size(), " real rows");
  const Tensor c = x.contiguous();
  const int64_t C = c.size(2);
  Tensor out = Tensor::empty({r.batch, r.len, C});
  float* o = out.data<float>();
  // zeros at the padding: each run of padded rows between two real ones
  int64_t next = 0;
  for (int64_t row : r.rows) {
    if (row > next) std::memset(o + next * C, 0, sizeof(float) * (row - next) * C);
    next = row + 1;
  }
  if (r.batch * r.len > next) std::memset(o + next * C, 0, sizeof(float) * (r.batch * r.len - next) * C);
  copy_rows(c.data<float>(), o, C, r.rows, true);
  return out;
}

}  // namespace attn
