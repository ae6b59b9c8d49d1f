// The GEMM forms for the stages that compute only the plain product C = A * B (every own stage): a
// problem with transposes, alpha / beta or a batch becomes one plain product per entry of the batch.
// - op(X) a transpose: X is transposed into packed scratch memory first (an O(rows * cols) copy beside
//   the O(m * n * k) product; done once when the entry's stride is 0).
// - alpha != 1 or beta != 0: the stage writes the product into packed scratch memory and an epilogue
//   kernel stores alpha * acc (+ beta * C in one fma) into C: the canonical epilogue of
//   common/canonical.hpp, so deterministic mode (register_tiled) matches the CPU bit for bit.
// - alpha == 0 or k == 0: no product; C = beta == 0 ? 0 : beta * C (for every stage, cuBLAS included).
// - a batch: one launch of the stage per entry (cuBLAS runs a batch in one call instead).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "backends/cuda/kernels.hpp"
#include "backends/cuda/matmul/params.cuh"
#include "common/canonical.hpp"

namespace tandem::cuda::matmul_stages {

// dst (cols x rows, packed) = src (rows x cols, ld) transposed, through a 32 x 33 shared tile (the
// extra column keeps the column reads free of bank conflicts); both global sides are coalesced.
template <class T>
__global__ void __launch_bounds__(256) transpose_kernel(const T* __restrict__ src, std::int64_t rows, std::int64_t cols,
                                                        std::int64_t ld, T* __restrict__ dst) {
  __shared__ T tile[32][33];
  for (std::int64_t r0 = std::int64_t(blockIdx.y) * 32; r0 < rows; r0 += std::int64_t(gridDim.y) * 32) {
    const std::int64_t c0 = std::int64_t(blockIdx.x) * 32;
    for (int i = threadIdx.y; i < 32; i += 8) {
      const std::int64_t r = r0 + i, c = c0 + threadIdx.x;
      if (r < rows && c < cols) tile[i][threadIdx.x] = src[r * ld + c];
    }
    __syncthreads();
    for (int i = threadIdx.y; i < 32; i += 8) {
      const std::int64_t c = c0 + i, r = r0 + threadIdx.x;
      if (c < cols && r < rows) dst[c * rows + r] = tile[threadIdx.x][i];
    }
    __syncthreads();
  }
}

// (16-bit elements move as std::uint16_t: the shared tile holds plain bits)
template <class T>
void transpose(const T* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, T* dst, cudaStream_t stream) {
  using Bits = std::conditional_t<sizeof(T) == 2, std::uint16_t, T>;
  const dim3 grid = tile_grid(ceil_div(rows, 32), ceil_div(cols, 32));
  transpose_kernel<Bits><<<grid, dim3(32, 8), 0, stream>>>(reinterpret_cast<const Bits*>(src), rows, cols, ld,
                                                           reinterpret_cast<Bits*>(dst));
  TANDEM_CUDA_CHECK_LAUNCH();
}

// C (m x n, ldc) = epilogue(product (m x n, packed), C): the canonical epilogue, or (product == nullptr)
// gemm_scale(C, beta). NaN results are stored as the canonical quiet NaN.
template <class T>
__global__ void __launch_bounds__(256)
    epilogue_kernel(T* __restrict__ c, std::int64_t m, std::int64_t n, std::int64_t ldc, const T* __restrict__ product,
                    T alpha, T beta) {
  const std::int64_t total = m * n;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t row = i / n, col = i - row * n;
    T& out = c[row * ldc + col];
    const T old = beta == T(0) ? T(0) : out;  // beta == 0: C is never read
    out = detail::canonical_nan(product ? detail::canonical::gemm_epilogue(product[i], old, alpha, beta)
                                        : detail::canonical::gemm_scale(old, beta));
  }
}

template <class T>
void epilogue(T* c, std::int64_t m, std::int64_t n, std::int64_t ldc, const T* product, T alpha, T beta,
              cudaStream_t stream) {
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(ceil_div(m * n, kThreads), 1 << 16));
  epilogue_kernel<T><<<blocks, kThreads, 0, stream>>>(c, m, n, ldc, product, alpha, beta);
  TANDEM_CUDA_CHECK_LAUNCH();
}

// alpha == 0 or k == 0: C = beta == 0 ? 0 : beta * C for every entry.
template <class T>
void scale_only(const GemmBatch<T>& g, cudaStream_t stream) {
  for (std::int64_t e = 0; e < g.batch; ++e)
    epilogue<T>(g.p.c + e * g.stride_c, g.p.m, g.p.n, g.p.ldc, nullptr, g.alpha, g.beta, stream);
}

// Runs `launch` (a plain-product stage) on every entry of g (a mixed product: a transposed operand is transposed
// as stored, in its own type).
template <class T, class TA, class TB, class Launch>
void run_as_plain_products(const GemmBatch<T, TA, TB>& g, Launch launch, const GemmContext& ctx,
                           const MatmulWorkspaces& ws) {
  const GemmParams<T, TA, TB>& p = g.p;
  const bool plain_out = g.alpha == T(1) && g.beta == T(0);
  TA* op_a = g.trans_a ? static_cast<TA*>(ws.op_a.get(std::size_t(p.m * p.k) * sizeof(TA))) : nullptr;
  TB* op_b = g.trans_b ? static_cast<TB*>(ws.op_b.get(std::size_t(p.k * p.n) * sizeof(TB))) : nullptr;
  T* product = plain_out ? nullptr : static_cast<T*>(ws.product.get(std::size_t(p.m * p.n) * sizeof(T)));
  for (std::int64_t e = 0; e < g.batch; ++e) {
    GemmParams<T, TA, TB> q = p;
    q.a = p.a + e * g.stride_a;
    q.b = p.b + e * g.stride_b;
    q.c = p.c + e * g.stride_c;
    if (g.trans_a) {  // stored k x m
      if (e == 0 || g.stride_a != 0) transpose(q.a, p.k, p.m, p.lda, op_a, ctx.stream);
      q.a = op_a, q.lda = p.k;
    }
    if (g.trans_b) {  // stored n x k
      if (e == 0 || g.stride_b != 0) transpose(q.b, p.n, p.k, p.ldb, op_b, ctx.stream);
      q.b = op_b, q.ldb = p.n;
    }
    T* c = q.c;
    if (!plain_out) q.c = product, q.ldc = p.n;
    launch(q, ctx);
    if (!plain_out) epilogue<T>(c, p.m, p.n, p.ldc, product, g.alpha, g.beta, ctx.stream);
  }
}

}  // namespace tandem::cuda::matmul_stages
