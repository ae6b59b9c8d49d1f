// The collectives of an engine over several GPUs (engine/multi_device.cpp): one NCCL communicator per
// device from ncclCommInitAll, driven by one thread in group calls, each device's part ordered on that
// device's engine stream. NVLink SHARP (NVLS) is left to the environment: tandem's tests and benchmarks
// run with NCCL_NVLS_ENABLE=0 (docs/SCALING.md).
#include <nccl.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cuda/common.cuh"
#include "backends/cuda/module.hpp"
#include "common/all_reduce.hpp"

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

// The deterministic all-reduce's fold (common/all_reduce.hpp): slice element i of rank `rank` from its own
// value (own[i]) and the other ranks' (recv[slot * pitch + i], slot r for r < rank, r - 1 after), in rank
// order, written over own[i].
template <class T>
__global__ void fold_kernel(T* own, const T* recv, std::size_t count, std::size_t pitch, int rank, int ranks) {
  const std::size_t step = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step)
    own[i] = detail::all_reduce::fold<T>(
        ranks, [&](int r) { return r == rank ? own[i] : recv[std::size_t(r < rank ? r : r - 1) * pitch + i]; });
}

ncclDataType_t nccl_type(Dtype d) {
  switch (d) {
    case Dtype::f32:
      return ncclFloat32;
    case Dtype::f64:
      return ncclFloat64;
    case Dtype::bf16:
      return ncclBfloat16;
    case Dtype::f16:
      return ncclFloat16;
    default:
      throw Error(std::string("all_reduce: ") + to_string(d) + " is not a floating type");
  }
}

// Sends / receives of one ncclGroupStart / End; the first failure is reported after the group closes.
template <class F>
void nccl_group(const char* what, F&& calls) {
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  const ncclResult_t first = calls();
  const ncclResult_t end = ncclGroupEnd();
  check_nccl(first, what);
  check_nccl(end, "ncclGroupEnd");
}

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
      if (!side_.empty()) cudaStreamSynchronize(side_[m]);
      if (comms_[m]) ncclCommDestroy(comms_[m]);
    }
    release_steps();
    for (std::size_t m = 0; m < side_.size(); ++m) {
      cudaSetDevice(devices_[m]);
      cudaStreamDestroy(side_[m]);
    }
    (void)cudaGetLastError();
  }

  std::size_t send_side(const std::vector<Transfer>& transfers) override {
    KeepDevice keep;
    const std::size_t n = devices_.size();
    if (side_.empty()) {
      side_.assign(n, nullptr);
      for (std::size_t m = 0; m < n; ++m) {
        TANDEM_CUDA_CHECK(cudaSetDevice(devices_[m]));
        TANDEM_CUDA_CHECK(cudaStreamCreateWithFlags(&side_[m], cudaStreamNonBlocking));
      }
    }
    steps_.push_back({});                  // (owned before anything can throw: release_steps() frees them)
    for (std::size_t m = 0; m < n; ++m) {  // the side stream after the member's work so far
      TANDEM_CUDA_CHECK(cudaSetDevice(devices_[m]));
      cudaEvent_t now;
      TANDEM_CUDA_CHECK(cudaEventCreateWithFlags(&now, cudaEventDisableTiming));
      steps_.back().push_back(now);
      TANDEM_CUDA_CHECK(cudaEventRecord(now, streams_[m]));
      TANDEM_CUDA_CHECK(cudaStreamWaitEvent(side_[m], now, 0));
    }
    for (const Transfer& t : transfers)  // a member's own pieces: a copy on its side stream
      if (t.from == t.to && t.bytes > 0 && t.src != t.dst) {
        TANDEM_CUDA_CHECK(cudaSetDevice(devices_[std::size_t(t.to)]));
        TANDEM_CUDA_CHECK(cudaMemcpyAsync(t.dst, t.src, t.bytes, cudaMemcpyDeviceToDevice, side_[std::size_t(t.to)]));
      }
    {
      std::lock_guard lock(nccl_launch);
      nccl_group("ncclSend / ncclRecv (pieces of B)", [&] {
        ncclResult_t r = ncclSuccess;
        for (const Transfer& t : transfers) {
          if (t.from == t.to || t.bytes == 0) continue;
          const std::size_t f = std::size_t(t.from), d = std::size_t(t.to);
          if (r == ncclSuccess) r = ncclSend(t.src, t.bytes, ncclChar, t.to, comms_[f], side_[f]);
          if (r == ncclSuccess) r = ncclRecv(t.dst, t.bytes, ncclChar, t.from, comms_[d], side_[d]);
        }
        return r;
      });
    }
    for (std::size_t m = 0; m < n; ++m) {  // the step's end on each side stream
      TANDEM_CUDA_CHECK(cudaSetDevice(devices_[m]));
      TANDEM_CUDA_CHECK(cudaEventRecord(steps_.back()[m], side_[m]));
    }
    return steps_.size() - 1;
  }

  void wait_side(std::size_t step, int member) override {
    KeepDevice keep;
    const std::size_t m = std::size_t(member);
    TANDEM_CUDA_CHECK(cudaSetDevice(devices_[m]));
    TANDEM_CUDA_CHECK(cudaStreamWaitEvent(streams_[m], steps_.at(step)[m], 0));
  }

  void join_side() override {
    KeepDevice keep;
    if (!steps_.empty())
      for (std::size_t m = 0; m < devices_.size(); ++m) {
        TANDEM_CUDA_CHECK(cudaSetDevice(devices_[m]));
        TANDEM_CUDA_CHECK(cudaEventRecord(steps_.back()[m], side_[m]));
        TANDEM_CUDA_CHECK(cudaStreamWaitEvent(streams_[m], steps_.back()[m], 0));
      }
    release_steps();
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
  void release_steps() noexcept {  // (an event may go once the waits on it are enqueued)
    for (auto& step : steps_)
      for (cudaEvent_t e : step)
        if (e) cudaEventDestroy(e);
    steps_.clear();
  }

  std::vector<int> devices_;
  std::vector<cudaStream_t> streams_;
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> side_;               // one per member, made on the first send_side()
  std::vector<std::vector<cudaEvent_t>> steps_;  // per step of send_side(), one event per member
};

