// Stages 5 and 6, tensor_core_tf32 and tensor_core_bf16: the multiply-adds move from the FMA units to
// the tensor cores, through WMMA (nvcuda::wmma), with float accumulation. The two stages are one kernel
// over an input policy (Tf32Input, Bf16Input below) that says how the float tiles are rounded while being
// staged into shared memory and which fragments the warps multiply:
//   tf32: 16 x 16 x 8 fragments of tf32 (a float with a 10-bit mantissa; products exact, float sums);
//   bf16: 16 x 16 x 16 fragments of bf16 (8 significant bits): half the shared memory per tile and twice
//         the k per fragment, so twice the tensor-core rate, for a coarser rounding of the inputs
//         (relative error up to 2^-8 per input instead of 2^-11).
// Changed from register_tiled: a 128 x 128 block tile of 8 warps is split into one 64 x 32 tile per
// warp instead of one small tile per thread; each warp keeps 4 x 2 accumulator fragments and multiplies
// whole fragments loaded from shared memory. The tiles are stored row-major (WMMA reads A row-major, no
// transpose needed) and rounded once, while being staged into shared memory.
// Kept from register_tiled: 16-byte global loads when aligned, zero-filled edges, register prefetch of
// the next tile and double-buffered shared memory.
// New: C leaves through shared memory. WMMA stores a whole 16 x 16 fragment with one alignment and
// stride rule, so the accumulators are written to a shared C tile first and copied out by all threads
// with the usual guarded, vectorized-when-aligned stores, for any m, n and ldc. And the fragments move
// between registers and shared memory through WMMA's PTX instructions for the shared state space:
// wmma::load_matrix_sync compiles to generic 64-bit loads, which ran the tf32 stage 30% slower on an H200.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cstdint>
#include <cstring>

#include "backends/cuda/matmul/tile_io.cuh"

namespace tandem::cuda::matmul_stages {

namespace wmma_shared {
// wmma::load_matrix_sync and store_matrix_sync take generic pointers, and the compiler then reaches
// shared memory through 64-bit generic loads and stores (LD/ST instead of LDS/STS), which cost
// registers and time. The policies below do the same with the PTX instructions' .shared state space.
__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
template <class Frag>
__device__ __forceinline__ void set_registers(Frag& f, const std::uint32_t (&r)[4]) {
  static_assert(sizeof(f.x) == sizeof(r), "a tf32 or bf16 input fragment is 4 registers");
  std::memcpy(&f.x[0], r, sizeof(r));
}
}  // namespace wmma_shared

// The PTX of one policy's fragment loads and accumulator store; SHAPE is m16n16k8 or m16n16k16, TYPE
// the input type in PTX (tf32 or bf16).
#define TANDEM_WMMA_SHARED_ACCESS(SHAPE, TYPE)                                                                    \
  __device__ __forceinline__ static void load_shared(FragA& f, const Element* p, unsigned ldm) {                  \
    std::uint32_t r[4];                                                                                           \
    asm volatile("wmma.load.a.sync.aligned.row." SHAPE ".shared." TYPE " {%0, %1, %2, %3}, [%4], %5;"             \
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])                                                 \
                 : "r"(wmma_shared::shared_address(p)), "r"(ldm)                                                  \
                 : "memory");                                                                                     \
    wmma_shared::set_registers(f, r);                                                                             \
  }                                                                                                               \
  __device__ __forceinline__ static void load_shared(FragB& f, const Element* p, unsigned ldm) {                  \
    std::uint32_t r[4];                                                                                           \
    asm volatile("wmma.load.b.sync.aligned.row." SHAPE ".shared." TYPE " {%0, %1, %2, %3}, [%4], %5;"             \
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])                                                 \
                 : "r"(wmma_shared::shared_address(p)), "r"(ldm)                                                  \
                 : "memory");                                                                                     \
    wmma_shared::set_registers(f, r);                                                                             \
  }                                                                                                               \
  __device__ __forceinline__ static void store_shared(float* p, const FragC& f, unsigned ldm) {                   \
    asm volatile("wmma.store.d.sync.aligned.row." SHAPE ".shared.f32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8}, %9;" \
                 :                                                                                                \
                 : "r"(wmma_shared::shared_address(p)), "f"(f.x[0]), "f"(f.x[1]), "f"(f.x[2]), "f"(f.x[3]),       \
                   "f"(f.x[4]), "f"(f.x[5]), "f"(f.x[6]), "f"(f.x[7]), "r"(ldm)                                   \
                 : "memory");                                                                                     \
  }

