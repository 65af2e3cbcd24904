// A Tensor is a view over shared, 64-byte aligned storage: a dtype, a shape, strides (in
// elements) and an offset. Views (reshape of a contiguous tensor, transpose, slice) share the
// storage and copy nothing; contiguous() copies only when the view is not already dense.
//
// Shapes are in PyTorch order, outermost first: [batch, seq, d_model].
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace attn {

enum class DType : uint8_t { f32, bf16, i32, i64, i8 };  // i8: stored int8 weights (models/stored_precision.h)

size_t dtype_size(DType t);
const char* dtype_name(DType t);

using Shape = std::vector<int64_t>;

std::string shape_str(const Shape& s);  // "[2, 3, 4]"
// The product of the dimensions; inline, since loops call numel() in their conditions.
inline int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Raw bytes. Owned (aligned_alloc, freed on destruction) or borrowed from something that
// `keep_alive` holds (an mmap'ed file, say).
struct Storage {
  void* data = nullptr;
  size_t bytes = 0;
  std::shared_ptr<void> keep_alive;

  static std::shared_ptr<Storage> allocate(size_t bytes);
  static std::shared_ptr<Storage> borrow(void* data, size_t bytes, std::shared_ptr<void> keep_alive);
  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();
  bool owned() const { return owned_; }  // allocated by attn (64-byte aligned), not borrowed

 private:
  bool owned_ = false;
  size_t capacity_ = 0;  // bytes of the block (its size class)
};

// Freed blocks are kept for reuse, at most as many bytes as were ever in use at once (tensor.cpp).
struct StorageCacheStats {
  size_t cached = 0;     // bytes held for reuse
  size_t live = 0;       // bytes of owned storages alive now
  size_t peak_live = 0;  // the most ever alive at once
};
StorageCacheStats storage_cache_stats();
// The cache's limit is the most bytes ever in use at once, or this floor if more (64 MiB: a
// training step's buffers of a small model are reused from the first step on). A process that
// computes batches of every shape (a server) sets it to 0: blocks of new sizes then push out old
// ones instead of piling up to the floor.
void set_storage_cache_floor(size_t bytes);

class Tensor {
 public:
  Tensor() = default;

  // Factories. New storage is uninitialised for empty(), zero for zeros().
  static Tensor empty(const Shape& shape, DType dtype = DType::f32);
  static Tensor zeros(const Shape& shape, DType dtype = DType::f32);
  static Tensor full(const Shape& shape, float value);
  static Tensor from_vector(const std::vector<float>& values, const Shape& shape);
  static Tensor from_ids(const std::vector<int32_t>& ids, const Shape& shape);
  // A tensor over memory that `keep_alive` owns (no copy).
  static Tensor wrap(void* data, const Shape& shape, DType dtype, std::shared_ptr<void> keep_alive);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t size(int64_t d) const;  // negative d counts from the end
  int64_t numel() const { return shape_numel(shape_); }
  int64_t offset() const { return offset_; }
  bool is_contiguous() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }

  // Typed pointer to the first element (checks the dtype).
  template <typename T> T* data();
  template <typename T> const T* data() const;
  void* raw_data() const;

  // Views. reshape() copies only when the tensor is not contiguous; one dim may be -1.
  Tensor reshape(const Shape& shape) const;
  Tensor transpose(int64_t a, int64_t b) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end) const;  // [start, end) along dim
  Tensor select(int64_t dim, int64_t index) const;              // drops dim
  Tensor unsqueeze(int64_t dim) const;

  Tensor contiguous() const;  // this if already dense, else a dense copy
  Tensor clone() const;       // always a dense copy
  void copy_from(const Tensor& src);  // same shape; any strides on either side
  void fill(float value);
  void zero();

  // Element access for tests and small code paths (slow: computes the offset).
  float at(std::initializer_list<int64_t> index) const;
  std::vector<float> to_vector() const;  // dense f32 copy in row-major order

  const std::shared_ptr<Storage>& storage() const { return storage_; }

 private:
  std::shared_ptr<Storage> storage_;
  Shape shape_, strides_;
  int64_t offset_ = 0;
  DType dtype_ = DType::f32;
};

Shape contiguous_strides(const Shape& shape);

// The flat index of the first NaN or infinity of an f32 tensor, or -1 when every value is finite.
int64_t first_non_finite(const Tensor& t);

}  // namespace attn
