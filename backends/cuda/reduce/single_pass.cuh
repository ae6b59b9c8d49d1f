// Stage 11: single_pass, the whole reduction in one kernel launch (the CUDA sample threadFenceReduction;
// "last block" pattern).
//
// What changed from stage 10: instead of a second launch over the per-block partials, each block writes
// its partial, makes it visible device-wide with __threadfence(), and counts itself done on a counter in
// scratch. The block that finds itself last knows every partial is written and reduces them all. This
// saves a launch, which matters most for small n, where launch latency is most of the time.
//
// The counter: atomicInc(counter, gridDim.x - 1) wraps to 0 on the last block, so a finished kernel
// leaves it at 0. It is the Workspace's own counter (zeroed once when allocated, never shared with
// scratch), so no memset precedes the launch: the call is one launch, against CUB's two.
#pragma once

#include "backends/cuda/common.cuh"
#include "backends/cuda/reduce/block_helpers.cuh"
#include "backends/cuda/reduce/launch_config.cuh"

namespace tandem::cuda::reduction {

inline constexpr unsigned kSinglePassBlockSize = 256;
inline constexpr int kSinglePassLoadsInFlight = 4;

// Where the kernel puts its result: the accumulator (the stage as the ladder runs it), or a Store of the
// caller's (the *_into calls store the op's result itself, saving the launch that would convert it).
template <class Op>
struct StoreAcc {
  typename Op::Acc* result;
  __device__ void operator()(const typename Op::Acc& acc) const { *result = acc; }
};

template <class Op, class Store>
__global__ void __launch_bounds__(kSinglePassBlockSize)
    single_pass_kernel(const typename Op::In* __restrict__ x, Index n, Index stride, VectorSplit split,
                       typename Op::Acc* partials, unsigned* blocks_done, Store result) {
  using Acc = typename Op::Acc;
  __shared__ bool is_last_block;

  Acc acc = accumulate_grid_stride<Op, kSinglePassLoadsInFlight>(x, n, stride, split);
  acc = block_reduce<Op>(acc);
  if (gridDim.x == 1) {  // small n: one block holds the result; no fences, no counter
    if (threadIdx.x == 0) result(acc);
    return;
  }
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    __threadfence();  // release: the partial is visible to every block before this block counts as done
    const unsigned done_before = atomicInc(blocks_done, gridDim.x - 1);
    is_last_block = done_before == gridDim.x - 1;
    __threadfence();  // acquire: the last block's reads below see every other block's partial
  }
  __syncthreads();
  if (!is_last_block) return;

  // Only the last block gets here. __ldcg reads from L2, where the other blocks' writes are, never from
  // this SM's L1.
  Acc total = Op::identity();
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) total = Op::combine(total, load_from_l2(&partials[b]));
  total = block_reduce<Op>(total);
  if (threadIdx.x == 0) result(total);
}

template <class Op, class Store>
void reduce_single_pass_to(const typename Op::In* x, Index n, Index stride, Store result, Workspace& ws,
                           cudaStream_t stream) {
  using In = typename Op::In;
  using Acc = typename Op::Acc;
  const auto kernel = single_pass_kernel<Op, Store>;
  const Index elements_per_block_step = Index{kSinglePassBlockSize} * kSinglePassLoadsInFlight * kElementsPerVector<In>;
  const unsigned blocks = device_grid_size(kernel, kSinglePassBlockSize, 0, n, elements_per_block_step);

  auto* partials = static_cast<Acc*>(ws.get(blocks * sizeof(Acc)));
  unsigned* blocks_done = ws.counter();
  kernel<<<blocks, kSinglePassBlockSize, 0, stream>>>(x, n, stride, split_for_vectors(x, n, stride), partials,
                                                      blocks_done, result);
  TANDEM_CUDA_CHECK_LAUNCH();
}

template <class Op>
void reduce_single_pass(const typename Op::In* x, Index n, Index stride, typename Op::Acc* result, Workspace& ws,
                        cudaStream_t stream) {
  reduce_single_pass_to<Op>(x, n, stride, StoreAcc<Op>{result}, ws, stream);
}

}  // namespace tandem::cuda::reduction
