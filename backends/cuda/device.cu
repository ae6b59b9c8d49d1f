// The CUDA device layer: errors, scratch memory, the device's SM count and compute capability (each queried
// once per device), the dynamic shared-memory opt-in, the availability probe.
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "backends/cuda/common.cuh"
#include "backends/cuda/module.hpp"

namespace tandem::cuda {

int current_device() {
  int device = 0;
  TANDEM_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

int multiprocessor_count() {
  static std::mutex mutex;
  static std::map<int, int> cache;
  const int device = current_device();
  std::lock_guard<std::mutex> lock(mutex);
  int& sms = cache[device];
  if (sms == 0) TANDEM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

namespace {
struct ComputeCapability {
  int major, minor;
};
ComputeCapability compute_capability() {
  static std::mutex mutex;
  static std::map<int, ComputeCapability> cache;
  const int device = current_device();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(device);
  if (it == cache.end()) {  // cached only once both queries have succeeded
    ComputeCapability cc{0, 0};
    TANDEM_CUDA_CHECK(cudaDeviceGetAttribute(&cc.major, cudaDevAttrComputeCapabilityMajor, device));
    TANDEM_CUDA_CHECK(cudaDeviceGetAttribute(&cc.minor, cudaDevAttrComputeCapabilityMinor, device));
    it = cache.emplace(device, cc).first;
  }
  return it->second;
}
}  // namespace

bool device_is_sm90() {
  const ComputeCapability cc = compute_capability();
  return cc.major == 9 && cc.minor == 0;
}

void allow_dynamic_shared_memory(const void* kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return;
  static std::mutex mutex;
  static std::set<std::pair<const void*, int>> done;
  const int device = current_device();
  std::lock_guard<std::mutex> lock(mutex);
  if (done.count({kernel, device})) return;
  TANDEM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  done.insert({kernel, device});
}

void throw_cuda_error(cudaError_t err, const char* stmt, const char* file, int line) {
  // Clear a non-sticky error (e.g. out of memory) so that the engine stays usable afterwards.
  (void)cudaGetLastError();
  std::string msg = std::string("CUDA error ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ") in `" +
                    stmt + "` at " + file + ":" + std::to_string(line);
  if (err == cudaErrorMemoryAllocation)
    msg += "; the GPU is out of memory: free buffers or use smaller inputs (the engine stays usable)";
  throw Error(msg);
}

bool is_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  TANDEM_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

namespace {
constexpr std::size_t kBytesByValue = 1024;
struct BytesByValue {
  unsigned char at[kBytesByValue];
};
__global__ void store_bytes(unsigned char* dst, BytesByValue src, unsigned count) {
  for (unsigned i = threadIdx.x; i < count; i += blockDim.x) dst[i] = src.at[i];
}
}  // namespace

void upload_by_value(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  if (!is_capturing(stream)) {  // (a copy from pageable memory: staged before the call returns)
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
    return;
  }
  for (std::size_t at = 0; at < bytes; at += kBytesByValue) {
    const std::size_t count = std::min(kBytesByValue, bytes - at);
    BytesByValue piece{};
    std::memcpy(piece.at, static_cast<const unsigned char*>(src) + at, count);
    store_bytes<<<1, 256, 0, stream>>>(static_cast<unsigned char*>(dst) + at, piece, unsigned(count));
    TANDEM_CUDA_CHECK_LAUNCH();
  }
}

Workspace::~Workspace() { reset(); }

void Workspace::reset() noexcept {
  release(data_);
  release(counter_);
  data_ = nullptr;
  counter_ = nullptr;
  bytes_ = 0;
}

namespace {
void check_not_capturing(cudaStream_t stream, cudaMemPool_t pool, std::size_t bytes) {
  if (pool && is_capturing(stream))
    throw Error("tandem: the engine needs " + std::to_string(bytes) +
                " bytes of scratch memory while its stream is being captured into a CUDA graph, where it cannot "
                "allocate; make the same calls once before the capture (the engine keeps its scratch memory), "
                "then capture them");
}
}  // namespace

void* Workspace::allocate(std::size_t bytes) {
  check_not_capturing(stream_, pool_, bytes);
  void* p = nullptr;
  if (pool_)
    TANDEM_CUDA_CHECK(cudaMallocFromPoolAsync(&p, bytes, pool_, stream_));
  else
    TANDEM_CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
}

void Workspace::release(void* p) noexcept {
  if (!p) return;
  if (pool_)
    cudaFreeAsync(p, stream_);
  else
    cudaFree(p);
  (void)cudaGetLastError();
}

unsigned* Workspace::counter() {
  if (!counter_) {
    auto* c = static_cast<unsigned*>(allocate(sizeof(unsigned)));
    const cudaError_t err =
        pool_ ? cudaMemsetAsync(c, 0, sizeof(unsigned), stream_) : cudaMemset(c, 0, sizeof(unsigned));
    if (err != cudaSuccess) {
      release(c);
      TANDEM_CUDA_CHECK(err);
    }
    counter_ = c;
  }
  return counter_;
}

void* Workspace::get(std::size_t bytes) {
  if (bytes <= bytes_) return data_;
  // Grow by at least 1.5x so that slowly growing requests do not reallocate every call.
  std::size_t want = std::max(bytes, bytes_ + bytes_ / 2);
  want = (want + 255) / 256 * 256;
  // Free first: in stream order the pool can hand the same memory back to the larger request.
  check_not_capturing(stream_, pool_, want);
  release(data_);
  data_ = nullptr;
  bytes_ = 0;
  data_ = allocate(want);
  bytes_ = want;
  return data_;
}

namespace {
// Launching needs an image for the device: this kernel tells whether the build has one.
__global__ void probe_kernel() {}
}  // namespace

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) (void)cudaGetLastError(), count = 0;
  return count;
}

detail::Probe probe() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    // Without an NVIDIA driver the runtime says "driver version is insufficient": name the likely cause.
    const char* cause = err == cudaErrorInsufficientDriver
                            ? "no NVIDIA driver is loaded, or it is older than the CUDA runtime"
                        : err == cudaErrorNoDevice ? "no NVIDIA GPU is visible"
                                                   : "the CUDA runtime could not start";
    return {true, false, std::string(cause) + " (" + cudaGetErrorString(err) + ")"};
  }
  if (count == 0) return {true, false, "the CUDA runtime reports no GPU"};
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return {true, false, "cannot read the properties of GPU 0"};
  }
  cudaFuncAttributes attr{};
  err = cudaFuncGetAttributes(&attr, probe_kernel);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return {true, false,
            std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) +
                ") cannot run this build's kernels (" + cudaGetErrorString(err) +
                "); rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(p.major) + std::to_string(p.minor)};
  }
  return {true, true, std::string(p.name) + ", sm_" + std::to_string(p.major) + std::to_string(p.minor), count};
}

}  // namespace tandem::cuda
