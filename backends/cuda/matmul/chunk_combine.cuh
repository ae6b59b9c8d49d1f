// Deterministic mode's combine of a product's chunk values (common/canonical.hpp: K is cut into chunks of
// kMatmulChunk = 4096, each chunk one fma chain; C(i, j) is the canonical sum of its chunks' values). register_tiled
// writes the values of a panel of C, one slab per chunk (values[c * slab + i * ldv + j]); one thread per element
// sums them here with the canonical order's own code (canonical::chunk_sum, the function the CPU uses): lanes from
// -0.0, the fixed tree, and for more than 4096 chunk values (K > 2^24) level after level.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "backends/cuda/matmul/params.cuh"
#include "common/canonical.hpp"

namespace tandem::cuda::matmul_stages {

// One level: out[g * out_slab + i * ldo + j] = the chunk value (canonical.hpp steps 2-3) of chunk values
// g * 4096 .. min(q, (g + 1) * 4096) - 1 of element (i, j), for every group g and element of the rows x cols panel.
// q <= 4096: one group, the element's canonical sum. NaN as the canonical quiet NaN.
template <class T>
__global__ void __launch_bounds__(256)
    chunk_values_sum_kernel(const T* __restrict__ values, std::int64_t q, std::int64_t slab, std::int64_t rows,
                            std::int64_t cols, std::int64_t ldv, T* __restrict__ out, std::int64_t out_slab,
                            std::int64_t ldo) {
  constexpr std::int64_t kChunk = detail::canonical::kChunk;
  const std::int64_t elements = rows * cols, total = detail::canonical::chunk_count(q) * elements;
  for (std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t g = t / elements, e = t - g * elements, i = e / cols, j = e - i * cols;
    const std::int64_t len = q - g * kChunk < kChunk ? q - g * kChunk : kChunk;
    const T s = detail::canonical::chunk_sum(values + g * kChunk * slab + i * ldv + j, len, slab);
    out[g * out_slab + i * ldo + j] = detail::canonical_nan(s);
  }
}

template <class T>
void chunk_values_sum(const T* values, std::int64_t q, std::int64_t slab, std::int64_t rows, std::int64_t cols,
                      std::int64_t ldv, T* out, std::int64_t out_slab, std::int64_t ldo, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const std::int64_t total = detail::canonical::chunk_count(q) * rows * cols;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(ceil_div(total, kThreads), 1 << 16));
  chunk_values_sum_kernel<T><<<blocks, kThreads, 0, stream>>>(values, q, slab, rows, cols, ldv, out, out_slab, ldo);
  TANDEM_CUDA_CHECK_LAUNCH();
}

// C (rows x cols, ldc) = the canonical sum of each element's q chunk values (values: q slabs; spare: at least
// chunk_count(q) slabs, used only when q > 4096; both are overwritten then).
template <class T>
void sum_chunk_values(T* values, std::int64_t q, std::int64_t slab, std::int64_t rows, std::int64_t cols,
                      std::int64_t ldv, T* c, std::int64_t ldc, T* spare, cudaStream_t stream) {
  while (q > detail::canonical::kChunk) {  // step 4: the chunk values of the chunk values, in place of the values
    chunk_values_sum(values, q, slab, rows, cols, ldv, spare, slab, ldv, stream);
    std::swap(values, spare);
    q = detail::canonical::chunk_count(q);
  }
  chunk_values_sum(values, q, slab, rows, cols, ldv, c, 0, ldc, stream);
}

}  // namespace tandem::cuda::matmul_stages