// tensor_core_tf32: tiles rounded to tf32 (kept in float storage), 16 x 16 x 8 fragments.
struct Tf32Input {
  using Element = float;
  static constexpr int kFragK = 8;
  static constexpr int kPad = 4;  // elements per 16 bytes
  using FragA =
      nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 8, nvcuda::wmma::precision::tf32, nvcuda::wmma::row_major>;
  using FragB =
      nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 8, nvcuda::wmma::precision::tf32, nvcuda::wmma::row_major>;
  using FragC = nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 8, float>;
  // Four floats into shared memory, rounded to tf32, 16-byte aligned.
  __device__ __forceinline__ static void stage(float* p, float (&v)[4]) {
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = nvcuda::wmma::__float_to_tf32(v[j]);
    store_vector(p, v);
  }
  TANDEM_WMMA_SHARED_ACCESS("m16n16k8", "tf32")
};

// tensor_core_bf16: tiles converted to bf16, 16 x 16 x 16 fragments.
struct Bf16Input {
  using Element = __nv_bfloat16;
  static constexpr int kFragK = 16;
  static constexpr int kPad = 8;  // elements per 16 bytes
  using FragA = nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, __nv_bfloat16, nvcuda::wmma::row_major>;
  using FragB = nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, __nv_bfloat16, nvcuda::wmma::row_major>;
  using FragC = nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float>;
  // Four floats into shared memory as four bf16 (round to nearest even), 8-byte aligned.
  __device__ __forceinline__ static void stage(__nv_bfloat16* p, float (&v)[4]) {
    auto* pairs = reinterpret_cast<__nv_bfloat162*>(p);
    pairs[0] = __floats2bfloat162_rn(v[0], v[1]);
    pairs[1] = __floats2bfloat162_rn(v[2], v[3]);
  }
  TANDEM_WMMA_SHARED_ACCESS("m16n16k16", "bf16")
};
#undef TANDEM_WMMA_SHARED_ACCESS

template <class Input>
struct TensorCoreShape {
  static constexpr int kBlockRows = 128, kBlockCols = 128, kTileK = 32;
  // About 220 registers (64 accumulators, 32 for the prefetched tiles, fragments), one block per SM;
  // capping at 128 registers to fit two made it spill.
  static constexpr int kMinBlocksPerSM = 1;
  static constexpr int kWarpRows = 64, kWarpCols = 32;  // 2 x 4 warps
  static constexpr int kFragRows = 16, kFragCols = 16, kFragK = Input::kFragK;
  static constexpr int kWarps = (kBlockRows / kWarpRows) * (kBlockCols / kWarpCols);
  static constexpr int kThreads = 32 * kWarps;
  // Rows padded by 16 bytes: the strides stay multiples of 16 bytes, as WMMA requires, but consecutive
  // rows start in different banks, so fragment loads do not conflict. C is float, padded by 4.
  static constexpr int kAStride = kTileK + Input::kPad, kBStride = kBlockCols + Input::kPad;
  static constexpr int kCStride = kBlockCols + 4;
  static constexpr std::size_t kTileBytes =
      2 * (kBlockRows * kAStride + kTileK * kBStride) * sizeof(typename Input::Element);
  static constexpr std::size_t kCTileBytes = kBlockRows * kCStride * sizeof(float);
  // Dynamic shared memory: the double-buffered A and B tiles, later reused for the (float) C tile. Over
  // 48 KB, so the launcher raises the kernel's limit.
  static constexpr std::size_t kSharedBytes = kTileBytes > kCTileBytes ? kTileBytes : kCTileBytes;
};

