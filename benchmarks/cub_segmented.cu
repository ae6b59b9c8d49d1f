// CUB's DeviceSegmentedReduce::Sum for bench_cuda_per.cpp (cub_segmented.hpp).
#include <cub/device/device_segmented_reduce.cuh>
#include <stdexcept>
#include <string>

#include "benchmarks/cub_segmented.hpp"

namespace tandem_bench {

namespace {
void check(cudaError_t err) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("cub::DeviceSegmentedReduce::Sum: ") + cudaGetErrorString(err));
}
}  // namespace

std::size_t cub_segmented_sum_temp_bytes(int segments) {
  std::size_t bytes = 0;
  check(cub::DeviceSegmentedReduce::Sum(
      nullptr, bytes, static_cast<const float*>(nullptr), static_cast<float*>(nullptr), segments,
      static_cast<const std::int64_t*>(nullptr), static_cast<const std::int64_t*>(nullptr)));
  return bytes;
}

void cub_segmented_sum(const float* x, const std::int64_t* offsets, int segments, float* out, void* temp,
                       std::size_t temp_bytes, cudaStream_t stream) {
  check(cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, x, out, segments, offsets, offsets + 1, stream));
  check(cudaGetLastError());
}

}  // namespace tandem_bench
