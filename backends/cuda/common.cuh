// What every CUDA file of tandem shares: error checking that throws tandem::Error, the scratch
// workspace, and the reduction operators with their identities and NaN rules.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "common/backend.hpp"
#include "common/reduce_ops.hpp"
#include "tandem/types.hpp"

namespace tandem::cuda {

using tandem::Dtype;
using tandem::Op;

// Throws tandem::Error with the CUDA message, the failing statement, file and line.
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* stmt, const char* file, int line);

#define TANDEM_CUDA_CHECK(stmt)                                                                               \
  do {                                                                                                        \
    cudaError_t tandem_err_ = (stmt);                                                                         \
    if (tandem_err_ != cudaSuccess) ::tandem::cuda::throw_cuda_error(tandem_err_, #stmt, __FILE__, __LINE__); \
  } while (0)

// After every kernel launch: catches bad launch configurations at once.
#define TANDEM_CUDA_CHECK_LAUNCH() TANDEM_CUDA_CHECK(cudaGetLastError())

// The current device, its number of SMs, and whether it runs sm_90a code: compute capability 9.0 (H100,
// H200). The number of SMs and the compute capability are queried once per device.
int current_device();
int multiprocessor_count();
bool device_is_sm90();

// A kernel needs cudaFuncSetAttribute before it may use more than 48 KB of dynamic shared memory. The
// setting belongs to the kernel on the current device, so it is made once per (kernel, device).
void allow_dynamic_shared_memory(const void* kernel, std::size_t bytes);

// Whether `stream` is being captured into a CUDA graph (then nothing may allocate, wait or copy from
// pageable memory on it).
bool is_capturing(cudaStream_t stream);
// `bytes` of host memory to device memory at dst on `stream`, stream-ordered, the host memory free to change once
// it returns: a cudaMemcpyAsync, or on a stream being captured into a CUDA graph kernel launches that carry the
// bytes in their parameters (1 KiB a launch; for small tables), which the graph keeps (a captured
// cudaMemcpyAsync from the host would read the host memory again at each replay).
void upload_by_value(void* dst, const void* src, std::size_t bytes, cudaStream_t stream);

// Device scratch memory for partial results, reused across calls so that repeated calls do not
// allocate. get() may return the same memory as the previous get(): one user at a time (the backend
// holds a lock around each operation).
//
// A bound Workspace (bind(): the engine's stream and memory pool) grows stream-ordered, with
// cudaFreeAsync / cudaMallocFromPoolAsync on that stream: it neither waits for nor stalls other work on
// the device. Growing while the stream is captured into a CUDA graph throws tandem::Error (run the same
// calls once before capturing). An unbound one (the benchmarks' own) uses cudaMalloc / cudaFree.
class Workspace {
 public:
  Workspace() = default;
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  void bind(cudaStream_t stream, cudaMemPool_t pool) {
    stream_ = stream;
    pool_ = pool;
  }
  // At least `bytes` of device memory, 256-byte aligned; grows, never shrinks.
  void* get(std::size_t bytes);
  // Frees everything (stream-ordered when bound); the next get() allocates again.
  void reset() noexcept;
  // A device counter of its own (not part of get()'s memory), zero when first handed out (zeroed on the
  // stream, ordered before any use). A kernel that uses it must leave it at zero when it finishes
  // (single_pass's atomicInc wraps back to 0), so no call needs a memset first.
  unsigned* counter();

 private:
  void* allocate(std::size_t bytes);
  void release(void* p) noexcept;

  cudaStream_t stream_ = nullptr;
  cudaMemPool_t pool_ = nullptr;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  unsigned* counter_ = nullptr;
};

// ---- Reduction operators (common/reduce_ops.hpp, shared with the CPU backend) ------------------
// Each has In, Acc, identity(), load() and combine(); combine() carries the NaN and +-0.0 rules.
using detail::is_nan;
using detail::MaxOp;
using detail::MinOp;
using detail::SumOp;

}  // namespace tandem::cuda
