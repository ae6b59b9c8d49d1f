// Stage 4, register_tiled: 2D block tiling with a tile of C per thread in registers. Changed from
// tiled: a block of threads computes a large tile of C (float: 128 x 256 with 256 threads for large
// products), each thread an 8 x 16 piece of it held in registers, walking k in steps of 8. Per step along
// k, a thread reads 8 values of A and 16 of B from shared memory and does 128 fused multiply-adds with
// them, instead of 1 multiply-add per 2 shared reads: shared-memory bandwidth stops being the limit and
// the FMA units become it.
// What makes it fast:
// - The A tile is stored transposed in shared memory (k-major), so the values of A a thread needs for
//   one k are consecutive and come in as 16-byte vectors, like those of B.
// - Global memory is read as 16-byte vectors (a 16-bit operand of a mixed product: 8 bytes, the same four
//   elements) when the pointers and leading dimensions allow it (checked at run time by the launcher, which
//   picks kAligned), else element by element; edges are zero-filled. Tiles wholly inside the matrices (all but
//   the edge ones) skip the bounds arithmetic.
// - Two shared buffers of each tile (double buffering): while the block computes on one, the next
//   tile's global loads are in flight into registers and then go into the other buffer, so there is one
//   __syncthreads() per tile and the loads' latency hides behind the arithmetic.
// - Two register buffers of the per-step values of A and B: the step after this one is read from shared
//   memory while this one computes, also across the barrier into the next tile.
// - Each thread's tile is split into pieces of one vector per row (128 x 256 float: 2 x 4 pieces of 4 x 4,
//   64 rows and 64 columns apart), so that the threads of a warp read consecutive vectors of a shared
//   tile row (no bank conflicts).
// - A block tile per size class (float, with_float_tile): 128 x 256, 128 x 128 or 64 x 128, whichever
//   fills its last wave best, when there are at least as many 128 x 128 tiles as SMs; else 128 x 64, and
//   64 x 64 for the smallest problems, so that small products still fill the GPU (H100, kernel level,
//   TFLOP/s against cuBLAS SGEMM in the same call: 1024^3 20.1 -> 30.0 of 34.7; 512^3 4.9 -> 10.9 of
//   12.0; docs/PERFORMANCE.md). Every shape computes each C(i, j) as the same fma chain.
// K > 4096 (common/canonical.hpp: K cut into chunks of kMatmulChunk = 4096, each chunk one fma chain, C(i, j) the
// canonical sum of the chunk values): launch_register_tiled_chunks runs the same kernel with a chunk of K per grid z
// (kChunked) into panels of scratch, then sums each element's chunk values (chunk_combine.cuh). K <= 4096 is the one
// chunk: the launch as before.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "backends/cuda/matmul/chunk_combine.cuh"
#include "backends/cuda/matmul/tile_io.cuh"
#include "common/canonical.hpp"

