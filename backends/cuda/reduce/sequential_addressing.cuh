// Stage 3: sequential_addressing, the shared-memory tree with sequential addressing (Harris kernel 3).
//
// What changed from stage 2: the stride starts at blockDim.x / 2 and halves, and thread tid combines
// shared[tid] with shared[tid + s]. A warp reads 32 consecutive elements: no bank conflicts, and the
// active threads are the first s (no divergence). But half the threads idle from the first step on.
#pragma once

#include "backends/cuda/reduce/block_helpers.cuh"

namespace tandem::cuda::reduction {

template <class Op>
__global__ void sequential_addressing_kernel(const typename Op::In* __restrict__ x, Index n, Index stride,
                                             typename Op::Acc* __restrict__ partials) {
  using Acc = typename Op::Acc;
  Acc* shared = dynamic_shared_memory<Acc>();
  const unsigned tid = threadIdx.x;
  shared[tid] = load_or_identity<Op>(x, global_thread_index(), n, stride);
  __syncthreads();

  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (tid < s) shared[tid] = Op::combine(shared[tid], shared[tid + s]);
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = shared[0];
}

// For the multi-pass driver (drivers.cuh): one element per thread.
struct SequentialAddressing {
  static constexpr int kChunks = 1;
  template <class Op>
  static constexpr auto kernel() {
    return sequential_addressing_kernel<Op>;
  }
};

}  // namespace tandem::cuda::reduction
