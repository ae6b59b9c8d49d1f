// Deterministic mode's sums (sum, sumsq; and prod, with * for +: reduce_ops.hpp's canonical_order): the
// canonical association order of
// common/canonical.hpp, which the CPU backend implements too, so both give the same bits. A chunk of 4096
// elements is one warp: lane j adds the chunk's elements j, j + 32, ... in order (coalesced: a warp's load is 32
// consecutive elements), then a __shfl_down_sync tree over s = 16, 8, 4, 2, 1 gives lane 0 the chunk's value. Chunk
// values are reduced again by the same kernel until one remains (canonical_sum, below).
#pragma once

#include <algorithm>

#include "backends/cuda/reduce/block_helpers.cuh"
#include "backends/cuda/reduce/launch_config.cuh"
#include "common/canonical.hpp"

namespace tandem::cuda::reduction {

inline constexpr int kCanonicalBlockSize = 256;

// The lanes combine operator Op's loaded values: a 16-bit input's elements as the floats they convert to,
// sumsq's squares; later levels combine chunk values as they are (Op: PartialOp, the values' SumOp for the
// sums).
template <class Op, class In = typename Op::In, class T = typename Op::Acc>
__global__ void __launch_bounds__(kCanonicalBlockSize)
    canonical_chunk_sums_kernel(const In* __restrict__ x, Index n, Index stride, T* __restrict__ chunk_values) {
  constexpr Index kChunk = detail::canonical::kChunk;
  constexpr int kRows = int(kChunk / kWarpSize);
  constexpr int kInFlight = 8;  // loads issued before their adds: keeps memory busy
  const int lane = threadIdx.x % kWarpSize;
  const Index warps = Index(gridDim.x) * (blockDim.x / kWarpSize);
  const Index chunks = (n + kChunk - 1) / kChunk;
  for (Index c = Index(blockIdx.x) * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize; c < chunks; c += warps) {
    const Index base = c * kChunk;
    const Index len = n - base < kChunk ? n - base : kChunk;
    T acc = Op::identity();  // canonical.hpp: lanes start at -0.0 (prod: 1)
    if (len == kChunk) {
      for (int r = 0; r < kRows; r += kInFlight) {
        T v[kInFlight];
#pragma unroll
        for (int u = 0; u < kInFlight; ++u) v[u] = Op::load(x[(base + Index(r + u) * kWarpSize + lane) * stride], 0);
#pragma unroll
        for (int u = 0; u < kInFlight; ++u) acc = Op::combine(acc, v[u]);  // in row order: the canonical order
      }
    } else {
      for (Index i = lane; i < len; i += kWarpSize) acc = Op::combine(acc, Op::load(x[(base + i) * stride], 0));
    }
#pragma unroll
    for (int s = kWarpSize / 2; s > 0; s /= 2) acc = Op::combine(acc, __shfl_down_sync(kFullWarpMask, acc, s));
    if (lane == 0) chunk_values[c] = acc;
  }
}

// One level: the value of each 4096-element chunk of x into chunk_values.
template <class Op, class In = typename Op::In, class T = typename Op::Acc>
void canonical_chunk_values(const In* x, Index n, Index stride, T* chunk_values, cudaStream_t stream) {
  const auto kernel = canonical_chunk_sums_kernel<Op>;
  const Index chunks = detail::canonical::chunk_count(n);
  const int warps_per_block = kCanonicalBlockSize / kWarpSize;
  const Index blocks =
      std::min<Index>((chunks + warps_per_block - 1) / warps_per_block,
                      resident_grid_size(reinterpret_cast<const void*>(kernel), kCanonicalBlockSize, 0));
  kernel<<<unsigned(blocks), kCanonicalBlockSize, 0, stream>>>(x, n, stride, chunk_values);
  TANDEM_CUDA_CHECK_LAUNCH();
}

// Level after level of chunk values (common/canonical.hpp), ping-ponging between two scratch
// arrays, the last level writing the result.
template <class Op, class In = typename Op::In, class T = typename Op::Acc>
void canonical_sum(const In* x, Index n, Index stride, T* result, Workspace& ws, cudaStream_t stream) {
  using detail::canonical::chunk_count;
  const Index first = chunk_count(n), second = chunk_count(first);
  T* scratch = static_cast<T*>(ws.get(std::size_t(first + second) * sizeof(T) + 256));
  T* levels[2] = {scratch, scratch + first};
  const Index chunks = chunk_count(n);
  T* out = chunks == 1 ? result : levels[0];
  canonical_chunk_values<Op>(x, n, stride, out, stream);  // level 0 reads the input
  if (chunks == 1) return;
  const T* values = out;  // later levels read the previous level's chunk values
  n = chunks;
  for (int level = 1;; ++level) {
    const Index next = chunk_count(n);
    T* dst = next == 1 ? result : levels[level % 2];
    canonical_chunk_values<detail::PartialOp<Op>>(values, n, Index{1}, dst, stream);
    if (next == 1) return;
    values = dst;
    n = next;
  }
}

}  // namespace tandem::cuda::reduction
