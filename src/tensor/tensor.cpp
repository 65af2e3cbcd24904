#include "attn/tensor/tensor.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "attn/error.h"
#include "attn/parallel.h"

namespace attn {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::bf16: return 2;
    case DType::i32: return 4;
    case DType::i64: return 8;
    case DType::i8: return 1;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "F32";
    case DType::bf16: return "BF16";
    case DType::i32: return "I32";
    case DType::i64: return "I64";
    case DType::i8: return "I8";
  }
  return "?";
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

Shape contiguous_strides(const Shape& shape) {
  Shape st(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    st[i] = acc;
    acc *= shape[i];
  }
  return st;
}

// ---- Tensor factories ------------------------------------------------------------------------

Tensor Tensor::empty(const Shape& shape, DType dtype) {
  for (int64_t d : shape)
    if (d < 0) fail("tensor: negative dimension in shape ", shape_str(shape));
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.strides_ = contiguous_strides(shape);
  t.storage_ = Storage::allocate(static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype));
  return t;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  std::memset(t.storage_->data, 0, t.nbytes());
  return t;
}

Tensor Tensor::full(const Shape& shape, float value) {
  Tensor t = empty(shape);
  t.fill(value);
  return t;
}

Tensor Tensor::from_vector(const std::vector<float>& values, const Shape& shape) {
  if (!(static_cast<int64_t>(values.size()) == shape_numel(shape)))
    fail("from_vector: ", values.size(),
        " values do not fill shape ", shape_str(shape));
  Tensor t = empty(shape);
  if (!values.empty()) std::memcpy(t.data<float>(), values.data(), values.size() * sizeof(float));
  return t;
}

Tensor Tensor::from_ids(const std::vector<int32_t>& ids, const Shape& shape) {
  if (!(static_cast<int64_t>(ids.size()) == shape_numel(shape)))
    fail("from_ids: ", ids.size(),
        " ids do not fill shape ", shape_str(shape));
  Tensor t = empty(shape, DType::i32);
  if (!ids.empty()) std::memcpy(t.data<int32_t>(), ids.data(), ids.size() * sizeof(int32_t));
  return t;
}

Tensor Tensor::wrap(void* data, const Shape& shape, DType dtype, std::shared_ptr<void> keep_alive) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.strides_ = contiguous_strides(shape);
  t.storage_ = Storage::borrow(data, static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype),
                               std::move(keep_alive));
  return t;
}

// ---- Accessors -------------------------------------------------------------------------------

int64_t Tensor::size(int64_t d) const {
  int64_t n = dim();
  if (d < 0) d += n;
  if (!(d >= 0 && d < n))
    fail("tensor: dimension ", d, " out of range for shape ", shape_str(shape_));
  return shape_[d];
}

bool Tensor::is_contiguous() const {
  int64_t acc = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] != 1 && strides_[i] != acc) return false;
    acc *= shape_[i];
  }
  return true;
}

void* Tensor::raw_data() const {
  check(defined(), "tensor: access to an undefined tensor");
  return static_cast<char*>(storage_->data) + offset_ * static_cast<int64_t>(dtype_size(dtype_));
}

template <typename T> static DType dtype_of();
template <> DType dtype_of<float>() { return DType::f32; }
template <> DType dtype_of<int32_t>() { return DType::i32; }
template <> DType dtype_of<int64_t>() { return DType::i64; }
template <> DType dtype_of<uint16_t>() { return DType::bf16; }
template <> DType dtype_of<int8_t>() { return DType::i8; }

template <typename T> T* Tensor::data() {
  check(dtype_ == dtype_of<T>(), "tensor: dtype is ", dtype_name(dtype_), ", asked for ",
        dtype_name(dtype_of<T>()));
  return static_cast<T*>(raw_data());
}
template <typename T> const T* Tensor::data() const {
  check(dtype_ == dtype_of<T>(), "tensor: dtype is ", dtype_name(dtype_), ", asked for ",
        dtype_name(dtype_of<T>()));
  return static_cast<const T*>(raw_data());
}
template float* Tensor::data<float>();
template const float* Tensor::data<float>() const;
template int32_t* Tensor::data<int32_t>();
template const int32_t* Tensor::data<int32_t>() const;
template int64_t* Tensor::data<int64_t>();
template const int64_t* Tensor::data<int64_t>() const;
template uint16_t* Tensor::data<uint16_t>();
template const uint16_t* Tensor::data<uint16_t>() const;
template int8_t* Tensor::data<int8_t>();
template const int8_t* Tensor::data<int8_t>() const;