// kAligned: a, b, c, lda, ldb and ldc allow 16-byte vector access.
template <class Input, bool kAligned, class S = TensorCoreShape<Input>>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocksPerSM)
    tensor_core_matmul_kernel(const GemmParams<float> p) {
  const float* __restrict__ const a = p.a;
  const float* __restrict__ const b = p.b;
  float* __restrict__ const c = p.c;
  const std::int64_t m = p.m, k = p.k, n = p.n, lda = p.lda, ldb = p.ldb, ldc = p.ldc;
  using FragA = typename Input::FragA;
  using FragB = typename Input::FragB;
  using FragC = typename Input::FragC;
  using Element = typename Input::Element;
  constexpr int kWidth = 4;  // floats per 16-byte vector
  constexpr int kAVectorsPerRow = S::kTileK / kWidth, kBVectorsPerRow = S::kBlockCols / kWidth;
  constexpr int kALoads = S::kBlockRows * kAVectorsPerRow / S::kThreads;
  constexpr int kBLoads = S::kTileK * kBVectorsPerRow / S::kThreads;
  constexpr int kWarpFragRows = S::kWarpRows / S::kFragRows, kWarpFragCols = S::kWarpCols / S::kFragCols;
  static_assert(kALoads * S::kThreads == S::kBlockRows * kAVectorsPerRow, "A tile must split evenly over threads");
  static_assert(kBLoads * S::kThreads == S::kTileK * kBVectorsPerRow, "B tile must split evenly over threads");

  using ATile = Element[S::kBlockRows][S::kAStride];  // ATile[r][kk] = A(row0 + r, k0 + kk)
  using BTile = Element[S::kTileK][S::kBStride];      // BTile[kk][j] = B(k0 + kk, col0 + j)
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
    // Rounded to the input precision on the way in (what the tensor cores would use anyway), once per
    // element instead of once per fragment load in every warp that reads it.
    auto store_tiles = [&](int buf) {
#pragma unroll
      for (int l = 0; l < kALoads; ++l) {
        const int v = threadIdx.x + l * S::kThreads;
        Input::stage(&a_tile[buf][v / kAVectorsPerRow][(v % kAVectorsPerRow) * kWidth], a_next[l]);
      }
#pragma unroll
      for (int l = 0; l < kBLoads; ++l) {
        const int v = threadIdx.x + l * S::kThreads;
        Input::stage(&b_tile[buf][v / kBVectorsPerRow][(v % kBVectorsPerRow) * kWidth], b_next[l]);
      }
    };

    FragC acc[kWarpFragRows][kWarpFragCols];
#pragma unroll
    for (int i = 0; i < kWarpFragRows; ++i)
#pragma unroll
      for (int j = 0; j < kWarpFragCols; ++j) nvcuda::wmma::fill_fragment(acc[i][j], 0.0f);

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
          Input::load_shared(b_frag[j], &b_tile[buf][kk][warp_col0 + j * S::kFragCols], S::kBStride);
#pragma unroll
        for (int i = 0; i < kWarpFragRows; ++i) {
          FragA a_frag;
          Input::load_shared(a_frag, &a_tile[buf][warp_row0 + i * S::kFragRows][kk], S::kAStride);
#pragma unroll
          for (int j = 0; j < kWarpFragCols; ++j) nvcuda::wmma::mma_sync(acc[i][j], a_frag, b_frag[j], acc[i][j]);
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
        Input::store_shared(&c_tile[warp_row0 + i * S::kFragRows][warp_col0 + j * S::kFragCols], acc[i][j],
                            S::kCStride);
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

// Input: Tf32Input (tensor_core_tf32) or Bf16Input (tensor_core_bf16).
template <class Input>
void launch_tensor_core(const GemmParams<float>& p, const GemmContext& ctx) {
  using Shape = TensorCoreShape<Input>;
  const dim3 block(Shape::kThreads);
  const dim3 grid = tile_grid(ceil_div(p.m, Shape::kBlockRows), ceil_div(p.n, Shape::kBlockCols));
  const auto kernel =
      all_vector_aligned(p) ? tensor_core_matmul_kernel<Input, true> : tensor_core_matmul_kernel<Input, false>;
  allow_dynamic_shared_memory(reinterpret_cast<const void*>(kernel), Shape::kSharedBytes);
  kernel<<<grid, block, Shape::kSharedBytes, ctx.stream>>>(p);
  TANDEM_CUDA_CHECK_LAUNCH();
}

}  // namespace tandem::cuda::matmul_stages
