// The CUDA backend: one device, one stream and one cuBLAS handle per engine, pooled scratch and
// staging memory, and the kernel ladders of backends/cuda/reduce/ and backends/cuda/matmul/.
// Host inputs are staged into device memory and results copied back; Buffers are used in place.
#include <cublas_v2.h>

#include <cstring>
#include <mutex>

#include "backends/cuda/common.cuh"
#include "backends/cuda/kernels.hpp"
#include "engine/registry.hpp"

namespace tandem::cuda {
namespace {

using detail::MatmulArgs;
using detail::ReduceArgs;

class CudaBackend final : public detail::BackendImpl {
 public:
  CudaBackend() {
    auto probe = detail::cuda_probe();
    if (!probe.usable)
      throw Error("the CUDA backend has no usable GPU: " + probe.reason +
                  ". Use the CPU backend (TANDEM_BACKEND=cpu or Backend::cpu), or TANDEM_BACKEND=auto to pick "
                  "the GPU only when one is present");
    TANDEM_CUDA_CHECK(cudaGetDevice(&device_));
    TANDEM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    TANDEM_CUDA_CHECK(cudaMallocHost(&host_result_, 64));
  }
  ~CudaBackend() override {
    if (cublas_) cublasDestroy(cublas_);
    if (host_result_) cudaFreeHost(host_result_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  Backend kind() const noexcept override { return Backend::cuda; }

  DeviceInfo device() const override {
    cudaDeviceProp p{};
    TANDEM_CUDA_CHECK(cudaGetDeviceProperties(&p, device_));
    int mem_clock_khz = 0, bus_bits = 0;
    cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, device_);
    cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device_);
    (void)cudaGetLastError();
    DeviceInfo d;
    d.name = p.name;
    d.compute_units = p.multiProcessorCount;
    d.memory_bytes = p.totalGlobalMem;
    // Double data rate: two transfers per clock.
    d.peak_bandwidth_gbs = 2.0 * mem_clock_khz * 1e3 * (bus_bits / 8) / 1e9;
    d.details = "sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " + std::to_string(p.l2CacheSize >> 20) +
                " MiB L2, " + std::to_string(p.sharedMemPerMultiprocessor >> 10) + " KiB shared memory per SM";
    return d;
  }

  std::vector<KernelInfo> reduce_kernel_info() const override { return reduce_stage_info(); }
  std::vector<KernelInfo> matmul_kernel_info() const override { return matmul_stage_info(); }

  void reduce(const ReduceArgs& a, std::string_view kernel, void* result) override {
    std::lock_guard lock(mutex_);
    TANDEM_CUDA_CHECK(cudaSetDevice(device_));
    const std::size_t elem = size_of(a.dtype);
    const void* x = a.data;
    if (!a.resident) {
      const std::size_t bytes = std::size_t((a.n - 1) * a.stride + 1) * elem;
      void* staged = staging_a_.get(bytes);
      TANDEM_CUDA_CHECK(cudaMemcpyAsync(staged, a.data, bytes, cudaMemcpyHostToDevice, stream_));
      x = staged;
    }
    void* d_result = result_.get(64);
    const bool float_sum = a.op == Op::sum && !info(a.dtype).integer;
    if (a.deterministic && float_sum) {
      reduce_canonical_sum(a.dtype, x, a.n, a.stride, d_result, scratch_, stream_);
    } else {
      std::string stage = kernel == "auto" ? auto_reduce_stage(a.op, a.dtype, a.n, a.stride) : std::string(kernel);
      cuda::reduce(stage, a.op, a.dtype, x, a.n, a.stride, d_result, scratch_, stream_);
    }
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(host_result_, d_result, 8, cudaMemcpyDeviceToHost, stream_));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    // Integer sums come back as uint64 (wrapping): the same 8 bytes as the int64 result.
    const std::size_t out_bytes = a.op == Op::sum ? size_of(info(a.dtype).sum_result) : elem;
    std::memcpy(result, host_result_, out_bytes);
  }

