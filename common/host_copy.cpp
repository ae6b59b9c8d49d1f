#include "common/host_copy.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace tandem::detail {

namespace {

// Measured on an H100 host (16 cores, .exp experiments of issue #10): plain memcpy in 1 MiB tasks ran
// at 30-49 GB/s; non-temporal stores and larger tasks were slower.
void copy_block(char* dst, const char* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }

template <class T>
void gather_typed(T* dst, const T* src, std::size_t count, std::size_t stride) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, 1 << 14), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) dst[i] = src[i * stride];
  });
}
}  // namespace

void gather(void* dst, const void* src, std::size_t count, std::size_t stride, std::size_t elem) {
  if (count == 0) return;
  if (stride == 1) {
    // Blocks of 1 MiB: enough per task to run at memory speed, enough tasks for every core.
    const std::size_t bytes = count * elem, block = std::size_t(1) << 20;
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, (bytes + block - 1) / block, 1),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        for (std::size_t b = r.begin(); b != r.end(); ++b) {
                          const std::size_t off = b * block, len = off + block < bytes ? block : bytes - off;
                          copy_block(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off, len);
                        }
                      });
    return;
  }
  if (elem == 4)
    return gather_typed(static_cast<std::uint32_t*>(dst), static_cast<const std::uint32_t*>(src), count, stride);
  if (elem == 8)
    return gather_typed(static_cast<std::uint64_t*>(dst), static_cast<const std::uint64_t*>(src), count, stride);
  if (elem == 2)
    return gather_typed(static_cast<std::uint16_t*>(dst), static_cast<const std::uint16_t*>(src), count, stride);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, 1 << 12), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i)
      std::memcpy(static_cast<char*>(dst) + i * elem, static_cast<const char*>(src) + i * stride * elem, elem);
  });
}

void copy_rows(void* dst, std::size_t ld_dst, const void* src, std::size_t ld_src, std::size_t rows, std::size_t cols,
               std::size_t elem) {
  const std::size_t grain = std::max<std::size_t>(1, (std::size_t(1) << 18) / std::max<std::size_t>(1, cols * elem));
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, grain), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i)
      copy_block(static_cast<char*>(dst) + i * ld_dst * elem, static_cast<const char*>(src) + i * ld_src * elem,
                 cols * elem);
  });
}

}  // namespace tandem::detail