// ---- Views -----------------------------------------------------------------------------------

Tensor Tensor::reshape(const Shape& shape) const {
  Shape s = shape;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      if (!(infer < 0))
        fail("reshape: more than one -1 in ", shape_str(shape));
      infer = static_cast<int64_t>(i);
    } else {
      known *= s[i];
    }
  }
  if (infer >= 0) {
    if (!(known > 0 && numel() % known == 0))
      fail("reshape: cannot reshape ", shape_str(shape_), " to ",
          shape_str(shape));
    s[infer] = numel() / known;
  }
  if (!(shape_numel(s) == numel()))
    fail("reshape: cannot reshape ", shape_str(shape_), " (", numel(),
        " elements) to ", shape_str(shape));
  Tensor t = is_contiguous() ? *this : contiguous();
  t.shape_ = s;
  t.strides_ = contiguous_strides(s);
  return t;
}

Tensor Tensor::transpose(int64_t a, int64_t b) const {
  int64_t n = dim();
  if (a < 0) a += n;
  if (b < 0) b += n;
  if (!(a >= 0 && a < n && b >= 0 && b < n))
    fail("transpose: dims ", a, ", ", b, " out of range for ",
        shape_str(shape_));
  Tensor t = *this;
  std::swap(t.shape_[a], t.shape_[b]);
  std::swap(t.strides_[a], t.strides_[b]);
  return t;
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t end) const {
  int64_t n = dim();
  if (d < 0) d += n;
  if (!(d >= 0 && d < n))
    fail("slice: dim ", d, " out of range for ", shape_str(shape_));
  if (!(0 <= start && start <= end && end <= shape_[d]))
    fail("slice: [", start, ", ", end,
        ") out of range for dim ", d, " of ", shape_str(shape_));
  Tensor t = *this;
  t.offset_ += start * strides_[d];
  t.shape_[d] = end - start;
  return t;
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  int64_t n = dim();
  if (d < 0) d += n;
  Tensor t = slice(d, index, index + 1);
  t.shape_.erase(t.shape_.begin() + d);
  t.strides_.erase(t.strides_.begin() + d);
  return t;
}

Tensor Tensor::unsqueeze(int64_t d) const {
  int64_t n = dim();
  if (d < 0) d += n + 1;
  if (!(d >= 0 && d <= n))
    fail("unsqueeze: dim ", d, " out of range for ", shape_str(shape_));
  Tensor t = *this;
  int64_t stride = d < n ? shape_[d] * strides_[d] : 1;
  t.shape_.insert(t.shape_.begin() + d, 1);
  t.strides_.insert(t.strides_.begin() + d, stride);
  return t;
}