  void matmul(const MatmulArgs& g, std::string_view kernel) override {
    std::lock_guard lock(mutex_);
    TANDEM_CUDA_CHECK(cudaSetDevice(device_));
    const std::size_t e = size_of(g.dtype);
    const void* a = g.a;
    const void* b = g.b;
    void* c = g.c;
    std::int64_t lda = g.lda, ldb = g.ldb, ldc = g.ldc;
    if (!g.resident) {
      // Host matrices: stage A and B compactly (ld = cols); compute into a compact C and copy its
      // rows back with the caller's ld, so C's padding is never touched.
      if (g.k > 0) {
        void* da = staging_a_.get(std::size_t(g.m * g.k) * e);
        void* db = staging_b_.get(std::size_t(g.k * g.n) * e);
        TANDEM_CUDA_CHECK(
            cudaMemcpy2DAsync(da, g.k * e, g.a, g.lda * e, g.k * e, g.m, cudaMemcpyHostToDevice, stream_));
        TANDEM_CUDA_CHECK(
            cudaMemcpy2DAsync(db, g.n * e, g.b, g.ldb * e, g.n * e, g.k, cudaMemcpyHostToDevice, stream_));
        a = da;
        b = db;
      }
      c = staging_c_.get(std::size_t(g.m * g.n) * e);
      lda = g.k;
      ldb = g.n;
      ldc = g.n;
    }
    if (g.k == 0) {
      TANDEM_CUDA_CHECK(cudaMemset2DAsync(c, ldc * e, 0, g.n * e, g.m, stream_));
    } else {
      // register_tiled computes each element as one fma chain over k: the canonical order.
      std::string stage = g.deterministic    ? std::string("register_tiled")
                          : kernel == "auto" ? auto_matmul_stage(g.dtype, g.m, g.k, g.n)
                                             : std::string(kernel);
      if (!cublas_) create_cublas();
      cuda::matmul(stage, g.dtype, a, b, c, g.m, g.k, g.n, lda, ldb, ldc, scratch_, cublas_, stream_);
    }
    if (!g.resident)
      TANDEM_CUDA_CHECK(cudaMemcpy2DAsync(g.c, g.ldc * e, c, ldc * e, g.n * e, g.m, cudaMemcpyDeviceToHost, stream_));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void* allocate(std::size_t bytes) override {
    std::lock_guard lock(mutex_);
    TANDEM_CUDA_CHECK(cudaSetDevice(device_));
    void* p = nullptr;
    TANDEM_CUDA_CHECK(cudaMalloc(&p, bytes));
    return p;
  }
  void deallocate(void* p) noexcept override {
    std::lock_guard lock(mutex_);
    cudaSetDevice(device_);
    cudaFree(p);
    (void)cudaGetLastError();
  }
  void copy_to_backend(void* dst, const void* src, std::size_t bytes) override {
    std::lock_guard lock(mutex_);
    TANDEM_CUDA_CHECK(cudaSetDevice(device_));
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override {
    std::lock_guard lock(mutex_);
    TANDEM_CUDA_CHECK(cudaSetDevice(device_));
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

 private:
  void create_cublas() {
    cublasStatus_t s = cublasCreate(&cublas_);
    if (s != CUBLAS_STATUS_SUCCESS) {
      cublas_ = nullptr;
      throw Error(std::string("cublasCreate failed: ") + cublasGetStatusName(s));
    }
  }

  std::mutex mutex_;  // one operation at a time per engine; other engines have their own stream
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  void* host_result_ = nullptr;  // pinned, for the 8-byte reduction result
  Workspace scratch_, result_, staging_a_, staging_b_, staging_c_;
};

}  // namespace
}  // namespace tandem::cuda

namespace tandem::detail {
std::shared_ptr<BackendImpl> make_cuda_backend() { return std::make_shared<cuda::CudaBackend>(); }
}  // namespace tandem::detail
