// Synchronous data-parallel training over MPI (docs/distributed.md). The processes of a run
// ("ranks") each hold the whole model, each computes the gradient of its share of the global
// batch, and the gradients are summed across ranks (allreduce) before the same optimizer step on
// every rank, so every rank keeps the same weights.
//
// A Communicator is rank and size plus the few collectives training needs. Started by mpirun (or
// srun) in a binary built with MPI, join_world() joins MPI_COMM_WORLD; otherwise (no MPI, or an
// ordinary start) it is the single process {rank 0, size 1}, for which every collective is a no-op,
// so one binary trains alone exactly as without MPI.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attn/autodiff/var.h"

namespace attn {

struct Communicator {
  int rank = 0, size = 1;

  // Rank 0 alone writes checkpoints, logs, validation and the model; the others stay silent.
  bool leader() const { return rank == 0; }
  bool distributed() const { return size > 1; }

  // Sums x[0..n) over all ranks, in place on every rank (MPI_Allreduce with MPI_SUM).
  void allreduce_sum(float* x, int64_t n) const;
  void allreduce_sum(double* x, int64_t n) const;
  // Rank 0's `bytes` bytes at p, copied to every rank.
  void broadcast(void* p, int64_t bytes) const;
  // Rank 0's value on every rank: decisions taken by the clock or a signal (the time budget, a stop
  // request) must be the same on every rank, or one rank would wait for the others forever.
  bool agree(bool rank0_value) const;
  void barrier() const;
  // Ends every rank of the job at once (MPI_Abort), after an error on this one.
  [[noreturn]] void abort(int code) const;
};

// True when this binary was built with MPI (CMake found it).
bool built_with_mpi();
// True when this process was started by an MPI launcher (mpirun, srun): OMPI_COMM_WORLD_SIZE,
// PMI_SIZE or PMIX_RANK is set.
bool started_by_mpi_launcher();
// The world this process belongs to: MPI_COMM_WORLD when built with MPI and started by a launcher
// (MPI is initialised on the first call and finalised at exit), else {0, 1}. Fails with a clear
// message when a launcher started a binary built without MPI with more than one process.
Communicator join_world();

// The parameters' gradients summed over all ranks, in one flat buffer per call of at most
// `bucket_floats` floats (the buckets: bounded extra memory). A gradient not yet created on this
// rank counts as zeros and is created when another rank's is not.
void allreduce_gradients(const Communicator& comm, const std::vector<std::pair<std::string, Var>>& params,
                         int64_t bucket_floats = int64_t{1} << 22);

}  // namespace attn
