// CUB's DeviceReduce::ArgMax for bench_cuda (cub_argmax.hpp).
#include <cub/device/device_reduce.cuh>
#include <stdexcept>
#include <string>

#include "benchmarks/cub_argmax.hpp"

namespace tandem_bench {

namespace {
void check(cudaError_t err) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("cub::DeviceReduce::ArgMax: ") + cudaGetErrorString(err));
}
}  // namespace

template <class T>
std::size_t cub_argmax_temp_bytes(std::int64_t n) {
  std::size_t bytes = 0;
  check(cub::DeviceReduce::ArgMax(nullptr, bytes, static_cast<const T*>(nullptr), static_cast<T*>(nullptr),
                                  static_cast<std::int64_t*>(nullptr), n));
  return bytes;
}

template <class T>
void cub_argmax(const T* x, std::int64_t n, void* out, void* temp, std::size_t temp_bytes, cudaStream_t stream) {
  auto* bytes = static_cast<unsigned char*>(out);
  check(cub::DeviceReduce::ArgMax(temp, temp_bytes, x, reinterpret_cast<T*>(bytes),
                                  reinterpret_cast<std::int64_t*>(bytes + 8), n, stream));
  check(cudaGetLastError());
}

#define TANDEM_BENCH_CUB_ARGMAX(T)                               \
  template std::size_t cub_argmax_temp_bytes<T>(std::int64_t n); \
  template void cub_argmax<T>(const T*, std::int64_t, void*, void*, std::size_t, cudaStream_t);
TANDEM_BENCH_CUB_ARGMAX(std::int32_t)
TANDEM_BENCH_CUB_ARGMAX(std::int64_t)
TANDEM_BENCH_CUB_ARGMAX(float)
TANDEM_BENCH_CUB_ARGMAX(double)

}  // namespace tandem_bench
