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

// dst (rows x cols, packed: ld = cols) = src (rows x cols, ld) rounded to bf16. Grid-stride over the
// elements in row-major order, so reads and writes are coalesced.
__global__ void __launch_bounds__(256)
    convert_to_bf16_kernel(const float* __restrict__ src, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                           __nv_bfloat16* __restrict__ dst) {
  const std::int64_t count = rows * cols;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t row = i / cols, col = i - row * cols;
    dst[i] = __float2bfloat16_rn(src[row * ld + col]);
  }
}

inline void convert_to_bf16(const float* src, std::int64_t rows, std::int64_t cols, std::int64_t ld, __nv_bfloat16* dst,
                            cudaStream_t stream) {
  constexpr int kThreads = 256;
  constexpr std::int64_t kMaxBlocks = 1 << 16;  // enough to fill any GPU; the kernel loops over the rest
  const auto blocks = static_cast<unsigned>(std::min(ceil_div(rows * cols, kThreads), kMaxBlocks));
  convert_to_bf16_kernel<<<blocks, kThreads, 0, stream>>>(src, rows, cols, ld, dst);
  TANDEM_CUDA_CHECK_LAUNCH();
}

// ---- The cuBLAS call -----------------------------------------------------------------------------

// C (m x n, ldc) = A (m x k, lda) * B (k x n, ldb), row-major, T float or double (bf16 and tf32: float).
template <class T>
void cublas_matmul(const char* stage, CublasPrecision precision, const GemmParams<T>& p, const GemmContext& ctx) {
  const T* a = p.a;
  const T* b = p.b;
  T* c = p.c;
  const std::int64_t m = p.m, k = p.k, n = p.n, lda = p.lda, ldb = p.ldb, ldc = p.ldc;
  cublasHandle_t handle = ctx.cublas;
  cudaStream_t stream = ctx.stream;
  if (std::max({m, k, n, lda, ldb, ldc}) > INT_MAX) {
    const std::string sizes = "m=" + std::to_string(m) + ", k=" + std::to_string(k) + ", n=" + std::to_string(n) +
                              ", lda=" + std::to_string(lda) + ", ldb=" + std::to_string(ldb) +
                              ", ldc=" + std::to_string(ldc);
    throw Error(std::string("matmul kernel '") + stage + "': cuBLAS takes 32-bit sizes, so m, k, n and the leading " +
                "dimensions must each be at most 2147483647 (got " + sizes + "); use register_tiled instead");
  }
  const int mi = int(m), ki = int(k), ni = int(n);

  // The handle is shared: set everything this call relies on, every call.
  TANDEM_CUBLAS_CHECK(cublasSetStream(handle, stream));
  TANDEM_CUBLAS_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  // Default math: no tensor-core shortcuts for fp32 (a handle left in CUBLAS_TF32_TENSOR_OP_MATH would
  // otherwise let cublasSgemm round to tf32). cublasGemmEx's compute type below overrides it where asked.
  TANDEM_CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  const T one = 1, zero = 0;  // beta = 0: C is written, never read

  if (precision == CublasPrecision::full) {
    if constexpr (std::is_same_v<T, float>)
      TANDEM_CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, mi, ki, &one, b, int(ldb), a, int(lda),
                                      &zero, c, int(ldc)));
    else
      TANDEM_CUBLAS_CHECK(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, mi, ki, &one, b, int(ldb), a, int(lda),
                                      &zero, c, int(ldc)));
    return;
  }

  if constexpr (std::is_same_v<T, float>) {
    if (precision == CublasPrecision::tf32) {
      TANDEM_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, mi, ki, &one, b, CUDA_R_32F, int(ldb), a,
                                       CUDA_R_32F, int(lda), &zero, c, CUDA_R_32F, int(ldc),
                                       CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
      return;
    }
    // bf16: packed copies of A (ld k) and B (ld n) in the workspace, B starting 256-byte aligned.
    const std::size_t a_bytes = std::size_t(m) * std::size_t(k) * sizeof(__nv_bfloat16);
    const std::size_t b_offset = (a_bytes + 255) / 256 * 256;
    const std::size_t b_bytes = std::size_t(k) * std::size_t(n) * sizeof(__nv_bfloat16);
    auto* scratch = static_cast<unsigned char*>(ctx.ws.get(b_offset + b_bytes));
    auto* a16 = reinterpret_cast<__nv_bfloat16*>(scratch);
    auto* b16 = reinterpret_cast<__nv_bfloat16*>(scratch + b_offset);
    convert_to_bf16(a, m, k, lda, a16, stream);
    convert_to_bf16(b, k, n, ldb, b16, stream);
    TANDEM_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, mi, ki, &one, b16, CUDA_R_16BF, ni, a16,
                                     CUDA_R_16BF, ki, &zero, c, CUDA_R_32F, int(ldc), CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT));
  } else {
    throw Error(std::string("matmul kernel '") + stage + "' supports float only");  // the dispatcher checks first
  }
}

// The launchers of the three stages.
template <class T>
void launch_cublas(const GemmParams<T>& p, const GemmContext& ctx) {
  cublas_matmul("cublas", CublasPrecision::full, p, ctx);
}
inline void launch_cublas_tf32(const GemmParams<float>& p, const GemmContext& ctx) {
  cublas_matmul("cublas_tf32", CublasPrecision::tf32, p, ctx);
}
inline void launch_cublas_bf16(const GemmParams<float>& p, const GemmContext& ctx) {
  cublas_matmul("cublas_bf16", CublasPrecision::bf16, p, ctx);
}

}  // namespace tandem::cuda::matmul_stages
