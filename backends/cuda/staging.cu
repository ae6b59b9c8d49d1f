// The pinned staging slots of the CUDA backend (backends/cuda/staging.cuh).
#include <algorithm>

#include "backends/cuda/staging.cuh"
#include "common/host_copy.hpp"

namespace tandem::cuda {

void Staging::stage_piece(int slot, const void* src, std::int64_t len, std::int64_t stride, std::size_t elem,
                          void* dev) {
  // The slot's previous copy to the GPU has finished: its pinned memory may be refilled.
  TANDEM_CUDA_CHECK(cudaEventSynchronize(staged_[slot]));
  detail::gather(pinned_[slot], src, std::size_t(len), std::size_t(stride), elem);
  TANDEM_CUDA_CHECK(cudaMemcpyAsync(dev, pinned_[slot], std::size_t(len) * elem, cudaMemcpyHostToDevice, stream_));
  TANDEM_CUDA_CHECK(cudaEventRecord(staged_[slot], stream_));
}

void Staging::upload_rows(void* dev, const void* host, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                          std::size_t e) {
  const std::size_t row_bytes = std::size_t(cols) * e;
  if (row_bytes > kStagingBytes) {  // a row longer than a piece: one copy from pageable memory
    TANDEM_CUDA_CHECK(
        cudaMemcpy2DAsync(dev, row_bytes, host, ld * e, row_bytes, rows, cudaMemcpyHostToDevice, stream_));
    return;
  }
  ensure();
  const std::int64_t per_piece = std::int64_t(kStagingBytes / row_bytes);
  for (std::int64_t r0 = 0, i = 0; r0 < rows; r0 += per_piece, ++i) {
    const int slot = int(i % 2);
    const std::int64_t n = std::min(per_piece, rows - r0);
    TANDEM_CUDA_CHECK(cudaEventSynchronize(staged_[slot]));
    detail::copy_rows(pinned_[slot], std::size_t(cols), static_cast<const char*>(host) + std::size_t(r0 * ld) * e,
                      std::size_t(ld), std::size_t(n), std::size_t(cols), e);
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dev) + std::size_t(r0) * row_bytes, pinned_[slot],
                                      std::size_t(n) * row_bytes, cudaMemcpyHostToDevice, stream_));
    TANDEM_CUDA_CHECK(cudaEventRecord(staged_[slot], stream_));
  }
}

void Staging::download_rows(void* host, std::int64_t ld, const void* dev, std::int64_t rows, std::int64_t cols,
                            std::size_t e) {
  const std::size_t row_bytes = std::size_t(cols) * e;
  if (row_bytes > kStagingBytes) {
    TANDEM_CUDA_CHECK(
        cudaMemcpy2DAsync(host, ld * e, dev, row_bytes, row_bytes, rows, cudaMemcpyDeviceToHost, stream_));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return;
  }
  ensure();
  const std::int64_t per_piece = std::int64_t(kStagingBytes / row_bytes);
  const std::int64_t pieces = (rows + per_piece - 1) / per_piece;
  auto scatter = [&](std::int64_t i) {  // piece i, once its copy has arrived
    const int slot = int(i % 2);
    const std::int64_t r0 = i * per_piece, n = std::min(per_piece, rows - r0);
    TANDEM_CUDA_CHECK(cudaEventSynchronize(staged_[slot]));
    detail::copy_rows(static_cast<char*>(host) + std::size_t(r0 * ld) * e, std::size_t(ld), pinned_[slot],
                      std::size_t(cols), std::size_t(n), std::size_t(cols), e);
  };
  for (std::int64_t i = 0; i < pieces; ++i) {
    const int slot = int(i % 2);
    const std::int64_t r0 = i * per_piece, n = std::min(per_piece, rows - r0);
    if (i >= 2) scatter(i - 2);  // frees the slot
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(pinned_[slot], static_cast<const char*>(dev) + std::size_t(r0) * row_bytes,
                                      std::size_t(n) * row_bytes, cudaMemcpyDeviceToHost, stream_));
    TANDEM_CUDA_CHECK(cudaEventRecord(staged_[slot], stream_));
  }
  for (std::int64_t i = std::max<std::int64_t>(0, pieces - 2); i < pieces; ++i) scatter(i);
}

void Staging::ensure() {
  for (int s = 0; s < 2; ++s) {
    if (!pinned_[s]) TANDEM_CUDA_CHECK(cudaMallocHost(&pinned_[s], kStagingBytes));
    if (!staged_[s]) {
      TANDEM_CUDA_CHECK(cudaEventCreateWithFlags(&staged_[s], cudaEventDisableTiming));
      TANDEM_CUDA_CHECK(cudaEventRecord(staged_[s], stream_));
    }
  }
}

void Staging::release() noexcept {
  for (void*& p : pinned_)
    if (p) cudaFreeHost(p), p = nullptr;
  for (cudaEvent_t& e : staged_)
    if (e) cudaEventDestroy(e), e = nullptr;
}

}  // namespace tandem::cuda
