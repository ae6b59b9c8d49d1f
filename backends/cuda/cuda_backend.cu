// The CUDA backend: one device, one stream (the caller's, or its own non-blocking one), a memory pool
// for stream-ordered allocation, one cuBLAS handle, pinned staging memory, and the kernel ladders of
// backends/cuda/reduce/ and backends/cuda/matmul/.
//
// Everything the engine does is ordered on its stream: kernels, copies, the zeroing of counters, the
// growth of scratch memory (cudaMallocFromPoolAsync / cudaFreeAsync) and the freeing of Buffers; nothing
// touches the legacy default stream or synchronises the device. The caller's current device is restored
// after every call (DeviceGuard). Calls that return a value to the host wait for the stream; *_into
// calls (ReduceArgs::out) and matmul on Buffers return once their work is enqueued.
//
// Host inputs stream through two pinned staging buffers (backends/cuda/staging.cuh) in pieces of
// kStagingBytes: the host gathers piece i + 1 (all cores, common/host_copy.hpp) while piece i is copied
// to the GPU, and each piece is reduced as it arrives, so device memory stays bounded whatever the input's size or
// stride. With kernel "auto", the CPU's cores meanwhile reduce pieces from the back of the input in place
// (common/host_split.hpp, common/host_reduce.hpp): the staged path is bound by the
// host's copy into pinned memory, and the CPU reads its memory faster than that. The pieces' results
// are combined in order; in deterministic mode both sides give the canonical chunk values, bit for bit.
// Host matrices go through the same slots (A and B up, C down), row pieces at a time.
#include <cublas_v2.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "backends/cuda/common.cuh"
#include "backends/cuda/kernels.hpp"
#include "backends/cuda/module.hpp"
#include "backends/cuda/reduce/per_matrix.cuh"
#include "backends/cuda/staging.cuh"
#include "common/canonical.hpp"
#include "common/dispatch.hpp"
#include "common/host_copy.hpp"
#include "common/host_reduce.hpp"
#include "common/host_split.hpp"

