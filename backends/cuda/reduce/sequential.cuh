// Stages 3 to 6: the shared-memory tree with sequential addressing, then more work per thread during the
// load (Harris kernels 3 and 4; Cheng et al., "Professional CUDA C Programming", reduceUnrolling4/8).
//
//   sequential_addressing  what changed from stage 2: the stride starts at blockDim.x / 2 and halves, and
//                          thread tid combines shared[tid] with shared[tid + s]. A warp reads 32
//                          consecutive elements: no bank conflicts, and the active threads are the
//                          first s (no divergence). But half the threads idle from the first step on.
//   first_add_during_load  each block covers 2 * blockDim.x elements and every thread combines two of
//                          them while loading, so no thread idles at the start and half as many blocks
//                          are launched.
//   unroll4_blocks         the same with 4 blockDim-sized chunks per block,
//   unroll8_blocks         and with 8: more independent loads in flight per thread, 8x fewer blocks.
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

// Launchers for the multi-pass driver (dispatch.cu).
template <class Op>
struct SequentialAddressing {
  static constexpr unsigned block_size = kTextbookBlockSize;
  static constexpr Index elements_per_block = block_size;
  static void launch(const typename Op::In* x, Index n, Index stride, typename Op::Acc* partials, unsigned blocks,
                     cudaStream_t stream) {
    sequential_addressing_kernel<Op>
        <<<blocks, block_size, block_size * sizeof(typename Op::Acc), stream>>>(x, n, stride, partials);
    TANDEM_CUDA_CHECK_LAUNCH();
  }
};

template <int Chunks>
struct ChunkedLoad {
  template <class Op>
  struct Stage {
    static constexpr unsigned block_size = kTextbookBlockSize;
    static constexpr Index elements_per_block = Index{Chunks} * block_size;
    static void launch(const typename Op::In* x, Index n, Index stride, typename Op::Acc* partials, unsigned blocks,
                       cudaStream_t stream) {
      chunked_load_kernel<Op, Chunks>
          <<<blocks, block_size, block_size * sizeof(typename Op::Acc), stream>>>(x, n, stride, partials);
      TANDEM_CUDA_CHECK_LAUNCH();
    }
  };
};

template <class Op>
using FirstAddDuringLoad = ChunkedLoad<2>::Stage<Op>;
template <class Op>
using Unroll4Blocks = ChunkedLoad<4>::Stage<Op>;
template <class Op>
using Unroll8Blocks = ChunkedLoad<8>::Stage<Op>;

}  // namespace tandem::cuda::reduction
