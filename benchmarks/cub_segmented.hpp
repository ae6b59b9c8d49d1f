// CUB's DeviceSegmentedReduce::Sum and cuBLAS's Sgemv, the baselines of bench_cuda_per.cpp (per-row and
// per-column sums). cub_segmented.cu is compiled by nvcc; callers need only this header.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace tandem_bench {

// Temporary bytes cub_segmented_sum needs for `segments` segments.
std::size_t cub_segmented_sum_temp_bytes(int segments);
// out[s] = sum of x[offsets[s] .. offsets[s + 1]) for s < segments (offsets: segments + 1 device values).
void cub_segmented_sum(const float* x, const std::int64_t* offsets, int segments, float* out, void* temp,
                       std::size_t temp_bytes, cudaStream_t stream);

}  // namespace tandem_bench
