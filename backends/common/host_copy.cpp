#include "backends/common/host_copy.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tandem::detail {

namespace {

// memcpy for staging: the destination (pinned memory about to be read by the GPU's copy engine) is not
// read by this core again, so non-temporal stores write it without first reading each line into the
// cache; that saves a third of the memory traffic, which host staging is bound by.
void copy_streaming(char* dst, const char* src, std::size_t bytes) {
#if defined(__SSE2__)
  std::size_t head = (16 - reinterpret_cast<std::uintptr_t>(dst) % 16) % 16;
  if (head > bytes) head = bytes;
  std::memcpy(dst, src, head);
  std::size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), d);
  }
  std::memcpy(dst + i, src + i, bytes - i);
  _mm_sfence();  // the streamed stores are visible before the copy engine reads them
#else
  std::memcpy(dst, src, bytes);
#endif
}

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
                          copy_streaming(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off, len);
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
      copy_streaming(static_cast<char*>(dst) + i * ld_dst * elem, static_cast<const char*>(src) + i * ld_src * elem,
                     cols * elem);
  });
}

}  // namespace tandem::detail
