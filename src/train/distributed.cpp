// Data-parallel collectives (include/attn/train/distributed.h). The only file that calls MPI:
// built with ATTN_HAVE_MPI when CMake found MPI; without it every world is the single process.
#include "attn/train/distributed.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "attn/error.h"

#ifdef ATTN_HAVE_MPI
#include <mpi.h>
#endif

namespace attn {

bool built_with_mpi() {
#ifdef ATTN_HAVE_MPI
  return true;
#else
  return false;
#endif
}

bool started_by_mpi_launcher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

#ifdef ATTN_HAVE_MPI

namespace {
void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}
}  // namespace

Communicator join_world() {
  if (!started_by_mpi_launcher()) return {};
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // Open MPI's non-blocking allreduce (libnbc) picks, for fewer than 4 ranks or an in-place sum,
    // a binomial tree: a reduce to rank 0, then a broadcast, one direction of the link at a time,
    // 2 S / B for S bytes over bandwidth B. The ring sends both ways at once, 2 (N-1)/N S / B
    // (docs/distributed.md measures both). An algorithm given to mpirun (--mca
    // coll_libnbc_iallreduce_algorithm) is in the environment already and stays.
    setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", 0);
    // Funneled: only the main thread calls MPI (backward's OpenMP threads never do).
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    std::atexit(finalize_at_exit);
    check(provided >= MPI_THREAD_FUNNELED, "MPI: this MPI library does not allow OpenMP threads beside MPI (",
          "MPI_THREAD_FUNNELED), attn's training needs them");
  }
  Communicator c;
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c.size);
  return c;
}

