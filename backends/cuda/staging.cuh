// Host memory to and from the GPU through two pinned staging slots on one stream (the CUDA backend's
// host inputs and outputs, backends/cuda/cuda_backend.cu): the host fills or drains one slot (all cores,
// common/host_copy.hpp) while the other crosses the bus; an event per slot says when its copy is done.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cuda/common.cuh"

namespace tandem::cuda {

// Bytes of one staging piece (two pinned and two device buffers of it); a multiple of the canonical
// chunk (4096 elements) for every element size, so deterministic sums can be staged piece by piece.
// 32 MiB ran fastest on an H100 host among 4-64 MiB pieces and 2-4 slots (the host's copy into pinned
// memory, 30-49 GB/s there, bounds the rate; the pinned copy to the GPU runs at about 54 GB/s).
constexpr std::size_t kStagingBytes = std::size_t(32) << 20;

class Staging {
 public:
  Staging() = default;
  ~Staging() { release(); }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  void bind(cudaStream_t stream) { stream_ = stream; }
  // The two slots (pinned memory, kStagingBytes each) and their events, made on first use.
  void ensure();
  void* slot(int s) const { return pinned_[s]; }
  // Frees the slots; the stream must have finished with them (never throws).
  void release() noexcept;

  // One piece of a host input (len elements of elem bytes from src, stride apart) into pinned slot
  // `slot`, then to the device at dev, on the stream.
  void stage_piece(int slot, const void* src, std::int64_t len, std::int64_t stride, std::size_t elem, void* dev);
  // rows x cols of host memory (leading dimension ld) into compact device memory, rows in pieces of
  // kStagingBytes (the host copies piece i + 1 while piece i crosses the bus). Stream-ordered.
  void upload_rows(void* dev, const void* host, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::size_t e);
  // The reverse: compact device rows into host memory (leading dimension ld), touching only the rows x
  // cols elements; returns when all of them are written.
  void download_rows(void* host, std::int64_t ld, const void* dev, std::int64_t rows, std::int64_t cols, std::size_t e);

 private:
  cudaStream_t stream_ = nullptr;
  void* pinned_[2] = {nullptr, nullptr};        // host staging, kStagingBytes each
  cudaEvent_t staged_[2] = {nullptr, nullptr};  // recorded after each slot's copy
};

}  // namespace tandem::cuda
