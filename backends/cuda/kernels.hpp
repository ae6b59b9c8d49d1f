// The kernel ladders as the CUDA backend calls them. Validation happened in the engine: every call
// here has n >= 1 (reductions) or m, k, n >= 1 (matmul), stride >= 1, lda >= k, ldb >= n, ldc >= n,
// and every pointer is device memory valid for the extent it describes.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cuda/common.cuh"

namespace tandem::cuda {

// ---- Reductions (backends/cuda/reduce/) --------------------------------------------------------
// Every stage in ladder order, "cub" last, with what it accepts; without "auto".
std::vector<KernelInfo> reduce_stage_info();
// The stage "auto" runs for this problem.
std::string auto_reduce_stage(Op op, Dtype dtype, std::int64_t n, std::int64_t stride);
// Reduces x[0], x[stride], ..., x[(n-1)*stride] with `stage` and writes one result to the device
// pointer d_result: a std::uint64_t for integer sums (wrapping), otherwise a value of the input type.
void reduce(std::string_view stage, Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride,
            void* d_result, Workspace& ws, cudaStream_t stream);

// Deterministic mode's float sum (f32, f64) in the canonical order of backends/common/canonical.hpp.
void reduce_canonical_sum(Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* d_result,
                          Workspace& ws, cudaStream_t stream);

// ---- Matrix products (backends/cuda/matmul/) ---------------------------------------------------
// Every stage in ladder order, cuBLAS last, with what it accepts; without "auto".
std::vector<KernelInfo> matmul_stage_info();
// The stage "auto" runs: the fastest that keeps full fp32/fp64 precision (never tf32/bf16).
// Deterministic mode runs register_tiled, whose per-element fma chain is the canonical order.
std::string auto_matmul_stage(Dtype dtype, std::int64_t m, std::int64_t k, std::int64_t n);
// C (m x n, ldc) = A (m x k, lda) * B (k x n, ldb), row-major, dtype f32 or f64. Throws tandem::Error
// for a stage whose KernelInfo does not take the dtype (tensor-core stages take float only).
void matmul(std::string_view stage, Dtype dtype, const void* a, const void* b, void* c, std::int64_t m, std::int64_t k,
            std::int64_t n, std::int64_t lda, std::int64_t ldb, std::int64_t ldc, Workspace& ws, cublasHandle_t cublas,
            cudaStream_t stream);

}  // namespace tandem::cuda
