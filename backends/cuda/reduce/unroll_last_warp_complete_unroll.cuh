// Stages 7 and 8: unrolling the tree itself (Harris kernels 5 and 6; Cheng et al. reduceUnrollWarps8 and
// reduceCompleteUnrollWarps8). Both keep the 8-chunk load of unroll8_blocks.
//
//   unroll_last_warp  what changed from stage 6: once s <= 32 only warp 0 is working, so the last six
//                     steps need no __syncthreads() and no `if (tid < s)`: warp 0 runs them unrolled.
//                     The textbook version relies on the 32 lanes running in lockstep, which Volta and
//                     later do not guarantee (independent thread scheduling): a lane may write
//                     shared[tid] before its neighbour has read it. So every step reads, __syncwarp()s,
//                     writes and __syncwarp()s again.
//   complete_unroll   the block size becomes a template parameter, so every step of the tree is known at
//                     compile time: the loop disappears and `if constexpr` drops the steps that a
//                     smaller block does not have.
#pragma once

#include "backends/cuda/reduce/block_helpers.cuh"

namespace tandem::cuda::reduction {

// The shared memory of the last warp's steps: volatile for an accumulator of one word, so that every read
// goes to shared memory, never to a register copy from an earlier step; a struct accumulator (an exact
// integer sum) has no volatile copy, and the __syncwarp()s between the steps order its reads and writes.
template <class Acc>
__device__ inline auto last_warp_memory(Acc* shared) {
  if constexpr (std::is_arithmetic_v<Acc>)
    return static_cast<volatile Acc*>(shared);
  else
    return shared;
}

// shared[0] = combination of shared[0..63]. Called by all 32 lanes of warp 0, after a __syncthreads().
template <class Op>
__device__ inline void reduce_last_warp(typename Op::Acc* shared_memory, unsigned tid) {
  using Acc = typename Op::Acc;
  const auto shared = last_warp_memory(shared_memory);
  Acc value = shared[tid];
#pragma unroll
  for (unsigned offset = kWarpSize; offset > 0; offset /= 2) {
    value = Op::combine(value, shared[tid + offset]);
    __syncwarp();  // every lane has read shared[tid + offset] before anyone overwrites it
    shared[tid] = value;
    __syncwarp();  // the writes are visible before the next step reads them
  }
}

template <class Op>
__global__ void unroll_last_warp_kernel(const typename Op::In* __restrict__ x, Index n, Index stride,
                                        typename Op::Acc* __restrict__ partials) {
  using Acc = typename Op::Acc;
  Acc* shared = dynamic_shared_memory<Acc>();
  const unsigned tid = threadIdx.x;
  shared[tid] = load_chunks<Op, 8>(x, n, stride, blockDim.x);
  __syncthreads();

  for (unsigned s = blockDim.x / 2; s > kWarpSize; s /= 2) {
    if (tid < s) shared[tid] = Op::combine(shared[tid], shared[tid + s]);
    __syncthreads();
  }
  if (tid < kWarpSize) reduce_last_warp<Op>(shared, tid);
  if (tid == 0) partials[blockIdx.x] = shared[0];
}

// The tree of a BlockSize-thread block with every step written out; shared[0] gets the result.
template <class Op, unsigned BlockSize>
__device__ inline void complete_unroll_tree(typename Op::Acc* shared, unsigned tid) {
  static_assert(BlockSize >= 64 && BlockSize <= 1024 && (BlockSize & (BlockSize - 1)) == 0,
                "the unrolled tree needs a power-of-two block of 64 to 1024 threads");
  if constexpr (BlockSize >= 1024) {
    if (tid < 512) shared[tid] = Op::combine(shared[tid], shared[tid + 512]);
    __syncthreads();
  }
  if constexpr (BlockSize >= 512) {
    if (tid < 256) shared[tid] = Op::combine(shared[tid], shared[tid + 256]);
    __syncthreads();
  }
  if constexpr (BlockSize >= 256) {
    if (tid < 128) shared[tid] = Op::combine(shared[tid], shared[tid + 128]);
    __syncthreads();
  }
  if constexpr (BlockSize >= 128) {
    if (tid < 64) shared[tid] = Op::combine(shared[tid], shared[tid + 64]);
    __syncthreads();
  }
  if (tid < kWarpSize) reduce_last_warp<Op>(shared, tid);
}

template <class Op, unsigned BlockSize>
__global__ void __launch_bounds__(BlockSize)
    complete_unroll_kernel(const typename Op::In* __restrict__ x, Index n, Index stride,
                           typename Op::Acc* __restrict__ partials) {
  using Acc = typename Op::Acc;
  Acc* shared = dynamic_shared_memory<Acc>();
  const unsigned tid = threadIdx.x;
  shared[tid] = load_chunks<Op, 8>(x, n, stride, BlockSize);
  __syncthreads();
  complete_unroll_tree<Op, BlockSize>(shared, tid);
  if (tid == 0) partials[blockIdx.x] = shared[0];
}

// For the multi-pass driver (drivers.cuh): both keep unroll8_blocks' 8 elements per thread.
// complete_unroll is instantiated for one block size (256, like the other textbook stages): each extra
// size would compile every kernel again for all operators, for a choice that barely moves a
// bandwidth-bound kernel.
struct UnrollLastWarp {
  static constexpr int kChunks = 8;
  template <class Op>
  static constexpr auto kernel() {
    return unroll_last_warp_kernel<Op>;
  }
};
struct CompleteUnroll {
  static constexpr int kChunks = 8;
  template <class Op>
  static constexpr auto kernel() {
    return complete_unroll_kernel<Op, kTextbookBlockSize>;
  }
};

}  // namespace tandem::cuda::reduction