// One MPI rank's NCCL communicator (ncclCommInitRank), on the rank's engine's device and stream.
class NcclRanks final : public detail::RankCollectives {
 public:
  NcclRanks(int device, cudaStream_t stream, const std::vector<unsigned char>& id, int rank, int size)
      : device_(device), rank_(rank), size_(size), stream_(stream) {
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
    for (void* p : scratch_)
      if (p) cudaFree(p);
    if (comm_) ncclCommDestroy(comm_);
    (void)cudaGetLastError();
  }
  void stage(const void* send, std::size_t bytes) override {
    KeepDevice keep;
    TANDEM_CUDA_CHECK(cudaSetDevice(device_));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));  // (a failure of earlier work surfaces here, before NCCL)
    bytes_ = bytes;
    if (bytes == 0) return;
    buffer_ = scratch(0, bytes * (std::size_t(size_) + 1));
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
    bytes_ = 0;
  }

  void prepare_all_reduce(Dtype dtype, std::size_t count, bool on_device, bool deterministic) override {
    KeepDevice keep;
    TANDEM_CUDA_CHECK(cudaSetDevice(device_));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));  // (earlier work's failure surfaces here, before NCCL)
    if (count == 0) return;
    const std::size_t e = size_of(dtype);
    if (!on_device) scratch(1, count * e);
    const detail::all_reduce::Slices sl = detail::all_reduce::slices(count, size_);
    if (deterministic && sl.count(rank_) > 0 && size_ > 1) scratch(2, sl.per * e * std::size_t(size_ - 1));
  }

  void all_reduce(Dtype dtype, void* data, std::size_t count, bool on_device, bool deterministic) override {
    if (count == 0) return;
    KeepDevice keep;
    TANDEM_CUDA_CHECK(cudaSetDevice(device_));
    const std::size_t e = size_of(dtype), bytes = count * e;
    void* x = data;
    if (!on_device) {  // host memory: through a device copy
      x = scratch(1, bytes);
      TANDEM_CUDA_CHECK(cudaMemcpyAsync(x, data, bytes, cudaMemcpyHostToDevice, stream_));
    }
    if (deterministic) {
      rank_ordered_sum(dtype, static_cast<char*>(x), count);
    } else {
      std::lock_guard lock(nccl_launch);
      check_nccl(ncclAllReduce(x, x, count, nccl_type(dtype), ncclSum, comm_, stream_), "ncclAllReduce");
    }
    if (!on_device) TANDEM_CUDA_CHECK(cudaMemcpyAsync(data, x, bytes, cudaMemcpyDeviceToHost, stream_));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

 private:
  // common/all_reduce.hpp: an all-to-all of the slices (ncclSend / ncclRecv), the fold of this rank's slice,
  // an all-gather of the folded slices (in place: ncclAllGather when the slices are equal, else sends).
  void rank_ordered_sum(Dtype dtype, char* x, std::size_t count) {
    const std::size_t e = size_of(dtype);
    const detail::all_reduce::Slices sl = detail::all_reduce::slices(count, size_);
    const std::size_t mine = sl.count(rank_), pitch = sl.per;
    void* recv = mine > 0 && size_ > 1 ? scratch(2, pitch * e * std::size_t(size_ - 1)) : nullptr;
    {
      std::lock_guard lock(nccl_launch);
      nccl_group("ncclSend / ncclRecv (all_reduce's all-to-all)", [&] {
        ncclResult_t r = ncclSuccess;
        for (int p = 0; p < size_ && r == ncclSuccess; ++p) {
          if (p == rank_) continue;
          if (sl.count(p) > 0) r = ncclSend(x + sl.first(p) * e, sl.count(p) * e, ncclChar, p, comm_, stream_);
          const std::size_t slot = std::size_t(p < rank_ ? p : p - 1);
          if (r == ncclSuccess && mine > 0)
            r = ncclRecv(static_cast<char*>(recv) + slot * pitch * e, mine * e, ncclChar, p, comm_, stream_);
        }
        return r;
      });
      if (mine > 0) {
        const int threads = 256, blocks = int(std::min<std::size_t>((mine + threads - 1) / threads, 4096));
        char* own = x + sl.first(rank_) * e;
        switch (dtype) {
          case Dtype::f32:
            fold_kernel<<<blocks, threads, 0, stream_>>>(reinterpret_cast<float*>(own), static_cast<const float*>(recv),
                                                         mine, pitch, rank_, size_);
            break;
          case Dtype::f64:
            fold_kernel<<<blocks, threads, 0, stream_>>>(reinterpret_cast<double*>(own),
                                                         static_cast<const double*>(recv), mine, pitch, rank_, size_);
            break;
          case Dtype::bf16:
            fold_kernel<<<blocks, threads, 0, stream_>>>(reinterpret_cast<bfloat16*>(own),
                                                         static_cast<const bfloat16*>(recv), mine, pitch, rank_, size_);
            break;
          case Dtype::f16:
            fold_kernel<<<blocks, threads, 0, stream_>>>(reinterpret_cast<half*>(own), static_cast<const half*>(recv),
                                                         mine, pitch, rank_, size_);
            break;
          default:
            throw Error(std::string("all_reduce: ") + to_string(dtype) + " is not a floating type");
        }
        TANDEM_CUDA_CHECK_LAUNCH();
      }
      if (sl.equal()) {
        check_nccl(ncclAllGather(x + sl.first(rank_) * e, x, mine * e, ncclChar, comm_, stream_),
                   "ncclAllGather (all_reduce)");
      } else {
        nccl_group("ncclSend / ncclRecv (all_reduce's all-gather)", [&] {
          ncclResult_t r = ncclSuccess;
          for (int p = 0; p < size_ && r == ncclSuccess; ++p) {
            if (p == rank_) continue;
            if (mine > 0) r = ncclSend(x + sl.first(rank_) * e, mine * e, ncclChar, p, comm_, stream_);
            if (r == ncclSuccess && sl.count(p) > 0)
              r = ncclRecv(x + sl.first(p) * e, sl.count(p) * e, ncclChar, p, comm_, stream_);
          }
          return r;
        });
      }
    }
  }

  // Device memory kept between calls (slot 0: the allgather's; 1: a host vector's copy; 2: all_reduce's
  // received slices), grown as needed: the stream-ordered pool would hand its memory back at every
  // synchronisation and map it again on the next call (a fixed cost of about half a millisecond).
  void* scratch(int slot, std::size_t bytes) {
    if (bytes > scratch_bytes_[slot]) {
      TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));  // (earlier work may still use the old block)
      if (scratch_[slot]) TANDEM_CUDA_CHECK(cudaFree(scratch_[slot]));
      scratch_[slot] = nullptr, scratch_bytes_[slot] = 0;
      TANDEM_CUDA_CHECK(cudaMalloc(&scratch_[slot], bytes));
      scratch_bytes_[slot] = bytes;
    }
    return scratch_[slot];
  }

  int device_, rank_, size_;
  cudaStream_t stream_;
  ncclComm_t comm_ = nullptr;
  void* scratch_[3] = {};
  std::size_t scratch_bytes_[3] = {};
  void* buffer_ = nullptr;  // this rank's bytes, then every rank's (scratch slot 0)
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
