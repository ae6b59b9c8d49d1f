// What every matmul stage takes: one parameter struct by value (so a batch index or alpha/beta becomes
// one field), the context its launcher needs, and the host-side launch helpers the stages share.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "backends/cuda/common.cuh"
#include "backends/cuda/vector16.cuh"

namespace tandem::cuda::matmul_stages {

// C (m x n, ldc) = A (m x k, lda) * B (k x n, ldb), all row-major device memory; m, k, n >= 1. A and B of T, or
// (a mixed product, register_tiled and chunk_dot) of their own types, converted to T as they are loaded.
template <class T, class TA = T, class TB = T>
struct GemmParams {
  const TA* a;
  const TB* b;
  T* c;
  std::int64_t m, k, n;
  std::int64_t lda, ldb, ldc;
};

// The whole problem of MatmulArgs for one element type, on device memory: C = alpha * op(A) * op(B) +
// beta * C for each of `batch` entries (p.a, p.b, p.c are entry 0's; p.lda, p.ldb as stored). Stages
// with a BatchLauncher (cuBLAS) take it whole; forms.cuh turns it into plain products for the others.
template <class T, class TA = T, class TB = T>
struct GemmBatch {
  GemmParams<T, TA, TB> p;
  bool trans_a, trans_b;
  T alpha, beta;
  std::int64_t batch, stride_a, stride_b, stride_c;
};

// What a launcher may use besides the operands: scratch memory, the engine's cuBLAS handle (null where the engine
// has none yet: cublas_handle), its stream.
struct GemmContext {
  Workspace& ws;
  cublasHandle_t cublas;
  cudaStream_t stream;
};

// ctx's cuBLAS handle, for a stage that calls cuBLAS. The engine makes it on its first product, except on a stream
// being captured into a CUDA graph, where cuBLAS cannot make one.
inline cublasHandle_t cublas_handle(const GemmContext& ctx) {
  if (!ctx.cublas)
    throw Error(
        "tandem: this product runs on cuBLAS, whose handle the engine makes on its first product, but the stream is "
        "being captured into a CUDA graph, where cuBLAS cannot make one; make the same calls once before the "
        "capture (the engine keeps its handle), then capture them");
  return ctx.cublas;
}

__host__ __device__ constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Column tiles go in gridDim.x (up to 2^31 - 1), row tiles in gridDim.y, which is capped at 65535: the
// kernels loop over the row tiles beyond it.
inline dim3 tile_grid(std::int64_t row_tiles, std::int64_t col_tiles) {
  if (col_tiles > INT_MAX)
    throw Error("matmul: n is too large for one grid (" + std::to_string(col_tiles) + " column tiles)");
  return dim3(static_cast<unsigned>(col_tiles), static_cast<unsigned>(std::min<std::int64_t>(row_tiles, 65535)));
}

// Whether pointer p and leading dimension ld allow vector access to every row of a matrix of S elements read as T:
// kVectorWidth<T> of them (16 bytes of T) in one load.
template <class T, class S = T>
bool vector_aligned(const void* p, std::int64_t ld) {
  return reinterpret_cast<std::uintptr_t>(p) % (kVectorWidth<T> * sizeof(S)) == 0 && ld % kVectorWidth<T> == 0;
}

template <class T, class TA, class TB>
bool all_vector_aligned(const GemmParams<T, TA, TB>& p) {
  return vector_aligned<T, TA>(p.a, p.lda) && vector_aligned<T, TB>(p.b, p.ldb) && vector_aligned<T>(p.c, p.ldc);
}

}  // namespace tandem::cuda::matmul_stages
