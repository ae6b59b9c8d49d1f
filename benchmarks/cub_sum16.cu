// CUB's DeviceReduce::TransformReduce of 16-bit inputs to a float sum, for bench_cuda (cub_sum16.hpp).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cub/device/device_reduce.cuh>
#include <stdexcept>
#include <string>

#include "benchmarks/cub_sum16.hpp"

namespace tandem_bench {

namespace {
void check(cudaError_t err) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("cub::DeviceReduce::TransformReduce: ") + cudaGetErrorString(err));
}
struct ToFloat {
  __device__ float operator()(__nv_bfloat16 x) const { return __bfloat162float(x); }
  __device__ float operator()(__half x) const { return __half2float(x); }
};
template <class H>
void run(const void* x, std::int64_t n, float* out, void* temp, std::size_t& temp_bytes, cudaStream_t stream) {
  check(cub::DeviceReduce::TransformReduce(temp, temp_bytes, static_cast<const H*>(x), out, n, cuda::std::plus<float>{},
                                           ToFloat{}, 0.0f, stream));
}
}  // namespace

void cub_sum16(bool bf16, const void* x, std::int64_t n, float* out, void* temp, std::size_t& temp_bytes,
               cudaStream_t stream) {
  if (bf16)
    run<__nv_bfloat16>(x, n, out, temp, temp_bytes, stream);
  else
    run<__half>(x, n, out, temp, temp_bytes, stream);
  if (temp) check(cudaGetLastError());
}

}  // namespace tandem_bench
