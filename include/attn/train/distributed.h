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
#include <memory>
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

// How the gradients are summed (train.allreduce_bucket_kb, train.allreduce_overlap).
struct AllreduceOptions {
  int64_t bucket_kb = 1024;  // gradients per bucket (one non-blocking allreduce), in KiB of fp32
  bool overlap = true;       // start each bucket while backward still runs; false: all after it
};

// Sums the parameters' gradients over all ranks, in buckets: consecutive parameters in the order
// backward finishes them (rank 0's first step shows that order to every rank; until then, the
// reverse of the parameter list), each bucket one flat buffer (kept from step to step) summed by
// one non-blocking MPI_Iallreduce. With watch(), a bucket starts as soon as backward has made all
// its gradients final, so that the sums travel while backward computes the rest (PyTorch DDP's
// buckets); buckets start in the same order on every rank, as MPI requires of collectives. Each
// element is the same sum as one MPI_Allreduce of all gradients after backward computes.
// A gradient not yet created on a rank counts as zeros and is created when another rank's is not.
class GradientReducer {
 public:
  GradientReducer(const Communicator& comm, std::vector<std::pair<std::string, Var>> params, AllreduceOptions o);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Before the forward pass of this rank's last batch of the step: its backward (on this tape)
  // starts each bucket as soon as its gradients are final. Does nothing without overlap or MPI.
  void watch(Tape& tape);
  // After backward: starts the buckets not started yet, waits for all, and writes the sums into
  // the gradients. Returns the seconds it waited (the communication backward did not hide).
  double finish();

 private:
  struct Bucket;
  struct Requests;  // MPI's handles, in distributed.cpp
  void lay_out(const std::vector<int32_t>& order);
  void gradient_final(size_t param);
  Communicator comm_;
  std::vector<std::pair<std::string, Var>> params_;
  std::vector<char> final_;         // per parameter: handed to its bucket this step
  std::unique_ptr<Requests> requests_;
  AllreduceOptions o_;
  std::vector<int32_t> order_;      // the buckets' parameters, bucket after bucket
  std::vector<size_t> position_;    // per parameter: its place in order_
  std::vector<size_t> bucket_of_;   // per place in order_
  std::vector<Bucket> buckets_;
  size_t next_bucket_ = 0;          // the next to start: in order on every rank
  std::vector<int32_t> seen_;       // the parameters in the order they were final this step
  bool learned_ = false;            // the layout follows backward's order
};

}  // namespace attn
