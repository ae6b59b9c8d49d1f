// Stages 4 to 6: more work per thread during the load (Harris kernel 4; Cheng et al., "Professional CUDA
// C Programming", reduceUnrolling4/8). The tree is stage 3's.
//
//   first_add_during_load  each block covers 2 * blockDim.x elements and every thread combines two of
//                          them while loading, so no thread idles at the start and half as many blocks
//                          are launched.
//   unroll4_blocks         the same with 4 blockDim-sized chunks per block,
//   unroll8_blocks         and with 8: more independent loads in flight per thread, 8x fewer blocks.
#pragma once

#include "backends/cuda/reduce/block_helpers.cuh"

namespace tandem::cuda::reduction {

// Chunks = 2: first_add_during_load; 4: unroll4_blocks; 8: unroll8_blocks.
template <class Op, int Chunks>
__global__ void chunked_load_kernel(const typename Op::In* __restrict__ x, Index n, Index stride,
                                    typename Op::Acc* __restrict__ partials) {
  using Acc = typename Op::Acc;
  Acc* shared = dynamic_shared_memory<Acc>();
  const unsigned tid = threadIdx.x;
  shared[tid] = load_chunks<Op, Chunks>(x, n, stride, blockDim.x);
  __syncthreads();

  for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    if (tid < s) shared[tid] = Op::combine(shared[tid], shared[tid + s]);
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = shared[0];
}

// For the multi-pass driver (drivers.cuh): Chunks elements per thread.
template <int Chunks>
struct ChunkedLoad {
  static constexpr int kChunks = Chunks;
  template <class Op>
  static constexpr auto kernel() {
    return chunked_load_kernel<Op, Chunks>;
  }
};
using FirstAddDuringLoad = ChunkedLoad<2>;
using Unroll4Blocks = ChunkedLoad<4>;
using Unroll8Blocks = ChunkedLoad<8>;

}  // namespace tandem::cuda::reduction