namespace tandem::cuda::matmul_stages {

__device__ __forceinline__ float fma_rn(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ __forceinline__ double fma_rn(double a, double b, double c) { return __fma_rn(a, b, c); }

// Tile sizes per element type. kWarpThreadRows: a warp's 32 threads cover kWarpThreadRows x (32 /
// kWarpThreadRows) thread tiles; with 4 x 8 a warp's vector reads of a shared tile row touch 4 (A) and 8 (B)
// distinct vectors, one pass of the shared-memory banks each. kMinBlocksPerSM caps the registers a thread may
// use (65536 / (threads * kMinBlocksPerSM)), so that many blocks fit on an SM; the float tiles below are sized to
// need no more than that cap (no spills) and hold as many blocks as it names (with_float_tile counts on it).
//
// Float: three tiles for products with at least as many 128 x 128 tiles as SMs, each the fastest in part of
// that range (with_float_tile), and two smaller ones below it. TFLOP/s on an H200 at 8192^3, cuBLAS SGEMM 51.1
// in the same run: 128 x 256 45.7, 128 x 128 of 128 threads 45.4, 64 x 128 44.5 (their last waves 97%, 97% and
// 98.5% full); the earlier single tile (128 x 128 of 256 threads, 8 x 8 each, k steps of 16) 44.3. The larger thread
// tile (8 x 16: 128 multiply-adds per 6 vector reads of shared memory, against 64 per 4) is what gains; with k steps of
// 16 its staging registers no longer fit and it spills.
template <class T>
struct RegisterTiledShape;
template <>
struct RegisterTiledShape<float> {  // 256 threads; one block per SM (255 registers)
  static constexpr int kBlockRows = 128, kBlockCols = 256, kTileK = 8;
  static constexpr int kThreadRows = 8, kThreadCols = 16;
  static constexpr int kWarpThreadRows = 4;
  static constexpr int kMinBlocksPerSM = 1;
};
struct RegisterTiled128x128 {  // 128 threads; two blocks per SM (255 registers)
  static constexpr int kBlockRows = 128, kBlockCols = 128, kTileK = 8;
  static constexpr int kThreadRows = 8, kThreadCols = 16;
  static constexpr int kWarpThreadRows = 4;
  static constexpr int kMinBlocksPerSM = 2;
};
struct RegisterTiled64x128 {  // 128 threads; three blocks per SM (about 167 registers)
  static constexpr int kBlockRows = 64, kBlockCols = 128, kTileK = 8;
  static constexpr int kThreadRows = 8, kThreadCols = 8;
  static constexpr int kWarpThreadRows = 2;
  static constexpr int kMinBlocksPerSM = 3;
};
// Double: 128 x 64 with 8 x 4 per thread (about 175 registers). 128 x 128 with 8 x 8 ran 20% faster
// but needs 254 registers, one short of spilling.
template <>
struct RegisterTiledShape<double> {
  static constexpr int kBlockRows = 128, kBlockCols = 64, kTileK = 8;
  static constexpr int kThreadRows = 8, kThreadCols = 4;
  static constexpr int kWarpThreadRows = 4;
  static constexpr int kMinBlocksPerSM = 1;
};

// The smaller float tiles, for products with fewer 128 x 128 tiles than SMs: 256 threads each, 8 x 4 and 4 x 4 per
// thread. kMinBlocksPerSM 2: two blocks per SM fit in the registers, for latency hiding when the tiles are few.
struct RegisterTiled128x64 {
  static constexpr int kBlockRows = 128, kBlockCols = 64, kTileK = 16;
  static constexpr int kThreadRows = 8, kThreadCols = 4;
  static constexpr int kWarpThreadRows = 4;
  static constexpr int kMinBlocksPerSM = 2;
};
struct RegisterTiled64x64 {
  static constexpr int kBlockRows = 64, kBlockCols = 64, kTileK = 16;
  static constexpr int kThreadRows = 4, kThreadCols = 4;
  static constexpr int kWarpThreadRows = 4;
  static constexpr int kMinBlocksPerSM = 2;
};

// Calls run.template operator()<Shape>() with the float tile for a product of tiles(Shape{}) block tiles per launch
// (a launch of K chunks counts every chunk's). With fewer 128 x 128 tiles than SMs: 128 x 64 while those fill
// half the SMs, else 64 x 64. Otherwise the tile with the best product of its speed with full waves (above, each
// divided by how full its last wave was there: 1, 0.992, 0.959) and how full it leaves the last wave: a wave is
// kMinBlocksPerSM blocks on every SM, and a partly filled last wave leaves SMs idle (3000^3: 64 x 128 tiles, 2.85
// waves, 0.91x cuBLAS, where 128 x 256 tiles take 2.18 waves and run at 0.72x). The speeds are those of rows
// of whole vectors (the vector loads). Every tile computes each element as the same fma chain: the choice
// changes no bit.
template <class Tiles, class Run>
void with_float_tile(const Tiles& tiles, const Run& run) {
  const std::int64_t sms = multiprocessor_count();  // (common.cuh)
  if (tiles(RegisterTiled128x128{}) < sms) {
    if (tiles(RegisterTiled128x64{}) >= sms / 2) return run.template operator()<RegisterTiled128x64>();
    return run.template operator()<RegisterTiled64x64>();
  }
  auto fill = [&]<class Shape>(Shape shape, double speed) {
    const std::int64_t t = tiles(shape), slots = sms * Shape::kMinBlocksPerSM;
    return speed * double(t) / double(ceil_div(t, slots) * slots);
  };
  const double wide = fill(RegisterTiledShape<float>{}, 1.0), square = fill(RegisterTiled128x128{}, 0.992),
               narrow = fill(RegisterTiled64x128{}, 0.959);
  if (wide >= square && wide >= narrow) return run.template operator()<RegisterTiledShape<float>>();
  if (square >= narrow) return run.template operator()<RegisterTiled128x128>();
  return run.template operator()<RegisterTiled64x128>();
}

template <class Shape>
inline constexpr int kRegisterTiledThreads = (Shape::kBlockRows / Shape::kThreadRows) *
                                             (Shape::kBlockCols / Shape::kThreadCols);

// The product of chunk blockIdx.z of K (canonical.hpp's chunks of kMatmulChunk): k in [z * 4096, min(K, (z + 1) *
// 4096)), into C + z * chunk_stride.
template <class P>
__device__ __forceinline__ P chunk_of(P p, std::int64_t chunk_stride) {
  const std::int64_t z = blockIdx.z, k0 = z * detail::canonical::kMatmulChunk;
  p.a += k0;
  p.b += k0 * p.ldb;
  p.c += z * chunk_stride;
  p.k = p.k - k0 < detail::canonical::kMatmulChunk ? p.k - k0 : detail::canonical::kMatmulChunk;
  return p;
}

// kAligned: a, b, c, lda, ldb and ldc allow vector access (all_vector_aligned). kChunked: block z computes chunk z
// of K (chunk_of) into C + z * chunk_stride; otherwise gridDim.z is 1 and chunk_stride unused. TA, TB: A's and B's
// elements, T or (a mixed product, T float) bfloat16 / half: loaded from global memory as stored (load_segment) and
// converted to float as the tile is stored to shared memory (converting at the load would wait for it there): the
// tiles, the chains and the bits are those of the float product of the converted values.
template <class T, class Shape, bool kAligned, bool kChunked = false, class TA = T, class TB = T>
__global__ void __launch_bounds__(kRegisterTiledThreads<Shape>, Shape::kMinBlocksPerSM)
    register_tiled_matmul_kernel(const GemmParams<T, TA, TB> whole, const std::int64_t chunk_stride) {
  const GemmParams<T, TA, TB> p = kChunked ? chunk_of(whole, chunk_stride) : whole;
  const TA* __restrict__ const a = p.a;
  const TB* __restrict__ const b = p.b;
  T* __restrict__ const c = p.c;
  const std::int64_t m = p.m, k = p.k, n = p.n, lda = p.lda, ldb = p.ldb, ldc = p.ldc;
  constexpr int kBlockRows = Shape::kBlockRows, kBlockCols = Shape::kBlockCols, kTileK = Shape::kTileK;
  constexpr int kThreadRows = Shape::kThreadRows, kThreadCols = Shape::kThreadCols;
  constexpr int kThreads = kRegisterTiledThreads<Shape>;
  constexpr int kWidth = kVectorWidth<T>;  // elements per 16-byte vector

  // A thread's rows come in kThreadRows / kWidth strips of kWidth consecutive rows, one strip per
  // kBlockRows / strips rows of the block tile; likewise its columns.
  constexpr int kThreadsAcross = kBlockCols / kThreadCols;
  constexpr int kRowStrips = kThreadRows / kWidth, kColStrips = kThreadCols / kWidth;
  constexpr int kRowStripStride = kBlockRows / kRowStrips, kColStripStride = kBlockCols / kColStrips;

  // Global loads: each thread loads kALoads vectors of the A tile and kBLoads of the B tile.
  constexpr int kAVectorsPerRow = kTileK / kWidth, kBVectorsPerRow = kBlockCols / kWidth;
  constexpr int kALoads = kBlockRows * kAVectorsPerRow / kThreads;
  constexpr int kBLoads = kTileK * kBVectorsPerRow / kThreads;
  static_assert(kALoads * kThreads == kBlockRows * kAVectorsPerRow, "A tile must split evenly over threads");
  static_assert(kBLoads * kThreads == kTileK * kBVectorsPerRow, "B tile must split evenly over threads");
  static_assert(kTileK % 2 == 0, "the register double buffer alternates per step and must restart per tile");
  static_assert(kThreads % 32 == 0 && kThreadRows % kWidth == 0 && kThreadCols % kWidth == 0 && kTileK % kWidth == 0,
                "whole warps; thread tiles and k steps of whole vectors");
  static_assert(
      kThreadsAcross % (32 / Shape::kWarpThreadRows) == 0 && (kBlockRows / kThreadRows) % Shape::kWarpThreadRows == 0,
      "a warp's kWarpThreadRows x (32 / kWarpThreadRows) thread tiles must tile the block's grid of them");

  // The transposed A tile is written one element at a time down a column; padding each of its rows by
  // one vector spreads the columns a warp writes at once over the banks (at most 2-way conflicts
  // instead of 4-way, on a few stores per tile) and keeps rows 16-byte aligned for the vector reads.
  constexpr int kAStride = kBlockRows + kWidth;
  __shared__ __align__(16) T a_tile[2][kTileK][kAStride];    // a_tile[buf][kk][r] = A(row0 + r, k0 + kk)
  __shared__ __align__(16) T b_tile[2][kTileK][kBlockCols];  // b_tile[buf][kk][j] = B(k0 + kk, col0 + j)

  // This thread's place in the block's grid of thread tiles; a warp covers kWarpThreadRows rows of it.
  constexpr int kWarpThreadCols = 32 / Shape::kWarpThreadRows;
  constexpr int kWarpsAcross = kThreadsAcross / kWarpThreadCols;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int thread_col = (warp % kWarpsAcross) * kWarpThreadCols + lane % kWarpThreadCols;
  const int thread_row = (warp / kWarpsAcross) * Shape::kWarpThreadRows + lane / kWarpThreadCols;

  const std::int64_t col0 = std::int64_t(blockIdx.x) * kBlockCols;
  const std::int64_t row_tiles = ceil_div(m, kBlockRows);

  // gridDim.y is capped at 65535: each block loops over row tiles (the same count for all its threads).
  for (std::int64_t tile_row = blockIdx.y; tile_row < row_tiles; tile_row += gridDim.y) {
    const std::int64_t row0 = tile_row * kBlockRows;

    // Where this thread's global loads start. They walk along k, one tile per step: A to the right by
    // kTileK columns, B down by kTileK rows. Rows outside the matrix get a valid count of 0.
    const TA* a_src[kALoads];
    bool a_row_ok[kALoads];
#pragma unroll
    for (int l = 0; l < kALoads; ++l) {
      const int v = threadIdx.x + l * kThreads;
      const std::int64_t row = row0 + v / kAVectorsPerRow;
      a_row_ok[l] = row < m;
      a_src[l] = a + (a_row_ok[l] ? row : 0) * lda + (v % kAVectorsPerRow) * kWidth;
    }
    const TB* b_src[kBLoads];
    int b_cols_valid[kBLoads];
#pragma unroll
    for (int l = 0; l < kBLoads; ++l) {
      const int v = threadIdx.x + l * kThreads;
      const std::int64_t col = col0 + (v % kBVectorsPerRow) * kWidth;
      const int kk = v / kBVectorsPerRow;
      b_cols_valid[l] = segment_valid<T>(n - col);
      b_src[l] = b + (kk < k ? kk : 0) * ldb + (b_cols_valid[l] > 0 ? col : 0);
    }

    // The next tiles, on their way from global to shared memory. k_left: columns of A (rows of B)
    // from the start of the tile being loaded to the end of the matrix.
    // (as stored: a 16-bit operand is converted when the tile is stored to shared memory)
    TA a_next[kALoads][kWidth];
    TB b_next[kBLoads][kWidth];
    // Most tiles lie wholly inside A and B; they skip the per-element bounds arithmetic.
    const bool interior = row0 + kBlockRows <= m && col0 + kBlockCols <= n;
    auto load_tiles = [&](std::int64_t k_left) {
      const bool full = interior && k_left >= kTileK;
#pragma unroll
      for (int l = 0; l < kALoads; ++l) {
        const int kk = (threadIdx.x + l * kThreads) % kAVectorsPerRow * kWidth;
        if (full)
          load_segment<T, kAligned>(a_src[l], kWidth, a_next[l]);
        else
          load_segment<T, kAligned>(a_src[l], a_row_ok[l] ? segment_valid<T>(k_left - kk) : 0, a_next[l], TA(-0.0f));
        if (kk + kTileK < k_left) a_src[l] += kTileK;  // stays inside A
      }
#pragma unroll
      for (int l = 0; l < kBLoads; ++l) {
        const int kk = (threadIdx.x + l * kThreads) / kBVectorsPerRow;
        if (full)
          load_segment<T, kAligned>(b_src[l], kWidth, b_next[l]);
        else
          load_segment<T, kAligned>(b_src[l], kk < k_left ? b_cols_valid[l] : 0, b_next[l]);
        if (kk + kTileK < k_left) b_src[l] += kTileK * ldb;  // stays inside B
      }
    };
    auto store_tiles = [&](int buf) {
#pragma unroll
      for (int l = 0; l < kALoads; ++l) {
        const int v = threadIdx.x + l * kThreads;
        const int r = v / kAVectorsPerRow, kk = (v % kAVectorsPerRow) * kWidth;
#pragma unroll
        for (int j = 0; j < kWidth; ++j) a_tile[buf][kk + j][r] = as_compute<T>(a_next[l][j]);  // transposed
      }
#pragma unroll
      for (int l = 0; l < kBLoads; ++l) {
        const int v = threadIdx.x + l * kThreads;
        T b_vector[kWidth];
#pragma unroll
        for (int j = 0; j < kWidth; ++j) b_vector[j] = as_compute<T>(b_next[l][j]);
        store_vector(&b_tile[buf][v / kBVectorsPerRow][(v % kBVectorsPerRow) * kWidth], b_vector);
      }
    };

    // The values of A and B for one step along k: [step % 2][strip][element].
    T a_frag[2][kRowStrips][kWidth];
    T b_frag[2][kColStrips][kWidth];
    auto load_frags = [&](int buf, int kk, int f) {
#pragma unroll
      for (int s = 0; s < kRowStrips; ++s)
        load_vector(&a_tile[buf][kk][s * kRowStripStride + thread_row * kWidth], a_frag[f][s]);
#pragma unroll
      for (int s = 0; s < kColStrips; ++s)
        load_vector(&b_tile[buf][kk][s * kColStripStride + thread_col * kWidth], b_frag[f][s]);
    };

    T acc[kThreadRows][kThreadCols] = {};

    load_tiles(k);
    store_tiles(0);
    __syncthreads();
    load_frags(0, 0, 0);
    int buf = 0;
    for (std::int64_t k_left = k; k_left > 0; k_left -= kTileK) {
      const bool has_next = k_left > kTileK;
      if (has_next) load_tiles(k_left - kTileK);  // in flight during the arithmetic below

#pragma unroll
      for (int kk = 0; kk < kTileK; ++kk) {
        if (kk == kTileK - 1) {
          // Publish the next tile before the last step, so that the first step's values of the next
          // tile can be read while the last step of this one computes. The other buffer was last read
          // before the previous barrier.
          if (has_next) store_tiles(buf ^ 1);
          __syncthreads();
          buf ^= 1;
        }
        if (kk < kTileK - 1 || has_next) load_frags(buf, (kk + 1) % kTileK, (kk + 1) % 2);
          // One fma per step: every element is one fma chain over k (kChunked: over the chunk's k) from +0.0,
          // the canonical order's chunk value (common/canonical.hpp), bit for bit like the CPU's. Steps past the end of
          // k multiply A's fill, -0.0, by B's fill, +0.0: fma(-0, +0, acc) = acc + (-0) = acc exactly for
          // every acc, -0.0 (from an underflowing product) included, so they change no bit. (Skipping them
          // with a branch per step cost 20% of the speed.)
#pragma unroll
        for (int i = 0; i < kThreadRows; ++i)
#pragma unroll
          for (int j = 0; j < kThreadCols; ++j)
            acc[i][j] =
                fma_rn(a_frag[kk % 2][i / kWidth][i % kWidth], b_frag[kk % 2][j / kWidth][j % kWidth], acc[i][j]);
      }
    }

    // Row i of the thread's tile is row (i / kWidth) * kRowStripStride + thread_row * kWidth + i % kWidth
    // of the block tile; its columns come in kColStrips vectors.
#pragma unroll
    for (int i = 0; i < kThreadRows; ++i) {
      const std::int64_t row = row0 + (i / kWidth) * kRowStripStride + thread_row * kWidth + i % kWidth;
      if (row >= m) continue;
#pragma unroll
      for (int s = 0; s < kColStrips; ++s) {
        const std::int64_t col = col0 + s * kColStripStride + thread_col * kWidth;
        T v[kWidth];
#pragma unroll
        for (int j = 0; j < kWidth; ++j)
          v[j] = detail::canonical_nan(acc[i][s * kWidth + j]);  // one quiet NaN on GPU and CPU
        store_segment<T, kAligned>(c + row * ldc + col, segment_valid<T>(n - col), v);
      }
    }
  }
}

template <class T, class Shape, class TA, class TB>
void launch_register_tiled_shape(const GemmParams<T, TA, TB>& p, const GemmContext& ctx) {
  const dim3 block(kRegisterTiledThreads<Shape>);
  const dim3 grid = tile_grid(ceil_div(p.m, Shape::kBlockRows), ceil_div(p.n, Shape::kBlockCols));
  const auto kernel = all_vector_aligned(p) ? register_tiled_matmul_kernel<T, Shape, true, false, TA, TB>
                                            : register_tiled_matmul_kernel<T, Shape, false, false, TA, TB>;
  kernel<<<grid, block, 0, ctx.stream>>>(p, 0);
  TANDEM_CUDA_CHECK_LAUNCH();
}

// ---- K > 4096: chunk values, then their canonical sum ----------------------------------------------------------

// The chunk values of a panel: chunk z of p's product into p.c + z * chunk_stride, for z < chunks (grid z, at most
// 65535 chunks a launch).
template <class T, class Shape, class TA, class TB>
void launch_register_tiled_chunk_values(const GemmParams<T, TA, TB>& p, std::int64_t chunk_stride, std::int64_t chunks,
                                        const GemmContext& ctx) {
  const dim3 block(kRegisterTiledThreads<Shape>);
  dim3 grid = tile_grid(ceil_div(p.m, Shape::kBlockRows), ceil_div(p.n, Shape::kBlockCols));
  const auto kernel = all_vector_aligned(p) ? register_tiled_matmul_kernel<T, Shape, true, true, TA, TB>
                                            : register_tiled_matmul_kernel<T, Shape, false, true, TA, TB>;
  for (std::int64_t z0 = 0; z0 < chunks; z0 += 65535) {
    const std::int64_t k0 = z0 * detail::canonical::kMatmulChunk;
    GemmParams<T, TA, TB> from = p;  // chunks z0, z0 + 1, ...: k0 multiple of 4096 keeps a and b aligned
    from.a += k0;
    from.b += k0 * p.ldb;
    from.c += z0 * chunk_stride;
    from.k -= k0;
    grid.z = static_cast<unsigned>(std::min<std::int64_t>(65535, chunks - z0));
    kernel<<<grid, block, 0, ctx.stream>>>(from, chunk_stride);
    TANDEM_CUDA_CHECK_LAUNCH();
  }
}

// The scratch of the chunk values: C is done in panels whose q values (and the second level's, q > 4096) fit.
inline constexpr std::int64_t kChunkValuesBytes = std::int64_t(64) << 20;

// C = A * B with K > kMatmulChunk in the canonical order (common/canonical.hpp): for each panel of C, the chunk values
// (one launch, a chunk per grid z; the tile shape counts the chunks' blocks), then sum_chunk_values into C.
template <class T, class TA, class TB>
void launch_register_tiled_chunks(const GemmParams<T, TA, TB>& p, const GemmContext& ctx) {
  using detail::canonical::chunk_count;
  const std::int64_t q = detail::canonical::matmul_chunk_count(p.k);
  const std::int64_t slabs = q + (q > detail::canonical::kChunk ? chunk_count(q) : 0);
  // Panels: whole rows of C where one row's q values fit (columns otherwise, in multiples of 128), rows in
  // multiples of 128 where they are cut; each slab's rows padded to a 16-byte multiple (the vector stores).
  const std::int64_t budget = std::max<std::int64_t>(1, kChunkValuesBytes / std::int64_t(sizeof(T)) / slabs);
  std::int64_t pc = std::min(p.n, budget);
  if (pc < p.n && pc > 128) pc -= pc % 128;
  const std::int64_t ldv = ceil_div(pc, kVectorWidth<T>) * kVectorWidth<T>;
  std::int64_t pr = std::min(p.m, std::max<std::int64_t>(1, budget / ldv));
  if (pr < p.m && pr > 128) pr -= pr % 128;
  const std::int64_t slab = pr * ldv;
  T* const values = static_cast<T*>(ctx.ws.get(std::size_t(slabs * slab) * sizeof(T)));
  for (std::int64_t r0 = 0; r0 < p.m; r0 += pr)
    for (std::int64_t c0 = 0; c0 < p.n; c0 += pc) {
      const GemmParams<T, TA, TB> panel{
          p.a + r0 * p.lda, p.b + c0, values, std::min(pr, p.m - r0), p.k, std::min(pc, p.n - c0), p.lda, p.ldb, ldv};
      // (float: the tiles of launch_register_tiled, counting every chunk's)
      if constexpr (std::is_same_v<T, float>) {
        with_float_tile(
            [&]<class Shape>(Shape) {
              return ceil_div(panel.m, Shape::kBlockRows) * ceil_div(panel.n, Shape::kBlockCols) * q;
            },
            [&]<class Shape>() { launch_register_tiled_chunk_values<T, Shape>(panel, slab, q, ctx); });
      } else {
        launch_register_tiled_chunk_values<T, RegisterTiledShape<T>>(panel, slab, q, ctx);
      }
      sum_chunk_values<T>(values, q, slab, panel.m, panel.n, ldv, p.c + r0 * p.ldc + c0, p.ldc, values + q * slab,
                          ctx.stream);
    }
}

template <class T, class TA = T, class TB = T>
void launch_register_tiled(const GemmParams<T, TA, TB>& p, const GemmContext& ctx) {
  if (p.k > detail::canonical::kMatmulChunk) return launch_register_tiled_chunks(p, ctx);
  if constexpr (std::is_same_v<T, float>) {
    with_float_tile(
        [&p]<class Shape>(Shape) { return ceil_div(p.m, Shape::kBlockRows) * ceil_div(p.n, Shape::kBlockCols); },
        [&]<class Shape>() { launch_register_tiled_shape<T, Shape>(p, ctx); });
  } else {
    launch_register_tiled_shape<T, RegisterTiledShape<T>>(p, ctx);
  }
}

}  // namespace tandem::cuda::matmul_stages
