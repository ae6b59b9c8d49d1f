// The Hopper rungs' packing pass (hopper.cu): an operand the copy engine cannot read where it is (rows not 16-byte
// aligned, a transposed A, a float B not transposed: tf32 wgmma reads K-major operands only) is first copied
// K-major into the workspace, rounded to the input type.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace tandem::cuda::hopper {

// dst[e][r][c] (rows x cols, row pitch `pitch`, entries dst_stride apart) = In::convert(element (r, c) of
// entry e of src), which is src[e * stride + r * ld + c], or src[e * stride + c * ld + r] when transposed.
// 32 x 32 tiles; a transposed source goes through shared memory so that both sides stay coalesced.
template <class In, class Src>
__global__ void __launch_bounds__(256)
    pack_kernel(const Src* __restrict__ src, std::int64_t ld, std::int64_t stride, bool transposed,
                typename In::Element* __restrict__ dst, std::int64_t rows, std::int64_t cols, std::int64_t pitch,
                std::int64_t dst_stride, std::int64_t batch) {
  __shared__ Src tile[32][33];
  const std::int64_t c0 = std::int64_t(blockIdx.x) * 32;
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (std::int64_t e = blockIdx.z; e < batch; e += gridDim.z)
    for (std::int64_t r0 = std::int64_t(blockIdx.y) * 32; r0 < rows; r0 += std::int64_t(gridDim.y) * 32) {
      const Src* s = src + e * stride;
      typename In::Element* out = dst + e * dst_stride;
      if (!transposed) {
        for (int y = ty; y < 32; y += 8) {
          const std::int64_t r = r0 + y, c = c0 + tx;
          if (r < rows && c < cols) out[r * pitch + c] = In::convert(s[r * ld + c]);
        }
        continue;
      }
      __syncthreads();
      for (int y = ty; y < 32; y += 8) {  // tile[c - c0][r - r0], read along r (contiguous in src)
        const std::int64_t c = c0 + y, r = r0 + tx;
        if (r < rows && c < cols) tile[y][tx] = s[c * ld + r];
      }
      __syncthreads();
      for (int y = ty; y < 32; y += 8) {
        const std::int64_t r = r0 + y, c = c0 + tx;
        if (r < rows && c < cols) out[r * pitch + c] = In::convert(tile[tx][y]);
      }
    }
}

}  // namespace tandem::cuda::hopper
