#include "attn/kernels/elementwise.h"

#include <algorithm>

#include "attn/error.h"
#include "attn/parallel.h"

namespace attn {

void axpy(int64_t n, float alpha, const float* src, float* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] += alpha * src[i];
}

void add_into(Tensor& dst, const Tensor& src) {
  if (dst.shape() != src.shape())  // (shape_str only on failure: add_into is on the decode path)
    fail("add_into: ", shape_str(src.shape()), " into ", shape_str(dst.shape()));
  check(dst.is_contiguous(), "add_into: destination must be dense");
  Tensor s = src.contiguous();
  float* d = dst.data<float>();
  const float* p = s.data<float>();
  parallel_for(dst.numel(), 1 << 15, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) d[i] += p[i];
  });
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (!(da == db || da == 1 || db == 1))
      fail("broadcast: shapes ", shape_str(a), " and ", shape_str(b), " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape broadcast_strides(const Tensor& t, const Shape& out) {
  Shape st(out.size(), 0);
  size_t lead = out.size() - t.shape().size();
  for (size_t i = 0; i < t.shape().size(); ++i)
    st[lead + i] = t.shape()[i] == 1 ? 0 : t.strides()[i];
  return st;
}

Tensor sum_to_shape(const Tensor& g, const Shape& to) {
  if (g.shape() == to) return g;
  Tensor gc = g.contiguous();
  Tensor out = Tensor::zeros(to);
  // Read `out` with broadcast strides over g's shape and accumulate.
  Shape ost = broadcast_strides(out, g.shape());
  const Shape& shape = g.shape();
  int64_t n = static_cast<int64_t>(shape.size());
  const float* src = gc.data<float>();
  float* dst = out.data<float>();
  std::vector<int64_t> idx(n, 0);
  for (int64_t i = 0, total = g.numel(); i < total; ++i) {
    int64_t o = 0;
    for (int64_t k = 0; k < n; ++k) o += idx[k] * ost[k];
    dst[o] += src[i];
    for (int64_t k = n - 1; k >= 0; --k) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body) {
  on_each_thread(n >= grain, [&](int t, int nt) {
    const int64_t chunk = (n + nt - 1) / nt;
    const int64_t b = std::min<int64_t>(n, t * chunk), e = std::min<int64_t>(n, b + chunk);
    if (b < e) body(b, e);
  });
}

}  // namespace attn
