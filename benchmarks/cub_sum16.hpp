// CUB's DeviceReduce::TransformReduce of bfloat16 (bf16 = true) or half inputs to a float sum
// (cub_sum16.cu): the vendor baseline of tandem's 16-bit sums in bench_cuda_float16.cpp. With temp ==
// nullptr it only sets temp_bytes (CUB's size query); then it enqueues the sum on stream.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace tandem_bench {

void cub_sum16(bool bf16, const void* x, std::int64_t n, float* out, void* temp, std::size_t& temp_bytes,
               cudaStream_t stream);

}  // namespace tandem_bench
