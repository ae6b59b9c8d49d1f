#include <stdexcept>
#include <string>

#include "tests/cuda/app_kernels.hpp"

namespace test_app {
namespace {

__global__ void fill_kernel(float* p, std::size_t n, float offset) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = float(i % 7) - 3.0f + offset;
}

__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

}  // namespace

void fill(float* p, std::size_t n, float offset, cudaStream_t stream) {
  fill_kernel<<<256, 256, 0, stream>>>(p, n, offset);
  check(cudaGetLastError(), "fill_kernel");
}

void spin(double ms, cudaStream_t stream) {
  int device = 0, khz = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device), "clock rate");
  spin_kernel<<<1, 1, 0, stream>>>(static_cast<long long>(ms * khz));
  check(cudaGetLastError(), "spin_kernel");
}

}  // namespace test_app
