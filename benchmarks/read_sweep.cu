// The GPU read sweep: a grid-stride loop of 16-byte loads (float4) over as many blocks of 256 threads as
// the GPU holds at once, each thread adding what it reads. Each block writes its sum to its own slot
// (no atomics, no second pass), so the kernel costs a plain read of the array and nothing else.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "benchmarks/read_sweep.hpp"

namespace tandem_bench {
namespace {

constexpr int kThreads = 256;

__global__ void read_sweep_kernel(const float4* x4, std::size_t n4, const float* tail, int tail_count,
                                  float* partials) {
  float acc = 0.0f;
  const std::size_t stride = std::size_t(gridDim.x) * kThreads;
  for (std::size_t i = std::size_t(blockIdx.x) * kThreads + threadIdx.x; i < n4; i += stride) {
    const float4 v = x4[i];
    acc += (v.x + v.y) + (v.z + v.w);
  }
  if (blockIdx.x == 0 && int(threadIdx.x) < tail_count) acc += tail[threadIdx.x];  // n % 4 elements

  __shared__ float warp_sums[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float block_sum = 0.0f;
    for (float s : warp_sums) block_sum += s;
    partials[blockIdx.x] = block_sum;
  }
}

}  // namespace

void cuda_check(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorName(err) + " (" +
                             cudaGetErrorString(err) + ")");
}

ReadSweep::ReadSweep() {
  int device = 0, sms = 0, blocks_per_sm = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, read_sweep_kernel, kThreads, 0),
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor (read_sweep_kernel)");
  max_blocks_ = unsigned(sms * blocks_per_sm);
  cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  cuda_check(cudaEventCreate(&start_), "cudaEventCreate");
  cuda_check(cudaEventCreate(&stop_), "cudaEventCreate");
  cuda_check(cudaMalloc(&partials_, max_blocks_ * sizeof(float)), "cudaMalloc");
}

ReadSweep::~ReadSweep() {
  cudaFree(partials_);
  cudaEventDestroy(stop_);
  cudaEventDestroy(start_);
  cudaStreamDestroy(stream_);
}

double ReadSweep::seconds(const float* x, std::size_t n, int calls) {
  const std::size_t n4 = n / 4;
  const std::size_t blocks_needed = (n4 + kThreads - 1) / kThreads;
  const unsigned blocks = unsigned(std::max<std::size_t>(1, std::min<std::size_t>(blocks_needed, max_blocks_)));
  cuda_check(cudaEventRecord(start_, stream_), "cudaEventRecord");
  for (int call = 0; call < calls; ++call) {
    read_sweep_kernel<<<blocks, kThreads, 0, stream_>>>(reinterpret_cast<const float4*>(x), n4, x + 4 * n4, int(n % 4),
                                                        partials_);
    cuda_check(cudaGetLastError(), "read_sweep_kernel launch");
  }
  cuda_check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
  cuda_check(cudaEventSynchronize(stop_), "cudaEventSynchronize (read_sweep_kernel)");
  float ms = 0;
  cuda_check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
  return ms * 1e-3 / std::max(calls, 1);
}

}  // namespace tandem_bench

namespace tandem_bench {
namespace {
__global__ void floor_kernel(double* slot) { *slot = 1.0; }
}  // namespace

void floor_call(cudaStream_t stream, void* device_slot, void* pinned_slot) {
  floor_kernel<<<1, 1, 0, stream>>>(static_cast<double*>(device_slot));
  cuda_check(cudaGetLastError(), "floor_kernel");
  cuda_check(cudaMemcpyAsync(pinned_slot, device_slot, 8, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}
}  // namespace tandem_bench