namespace tandem::cuda {
namespace {

using detail::MatmulArgs;
using detail::ReduceArgs;

// Makes `device` current for the scope of a call and restores the caller's device afterwards.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    TANDEM_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) TANDEM_CUDA_CHECK(cudaSetDevice(device));
    device_ = device;
  }
  // For destructors: never throws. An engine in static storage is destroyed during exit, when the CUDA runtime
  // may already be unloading (cudaErrorCudartUnloading); then there is nothing left to free.
  DeviceGuard(int device, std::nothrow_t) noexcept {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = device;
    if (previous_ != device) cudaSetDevice(device);
    device_ = device;
  }
  ~DeviceGuard() {
    if (previous_ != device_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0, device_ = 0;
};

// The result of a reduction (its accumulator, in device memory) into a Buffer element, as
// detail::store_result writes it. One thread.
template <Op O, class T, class Acc>
__global__ void store_result_kernel(const Acc* acc, std::int64_t n, bool divide, void* out) {
  detail::store_result<O, T>(*acc, n, divide, out, 0);
}

class CudaBackend final : public detail::BackendImpl {
 public:
  explicit CudaBackend(const EngineOptions& options) : device_(options.device) {
    auto probe = cuda::probe();
    if (!probe.usable)
      throw Error(ErrorKind::failure, Arg::backend, Message("the CUDA backend has no usable GPU: ", probe.reason),
                  Message("use the CPU backend (", Setting{Arg::backend, "cpu"},
                          " or TANDEM_BACKEND=cpu), or TANDEM_BACKEND=auto to pick the GPU only when one is present"));
    int count = 0;
    TANDEM_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (device_ < 0 || device_ >= count)
      throw Error(ErrorKind::failure, Arg::device,
                  Message("CUDA device ", device_, " does not exist: this machine has ", count,
                          " GPU(s), numbered 0 to ", count - 1),
                  Message("set ", Arg::device, " to one of them"));
    DeviceGuard guard(device_);
    if (options.stream) {
      stream_ = static_cast<cudaStream_t>(options.stream);
      int stream_device = -1;
      TANDEM_CUDA_CHECK(cudaStreamGetDevice(stream_, &stream_device));
      if (stream_device != device_)
        throw Error(ErrorKind::failure, Arg::stream,
                    Message(Arg::stream, " belongs to GPU ", stream_device, " but the engine runs on GPU ", device_),
                    Message("pass a stream of that GPU or set ", Setting{Arg::device, std::to_string(stream_device)}));
    } else {
      TANDEM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
      own_stream_ = true;
    }
    // The engine's own pool: freed memory stays cached for the next allocation (no device-wide
    // synchronisation, no cudaMalloc per call), without changing the device's default pool.
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device_;
    TANDEM_CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
    std::uint64_t keep = UINT64_MAX;
    TANDEM_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
    for (Workspace* ws : workspaces()) ws->bind(stream_, pool_);
    staging_.bind(stream_);
    TANDEM_CUDA_CHECK(cudaMallocHost(&host_result_, 64));
  }

  ~CudaBackend() override {
    DeviceGuard guard(device_, std::nothrow);
    cudaStreamSynchronize(stream_);
    if (cublas_) cublasDestroy(cublas_);
    staging_.release();
    if (host_result_) cudaFreeHost(host_result_);
    // The workspaces free stream-ordered; the pool goes once the stream has finished.
    for (Workspace* ws : workspaces()) ws->reset();
    cudaStreamSynchronize(stream_);
    if (pool_) cudaMemPoolDestroy(pool_);
    if (own_stream_) cudaStreamDestroy(stream_);
    (void)cudaGetLastError();
  }

  Backend kind() const noexcept override { return Backend::cuda; }
  int device_index() const noexcept override { return device_; }
  void* native_stream() const noexcept override { return stream_; }
  std::vector<unsigned char> make_rank_group_id() override { return detail::nccl_unique_id(); }
  std::unique_ptr<detail::RankCollectives> join_rank_group(const std::vector<unsigned char>& id, int rank,
                                                           int size) override {
    return detail::make_nccl_ranks(device_, stream_, id, rank, size);
  }

  DeviceInfo device() const override {
    cudaDeviceProp p{};
    TANDEM_CUDA_CHECK(cudaGetDeviceProperties(&p, device_));
    int mem_clock_khz = 0, bus_bits = 0;
    cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, device_);
    cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device_);
    (void)cudaGetLastError();
    DeviceInfo d;
    d.name = p.name;
    d.index = device_;
    d.compute_units = p.multiProcessorCount;
    d.memory_bytes = p.totalGlobalMem;
    // Double data rate: two transfers per clock.
    d.peak_bandwidth_gbs = 2.0 * mem_clock_khz * 1e3 * (bus_bits / 8) / 1e9;
    d.details = "sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " + std::to_string(p.l2CacheSize >> 20) +
                " MiB L2, " + std::to_string(p.sharedMemPerMultiprocessor >> 10) + " KiB shared memory per SM";
    return d;
  }

  std::vector<KernelInfo> reduce_kernel_info() const override { return reduce_stage_info(); }
  std::vector<KernelInfo> matmul_kernel_info() const override {
    DeviceGuard guard(device_);  // (runs_here: on this engine's GPU)
    return matmul_stage_info(true);
  }

