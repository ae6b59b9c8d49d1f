// The wgmma stages (wgmma.cu), compiled apart from the rest of the ladder because their code is for
// sm_90a only (Hopper's wgmma instructions); dispatch.cu calls them through this function.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/common.cuh"
#include "backends/cuda/matmul/params.cuh"
#include "tandem/float16.hpp"

namespace tandem::cuda {

enum class WgmmaInput { tf32, bf16 };

// C (m x n, ldc) = A (m x k, lda) * B (k x n, ldb), row-major floats, inputs rounded to tf32 or bf16,
// float accumulation. Throws tandem::Error on a GPU other than compute capability 9.0.
void wgmma_matmul(WgmmaInput input, const matmul_stages::GemmParams<float>& p, Workspace& ws, cudaStream_t stream);

// The same for wgmma_bf16 on 16-bit inputs (row-major, C float), read as they are stored instead of
// widened to float first: stored bfloat16 A is read in place where its rows allow 16-byte copies, and B
// (and otherwise A) is packed from the 16-bit values. The same bits as the stage on the widened inputs.
void wgmma_bf16_matmul_16bit(const bfloat16* a, const bfloat16* b, float* c, std::int64_t m, std::int64_t k,
                             std::int64_t n, std::int64_t lda, std::int64_t ldb, std::int64_t ldc, Workspace& ws,
                             cudaStream_t stream);
void wgmma_bf16_matmul_16bit(const half* a, const half* b, float* c, std::int64_t m, std::int64_t k, std::int64_t n,
                             std::int64_t lda, std::int64_t ldb, std::int64_t ldc, Workspace& ws, cudaStream_t stream);

namespace matmul_stages {
// The launchers of the two stages.
inline void launch_wgmma_tf32(const GemmParams<float>& p, const GemmContext& ctx) {
  wgmma_matmul(WgmmaInput::tf32, p, ctx.ws, ctx.stream);
}
inline void launch_wgmma_bf16(const GemmParams<float>& p, const GemmContext& ctx) {
  wgmma_matmul(WgmmaInput::bf16, p, ctx.ws, ctx.stream);
}
}  // namespace matmul_stages

}  // namespace tandem::cuda
