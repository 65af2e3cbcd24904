// Tensor storage: blocks of memory, and the cache of freed blocks that steps reuse.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "attn/error.h"
#include "attn/tensor/tensor.h"

namespace attn {

// A cache of freed blocks by size class, so that the same shapes, step after step, reuse memory
// instead of going back to the system (large blocks would otherwise be mmap'ed and page-faulted
// anew every time). Classes: multiples of 64 bytes up to 4 KiB, of 4 KiB up to 64 KiB, then steps
// of 1/8 of a power of two (at most 12.5% slack). A request takes a cached block of its class or,
// failing that, the smallest cached one at most a quarter larger: a decoder whose batch gains and
// loses rows at every step (a server's stream) asks for a slightly different size each time, and
// exact classes alone would send most of its blocks back to the system (measured: 16% of a beam-4
// server's time in page faults and munmap). The cache holds at most as many bytes as the largest
// amount ever in use at once (at least kCacheFloor): one training or decoding step's worth, so
// memory stays bounded by twice the working set however the shapes vary (batches bucketed by
// length change every step). When a freed block does not fit, blocks of other classes are
// released to the system first.
namespace {

constexpr size_t kCacheFloor = size_t{64} << 20;

size_t size_class(size_t bytes) {
  if (bytes <= 4096) return bytes <= 64 ? 64 : (bytes + 63) / 64 * 64;
  if (bytes <= (size_t{64} << 10)) return (bytes + 4095) / 4096 * 4096;
  size_t p = size_t{1} << (63 - __builtin_clzll(bytes - 1));  // largest power of two < bytes
  size_t step = p / 8;
  return (bytes + step - 1) / step * step;
}

struct BlockCache {
  std::mutex mutex;
  std::map<size_t, std::vector<void*>> free;  // by class; no empty vector kept
  size_t cached = 0;     // bytes held in `free`
  size_t live = 0;       // bytes of owned storages alive now
  size_t peak_live = 0;  // the most ever alive at once
  size_t floor = kCacheFloor;

  // A cached block of class `cls`, or of the smallest class up to cls + cls/4 (its class is
  // written to *got), counted as live; null if there is none.
  void* take(size_t cls, size_t* got) {
    std::lock_guard<std::mutex> lock(mutex);
    *got = cls;
    auto it = free.lower_bound(cls);
    if (it == free.end() || it->first > cls + cls / 4) return nullptr;
    *got = it->first;
    void* p = it->second.back();
    it->second.pop_back();
    cached -= it->first;
    if (it->second.empty()) free.erase(it);
    count_live(*got);
    return p;
  }
  // A block of class `cls` the system gave.
  void allocated(size_t cls) {
    std::lock_guard<std::mutex> lock(mutex);
    count_live(cls);
  }
  void count_live(size_t cls) {
    live += cls;
    peak_live = std::max(peak_live, live);
  }
  void give(void* p, size_t cls) {
    std::vector<void*> release;
    {
      std::lock_guard<std::mutex> lock(mutex);
      live -= cls;
      size_t limit = std::max(peak_live, floor);
      for (auto it = free.begin(); cached + cls > limit && it != free.end();) {
        if (it->first == cls) {
          ++it;
          continue;
        }
        while (!it->second.empty() && cached + cls > limit) {
          release.push_back(it->second.back());
          it->second.pop_back();
          cached -= it->first;
        }
        it = it->second.empty() ? free.erase(it) : std::next(it);
      }
      if (cached + cls <= limit) {
        free[cls].push_back(p);
        cached += cls;
      } else {
        release.push_back(p);
      }
    }
    for (void* q : release) std::free(q);
  }
  ~BlockCache() {
    for (auto& [cls, blocks] : free)
      for (void* q : blocks) std::free(q);
  }
};

BlockCache& block_cache() {
  static BlockCache* cache = new BlockCache();  // never destroyed: tensors may outlive statics
  return *cache;
}

}  // namespace

void set_storage_cache_floor(size_t bytes) {
  BlockCache& c = block_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.floor = bytes;
}

StorageCacheStats storage_cache_stats() {
  BlockCache& c = block_cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return {c.cached, c.live, c.peak_live};
}

std::shared_ptr<Storage> Storage::allocate(size_t bytes) {
  auto s = std::make_shared<Storage>();
  size_t cls = 0;
  s->data = block_cache().take(size_class(bytes), &cls);
  if (!s->data) {
    s->data = std::aligned_alloc(64, cls);
    if (s->data) block_cache().allocated(cls);
  }
  check(s->data != nullptr, "out of memory: a tensor of ", static_cast<double>(bytes) / (1 << 20),
        " MiB could not be allocated (", static_cast<double>(storage_cache_stats().live) / (1 << 20),
        " MiB in tensors already; a smaller --batch, --beam or model needs less)");
  s->bytes = bytes;
  s->capacity_ = cls;
  s->owned_ = true;
  return s;
}

std::shared_ptr<Storage> Storage::borrow(void* data, size_t bytes, std::shared_ptr<void> keep_alive) {
  auto s = std::make_shared<Storage>();
  s->data = data;
  s->bytes = bytes;
  s->keep_alive = std::move(keep_alive);
  return s;
}

Storage::~Storage() {
  if (owned_) block_cache().give(data, capacity_);
}

}  // namespace attn