// Copies between two tensors of one shape with arbitrary strides, element by element, with the
// innermost dimension as a tight loop. A copy of 1 MB or more is split by rows between the
// threads (splitting the heads of a batch's memory keys and values, for one, moves megabytes).
static void strided_copy(const Tensor& src, Tensor& dst) {
  const size_t es = dtype_size(src.dtype());
  const char* s = static_cast<const char*>(src.raw_data());
  char* d = static_cast<char*>(dst.raw_data());
  const int64_t n = src.dim();
  if (n == 0) {
    std::memcpy(d, s, es);
    return;
  }
  const int64_t total = src.numel();
  if (total == 0) return;
  const int64_t inner = src.shape()[n - 1], rows = total / inner;
  const int64_t sin = src.strides()[n - 1], din = dst.strides()[n - 1];
  // rows [r0, r1): the index of row r0 over the outer n - 1 dimensions, then row after row
  auto copy_rows = [&](int64_t r0, int64_t r1) {
    std::vector<int64_t> idx(n, 0);
    for (int64_t k = n - 2, r = r0; k >= 0; --k) {
      idx[k] = r % src.shape()[k];
      r /= src.shape()[k];
    }
    for (int64_t row = r0; row < r1; ++row) {
      int64_t so = 0, dof = 0;
      for (int64_t k = 0; k < n - 1; ++k) {
        so += idx[k] * src.strides()[k];
        dof += idx[k] * dst.strides()[k];
      }
      if (sin == 1 && din == 1) {  // a dense row, whatever the element size
        std::memcpy(d + dof * es, s + so * es, inner * es);
      } else if (es == 4) {
        const uint32_t* sp = reinterpret_cast<const uint32_t*>(s) + so;
        uint32_t* dp = reinterpret_cast<uint32_t*>(d) + dof;
        for (int64_t i = 0; i < inner; ++i) dp[i * din] = sp[i * sin];
      } else {
        for (int64_t i = 0; i < inner; ++i)
          std::memcpy(d + (dof + i * din) * es, s + (so + i * sin) * es, es);
      }
      for (int64_t k = n - 2; k >= 0; --k) {
        if (++idx[k] < src.shape()[k]) break;
        idx[k] = 0;
      }
    }
  };
  const bool worth = rows >= 2 * omp_get_max_threads() && static_cast<size_t>(total) * es >= (size_t{1} << 20);
  on_each_thread(worth, [&](int64_t t, int64_t nt) {
    const int64_t chunk = (rows + nt - 1) / nt, b = std::min(rows, t * chunk), e = std::min(rows, b + chunk);
    if (b < e) copy_rows(b, e);
  });
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor t = empty(shape_, dtype_);
  strided_copy(*this, t);
  return t;
}

void Tensor::copy_from(const Tensor& src) {
  if (!(src.shape_ == shape_ && src.dtype_ == dtype_))
    fail("copy_from: source ", shape_str(src.shape_),
        " ", dtype_name(src.dtype_), " does not match destination ", shape_str(shape_), " ",
        dtype_name(dtype_));
  strided_copy(src, *this);
}

void Tensor::fill(float value) {
  check(dtype_ == DType::f32, "fill: only f32 tensors");
  check(is_contiguous(), "fill: only contiguous tensors");
  float* p = data<float>();
  for (int64_t i = 0, n = numel(); i < n; ++i) p[i] = value;
}

void Tensor::zero() {
  check(is_contiguous(), "zero: only contiguous tensors");
  std::memset(raw_data(), 0, nbytes());
}

float Tensor::at(std::initializer_list<int64_t> index) const {
  if (!(static_cast<int64_t>(index.size()) == dim()))
    fail("at: ", index.size(), " indices for ",
        shape_str(shape_));
  int64_t off = 0, k = 0;
  for (int64_t i : index) {
    if (!(i >= 0 && i < shape_[k]))
      fail("at: index ", i, " out of range for dim ", k, " of ",
          shape_str(shape_));
    off += i * strides_[k++];
  }
  switch (dtype_) {
    case DType::f32: return static_cast<const float*>(raw_data())[off];
    case DType::i32: return static_cast<float>(static_cast<const int32_t*>(raw_data())[off]);
    case DType::i64: return static_cast<float>(static_cast<const int64_t*>(raw_data())[off]);
    case DType::i8: return static_cast<float>(static_cast<const int8_t*>(raw_data())[off]);
    case DType::bf16: {
      uint32_t bits = static_cast<uint32_t>(static_cast<const uint16_t*>(raw_data())[off]) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
  }
  return 0;
}

std::vector<float> Tensor::to_vector() const {
  check(dtype_ == DType::f32, "to_vector: only f32 tensors");
  Tensor c = contiguous();
  const float* p = c.data<float>();
  return std::vector<float>(p, p + numel());
}

int64_t first_non_finite(const Tensor& t) {
  check(t.dtype() == DType::f32, "first_non_finite: expected F32, got ", dtype_name(t.dtype()));
  Tensor c = t.contiguous();
  const float* x = c.data<float>();
  for (int64_t i = 0; i < c.numel(); ++i)
    if (!std::isfinite(x[i])) return i;
  return -1;
}

}  // namespace attn
