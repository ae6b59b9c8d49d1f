// Matrix products of the 16-bit storage types (bfloat16, half): A and B 16-bit, C float, float
// accumulation.
// - cublas takes them natively: cublasGemmEx / cublasGemmStridedBatchedEx with CUDA_R_16BF or CUDA_R_16F
//   inputs, a CUDA_R_32F C and CUBLAS_COMPUTE_32F (tensor cores; every product of two 16-bit values is
//   exact in float, so this is the full precision of the inputs).
// - Every other stage: A and B are widened to float (exact) into scratch memory, in their stored layout
//   (ld and batch stride kept), and the stage's float product runs on them. Its results (deterministic
//   mode's bits included) are those of the float product of the converted matrices, as on the CPU.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "backends/cuda/common.cuh"
#include "backends/cuda/kernels.hpp"
#include "backends/cuda/matmul/cublas_gemm.cuh"
#include "backends/cuda/matmul/params.cuh"

namespace tandem::cuda::matmul_stages {

// Elements an operand spans: (rows - 1) * ld + cols per entry, entries `stride` apart (0: one entry).
inline std::int64_t operand_extent(std::int64_t rows, std::int64_t cols, std::int64_t ld, std::int64_t batch,
                                   std::int64_t stride) {
  if (rows == 0 || cols == 0) return 0;
  return (rows - 1) * ld + cols + (stride == 0 ? 0 : (batch - 1) * stride);
}

template <class In>
__global__ void __launch_bounds__(256)
    widen_kernel(const In* __restrict__ src, std::int64_t count, float* __restrict__ dst) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    dst[i] = float(src[i]);
}

// count 16-bit elements of src as floats in ws (stream-ordered); returns the floats.
template <class In>
const float* widened(const In* src, std::int64_t count, Workspace& ws, cudaStream_t stream) {
  auto* dst = static_cast<float*>(ws.get(std::size_t(std::max<std::int64_t>(count, 1)) * sizeof(float)));
  if (count == 0) return dst;
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>(ceil_div(count, kThreads), 1 << 16));
  widen_kernel<In><<<blocks, kThreads, 0, stream>>>(src, count, dst);
  TANDEM_CUDA_CHECK_LAUNCH();
  return dst;
}

// g with its 16-bit A and B replaced by float copies in forms.wide_a / wide_b: the same problem in f32.
template <class In>
detail::MatmulArgs widened_problem(const detail::MatmulArgs& g, const MatmulWorkspaces& forms, cudaStream_t stream) {
  detail::MatmulArgs f = g;
  f.dtype = Dtype::f32;
  const std::int64_t a_extent =
      g.k == 0 ? 0 : operand_extent(g.trans_a ? g.k : g.m, g.trans_a ? g.m : g.k, g.lda, g.batch, g.stride_a);
  const std::int64_t b_extent =
      g.k == 0 ? 0 : operand_extent(g.trans_b ? g.n : g.k, g.trans_b ? g.k : g.n, g.ldb, g.batch, g.stride_b);
  f.a = widened(static_cast<const In*>(g.a), a_extent, forms.wide_a, stream);
  f.b = widened(static_cast<const In*>(g.b), b_extent, forms.wide_b, stream);
  return f;
}

// The cublas stage on 16-bit A and B (C float): the whole problem in one cuBLAS call, C^T = op(B)^T
// op(A)^T as in cublas_gemm.cuh.
inline void cublas_matmul_16bit(const detail::MatmulArgs& g, const GemmContext& ctx) {
  check_cublas_sizes("cublas", g.m, g.k, g.n, g.lda, g.ldb, g.ldc, g.batch);
  const cudaDataType_t type = g.dtype == Dtype::bf16 ? CUDA_R_16BF : CUDA_R_16F;
  const int m = int(g.m), k = int(g.k), n = int(g.n), count = int(g.batch);
  const cublasOperation_t op_b = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, op_a = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  TANDEM_CUBLAS_CHECK(cublasSetStream(ctx.cublas, ctx.stream));
  TANDEM_CUBLAS_CHECK(cublasSetPointerMode(ctx.cublas, CUBLAS_POINTER_MODE_HOST));
  TANDEM_CUBLAS_CHECK(cublasSetMathMode(ctx.cublas, CUBLAS_DEFAULT_MATH));
  const float alpha = float(g.alpha), beta = float(g.beta);  // beta = 0: C is written, never read
  if (count == 1)
    TANDEM_CUBLAS_CHECK(cublasGemmEx(ctx.cublas, op_b, op_a, n, m, k, &alpha, g.b, type, int(g.ldb), g.a, type,
                                     int(g.lda), &beta, g.c, CUDA_R_32F, int(g.ldc), CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT));
  else
    TANDEM_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
        ctx.cublas, op_b, op_a, n, m, k, &alpha, g.b, type, int(g.ldb), g.stride_b, g.a, type, int(g.lda), g.stride_a,
        &beta, g.c, CUDA_R_32F, int(g.ldc), g.stride_c, count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace tandem::cuda::matmul_stages
