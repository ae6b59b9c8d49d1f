// The CUDA module's table (common/module_api.hpp): the backend's probe and factory, the GPU count for
// engines over several GPUs, the stream operations the Python module needs for device arrays (it links
// no CUDA library itself), and the stage tables, read without a GPU.
#include <string>

#include "backends/cuda/common.cuh"
#include "backends/cuda/kernels.hpp"
#include "backends/cuda/module.hpp"

namespace tandem::cuda {
namespace {

cudaStream_t as_stream(std::uintptr_t s) {
  return s == 1 ? cudaStreamLegacy : s == 2 ? cudaStreamPerThread : reinterpret_cast<cudaStream_t>(s);
}

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw Error(std::string("tandem: ") + what + " failed: " + cudaGetErrorString(err));
}

void order_after(std::uintptr_t producer, int producer_device, std::uintptr_t consumer) {
  if (producer == consumer) return;
  // The event is made and recorded on the producer's GPU (an event and the stream it is recorded on must
  // share one; the null stream means that GPU's default stream); waiting on it works from any GPU.
  int current = 0;
  check(cudaGetDevice(&current), "asking for the current GPU");
  if (producer_device >= 0 && producer_device != current)
    check(cudaSetDevice(producer_device), "selecting the array's GPU");
  cudaEvent_t ev = nullptr;
  cudaError_t err = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  if (err == cudaSuccess) err = cudaEventRecord(ev, as_stream(producer));
  if (err == cudaSuccess) err = cudaStreamWaitEvent(as_stream(consumer), ev, 0);
  const cudaError_t destroyed = ev ? cudaEventDestroy(ev) : cudaSuccess;  // (released once the wait is done)
  const cudaError_t restored =
      producer_device >= 0 && producer_device != current ? cudaSetDevice(current) : cudaSuccess;
  check(err, "ordering tandem's stream after the array's stream");
  check(destroyed, "releasing an event");
  check(restored, "restoring the current GPU");
}

int device_of(const void* p) {
  cudaPointerAttributes attr{};
  const bool known = cudaPointerGetAttributes(&attr, p) == cudaSuccess;
  (void)cudaGetLastError();
  return known ? attr.device : -1;
}

std::vector<KernelInfo> device_free_matmul_stage_info() { return matmul_stage_info(false); }

}  // namespace

// The stage tables come from the ladders' own tables (reduce/stages.cuh, matmul/dispatch.cu), which
// touch no device: they are read where no GPU is present.
extern const detail::CudaModule module_table{.probe = &probe,
                                             .make = &make_backend,
                                             .device_count = &device_count,
                                             .order_after = &order_after,
                                             .device_of = &device_of,
                                             .reduce_kernel_info = &reduce_stage_info,
                                             .matmul_kernel_info = &device_free_matmul_stage_info};

}  // namespace tandem::cuda
