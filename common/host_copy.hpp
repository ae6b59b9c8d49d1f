// Parallel host copies for staging host inputs (the CUDA backend's pinned staging buffers).
#pragma once

#include <cstddef>

namespace tandem::detail {

// dst[i] = src[i * stride] for i < count, elements of `elem` bytes (4 or 8, or any size with stride 1),
// on all cores (oneTBB). dst is contiguous.
void gather(void* dst, const void* src, std::size_t count, std::size_t stride, std::size_t elem);

// The rows x cols matrix at src (leading dimension ld_src elements) to dst (leading dimension ld_dst),
// elements of `elem` bytes, rows in parallel.
void copy_rows(void* dst, std::size_t ld_dst, const void* src, std::size_t ld_src, std::size_t rows, std::size_t cols,
               std::size_t elem);

}  // namespace tandem::detail
