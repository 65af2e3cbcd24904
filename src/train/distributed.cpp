// Data-parallel collectives (include/attn/train/distributed.h). The only file that calls MPI:
// built with ATTN_HAVE_MPI when CMake found MPI; without it every world is the single process.
#include "attn/train/distributed.h"

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
    MPI_Init(nullptr, nullptr);
    std::atexit(finalize_at_exit);
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
void Communicator::abort(int code) const { std::exit(code); }

#endif

bool Communicator::agree(bool rank0_value) const {
  char v = rank0_value ? 1 : 0;
  broadcast(&v, 1);
  return v != 0;
}

// Each bucket carries, after the gradients, one count per parameter of the ranks holding its
// gradient: a parameter no rank has a gradient for stays without one (Adam leaves it alone, as in
// one process).
void allreduce_gradients(const Communicator& comm, const std::vector<std::pair<std::string, Var>>& params,
                         int64_t bucket_floats) {
  if (!comm.distributed()) return;
  std::vector<float> flat, held;
  size_t first = 0;  // the first parameter of the bucket being filled
  auto flush = [&](size_t end) {
    flat.insert(flat.end(), held.begin(), held.end());
    comm.allreduce_sum(flat.data(), static_cast<int64_t>(flat.size()));
    int64_t at = 0;
    for (size_t i = first; i < end; ++i) {
      const Var& p = params[i].second;
      const int64_t n = p.value().numel();
      if (flat[flat.size() - held.size() + (i - first)] > 0) {
        float* g = p.grad_buffer().data<float>();  // created as zeros when this rank had none
        std::memcpy(g, flat.data() + at, static_cast<size_t>(n) * sizeof(float));
      }
      at += n;
    }
    flat.clear();
    held.clear();
    first = end;
  };
  for (size_t i = 0; i < params.size(); ++i) {
    const Var& p = params[i].second;
    const int64_t n = p.value().numel();
    if (!flat.empty() && static_cast<int64_t>(flat.size()) + n > bucket_floats) flush(i);
    const size_t at = flat.size();
    flat.resize(at + static_cast<size_t>(n), 0.0f);
    held.push_back(p.grad().defined() ? 1.0f : 0.0f);
    if (p.grad().defined()) std::memcpy(flat.data() + at, p.grad().data<float>(), static_cast<size_t>(n) * sizeof(float));
  }
  if (!flat.empty()) flush(params.size());
}

}  // namespace attn
