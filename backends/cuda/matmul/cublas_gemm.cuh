// Stages 9 to 11, cublas, cublas_tf32 and cublas_bf16: the vendor library as the baseline the own
// stages are measured against.
// - cublas: cublasSgemm / cublasDgemm in CUBLAS_DEFAULT_MATH, full fp32/fp64 precision (no tf32).
// - cublas_tf32: cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32 (float only): compare tensor_core_tf32.
// - cublas_bf16: A and B converted to packed bf16 copies in the workspace, then cublasGemmEx on bf16
//   with float accumulation (float only): compare tensor_core_bf16. The conversion is part of its time.
// cuBLAS is column-major and tandem row-major. A row-major matrix read column-major is its transpose,
// so C = A B is computed as C^T = B^T A^T: a column-major product of n x k B^T and k x m A^T into
// n x m C^T, that is gemm(n, m, k, B, ldb, A, lda, C, ldc) with no transposes requested.
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

#include "backends/cuda/common.cuh"
#include "backends/cuda/matmul/params.cuh"

namespace tandem::cuda::matmul_stages {

// Throws tandem::Error with the cuBLAS status name and text, the failing statement, file and line.
[[noreturn]] inline void throw_cublas_error(cublasStatus_t status, const char* stmt, const char* file, int line) {
  throw Error(std::string("cuBLAS error ") + cublasGetStatusName(status) + " (" + cublasGetStatusString(status) +
              ") in '" + stmt + "' at " + file + ":" + std::to_string(line));
}

#define TANDEM_CUBLAS_CHECK(stmt)                                                                   \
  do {                                                                                              \
    cublasStatus_t tandem_status_ = (stmt);                                                         \
    if (tandem_status_ != CUBLAS_STATUS_SUCCESS)                                                    \
      ::tandem::cuda::matmul_stages::throw_cublas_error(tandem_status_, #stmt, __FILE__, __LINE__); \
  } while (0)

enum class CublasPrecision { full, tf32, bf16 };

// ---- bf16 conversion -----------------------------------------------------------------------------

// dst (count matrices of rows x cols, packed: ld = cols, one after the other) = src (matrix e at
// src + e * stride, ld) rounded to bf16. Grid-stride over the elements in row-major order, so reads and
// writes are coalesced.
__global__ void __launch_bounds__(256)
    convert_to_bf16_kernel(const float* __restrict__ src, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                           std::int64_t count, std::int64_t stride, __nv_bfloat16* __restrict__ dst) {
  const std::int64_t one = rows * cols, total = one * count;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t e = i / one, r = i - e * one, row = r / cols, col = r - row * cols;
    dst[i] = __float2bfloat16_rn(src[e * stride + row * ld + col]);
  }
}

inline void convert_to_bf16(const float* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::int64_t count,
                            std::int64_t stride, __nv_bfloat16* dst, cudaStream_t stream) {
  constexpr int kThreads = 256;
  constexpr std::int64_t kMaxBlocks = 1 << 16;  // enough to fill any GPU; the kernel loops over the rest
  const auto blocks = static_cast<unsigned>(std::min(ceil_div(rows * cols * count, kThreads), kMaxBlocks));
  convert_to_bf16_kernel<<<blocks, kThreads, 0, stream>>>(src, rows, cols, ld, count, stride, dst);
  TANDEM_CUDA_CHECK_LAUNCH();
}

// ---- The cuBLAS call -----------------------------------------------------------------------------

// Throws tandem::Error unless every size fits cuBLAS's 32-bit int.
inline void check_cublas_sizes(const char* stage, std::int64_t m, std::int64_t k, std::int64_t n, std::int64_t lda,
                               std::int64_t ldb, std::int64_t ldc, std::int64_t batch) {
  if (std::max({m, k, n, lda, ldb, ldc, batch}) <= INT_MAX) return;
  const std::string sizes = "m=" + std::to_string(m) + ", k=" + std::to_string(k) + ", n=" + std::to_string(n) +
                            ", lda=" + std::to_string(lda) + ", ldb=" + std::to_string(ldb) +
                            ", ldc=" + std::to_string(ldc) + ", batch=" + std::to_string(batch);
  throw Error(std::string("matmul kernel '") + stage + "': cuBLAS takes 32-bit sizes, so m, k, n, the leading " +
              "dimensions and the batch count must each be at most 2147483647 (got " + sizes +
              "); use register_tiled instead");
}

// C = alpha * op(A) * op(B) + beta * C for every entry of g, row-major, T float or double (bf16 and
// tf32: float). cuBLAS reads a row-major matrix as its column-major transpose, so the call computes
// C^T = op(B)^T op(A)^T: B first, with CUBLAS_OP_T where op(B) is a transpose, then A likewise.
// One entry: cublasSgemm / cublasDgemm / cublasGemmEx; several: the StridedBatched forms (stride 0
// repeats A or B).
template <class T>
void cublas_matmul(const char* stage, CublasPrecision precision, const GemmBatch<T>& g, const GemmContext& ctx) {
  const GemmParams<T>& p = g.p;
  const std::int64_t m = p.m, k = p.k, n = p.n, lda = p.lda, ldb = p.ldb, ldc = p.ldc;
  cublasHandle_t handle = cublas_handle(ctx);
  cudaStream_t stream = ctx.stream;
  check_cublas_sizes(stage, m, k, n, lda, ldb, ldc, g.batch);
  const int mi = int(m), ki = int(k), ni = int(n), count = int(g.batch);
  const cublasOperation_t op_b = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, op_a = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;

  // The handle is shared: set everything this call relies on, every call.
  TANDEM_CUBLAS_CHECK(cublasSetStream(handle, stream));
  TANDEM_CUBLAS_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  // Default math: no tensor-core shortcuts for fp32 (a handle left in CUBLAS_TF32_TENSOR_OP_MATH would
  // otherwise let cublasSgemm round to tf32). cublasGemmEx's compute type below overrides it where asked.
  TANDEM_CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  const T alpha = g.alpha, beta = g.beta;  // beta = 0: C is written, never read

  if (precision == CublasPrecision::full) {
    if constexpr (std::is_same_v<T, float>) {
      if (count == 1)
        TANDEM_CUBLAS_CHECK(
            cublasSgemm(handle, op_b, op_a, ni, mi, ki, &alpha, p.b, int(ldb), p.a, int(lda), &beta, p.c, int(ldc)));
      else
        TANDEM_CUBLAS_CHECK(cublasSgemmStridedBatched(handle, op_b, op_a, ni, mi, ki, &alpha, p.b, int(ldb), g.stride_b,
                                                      p.a, int(lda), g.stride_a, &beta, p.c, int(ldc), g.stride_c,
                                                      count));
    } else {
      if (count == 1)
        TANDEM_CUBLAS_CHECK(
            cublasDgemm(handle, op_b, op_a, ni, mi, ki, &alpha, p.b, int(ldb), p.a, int(lda), &beta, p.c, int(ldc)));
      else
        TANDEM_CUBLAS_CHECK(cublasDgemmStridedBatched(handle, op_b, op_a, ni, mi, ki, &alpha, p.b, int(ldb), g.stride_b,
                                                      p.a, int(lda), g.stride_a, &beta, p.c, int(ldc), g.stride_c,
                                                      count));
    }
    return;
  }

  if constexpr (std::is_same_v<T, float>) {
    const void *a = p.a, *b = p.b;
    cudaDataType_t type = CUDA_R_32F;
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F_FAST_TF32;
    int lda_used = int(lda), ldb_used = int(ldb);
    std::int64_t stride_a = g.stride_a, stride_b = g.stride_b;
    if (precision == CublasPrecision::bf16) {
      // Packed bf16 copies of A and B as stored (one entry where the stride is 0) in the workspace, B
      // starting 256-byte aligned.
      const std::int64_t a_rows = g.trans_a ? k : m, a_cols = g.trans_a ? m : k;
      const std::int64_t b_rows = g.trans_b ? n : k, b_cols = g.trans_b ? k : n;
      const std::int64_t a_count = g.stride_a == 0 ? 1 : g.batch, b_count = g.stride_b == 0 ? 1 : g.batch;
      const std::size_t a_bytes = std::size_t(a_rows * a_cols * a_count) * sizeof(__nv_bfloat16);
      const std::size_t b_offset = (a_bytes + 255) / 256 * 256;
      const std::size_t b_bytes = std::size_t(b_rows * b_cols * b_count) * sizeof(__nv_bfloat16);
      auto* scratch = static_cast<unsigned char*>(ctx.ws.get(b_offset + b_bytes));
      auto* a16 = reinterpret_cast<__nv_bfloat16*>(scratch);
      auto* b16 = reinterpret_cast<__nv_bfloat16*>(scratch + b_offset);
      convert_to_bf16(p.a, a_rows, a_cols, lda, a_count, g.stride_a, a16, stream);
      convert_to_bf16(p.b, b_rows, b_cols, ldb, b_count, g.stride_b, b16, stream);
      a = a16, b = b16, type = CUDA_R_16BF, compute = CUBLAS_COMPUTE_32F;
      lda_used = int(a_cols), ldb_used = int(b_cols);
      stride_a = g.stride_a == 0 ? 0 : a_rows * a_cols;
      stride_b = g.stride_b == 0 ? 0 : b_rows * b_cols;
    }
    if (count == 1)
      TANDEM_CUBLAS_CHECK(cublasGemmEx(handle, op_b, op_a, ni, mi, ki, &alpha, b, type, ldb_used, a, type, lda_used,
                                       &beta, p.c, CUDA_R_32F, int(ldc), compute, CUBLAS_GEMM_DEFAULT));
    else
      TANDEM_CUBLAS_CHECK(cublasGemmStridedBatchedEx(handle, op_b, op_a, ni, mi, ki, &alpha, b, type, ldb_used,
                                                     stride_b, a, type, lda_used, stride_a, &beta, p.c, CUDA_R_32F,
                                                     int(ldc), g.stride_c, count, compute, CUBLAS_GEMM_DEFAULT));
  } else {
    throw Error(std::string("matmul kernel '") + stage + "' supports float only");  // the dispatcher checks first
  }
}

// The launchers of the three stages: the whole problem (GemmBatch), or one plain product.
template <class T>
void launch_cublas_batch(const GemmBatch<T>& g, const GemmContext& ctx) {
  cublas_matmul("cublas", CublasPrecision::full, g, ctx);
}
inline void launch_cublas_tf32_batch(const GemmBatch<float>& g, const GemmContext& ctx) {
  cublas_matmul("cublas_tf32", CublasPrecision::tf32, g, ctx);
}
inline void launch_cublas_bf16_batch(const GemmBatch<float>& g, const GemmContext& ctx) {
  cublas_matmul("cublas_bf16", CublasPrecision::bf16, g, ctx);
}
template <class T>
GemmBatch<T> plain_batch(const GemmParams<T>& p) {
  return {p, false, false, T(1), T(0), 1, 0, 0, 0};
}
template <class T>
void launch_cublas(const GemmParams<T>& p, const GemmContext& ctx) {
  launch_cublas_batch(plain_batch(p), ctx);
}
inline void launch_cublas_tf32(const GemmParams<float>& p, const GemmContext& ctx) {
  launch_cublas_tf32_batch(plain_batch(p), ctx);
}
inline void launch_cublas_bf16(const GemmParams<float>& p, const GemmContext& ctx) {
  launch_cublas_bf16_batch(plain_batch(p), ctx);
}

}  // namespace tandem::cuda::matmul_stages
