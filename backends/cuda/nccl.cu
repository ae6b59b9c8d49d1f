// The collectives of an engine over several GPUs (engine/multi_device.cpp): one NCCL communicator per
// device from ncclCommInitAll, driven by one thread in group calls, each device's part ordered on that
// device's engine stream. NVLink SHARP (NVLS) is left to the environment: tandem's tests and benchmarks
// run with NCCL_NVLS_ENABLE=0 (docs/SCALING.md).
#include <nccl.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cuda/common.cuh"
#include "backends/cuda/module.hpp"

namespace tandem::cuda {
namespace {

void check_nccl(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return;
  const char* last = ncclGetLastError(nullptr);
  throw Error(std::string("NCCL: ") + what + " failed: " + ncclGetErrorString(r) +
              (last && *last ? std::string(" (") + last + ")" : std::string()) +
              ". Check that every listed GPU exists and can reach the others (nvidia-smi topo -m); NCCL_DEBUG=WARN "
              "prints NCCL's own diagnosis");
}

// NCCL launches of different communicators from different threads may deadlock (NCCL's documentation):
// tandem's are made one at a time in the process.
std::mutex nccl_launch;

// Restores the caller's current device when the scope ends (never throws: destructors use it too).
class KeepDevice {
 public:
  KeepDevice() { cudaGetDevice(&device_); }
  ~KeepDevice() { cudaSetDevice(device_); }
  KeepDevice(const KeepDevice&) = delete;
  KeepDevice& operator=(const KeepDevice&) = delete;

 private:
  int device_ = 0;
};

class NcclCollectives final : public detail::Collectives {
 public:
  explicit NcclCollectives(const std::vector<std::shared_ptr<detail::BackendImpl>>& members) {
    for (const auto& m : members) {
      devices_.push_back(m->device_index());
      streams_.push_back(static_cast<cudaStream_t>(m->native_stream()));
    }
    comms_.resize(devices_.size());
    KeepDevice keep;
    check_nccl(ncclCommInitAll(comms_.data(), int(devices_.size()), devices_.data()), "ncclCommInitAll");
  }

  ~NcclCollectives() override {
    KeepDevice keep;
    for (std::size_t m = 0; m < comms_.size(); ++m) {
      cudaSetDevice(devices_[m]);
      cudaStreamSynchronize(streams_[m]);
      if (comms_[m]) ncclCommDestroy(comms_[m]);
    }
    (void)cudaGetLastError();
  }

  void broadcast(const std::vector<Piece>& pieces, const std::vector<void*>& dst) override {
    if (pieces.empty()) return;
    std::lock_guard lock(nccl_launch);
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    ncclResult_t first = ncclSuccess;
    for (const Piece& p : pieces)
      for (std::size_t m = 0; m < comms_.size() && first == ncclSuccess; ++m) {
        void* to = static_cast<char*>(dst[m]) + p.offset;
        first = ncclBroadcast(int(m) == p.root ? p.src : to, to, p.bytes, ncclChar, p.root, comms_[m], streams_[m]);
      }
    const ncclResult_t end = ncclGroupEnd();  // always closes the group
    check_nccl(first, "ncclBroadcast");
    check_nccl(end, "ncclGroupEnd (ncclBroadcast)");
  }

  void copy(void* dst, int dst_member, const void* src, int src_member, std::size_t bytes) override {
    if (bytes == 0) return;
    KeepDevice keep;
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(streams_[std::size_t(src_member)]));
    TANDEM_CUDA_CHECK(cudaSetDevice(devices_[std::size_t(dst_member)]));
    cudaStream_t s = streams_[std::size_t(dst_member)];
    TANDEM_CUDA_CHECK(
        cudaMemcpyPeerAsync(dst, devices_[std::size_t(dst_member)], src, devices_[std::size_t(src_member)], bytes, s));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(s));
  }

 private:
  std::vector<int> devices_;
  std::vector<cudaStream_t> streams_;
  std::vector<ncclComm_t> comms_;
};

// One MPI rank's NCCL communicator (ncclCommInitRank), on the rank's engine's device and stream.
class NcclRanks final : public detail::RankCollectives {
 public:
  NcclRanks(int device, cudaStream_t stream, const std::vector<unsigned char>& id, int rank, int size)
      : device_(device), size_(size), stream_(stream) {
    ncclUniqueId uid;
    if (id.size() != sizeof uid) throw Error("NCCL: the unique id from rank 0 has the wrong size");
    std::memcpy(&uid, id.data(), sizeof uid);
    KeepDevice keep;
    TANDEM_CUDA_CHECK(cudaSetDevice(device_));
    check_nccl(ncclCommInitRank(&comm_, size, uid, rank), "ncclCommInitRank");
  }
  ~NcclRanks() override {
    KeepDevice keep;
    cudaSetDevice(device_);
    cudaStreamSynchronize(stream_);
    release();
    if (comm_) ncclCommDestroy(comm_);
    (void)cudaGetLastError();
  }
  void stage(const void* send, std::size_t bytes) override {
    KeepDevice keep;
    TANDEM_CUDA_CHECK(cudaSetDevice(device_));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));  // (a failure of earlier work surfaces here, before NCCL)
    release();
    bytes_ = bytes;
    if (bytes == 0) return;
    TANDEM_CUDA_CHECK(cudaMallocAsync(&buffer_, bytes * (std::size_t(size_) + 1), stream_));
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(buffer_, send, bytes, cudaMemcpyHostToDevice, stream_));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void exchange(void* recv) override {
    if (bytes_ == 0) return;
    KeepDevice keep;
    TANDEM_CUDA_CHECK(cudaSetDevice(device_));
    char* all = static_cast<char*>(buffer_) + bytes_;
    {
      std::lock_guard lock(nccl_launch);
      check_nccl(ncclAllGather(buffer_, all, bytes_, ncclChar, comm_, stream_), "ncclAllGather");
    }
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(recv, all, bytes_ * std::size_t(size_), cudaMemcpyDeviceToHost, stream_));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    release();
  }

 private:
  void release() noexcept {
    if (buffer_) cudaFreeAsync(buffer_, stream_);
    buffer_ = nullptr;
  }
  int device_, size_;
  cudaStream_t stream_;
  ncclComm_t comm_ = nullptr;
  void* buffer_ = nullptr;  // this rank's bytes, then every rank's
  std::size_t bytes_ = 0;
};

std::vector<unsigned char> unique_id() {
  ncclUniqueId uid;
  check_nccl(ncclGetUniqueId(&uid), "ncclGetUniqueId");
  std::vector<unsigned char> id(sizeof uid);
  std::memcpy(id.data(), &uid, sizeof uid);
  return id;
}
std::unique_ptr<detail::RankCollectives> make_ranks(int device, void* stream, const std::vector<unsigned char>& id,
                                                    int rank, int size) {
  return std::make_unique<NcclRanks>(device, static_cast<cudaStream_t>(stream), id, rank, size);
}
std::unique_ptr<detail::Collectives> make_collectives(
    const std::vector<std::shared_ptr<detail::BackendImpl>>& members) {
  return std::make_unique<NcclCollectives>(members);
}

}  // namespace

extern const detail::NcclModule nccl_module_table{&make_collectives, &unique_id, &make_ranks};

}  // namespace tandem::cuda
