// The GPU read-sweep baseline of bench_cuda (read_sweep.cu): the plain read of a float array that every
// CUDA reduction is compared with (sweep_bytes_per_second), timed with CUDA events on its own stream.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace tandem_bench {

// Throws std::runtime_error naming the call and the CUDA error when err is not cudaSuccess.
void cuda_check(cudaError_t err, const char* what);

class ReadSweep {
 public:
  // Throws std::runtime_error when the kernel cannot run on the current GPU (no image for it).
  ReadSweep();
  ~ReadSweep();
  ReadSweep(const ReadSweep&) = delete;
  ReadSweep& operator=(const ReadSweep&) = delete;

  // Seconds for one sweep over n floats at device pointer x (16-byte aligned), by CUDA events. With
  // calls > 1, `calls` sweeps run back to back between the two events and the time of one is returned
  // (the kernel-level benchmarks of bench_cuda are timed the same way).
  double seconds(const float* x, std::size_t n, int calls = 1);

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  float* partials_ = nullptr;  // one per block, so that the reads cannot be optimised away
  unsigned max_blocks_ = 0;    // as many blocks as are resident on the GPU at once
};

}  // namespace tandem_bench

namespace tandem_bench {
// The floor of a synchronous engine call: one tiny kernel writing 8 bytes, their copy to pinned host
// memory, and a stream synchronisation (read_sweep.cu).
void floor_call(cudaStream_t stream, void* device_slot, void* pinned_slot);
}  // namespace tandem_bench
