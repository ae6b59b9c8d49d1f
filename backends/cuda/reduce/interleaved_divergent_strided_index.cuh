// Stages 1 and 2: the shared-memory tree with interleaved addressing (Harris, "Optimizing Parallel
// Reduction in CUDA", kernels 1 and 2).
//
// Each block loads one element per thread into shared memory, then combines pairs s apart for
// s = 1, 2, 4, ... until shared[0] holds the block's result, which becomes one partial of the next pass.
//
//   interleaved_divergent      `if (tid % (2*s) == 0)`: the active threads are scattered over every warp,
//                              so each warp diverges, and % is slow.
//   interleaved_strided_index  what changed: thread tid works on index 2*s*tid, so the active threads
//                              are the first ones (whole warps idle, no divergence), but the accesses are
//                              2*s elements apart: shared-memory bank conflicts.
#pragma once

#include "backends/cuda/reduce/block_helpers.cuh"

namespace tandem::cuda::reduction {

template <class Op>
__global__ void interleaved_divergent_kernel(const typename Op::In* __restrict__ x, Index n, Index stride,
                                             typename Op::Acc* __restrict__ partials) {
  using Acc = typename Op::Acc;
  Acc* shared = dynamic_shared_memory<Acc>();
  const unsigned tid = threadIdx.x;
  shared[tid] = load_or_identity<Op>(x, global_thread_index(), n, stride);
  __syncthreads();

  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) shared[tid] = Op::combine(shared[tid], shared[tid + s]);
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = shared[0];
}

template <class Op>
__global__ void interleaved_strided_index_kernel(const typename Op::In* __restrict__ x, Index n, Index stride,
                                                 typename Op::Acc* __restrict__ partials) {
  using Acc = typename Op::Acc;
  Acc* shared = dynamic_shared_memory<Acc>();
  const unsigned tid = threadIdx.x;
  shared[tid] = load_or_identity<Op>(x, global_thread_index(), n, stride);
  __syncthreads();

  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned index = 2 * s * tid;
    if (index < blockDim.x) shared[index] = Op::combine(shared[index], shared[index + s]);
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = shared[0];
}

// For the multi-pass driver (drivers.cuh): one element per thread.
struct InterleavedDivergent {
  static constexpr int kChunks = 1;
  template <class Op>
  static constexpr auto kernel() {
    return interleaved_divergent_kernel<Op>;
  }
};
struct InterleavedStridedIndex {
  static constexpr int kChunks = 1;
  template <class Op>
  static constexpr auto kernel() {
    return interleaved_strided_index_kernel<Op>;
  }
};

}  // namespace tandem::cuda::reduction