  void reduce(const ReduceArgs& a, void* result) override {
    std::lock_guard lock(mutex_);
    DeviceGuard guard(device_);
    if (!a.out || !a.resident)
      require_not_capturing(a.out ? "a reduction of host data" : "a reduction returning its value");
    if (a.out && a.n == 0) {  // the op's EmptyRule (the engine rejects an empty input of the others): 0 or 1
      fill_empty_results(a.op, a.dtype, a.out, 1, stream_);
      return;
    }
    // A resident input: the stage is worked out once, here (auto's choice for the whole input).
    const std::size_t stage = reduce_stage(a.kernel, a.op, a.dtype, a.n, a.stride);
    const bool canonical = a.deterministic && detail::canonical::in_canonical_order(a.op, a.dtype);
    if (a.out && a.resident && !canonical && reduce_stores_into(stage)) {
      // One launch: the stage stores the result into the Buffer element itself.
      finish_on_error(
          [&] { reduce_into(stage, a.op, a.dtype, a.data, a.n, a.stride, a.out, a.divide, scratch_, stream_); });
      return;
    }
    void* d_result = result_.get(64);
    finish_on_error([&] {
      if (a.resident)
        reduce_resident(a, stage, a.data, a.n, a.stride, d_result);
      else
        reduce_host(a, d_result);
    });
    if (a.out) return store_into(a, d_result);
    // The accumulator, converted to the engine's result (integer sums: uint64 wraps to int64; argmin /
    // argmax: the index).
    visit_acc(a, [&]<Op O, class T, class Acc>() {
      TANDEM_CUDA_CHECK(cudaMemcpyAsync(host_result_, d_result, sizeof(Acc), cudaMemcpyDeviceToHost, stream_));
      TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));
      Acc acc;
      std::memcpy(&acc, host_result_, sizeof acc);
      const auto v = detail::result_of<O, T>(acc);
      std::memcpy(result, &v, sizeof v);
    });
  }

  void matmul(const MatmulArgs& g) override {
    std::lock_guard lock(mutex_);
    DeviceGuard guard(device_);
    if (!g.resident) require_not_capturing("a matmul of host matrices");
    // The stage: the one named, or auto's for the problem the GPU gets (in deterministic mode the engine
    // took only a canonical stage, or auto, whose choice is then the canonical stage).
    auto stage_for = [&](const MatmulArgs& on_gpu) {
      return g.kernel.is_auto() ? auto_matmul_stage(on_gpu) : std::size_t(g.kernel.stage);
    };
    const cuda::MatmulWorkspaces forms{form_a_, form_b_, form_c_, wide_a_, wide_b_, mixed_a_, mixed_b_};
    finish_on_error([&] {
      // (made on the first product; a stream being captured cannot make it: the stages that call cuBLAS refuse
      // then, cublas_handle, and the others run without it)
      if (!cublas_ && !is_capturing(stream_)) create_cublas();
      if (g.resident)
        return cuda::matmul(stage_for(g), g, scratch_, forms, cublas_, stream_);  // stream-ordered, no wait
      // Host matrices, one entry at a time: stage A and B as stored, compactly (ld = stored cols; an
      // entry of stride 0 once), and C when beta reads it; compute into a compact C and copy its rows
      // back with the caller's ld, so C's padding is never touched.
      // (e, eb: A's and B's element sizes; ec: C's.)
      const std::size_t e = size_of(g.dtype), eb = size_of(g.b_type()), ec = size_of(info(g.dtype).compute);
      const std::int64_t a_rows = g.trans_a ? g.k : g.m, a_cols = g.trans_a ? g.m : g.k;
      const std::int64_t b_rows = g.trans_b ? g.n : g.k, b_cols = g.trans_b ? g.k : g.n;
      void* da = staging_a_.get(std::size_t(g.m * g.k) * e);
      void* db = staging_b_.get(std::size_t(g.k * g.n) * eb);
      void* dc = staging_c_.get(std::size_t(g.m * g.n) * ec);
      for (std::int64_t i = 0; i < g.batch; ++i) {
        // (k == 0: A and B are empty, null pointers that are neither offset nor read.)
        const auto* a = g.k > 0 ? static_cast<const char*>(g.a) + i * g.stride_a * std::int64_t(e) : nullptr;
        const auto* b = g.k > 0 ? static_cast<const char*>(g.b) + i * g.stride_b * std::int64_t(eb) : nullptr;
        auto* c = static_cast<char*>(g.c) + i * g.stride_c * std::int64_t(ec);
        if (g.k > 0 && (i == 0 || g.stride_a != 0)) staging_.upload_rows(da, a, a_rows, a_cols, g.lda, e);
        if (g.k > 0 && (i == 0 || g.stride_b != 0)) staging_.upload_rows(db, b, b_rows, b_cols, g.ldb, eb);
        if (g.beta != 0) staging_.upload_rows(dc, c, g.m, g.n, g.ldc, ec);
        MatmulArgs one = g;
        one.a = da, one.b = db, one.c = dc;
        one.lda = a_cols, one.ldb = b_cols, one.ldc = g.n;
        one.resident = true;
        one.batch = 1, one.stride_a = one.stride_b = one.stride_c = 0;
        cuda::matmul(stage_for(one), one, scratch_, forms, cublas_, stream_);
        staging_.download_rows(c, g.ldc, dc, g.m, g.n, ec);  // waits: C is complete on return
      }
    });
  }

  // A grouped product of Buffers in one launch (matmul/dispatch.cu, matmul_grouped), where a Hopper rung takes
  // it; no wait (its group table goes in launch parameters: a CUDA graph keeps it).
  bool matmul_grouped(const MatmulArgs& g, std::span<const std::int64_t> group_rows) override {
    std::lock_guard lock(mutex_);
    DeviceGuard guard(device_);
    bool taken = false;
    finish_on_error([&] { taken = cuda::matmul_grouped(g, group_rows, scratch_, stream_); });
    return taken;
  }

  // Per-row / per-column reductions (backends/cuda/reduce/per_matrix.cu). Host matrices are staged compactly
  // (upload_rows; ld 0, one row repeated: that row once, read with ld 0 there too), their results come back
  // before the call returns.
  void reduce_matrix(const detail::MatrixReduceArgs& a, void* out) override {
    std::lock_guard lock(mutex_);
    DeviceGuard guard(device_);
    if (!a.resident) require_not_capturing("a per-row / per-column reduction of host data");
    finish_on_error([&] {
      if (a.resident) return cuda::reduce_matrix(a, a.data, a.ld, out, scratch_, stream_);
      const std::int64_t rows = a.ld == 0 ? std::min<std::int64_t>(a.rows, 1) : a.rows;
      const std::size_t e = size_of(a.dtype), elements = std::size_t(rows * a.cols);
      void* dx = staging_c_.get(std::max<std::size_t>(elements * e, 256));
      if (elements > 0) staging_.upload_rows(dx, a.data, rows, a.cols, a.ld == 0 ? a.cols : a.ld, e);
      const std::size_t bytes = std::size_t(a.per == Per::row ? a.rows : a.cols) * matrix_result_size(a);
      void* d_out = result_.get(std::max<std::size_t>(bytes, 256));
      cuda::reduce_matrix(a, dx, a.ld == 0 ? 0 : a.cols, d_out, scratch_, stream_);
      TANDEM_CUDA_CHECK(cudaMemcpyAsync(out, d_out, bytes, cudaMemcpyDeviceToHost, stream_));
      TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    });
  }

  // Host data: the CPU's chunk values (bitwise the same by canonical.hpp); resident data: the GPU's,
  // copied back.
  void canonical_chunk_values(Op op, Dtype dtype, const void* data, std::int64_t n, std::int64_t stride, bool resident,
                              void* host_values) override {
    if (!resident) return detail::cpu_canonical_chunk_values(op, dtype, data, n, stride, host_values);
    std::lock_guard lock(mutex_);
    DeviceGuard guard(device_);
    require_not_capturing("a deterministic sum across MPI ranks");
    finish_on_error([&] {
      const std::size_t bytes = std::size_t(detail::canonical::chunk_count(n)) * size_of(info(dtype).compute);
      void* d_values = result_.get(std::max<std::size_t>(bytes, 256));
      reduce_canonical_chunk_values(op, dtype, data, n, stride, d_values, stream_);
      const bool pinned = bytes <= kStagingBytes;  // (a pageable copy of a MiB costs a lot more)
      if (pinned) staging_.ensure();
      TANDEM_CUDA_CHECK(
          cudaMemcpyAsync(pinned ? staging_.slot(0) : host_values, d_values, bytes, cudaMemcpyDeviceToHost, stream_));
      TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));
      if (pinned) std::memcpy(host_values, staging_.slot(0), bytes);
    });
  }

  void canonical_chunk_values_resident(Op op, Dtype dtype, const void* data, std::int64_t n, std::int64_t stride,
                                       void* values) override {
    std::lock_guard lock(mutex_);
    DeviceGuard guard(device_);
    reduce_canonical_chunk_values(op, dtype, data, n, stride, values, stream_);
  }

  // where= and var / std of Buffers: the engine's elementwise pass (backends/cuda/select.cu), no wait.
  void select(const detail::SelectArgs& a) override {
    std::lock_guard lock(mutex_);
    DeviceGuard guard(device_);
    finish_on_error([&] { cuda::select(a, stream_); });
  }

  // Top-k and argsort of Buffers (backends/cuda/topk.cu, sort_lines.cu), no wait.
  bool topk(const detail::TopkArgs& a) override {
    std::lock_guard lock(mutex_);
    DeviceGuard guard(device_);
    // (sort_lines: CUB's segmented sort reads on the host how it splits the lines)
    if (a.argsort || a.k > kTopkSelectMaxK) require_not_capturing("argsort, or topk past k = 1024, of Buffers");
    bool taken = false;
    finish_on_error([&] { taken = cuda::topk(a, scratch_, stream_); });
    return taken;
  }

  void synchronize() override {
    std::lock_guard lock(mutex_);
    DeviceGuard guard(device_);
    require_not_capturing("synchronize()");
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void check_external(const void* p, std::size_t bytes) const override {
    cudaPointerAttributes attr{};
    const cudaError_t err = cudaPointerGetAttributes(&attr, p);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      throw Error(std::string("wrap: cannot query the pointer (") + cudaGetErrorString(err) + ")");
    }
    const bool device_memory = attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
    if (!device_memory)
      throw Error(std::string("wrap: the pointer is ") +
                  (attr.type == cudaMemoryTypeHost ? "pinned host memory" : "host memory (not known to CUDA)") +
                  ", but a CUDA engine wraps device memory of its GPU (" + std::to_string(device_) +
                  "); pass a cudaMalloc'd pointer, or reduce host data with the span overloads (" +
                  std::to_string(bytes) + " bytes)");
    if (attr.type == cudaMemoryTypeDevice && attr.device != device_)
      throw Error(
          ErrorKind::failure, Arg::none,
          Message("wrap: the pointer is device memory of GPU ", attr.device, ", but this engine runs on GPU ", device_),
          Message("wrap it with an engine of that GPU (", Arg::device, ")"));
  }

  void* allocate(std::size_t bytes) override {
    std::lock_guard lock(mutex_);
    DeviceGuard guard(device_);
    require_not_capturing("allocating a Buffer");
    void* p = nullptr;
    TANDEM_CUDA_CHECK(cudaMallocFromPoolAsync(&p, bytes, pool_, stream_));
    // The memory is usable from any stream once the call returns (applications use Buffer::data()).
    const cudaError_t err = cudaStreamSynchronize(stream_);
    if (err != cudaSuccess) {
      cudaFreeAsync(p, stream_);
      TANDEM_CUDA_CHECK(err);
    }
    return p;
  }
  void deallocate(void* p) noexcept override {
    std::lock_guard lock(mutex_);
    int previous = 0;
    cudaGetDevice(&previous);
    if (previous != device_) cudaSetDevice(device_);
    cudaFreeAsync(p, stream_);  // after the engine's work on it; other streams' work is the caller's to order
    if (previous != device_) cudaSetDevice(previous);
    (void)cudaGetLastError();
  }
  void copy_to_backend(void* dst, const void* src, std::size_t bytes) override {
    std::lock_guard lock(mutex_);
    DeviceGuard guard(device_);
    require_not_capturing("Buffer::upload");
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override {
    std::lock_guard lock(mutex_);
    DeviceGuard guard(device_);
    require_not_capturing("Buffer::download");
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

 private:
  void require_not_capturing(const char* what) const {
    if (is_capturing(stream_))
      throw Error(std::string("tandem: ") + what +
                  " has to wait for the GPU, which a stream being captured into a CUDA graph cannot do; inside "
                  "the captured region use Buffers and the *_into calls (results stay in a Buffer), and call "
                  "synchronize() after the graph ran");
  }

  // Runs `enqueue`; if it throws after work was queued, waits for the stream first, so that no queued
  // copy still reads the caller's memory when the exception reaches the caller.
  template <class F>
  void finish_on_error(F&& enqueue) {
    try {
      enqueue();
    } catch (...) {
      if (!is_capturing(stream_)) cudaStreamSynchronize(stream_);
      (void)cudaGetLastError();
      throw;
    }
  }

  // x in device memory: one reduction into d_result (Acc of the op), by `stage` (or in deterministic mode
  // the canonical order, for the ops that have one).
  void reduce_resident(const ReduceArgs& a, std::size_t stage, const void* x, std::int64_t n, std::int64_t stride,
                       void* d_result) {
    if (a.deterministic && detail::canonical::in_canonical_order(a.op, a.dtype))
      reduce_canonical_sum(a.op, a.dtype, x, n, stride, d_result, scratch_, stream_);
    else
      cuda::reduce(stage, a.op, a.dtype, x, n, stride, d_result, scratch_, stream_);
  }

  // x in host memory, in pieces through the pinned staging buffers (see the top of the file). With
  // kernel "auto" and more than one piece, the CPU's cores reduce pieces from the back of x while this
  // thread streams pieces from the front to the GPU, until the two meet (HostSplit).
  void reduce_host(const ReduceArgs& a, void* d_result) {
    const std::size_t elem = size_of(a.dtype);
    const std::int64_t piece = std::int64_t(kStagingBytes / elem);
    const std::int64_t pieces = (a.n + piece - 1) / piece;
    staging_.ensure();
    auto* device_slots = static_cast<unsigned char*>(staging_a_.get(2 * kStagingBytes));
    auto piece_data = [&](std::int64_t i) {
      return static_cast<const char*>(a.data) + std::size_t(i * piece * a.stride) * elem;
    };
    auto piece_len = [&](std::int64_t i) { return std::min(piece, a.n - i * piece); };
    if (pieces == 1) {
      staging_.stage_piece(0, piece_data(0), a.n, a.stride, elem, device_slots);
      return reduce_resident(a, reduce_stage(a.kernel, a.op, a.dtype, a.n, 1), device_slots, a.n, 1, d_result);
    }
    // Sums and products of floats: the pieces' canonical chunk values, which the CPU's cores and the GPU compute
    // bit for bit alike, so that the result does not depend on where the two sides meet (that varies from
    // call to call): deterministic mode, and kernel auto, which shares the pieces.
    const bool chunked =
        (a.deterministic || a.kernel.is_auto()) && detail::canonical::in_canonical_order(a.op, a.dtype);
    // Per piece: its result (Acc, at most 16 bytes), or its canonical chunk values (pieces are whole
    // chunks but the last), in the compute type (float for 16-bit inputs).
    const Dtype value_dtype = info(a.dtype).compute;
    const std::size_t value_size = size_of(value_dtype);
    const std::size_t per_piece = chunked ? std::size_t(piece / detail::canonical::kChunk) * value_size : 16;
    auto* partials = static_cast<unsigned char*>(staging_b_.get(std::size_t(pieces) * per_piece + 256));
    std::vector<unsigned char> host(std::size_t(pieces) * per_piece);  // the CPU's pieces, then all
    detail::HostSplit split(pieces, a.kernel.is_auto());
    split.run_cpu([&](std::int64_t i) {
      unsigned char* out = host.data() + std::size_t(i) * per_piece;
      if (chunked)
        detail::cpu_canonical_chunk_values(a.op, a.dtype, piece_data(i), piece_len(i), a.stride, out);
      else
        detail::cpu_reduce_acc(a.op, a.dtype, piece_data(i), piece_len(i), a.stride, out);
    });
    for (std::int64_t i; split.next_front(i);) {
      void* dev = device_slots + (i % 2) * kStagingBytes;
      staging_.stage_piece(int(i % 2), piece_data(i), piece_len(i), a.stride, elem, dev);
      void* out = partials + std::size_t(i) * per_piece;
      if (chunked)
        reduce_canonical_chunk_values(a.op, a.dtype, dev, piece_len(i), 1, out, stream_);
      else
        reduce_resident(a, reduce_stage(a.kernel, a.op, a.dtype, piece_len(i), 1), dev, piece_len(i), 1, out);
    }
    split.wait();
    const std::int64_t gpu_pieces = split.front();
    if (chunked) {
      // The CPU's chunk values join the GPU's on the device; step 4 runs there.
      const std::int64_t values = detail::canonical::chunk_count(a.n);
      const std::size_t gpu_bytes = std::size_t(gpu_pieces) * per_piece, all_bytes = std::size_t(values) * value_size;
      if (all_bytes > gpu_bytes)
        TANDEM_CUDA_CHECK(cudaMemcpyAsync(partials + gpu_bytes, host.data() + gpu_bytes, all_bytes - gpu_bytes,
                                          cudaMemcpyHostToDevice, stream_));
      reduce_canonical_sum(detail::canonical::chunk_values_op(a.op), value_dtype, partials, values, 1, d_result,
                           scratch_, stream_);
      TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));  // `host` is pageable and dies on return
      return;
    }
    // The pieces' results in order, combined on the host by the same operator (an arg-reduction's
    // indices counted from the piece's start), then back to d_result.
    if (gpu_pieces > 0)
      TANDEM_CUDA_CHECK(
          cudaMemcpyAsync(host.data(), partials, std::size_t(gpu_pieces) * per_piece, cudaMemcpyDeviceToHost, stream_));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    visit_acc(a, [&]<Op O, class T, class Acc>() {
      using Operator = typename detail::OpFor<O, T>::type;
      Acc total = Operator::identity();
      for (std::int64_t i = 0; i < pieces; ++i) {
        Acc v;
        std::memcpy(&v, host.data() + std::size_t(i) * per_piece, sizeof v);
        if constexpr (detail::is_arg_op<Operator>) v.index += i * piece;
        total = Operator::combine(total, v);
      }
      std::memcpy(host_result_, &total, sizeof total);
      TANDEM_CUDA_CHECK(cudaMemcpyAsync(d_result, host_result_, sizeof total, cudaMemcpyHostToDevice, stream_));
    });
  }

  // f.template operator()<O, T, Acc>() for the op and dtype of a (Acc: the operator's accumulator).
  template <class F>
  static void visit_acc(const ReduceArgs& a, F&& f) {
    detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
      detail::visit_backend_op(a.op, [&]<Op O>(std::integral_constant<Op, O>) {
        f.template operator()<O, T, typename detail::OpFor<O, T>::type::Acc>();
      });
    });
  }

  // *_into: the result in d_result (Acc) into the Buffer element, stream-ordered.
  void store_into(const ReduceArgs& a, const void* d_result) {
    visit_acc(a, [&]<Op O, class T, class Acc>() {
      store_result_kernel<O, T><<<1, 1, 0, stream_>>>(static_cast<const Acc*>(d_result), a.n, a.divide, a.out);
      TANDEM_CUDA_CHECK_LAUNCH();
    });
  }

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
  bool own_stream_ = false;
  cudaMemPool_t pool_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  void* host_result_ = nullptr;  // pinned, for the reduction's accumulator (<= 16 bytes)
  Staging staging_;              // host <-> GPU through two pinned slots (staging.cuh)
  Workspace scratch_, result_, staging_a_, staging_b_, staging_c_;
  Workspace form_a_, form_b_, form_c_;  // op(A), op(B) and the product of the GEMM forms (matmul/forms.cuh)
  Workspace wide_a_, wide_b_;           // 16-bit A and B widened to float (matmul/storage16.cuh)
  Workspace mixed_a_, mixed_b_;         // a mixed product's 16-bit operand widened (storage16.cuh, mixed_as_float)
  std::array<Workspace*, 12> workspaces() {
    return {&scratch_, &result_, &staging_a_, &staging_b_, &staging_c_, &form_a_,
            &form_b_,  &form_c_, &wide_a_,    &wide_b_,    &mixed_a_,   &mixed_b_};
  }
};

}  // namespace

std::shared_ptr<detail::BackendImpl> make_backend(const EngineOptions& options) {
  return std::make_shared<CudaBackend>(options);
}

}  // namespace tandem::cuda
