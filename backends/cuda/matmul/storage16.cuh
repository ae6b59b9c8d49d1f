// Matrix products of the 16-bit storage types (bfloat16, half): A and B 16-bit, C float, float
// accumulation.
// - cublas takes them natively: cublasGemmEx / cublasGemmStridedBatchedEx with CUDA_R_16BF or CUDA_R_16F
//   inputs, a CUDA_R_32F C and CUBLAS_COMPUTE_32F (tensor cores: every product of two 16-bit values is
//   exact in float and accumulates in float, within the float bound of the tests; the tensor cores'
//   additions are not all rounded to nearest as a float fma chain's are).
// - wgmma_bf16 on a plain product (no transposes, alpha 1, beta 0, one entry): the stage packs the 16-bit
//   A and B into its bf16 tiles itself (wgmma.hpp, wgmma_bf16_matmul_16bit; a stored bfloat16 A is read
//   in place where its rows allow), without float copies.
// - Every other stage and form: A and B are widened to float (exact) into packed scratch memory, and the
//   stage's float product runs on them.
// - Mixed products (A and B two of float, bfloat16 and half): register_tiled reads both as stored and converts the
//   16-bit one as it loads it (chunk_dot.cuh, register_tiled_mixed); on every other stage (and in deterministic
//   mode's tensor-core arithmetic) the 16-bit operand is widened, the float one read as stored, and the stage's
//   float product runs (mixed_as_float).
// Either way a stage's results (deterministic mode's bits included) are those of its float product of the
// converted matrices, as on the CPU.
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
#include "common/operands.hpp"

