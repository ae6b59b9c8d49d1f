// Stage 1, naive: one thread per element of C, each walking a row of A and a column of B in global
// memory. Neighbouring threads (threadIdx.x) own neighbouring columns, so their reads of B and writes of
// C are coalesced and their reads of A are one broadcast; but every element of A is fetched n times and
// every element of B m times, so the stage is bound by memory traffic, not arithmetic. The baseline the
// other stages improve on.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/matmul/params.cuh"

namespace tandem::cuda::matmul_stages {

// Block of 32 columns x 8 rows: one warp spans 32 consecutive columns of C.
inline constexpr int kNaiveBlockCols = 32;
inline constexpr int kNaiveBlockRows = 8;

template <class T>
__global__ void __launch_bounds__(kNaiveBlockCols* kNaiveBlockRows) naive_matmul_kernel(const GemmParams<T> p) {
  const T* __restrict__ const a = p.a;
  const T* __restrict__ const b = p.b;
  T* __restrict__ const c = p.c;
  const std::int64_t m = p.m, k = p.k, n = p.n, lda = p.lda, ldb = p.ldb, ldc = p.ldc;
  const std::int64_t col = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (col >= n) return;  // no barrier in this kernel, so leaving early is safe
  // gridDim.y is capped at 65535: loop over the rows that do not fit in one pass.
  for (std::int64_t row = std::int64_t(blockIdx.y) * blockDim.y + threadIdx.y; row < m;
       row += std::int64_t(gridDim.y) * blockDim.y) {
    const T* a_row = a + row * lda;
    T sum = 0;
    for (std::int64_t i = 0; i < k; ++i) sum += a_row[i] * b[i * ldb + col];
    c[row * ldc + col] = sum;
  }
}

template <class T>
void launch_naive(const GemmParams<T>& p, const GemmContext& ctx) {
  const dim3 block(kNaiveBlockCols, kNaiveBlockRows);
  const dim3 grid = tile_grid(ceil_div(p.m, kNaiveBlockRows), ceil_div(p.n, kNaiveBlockCols));
  naive_matmul_kernel<T><<<grid, block, 0, ctx.stream>>>(p);
  TANDEM_CUDA_CHECK_LAUNCH();
}

}  // namespace tandem::cuda::matmul_stages
