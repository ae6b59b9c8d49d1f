// The wgmma stages (wgmma.cu), compiled apart from the rest of the ladder because their code is for
// sm_90a only (Hopper's wgmma instructions); dispatch.cu calls them through this function.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/common.cuh"

namespace tandem::cuda {

enum class WgmmaInput { tf32, bf16 };

// C (m x n, ldc) = A (m x k, lda) * B (k x n, ldb), row-major floats, inputs rounded to tf32 or bf16,
// float accumulation. Throws tandem::Error on a GPU other than compute capability 9.0.
void wgmma_matmul(WgmmaInput input, const float* a, const float* b, float* c, std::int64_t m, std::int64_t k,
                  std::int64_t n, std::int64_t lda, std::int64_t ldb, std::int64_t ldc, Workspace& ws,
                  cudaStream_t stream);

}  // namespace tandem::cuda
