// Stages 2 and 3, tiled_16 and tiled_32: shared-memory tiling. Changed from naive: a block of
// kTile x kTile threads computes a kTile x kTile tile of C; it walks along k one square tile of A and
// one of B at a time, each thread copying one element of each into shared memory, and then every thread
// reads its row of the A tile and its column of the B tile from shared memory. Each element fetched from
// global memory is now used kTile times, cutting global traffic by that factor. Loads outside the
// matrix store 0 (adding nothing to the sum), so every m, k, n works.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/matmul/tile_io.cuh"

namespace tandem::cuda::matmul_stages {

// threadIdx.x runs along the columns of C (coalesced reads of B and writes of C), threadIdx.y along rows.
template <class T, int kTile>
__global__ void __launch_bounds__(kTile* kTile) tiled_matmul_kernel(const GemmParams<T> p) {
  const T* __restrict__ const a = p.a;
  const T* __restrict__ const b = p.b;
  T* __restrict__ const c = p.c;
  const std::int64_t m = p.m, k = p.k, n = p.n, lda = p.lda, ldb = p.ldb, ldc = p.ldc;
  // a_tile[ty][i] is read by a whole row of threads at once (a broadcast); b_tile[i][tx] by consecutive
  // threads at consecutive addresses: neither conflicts on shared-memory banks.
  __shared__ T a_tile[kTile][kTile];
  __shared__ T b_tile[kTile][kTile];

  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const std::int64_t col = std::int64_t(blockIdx.x) * kTile + tx;
  const std::int64_t row_tiles = ceil_div(m, kTile);

  // gridDim.y is capped at 65535: each block loops over row tiles. The bound is the same for every
  // thread of the block, so all of them reach each __syncthreads().
  for (std::int64_t tile_row = blockIdx.y; tile_row < row_tiles; tile_row += gridDim.y) {
    const std::int64_t row = tile_row * kTile + ty;
    T sum = 0;
    for (std::int64_t k0 = 0; k0 < k; k0 += kTile) {
      a_tile[ty][tx] = (row < m && k0 + tx < k) ? a[row * lda + k0 + tx] : T(0);
      b_tile[ty][tx] = (k0 + ty < k && col < n) ? b[(k0 + ty) * ldb + col] : T(0);
      __syncthreads();  // the tiles are complete
#pragma unroll
      for (int i = 0; i < kTile; ++i) sum += a_tile[ty][i] * b_tile[i][tx];
      __syncthreads();  // everyone is done reading before the next tiles overwrite them
    }
    if (row < m && col < n) c[row * ldc + col] = sum;
  }
}

template <class T, int kTile>
void launch_tiled(const GemmParams<T>& p, const GemmContext& ctx) {
  const dim3 block(kTile, kTile);
  const dim3 grid = tile_grid(ceil_div(p.m, kTile), ceil_div(p.n, kTile));
  tiled_matmul_kernel<T, kTile><<<grid, block, 0, ctx.stream>>>(p);
  TANDEM_CUDA_CHECK_LAUNCH();
}

}  // namespace tandem::cuda::matmul_stages