namespace tandem::cuda::matmul_stages {

// dst (count entries of rows x cols, packed: ld = cols, one after the other) = src (entry e at
// src + e * stride, ld) as floats. The rows of all entries are spread over blockIdx.y and threadIdx.y,
// a row's columns over blockIdx.x and threadIdx.x (coalesced; blockDim.x no wider than the row), with one
// division per row (a division per element took longer than the copy).
template <class In>
__global__ void __launch_bounds__(256)
    widen_kernel(const In* __restrict__ src, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::int64_t count,
                 std::int64_t stride, float* __restrict__ dst) {
  for (std::int64_t r = std::int64_t(blockIdx.y) * blockDim.y + threadIdx.y; r < rows * count;
       r += std::int64_t(gridDim.y) * blockDim.y) {
    const std::int64_t e = r / rows, row = r - e * rows;
    const In* in = src + e * stride + row * ld;
    float* out = dst + r * cols;
    for (std::int64_t col = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; col < cols;
         col += std::int64_t(gridDim.x) * blockDim.x)
      out[col] = float(in[col]);
  }
}

// One operand (common/operands.hpp) widened into ws as its packed copy, stream-ordered.
template <class In>
const float* widened(const In* src, const detail::OperandLayout& o, Workspace& ws, cudaStream_t stream) {
  const std::int64_t total = o.elements();
  auto* dst = static_cast<float*>(ws.get(std::size_t(std::max<std::int64_t>(total, 1)) * sizeof(float)));
  if (total == 0) return dst;
  constexpr int kThreads = 256;
  int width = 32;  // threads along a row: the row's width rounded up to a warp, at most kThreads
  while (width < kThreads && width < o.cols) width *= 2;
  const dim3 block(unsigned(width), unsigned(kThreads / width));
  const dim3 grid(static_cast<unsigned>(std::min<std::int64_t>(ceil_div(o.cols, width), 64)),
                  static_cast<unsigned>(std::min<std::int64_t>(ceil_div(o.rows * o.count, block.y), 65535)));
  widen_kernel<In><<<grid, block, 0, stream>>>(src, o.rows, o.cols, o.ld, o.count, o.stride, dst);
  TANDEM_CUDA_CHECK_LAUNCH();
  return dst;
}

// g with its 16-bit A and B replaced by packed float copies in forms.wide_a / wide_b: the same problem in
// f32 (detail::on_packed_operands). Where no product is computed (k == 0 or alpha 0 in float), nothing
// is widened (the stage never reads A or B then).
template <class In>
detail::MatmulArgs widened_problem(const detail::MatmulArgs& g, const MatmulWorkspaces& forms, cudaStream_t stream) {
  static_assert(sizeof(In) == 2, "widen: a 16-bit storage type");
  const bool product = g.k > 0 && float(g.alpha) != 0.0f;
  detail::OperandLayout a = detail::operand_a(g), b = detail::operand_b(g);
  if (!product) a.rows = b.rows = 0;
  return detail::on_packed_operands(g, Dtype::f32, widened(static_cast<const In*>(g.a), a, forms.wide_a, stream),
                                    widened(static_cast<const In*>(g.b), b, forms.wide_b, stream));
}

// A mixed product (g.mixed(): A and B two of float, bfloat16 and half) as the float product it defines
// (detail::as_float_product): each 16-bit operand widened into forms.mixed_a / mixed_b (workspaces that the
// float product never uses itself), a float one read as stored. Where no product is computed, nothing is
// widened.
inline detail::MatmulArgs mixed_as_float(const detail::MatmulArgs& g, const MatmulWorkspaces& forms,
                                         cudaStream_t stream) {
  const bool product = g.k > 0 && float(g.alpha) != 0.0f;
  auto wide = [&](Dtype dtype, const void* x, detail::OperandLayout o, Workspace& ws) -> const void* {
    if (!product) o.rows = 0;
    if (dtype == Dtype::bf16) return widened(static_cast<const bfloat16*>(x), o, ws, stream);
    if (dtype == Dtype::f16) return widened(static_cast<const half*>(x), o, ws, stream);
    return x;  // float: as stored
  };
  return detail::as_float_product(g, wide(g.dtype, g.a, detail::operand_a(g), forms.mixed_a),
                                  wide(g.b_type(), g.b, detail::operand_b(g), forms.mixed_b));
}

// The cublas stage on 16-bit A and B (C float): the whole problem in one cuBLAS call, C^T = op(B)^T
// op(A)^T as in cublas_gemm.cuh.
inline void cublas_matmul_16bit(const detail::MatmulArgs& g, const GemmContext& ctx) {
  check_cublas_sizes("cublas", g.m, g.k, g.n, g.lda, g.ldb, g.ldc, g.batch);
  if (g.dtype != Dtype::bf16 && g.dtype != Dtype::f16)
    throw Error(std::string("matmul kernel 'cublas': no cuBLAS type for ") + to_string(g.dtype));
  const cudaDataType_t type = g.dtype == Dtype::bf16 ? CUDA_R_16BF : CUDA_R_16F;
  const int m = int(g.m), k = int(g.k), n = int(g.n), count = int(g.batch);
  const cublasOperation_t op_b = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, op_a = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasHandle_t cublas = cublas_handle(ctx);
  TANDEM_CUBLAS_CHECK(cublasSetStream(cublas, ctx.stream));
  TANDEM_CUBLAS_CHECK(cublasSetPointerMode(cublas, CUBLAS_POINTER_MODE_HOST));
  TANDEM_CUBLAS_CHECK(cublasSetMathMode(cublas, CUBLAS_DEFAULT_MATH));
  const float alpha = float(g.alpha), beta = float(g.beta);  // beta = 0: C is written, never read
  if (count == 1)
    TANDEM_CUBLAS_CHECK(cublasGemmEx(cublas, op_b, op_a, n, m, k, &alpha, g.b, type, int(g.ldb), g.a, type, int(g.lda),
                                     &beta, g.c, CUDA_R_32F, int(g.ldc), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  else
    TANDEM_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
        cublas, op_b, op_a, n, m, k, &alpha, g.b, type, int(g.ldb), g.stride_b, g.a, type, int(g.lda), g.stride_a,
        &beta, g.c, CUDA_R_32F, int(g.ldc), g.stride_c, count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace tandem::cuda::matmul_stages