void Communicator::allreduce_sum(float* x, int64_t n) const {
  if (size == 1 || n == 0) return;
  check(n <= INT32_MAX, "allreduce of ", n, " floats: more than MPI's int count");
  MPI_Allreduce(MPI_IN_PLACE, x, static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

void Communicator::allreduce_sum(double* x, int64_t n) const {
  if (size == 1 || n == 0) return;
  MPI_Allreduce(MPI_IN_PLACE, x, static_cast<int>(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

void Communicator::broadcast(void* p, int64_t bytes) const {
  if (size == 1 || bytes == 0) return;
  MPI_Bcast(p, static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD);
}

void Communicator::barrier() const {
  if (size > 1) MPI_Barrier(MPI_COMM_WORLD);
}

// The started buckets' requests; test() lets them progress (Open MPI's TCP transport moves a
// non-blocking collective on only inside MPI calls), wait() ends them all.
struct GradientReducer::Requests {
  std::vector<MPI_Request> started;
  void start(float* x, int64_t n) {
    check(n <= INT32_MAX, "allreduce of ", n, " floats: more than MPI's int count");
    started.emplace_back();
    MPI_Iallreduce(MPI_IN_PLACE, x, static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &started.back());
  }
  void test() {
    int done = 0;
    if (!started.empty()) MPI_Testall(static_cast<int>(started.size()), started.data(), &done, MPI_STATUSES_IGNORE);
  }
  void wait() {
    MPI_Waitall(static_cast<int>(started.size()), started.data(), MPI_STATUSES_IGNORE);
    started.clear();
  }
};

void Communicator::abort(int code) const {
  if (size > 1) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

#else  // one process

Communicator join_world() {
  const char* n = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (n == nullptr) n = std::getenv("PMI_SIZE");
  check(n == nullptr || std::atoi(n) <= 1, "started by an MPI launcher with ", n ? n : "?",
        " processes, but this attn was built without MPI (install libopenmpi-dev and rebuild)");
  return {};
}

void Communicator::allreduce_sum(float*, int64_t) const {}
void Communicator::allreduce_sum(double*, int64_t) const {}
void Communicator::broadcast(void*, int64_t) const {}
void Communicator::barrier() const {}

struct GradientReducer::Requests {  // one process: a reducer never starts a bucket
  void start(float*, int64_t) {}
  void test() {}
  void wait() {}
};
void Communicator::abort(int code) const { std::exit(code); }

#endif

bool Communicator::agree(bool rank0_value) const {
  char v = rank0_value ? 1 : 0;
  broadcast(&v, 1);
  return v != 0;
}

namespace {

// Of a gradient as its bucket copied it, to check when the sums arrive that backward did not
// change it afterwards (a gradient handed on too early would be a wrong sum, silently).
uint64_t fingerprint(const Var& p) {
  if (!p.grad().defined()) return 0x9e3779b97f4a7c15ull;
  const Tensor g = p.grad().contiguous();
  const uint32_t* w = reinterpret_cast<const uint32_t*>(g.data<float>());
  uint64_t sum = 0, mix = 0;
  for (int64_t i = 0; i < g.numel(); ++i) {
    sum += w[i];
    mix += static_cast<uint64_t>(w[i] ^ static_cast<uint32_t>(i)) * 0x100000001b3ull;
  }
  return sum ^ (mix << 1);
}

}  // namespace

// A bucket: the parameters at positions [first, end) of the layout's order; `flat` holds their
// gradients, then one count per parameter of the ranks holding its gradient (a parameter no rank
// has a gradient for stays without one, as in one process: Adam leaves it alone).
struct GradientReducer::Bucket {
  size_t first = 0, end = 0;
  std::vector<int64_t> offset;  // into flat, per parameter of the bucket
  std::vector<float> flat;
  std::vector<uint64_t> copied;  // fingerprints
  size_t final = 0;              // parameters handed on this step
  size_t size() const { return end - first; }
};

GradientReducer::GradientReducer(const Communicator& comm, std::vector<std::pair<std::string, Var>> params,
                                 AllreduceOptions o)
    : comm_(comm), params_(std::move(params)), final_(params_.size(), 0), requests_(std::make_unique<Requests>()),
      o_(o) {
  if (!comm_.distributed()) return;
  std::vector<int32_t> reverse(params_.size());  // until backward shows its order: the reverse of the list
  for (size_t j = 0; j < params_.size(); ++j) reverse[j] = static_cast<int32_t>(params_.size() - 1 - j);
  lay_out(reverse);
}

GradientReducer::~GradientReducer() = default;

// Consecutive parameters of `order` in buckets of at most bucket_kb (a larger parameter alone).
void GradientReducer::lay_out(const std::vector<int32_t>& order) {
  order_ = order;
  position_.assign(params_.size(), 0);
  buckets_.clear();
  const int64_t limit = std::max<int64_t>(1, o_.bucket_kb * 1024 / static_cast<int64_t>(sizeof(float)));
  int64_t floats = 0;
  for (size_t j = 0; j < order_.size(); ++j) {
    const int64_t n = params_[order_[j]].second.value().numel();
    if (buckets_.empty() || (floats > 0 && floats + n > limit)) {
      if (!buckets_.empty()) buckets_.back().flat.assign(static_cast<size_t>(floats) + buckets_.back().size(), 0.0f);
      buckets_.push_back({j, j, {}, {}, {}, 0});
      floats = 0;
    }
    Bucket& b = buckets_.back();
    b.end = j + 1;
    b.offset.push_back(floats);
    b.copied.push_back(0);
    floats += n;
    position_[order_[j]] = j;
  }
  if (!buckets_.empty()) buckets_.back().flat.assign(static_cast<size_t>(floats) + buckets_.back().size(), 0.0f);
  bucket_of_.assign(order_.size(), 0);
  for (size_t b = 0; b < buckets_.size(); ++b)
    for (size_t j = buckets_[b].first; j < buckets_[b].end; ++j) bucket_of_[j] = b;
}

void GradientReducer::watch(Tape& tape) {
  if (!comm_.distributed() || !o_.overlap) return;
  std::vector<const Node*> leaves;
  for (const auto& [name, p] : params_) leaves.push_back(p.node());
  tape.watch(std::move(leaves), [this](size_t p) { gradient_final(p); }, [this] { requests_->test(); });
}

void GradientReducer::gradient_final(size_t p) {
  if (final_[p]) return;
  final_[p] = 1;
  seen_.push_back(static_cast<int32_t>(p));
  const size_t j = position_[p];
  Bucket& b = buckets_[bucket_of_[j]];
  const size_t k = j - b.first;
  const Var& v = params_[p].second;
  const int64_t n = v.value().numel();
  float* at = b.flat.data() + b.offset[k];
  if (v.grad().defined()) std::memcpy(at, v.grad().contiguous().data<float>(), static_cast<size_t>(n) * sizeof(float));
  else std::fill(at, at + n, 0.0f);
  b.flat[b.flat.size() - b.size() + k] = v.grad().defined() ? 1.0f : 0.0f;
  b.copied[k] = fingerprint(v);
  b.final += 1;
  for (; next_bucket_ < buckets_.size() && buckets_[next_bucket_].final == buckets_[next_bucket_].size(); ++next_bucket_)
    requests_->start(buckets_[next_bucket_].flat.data(), static_cast<int64_t>(buckets_[next_bucket_].flat.size()));
}

double GradientReducer::finish() {
  if (!comm_.distributed()) return 0.0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int32_t p : order_) gradient_final(static_cast<size_t>(p));
  requests_->wait();
  for (Bucket& b : buckets_) {
    for (size_t k = 0; k < b.size(); ++k) {
      const Var& v = params_[order_[b.first + k]].second;
      check(fingerprint(v) == b.copied[k], "data-parallel: the gradient of ", params_[order_[b.first + k]].first,
            " changed after its bucket's allreduce started (an op that did not pass it to needs_grad)");
      if (b.flat[b.flat.size() - b.size() + k] > 0) {
        float* g = v.grad_buffer().data<float>();  // created as zeros when this rank had none
        std::memcpy(g, b.flat.data() + b.offset[k], static_cast<size_t>(v.value().numel()) * sizeof(float));
      }
    }
    b.final = 0;
  }
  std::fill(final_.begin(), final_.end(), 0);
  next_bucket_ = 0;
  // After the first step with overlap, the buckets follow the order backward finished the
  // gradients in (rank 0's, the same on every rank), so that the first bucket fills first.
  if (o_.overlap && !learned_) {
    comm_.broadcast(seen_.data(), static_cast<int64_t>(seen_.size() * sizeof(int32_t)));
    lay_out(seen_);
    learned_ = true;
  }
  seen_.clear();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace attn
