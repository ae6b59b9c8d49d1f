// A non-blocking CUDA stream with two events: seconds(run) times the work run() enqueues on it (manual
// time for Google Benchmark). bench_cuda's form and 16-bit families give it to their engines.
#pragma once

#include <cuda_runtime.h>

#include "benchmarks/read_sweep.hpp"

namespace tandem_bench {

struct StreamTimer {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  StreamTimer() {
    cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    cuda_check(cudaEventCreate(&start), "cudaEventCreate");
    cuda_check(cudaEventCreate(&stop), "cudaEventCreate");
  }
  ~StreamTimer() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaStreamDestroy(stream);
  }
  StreamTimer(const StreamTimer&) = delete;
  StreamTimer& operator=(const StreamTimer&) = delete;
  // Seconds of one run() on the stream.
  template <class F>
  double seconds(F&& run) {
    cuda_check(cudaEventRecord(start, stream), "cudaEventRecord");
    run();
    cuda_check(cudaEventRecord(stop, stream), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    return ms * 1e-3;
  }
};

}  // namespace tandem_bench
