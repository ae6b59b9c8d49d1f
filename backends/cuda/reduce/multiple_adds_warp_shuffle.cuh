// Stages 9 and 10: a grid sized to the device instead of to n, each thread accumulating many elements in
// registers before any cooperation (Harris kernel 7, "algorithm cascading" after Brent's theorem; then
// Luitjens, "Faster Parallel Reductions on Kepler").
//
//   multiple_adds_per_thread  what changed from stage 8: the grid is fixed at the number of blocks the
//                             device holds at once (SM count x blocks per SM), and each thread walks the
//                             input with the grid as its stride, two elements BlockSize apart per step.
//                             The tree is stage 8's. Two launches whatever n: one for the per-block
//                             partials, one block for the partials.
//   warp_shuffle              the tree leaves shared memory: each warp combines its 32 values with
//                             __shfl_down_sync (no __syncthreads, no shared traffic), and one shuffle
//                             round over the warp totals finishes the block. The loads become 16-byte
//                             vectors (contiguous input) with four in flight per thread.
#pragma once

#include "backends/cuda/common.cuh"
#include "backends/cuda/reduce/block_helpers.cuh"
#include "backends/cuda/reduce/drivers.cuh"
#include "backends/cuda/reduce/launch_config.cuh"
#include "backends/cuda/reduce/unroll_last_warp_complete_unroll.cuh"

namespace tandem::cuda::reduction {

// ---- Stage 9: multiple_adds_per_thread -----------------------------------------------------------

template <class Op, unsigned BlockSize>
__global__ void __launch_bounds__(BlockSize)
    multiple_adds_per_thread_kernel(const typename Op::In* __restrict__ x, Index n, Index stride,
                                    typename Op::Acc* __restrict__ partials) {
  using Acc = typename Op::Acc;
  Acc* shared = dynamic_shared_memory<Acc>();
  const unsigned tid = threadIdx.x;
  const Index grid_step = Index{2} * BlockSize * gridDim.x;

  Acc acc = Op::identity();
  for (Index i = static_cast<Index>(blockIdx.x) * (2 * BlockSize) + tid; i < n; i += grid_step) {
    acc = Op::combine(acc, Op::load(x[i * stride], i));
    if (i + BlockSize < n) acc = Op::combine(acc, Op::load(x[(i + BlockSize) * stride], i + BlockSize));
  }
  shared[tid] = acc;
  __syncthreads();
  complete_unroll_tree<Op, BlockSize>(shared, tid);
  if (tid == 0) partials[blockIdx.x] = shared[0];
}

template <class Op>
void reduce_multiple_adds_per_thread(const typename Op::In* x, Index n, Index stride, typename Op::Acc* result,
                                     Workspace& ws, cudaStream_t stream) {
  constexpr unsigned block_size = kTextbookBlockSize;
  const unsigned blocks = device_grid_size(multiple_adds_per_thread_kernel<Op, block_size>, block_size,
                                           block_size * sizeof(typename Op::Acc), n, 2 * Index{block_size});
  reduce_two_pass<Op>(x, n, stride, result, blocks, ws,
                      [&]<class O>(OpTag<O>, auto in, Index count, Index step, auto out, unsigned grid) {
                        multiple_adds_per_thread_kernel<O, block_size>
                            <<<grid, block_size, block_size * sizeof(typename O::Acc), stream>>>(in, count, step, out);
                        TANDEM_CUDA_CHECK_LAUNCH();
                      });
}

// ---- Stage 10: warp_shuffle ----------------------------------------------------------------------

inline constexpr unsigned kShuffleBlockSize = 256;
// Independent 16-byte loads (or scalar loads, for strided input) in flight per thread per loop step.
inline constexpr int kLoadsInFlight = 4;

// Elements one block consumes per grid-stride step, to size the grid for small n.
template <class T>
inline constexpr Index kShuffleElementsPerBlockStep = Index{kShuffleBlockSize} * kLoadsInFlight* kElementsPerVector<T>;

template <class Op>
__global__ void __launch_bounds__(kShuffleBlockSize)
    warp_shuffle_kernel(const typename Op::In* __restrict__ x, Index n, Index stride, VectorSplit split,
                        typename Op::Acc* __restrict__ partials) {
  typename Op::Acc acc = accumulate_grid_stride<Op, kLoadsInFlight>(x, n, stride, split);
  acc = block_reduce<Op>(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

template <class Op>
void reduce_warp_shuffle(const typename Op::In* x, Index n, Index stride, typename Op::Acc* result, Workspace& ws,
                         cudaStream_t stream) {
  const unsigned blocks =
      device_grid_size(warp_shuffle_kernel<Op>, kShuffleBlockSize, 0, n, kShuffleElementsPerBlockStep<typename Op::In>);
  reduce_two_pass<Op>(x, n, stride, result, blocks, ws,
                      [&]<class O>(OpTag<O>, auto in, Index count, Index step, auto out, unsigned grid) {
                        warp_shuffle_kernel<O><<<grid, kShuffleBlockSize, 0, stream>>>(
                            in, count, step, split_for_vectors(in, count, step), out);
                        TANDEM_CUDA_CHECK_LAUNCH();
                      });
}

}  // namespace tandem::cuda::reduction
