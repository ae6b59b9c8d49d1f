// Stage 6, tensor_core_bf16: like tensor_core_tf32, but the tiles are converted to bf16 (8 significant
// bits) while being staged into shared memory, and the warps multiply 16 x 16 x 16 bf16 fragments
// with float accumulation. Changed from tensor_core_tf32: half the shared memory per tile and twice the
// k per fragment, so twice the tensor-core rate, traded for a coarser rounding of the inputs (relative
// error up to 2^-8 per input instead of 2^-11). Everything else (tiling, prefetch, double buffering,
// guarded edges, C staged through shared memory) is the same.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cstdint>
#include <cstring>

#include "backends/cuda/matmul/tile_io.cuh"

namespace tandem::cuda::matmul_stages {

struct TensorCoreBf16Shape {
  static constexpr int kBlockRows = 128, kBlockCols = 128, kTileK = 32;
  // About 220 registers (64 accumulators, 32 for the prefetched tiles, fragments), one block per SM;
  // capping at 128 registers to fit two made it spill.
  static constexpr int kMinBlocksPerSM = 1;
  static constexpr int kWarpRows = 64, kWarpCols = 32;  // 2 x 4 warps
  static constexpr int kFragRows = 16, kFragCols = 16, kFragK = 16;
  static constexpr int kWarps = (kBlockRows / kWarpRows) * (kBlockCols / kWarpCols);
  static constexpr int kThreads = 32 * kWarps;
  // Rows padded by 8 bf16 (16 bytes): the strides stay multiples of 16 bytes, as WMMA requires, but
  // consecutive rows start in different banks, so fragment loads do not conflict.
  static constexpr int kAStride = kTileK + 8, kBStride = kBlockCols + 8, kCStride = kBlockCols + 4;
  static constexpr std::size_t kTileBytes = 2 * (kBlockRows * kAStride + kTileK * kBStride) * sizeof(__nv_bfloat16);
  static constexpr std::size_t kCTileBytes = kBlockRows * kCStride * sizeof(float);
  // Dynamic shared memory: the double-buffered A and B tiles, later reused for the (float) C tile.
  // Over 48 KB, so the launcher raises the kernel's limit.
  static constexpr std::size_t kSharedBytes = kTileBytes > kCTileBytes ? kTileBytes : kCTileBytes;
};

namespace bf16_wmma {
namespace wmma = nvcuda::wmma;
using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major>;
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major>;
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

// wmma::load_matrix_sync and store_matrix_sync take generic pointers, and the compiler then reaches
// shared memory through 64-bit generic loads and stores (LD/ST instead of LDS/STS), which cost
// registers and time. These do the same with the PTX instructions' .shared state space.
__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
template <class Frag>
__device__ __forceinline__ void set_registers(Frag& f, const std::uint32_t (&r)[4]) {
  static_assert(sizeof(f.x) == sizeof(r), "a bf16 input fragment is 4 registers");
  std::memcpy(&f.x[0], r, sizeof(r));
}
__device__ __forceinline__ void load_shared(FragA& f, const __nv_bfloat16* p, unsigned ldm) {
  std::uint32_t r[4];
  asm volatile("wmma.load.a.sync.aligned.row.m16n16k16.shared.bf16 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(p)), "r"(ldm)
               : "memory");
  set_registers(f, r);
}
__device__ __forceinline__ void load_shared(FragB& f, const __nv_bfloat16* p, unsigned ldm) {
  std::uint32_t r[4];
  asm volatile("wmma.load.b.sync.aligned.row.m16n16k16.shared.bf16 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(p)), "r"(ldm)
               : "memory");
  set_registers(f, r);
}
__device__ __forceinline__ void store_shared(float* p, const FragC& f, unsigned ldm) {
  asm volatile("wmma.store.d.sync.aligned.row.m16n16k16.shared.f32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8}, %9;"
               :
               : "r"(shared_address(p)), "f"(f.x[0]), "f"(f.x[1]), "f"(f.x[2]), "f"(f.x[3]), "f"(f.x[4]), "f"(f.x[5]),
                 "f"(f.x[6]), "f"(f.x[7]), "r"(ldm)
               : "memory");
}

// Four floats into shared memory as four bf16 (round to nearest even), 8-byte aligned.
__device__ __forceinline__ void store_as_bf16(__nv_bfloat16* p, const float (&v)[4]) {
  auto* pairs = reinterpret_cast<__nv_bfloat162*>(p);
  pairs[0] = __floats2bfloat162_rn(v[0], v[1]);
  pairs[1] = __floats2bfloat162_rn(v[2], v[3]);
}
}  // namespace bf16_wmma

// kAligned: a, b, c, lda, ldb and ldc allow 16-byte vector access.
template <class S, bool kAligned>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocksPerSM)
    tensor_core_bf16_matmul_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                   std::int64_t m, std::int64_t k, std::int64_t n, std::int64_t lda, std::int64_t ldb,
                                   std::int64_t ldc) {
  using namespace bf16_wmma;
  constexpr int kWidth = 4;  // floats per 16-byte vector
  constexpr int kAVectorsPerRow = S::kTileK / kWidth, kBVectorsPerRow = S::kBlockCols / kWidth;
  constexpr int kALoads = S::kBlockRows * kAVectorsPerRow / S::kThreads;
  constexpr int kBLoads = S::kTileK * kBVectorsPerRow / S::kThreads;
  constexpr int kWarpFragRows = S::kWarpRows / S::kFragRows, kWarpFragCols = S::kWarpCols / S::kFragCols;
  static_assert(kALoads * S::kThreads == S::kBlockRows * kAVectorsPerRow, "A tile must split evenly over threads");
  static_assert(kBLoads * S::kThreads == S::kTileK * kBVectorsPerRow, "B tile must split evenly over threads");

  using ATile = __nv_bfloat16[S::kBlockRows][S::kAStride];  // ATile[r][kk] = A(row0 + r, k0 + kk)
  using BTile = __nv_bfloat16[S::kTileK][S::kBStride];      // BTile[kk][j] = B(k0 + kk, col0 + j)
  using CTile = float[S::kBlockRows][S::kCStride];
  extern __shared__ __align__(128) unsigned char shared_bytes[];
  ATile* a_tile = reinterpret_cast<ATile*>(shared_bytes);                      // [2]
  BTile* b_tile = reinterpret_cast<BTile*>(shared_bytes + 2 * sizeof(ATile));  // [2]
  CTile& c_tile = *reinterpret_cast<CTile*>(shared_bytes);                     // after the last k tile

  const int warp = threadIdx.x / 32;
  const int warp_row0 = (warp / (S::kBlockCols / S::kWarpCols)) * S::kWarpRows;
  const int warp_col0 = (warp % (S::kBlockCols / S::kWarpCols)) * S::kWarpCols;
  const std::int64_t col0 = std::int64_t(blockIdx.x) * S::kBlockCols;
  const std::int64_t row_tiles = ceil_div(m, S::kBlockRows);

  // gridDim.y is capped at 65535: each block loops over row tiles (the same count for all its threads).
  for (std::int64_t tile_row = blockIdx.y; tile_row < row_tiles; tile_row += gridDim.y) {
    const std::int64_t row0 = tile_row * S::kBlockRows;

    // Where this thread's global loads start; they walk along k one tile per step (as in register_tiled).
    const float* a_src[kALoads];
    bool a_row_ok[kALoads];
#pragma unroll
    for (int l = 0; l < kALoads; ++l) {
      const int v = threadIdx.x + l * S::kThreads;
      const std::int64_t row = row0 + v / kAVectorsPerRow;
      a_row_ok[l] = row < m;
      a_src[l] = a + (a_row_ok[l] ? row : 0) * lda + (v % kAVectorsPerRow) * kWidth;
    }
    const float* b_src[kBLoads];
    int b_cols_valid[kBLoads];
#pragma unroll
    for (int l = 0; l < kBLoads; ++l) {
      const int v = threadIdx.x + l * S::kThreads;
      const std::int64_t col = col0 + (v % kBVectorsPerRow) * kWidth;
      const int kk = v / kBVectorsPerRow;
      b_cols_valid[l] = segment_valid<float>(n - col);
      b_src[l] = b + (kk < k ? kk : 0) * ldb + (b_cols_valid[l] > 0 ? col : 0);
    }

    // The next tiles, on their way from global to shared memory. k_left: columns of A (rows of B)
    // from the start of the tile being loaded to the end of the matrix.
    float a_next[kALoads][kWidth];
    float b_next[kBLoads][kWidth];
    // Most tiles lie wholly inside A and B; they skip the per-element bounds arithmetic.
    const bool interior = row0 + S::kBlockRows <= m && col0 + S::kBlockCols <= n;
    auto load_tiles = [&](std::int64_t k_left) {
      const bool full = interior && k_left >= S::kTileK;
#pragma unroll
      for (int l = 0; l < kALoads; ++l) {
        const int kk = (threadIdx.x + l * S::kThreads) % kAVectorsPerRow * kWidth;
        if (full)
          load_segment<float, kAligned>(a_src[l], kWidth, a_next[l]);
        else
          load_segment<float, kAligned>(a_src[l], a_row_ok[l] ? segment_valid<float>(k_left - kk) : 0, a_next[l]);
        if (kk + S::kTileK < k_left) a_src[l] += S::kTileK;  // stays inside A
      }
#pragma unroll
      for (int l = 0; l < kBLoads; ++l) {
        const int kk = (threadIdx.x + l * S::kThreads) / kBVectorsPerRow;
        if (full)
          load_segment<float, kAligned>(b_src[l], kWidth, b_next[l]);
        else
          load_segment<float, kAligned>(b_src[l], kk < k_left ? b_cols_valid[l] : 0, b_next[l]);
        if (kk + S::kTileK < k_left) b_src[l] += S::kTileK * ldb;  // stays inside B
      }
    };
    // Converts to bf16 on the way in, once per element.
    auto store_tiles = [&](int buf) {
#pragma unroll
      for (int l = 0; l < kALoads; ++l) {
        const int v = threadIdx.x + l * S::kThreads;
        store_as_bf16(&a_tile[buf][v / kAVectorsPerRow][(v % kAVectorsPerRow) * kWidth], a_next[l]);
      }
#pragma unroll
      for (int l = 0; l < kBLoads; ++l) {
        const int v = threadIdx.x + l * S::kThreads;
        store_as_bf16(&b_tile[buf][v / kBVectorsPerRow][(v % kBVectorsPerRow) * kWidth], b_next[l]);
      }
    };

    FragC acc[kWarpFragRows][kWarpFragCols];
#pragma unroll
    for (int i = 0; i < kWarpFragRows; ++i)
#pragma unroll
      for (int j = 0; j < kWarpFragCols; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    load_tiles(k);
    store_tiles(0);
    __syncthreads();
    int buf = 0;
    for (std::int64_t k_left = k; k_left > 0; k_left -= S::kTileK) {
      const bool has_next = k_left > S::kTileK;
      if (has_next) load_tiles(k_left - S::kTileK);  // in flight during the arithmetic below

#pragma unroll
      for (int kk = 0; kk < S::kTileK; kk += S::kFragK) {
        // The warp's B fragments for this k step, then one A fragment at a time (fewer live registers).
        FragB b_frag[kWarpFragCols];
#pragma unroll
        for (int j = 0; j < kWarpFragCols; ++j)
          load_shared(b_frag[j], &b_tile[buf][kk][warp_col0 + j * S::kFragCols], S::kBStride);
#pragma unroll
        for (int i = 0; i < kWarpFragRows; ++i) {
          FragA a_frag;
          load_shared(a_frag, &a_tile[buf][warp_row0 + i * S::kFragRows][kk], S::kAStride);
#pragma unroll
          for (int j = 0; j < kWarpFragCols; ++j) wmma::mma_sync(acc[i][j], a_frag, b_frag[j], acc[i][j]);
        }
      }

      // The other buffer was last read in the previous iteration, before its closing barrier.
      if (has_next) store_tiles(buf ^ 1);
      __syncthreads();
      buf ^= 1;
    }

    // The tiles are free after the last barrier: stage C in shared memory, then copy it out guarded.
#pragma unroll
    for (int i = 0; i < kWarpFragRows; ++i)
#pragma unroll
      for (int j = 0; j < kWarpFragCols; ++j)
        store_shared(&c_tile[warp_row0 + i * S::kFragRows][warp_col0 + j * S::kFragCols], acc[i][j], S::kCStride);
    __syncthreads();
    constexpr int kCVectorsPerRow = S::kBlockCols / kWidth;
#pragma unroll 4
    for (int v = threadIdx.x; v < S::kBlockRows * kCVectorsPerRow; v += S::kThreads) {
      const std::int64_t row = row0 + v / kCVectorsPerRow, col = col0 + (v % kCVectorsPerRow) * kWidth;
      if (row >= m) continue;
      float values[kWidth];
      load_vector(&c_tile[v / kCVectorsPerRow][(v % kCVectorsPerRow) * kWidth], values);
      store_segment<float, kAligned>(c + row * ldc + col, segment_valid<float>(n - col), values);
    }
    __syncthreads();  // the next row tile's first tiles overwrite c_tile
  }
}

}  // namespace tandem::cuda::matmul_stages
