// The tiles of the Hopper rungs (hopper.cu): the input types, the shape of a pipeline stage, the problem and a
// tile's place in it, and what one tile does with a stage: its loads (load_stage), its products
// (multiply_stage) and its stores (store_tile; store_values and sum_chunks for deterministic mode's chunks).
// A tile is BM x BN of C: BM = 128 (two consumer warpgroups of 64 rows: wgmma_tma .. wgmma_cluster) or 64
// (one warpgroup: wgmma_pingpong, whose consumers take tiles in turns).
#pragma once

#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/common.cuh"
#include "backends/cuda/matmul/hopper_ptx.cuh"
#include "backends/cuda/matmul/wgmma_ops.cuh"
#include "common/canonical.hpp"
#include "common/reduce_ops.hpp"
#include "tandem/float16.hpp"

namespace tandem::cuda::hopper {

struct HopperTf32 {
  using Element = float;  // tf32 values in float's bits
  static constexpr CUtensorMapDataType kMapType = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  static constexpr WgmmaType kWgmma = WgmmaType::tf32;
  __device__ static float convert(float x) {
    std::uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
  }
};
struct HopperBf16 {
  using Element = bfloat16;
  static constexpr CUtensorMapDataType kMapType = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  static constexpr WgmmaType kWgmma = WgmmaType::bf16;
  __device__ static bfloat16 convert(bfloat16 x) { return x; }
};
struct HopperF16 {
  using Element = half;
  static constexpr CUtensorMapDataType kMapType = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  static constexpr WgmmaType kWgmma = WgmmaType::f16;
  __device__ static half convert(half x) { return x; }
};

constexpr int kBlockM = 128;  // rows of C per tile (BM) but for wgmma_pingpong: two consumer warpgroups of 64
constexpr int kRowBytes = 128;
constexpr int kGroupM = 8;  // tiles visited in groups of 8 tile rows (for the L2 cache)
template <class In>
constexpr int kTileK = kRowBytes / int(sizeof(typename In::Element));  // K per k-tile: 32 tf32, 64 16-bit
template <class In>
constexpr int kStepK = 32 / int(sizeof(typename In::Element));  // K per wgmma instruction

// Shared memory: the stages, StoreBytes for the epilogue from kStoreOffset (wgmma_tma_store: kStoreBytes), the
// stages' barriers.
template <int BN, int Stages, int BM = kBlockM, int StoreBytes = 0>
struct Shape {
  static constexpr int kStageBytes = (BM + BN) * kRowBytes;
  static constexpr int kStoreOffset = Stages * kStageBytes;
  static constexpr int kBarrierOffset = kStoreOffset + StoreBytes;
  static constexpr int kSharedBytes = kBarrierOffset + 1024 + 2 * Stages * 8;  // + alignment
  static_assert(kSharedBytes <= 227 * 1024);
};

// What every block needs besides the tensor maps.
struct Problem {
  float* c;
  std::int64_t ldc, stride_c;
  int m, n, k_tiles;
  int tiles_m, tiles_n, batch;
  float alpha, beta;
  bool c_pairs;    // C 8-byte aligned, ldc and stride_c even: two neighbouring columns as one float2
  bool canonical;  // deterministic mode: the canonical epilogue (common/canonical.hpp), NaN canonical
  // Deterministic mode's chunks of K (common/canonical.hpp) where K > 4096: chunk_tiles k-tiles each, chunks of
  // them. Each element's chunk values go to values[(chunk * batch + entry) * m * n + row * n + col]. split:
  // every (tile, chunk) is a work item of its own, which stores its chunk value there (tensor_core_canonical.cu
  // combines them); otherwise a tile's chunks run one after the other and the tile sums them itself.
  int chunk_tiles, chunks;
  bool split;
  float* values;
  // A grouped product (Engine::matmul_grouped; groups > 0): A and C one matrix of m rows cut into `groups`
  // consecutive groups, group g's rows group_rows[g] .. group_rows[g + 1] - 1 multiplied by B's entry g. Its tiles
  // are the groups' one after the other, group_tiles[g] .. group_tiles[g + 1] - 1 its rows of tiles (tiles_m: all
  // of them; batch 1). Device memory, groups + 1 entries each.
  int groups = 0;
  const int* group_rows = nullptr;
  const int* group_tiles = nullptr;
  bool group_b_shared = false;  // one B for every group (its entry 0)
};

struct Tile {
  int entry, m, n;     // B's (and C's) entry; the row and column of tiles within it
  int k_first, k_end;  // its k-tiles: all of them, or one chunk's (Problem::split)
  int chunk;
  int row0 = 0;     // the row of A and C where its entry's (a grouped product: its group's) rows start
  int row_end = 0;  // the end of those rows: C's rows at or past it are not the tile's to store
  int a_entry = 0;  // A's entry (a grouped product: 0, the one matrix)
};
// Tile `local` of an entry of tiles_m x p.tiles_n tiles: groups of kGroupM tile rows, column-major inside a group
// (for the L2 cache); the rest of the Tile as given.
__device__ __forceinline__ Tile placed(const Problem& p, int tiles_m, int local, Tile tile) {
  const int per_group = kGroupM * p.tiles_n, first_m = local / per_group * kGroupM;
  const int group_rows = min(tiles_m - first_m, kGroupM);
  tile.m = first_m + local % per_group % group_rows, tile.n = local % per_group / group_rows;
  return tile;
}

// Tile t of the whole problem: entries one after the other (deterministic mode's split: chunk after chunk of
// them), each placed(). A grouped product's groups are its entries, each with its own rows of tiles.
__device__ __forceinline__ Tile tile_of(const Problem& p, int t) {
  if (p.groups > 0) {  // the group whose tiles hold t: the last one that starts at or before it
    int lo = 0, hi = p.groups;
    while (hi - lo > 1) {
      const int mid = (lo + hi) / 2;
      if (p.group_tiles[mid] * p.tiles_n <= t)
        lo = mid;
      else
        hi = mid;
    }
    return placed(p, p.group_tiles[lo + 1] - p.group_tiles[lo], t - p.group_tiles[lo] * p.tiles_n,
                  Tile{p.group_b_shared ? 0 : lo, 0, 0, 0, p.k_tiles, 0, p.group_rows[lo], p.group_rows[lo + 1], 0});
  }
  const int per_entry = p.tiles_m * p.tiles_n;
  const int chunk = p.split ? t / (per_entry * p.batch) : 0;
  t -= chunk * per_entry * p.batch;
  const int entry = t / per_entry;
  const int k_first = p.split ? chunk * p.chunk_tiles : 0;
  const int k_end = p.split ? min(p.k_tiles, k_first + p.chunk_tiles) : p.k_tiles;
  return placed(p, p.tiles_m, t % per_entry, Tile{entry, 0, 0, k_first, k_end, chunk, 0, p.m, entry});
}

// Tile t of a cluster of two (wgmma_cluster): tile_of over pairs of tile rows, CTA `rank` taking row
// 2 * pair + rank (past the last row of tiles where tiles_m is odd: its loads are zeros, nothing is stored).
__device__ __forceinline__ Tile pair_tile_of(const Problem& p, int t, std::uint32_t rank) {
  Problem pairs = p;
  pairs.tiles_m = (p.tiles_m + 1) / 2;
  Tile tile = tile_of(pairs, t);
  tile.m = 2 * tile.m + int(rank);
  return tile;
}

// f(row, col, x) for each accumulator d[x] of warpgroup wg's part of the tile (thread t of 128) inside the
// Problem's m x n: d[4j + {0,1}] at row lane / 4, columns 8j + 2 (lane % 4) + {0,1} (per warp, 16 rows); d[4j +
// {2,3}] the same 8 rows further down.
template <int BN, int BM = kBlockM, class F>
__device__ __forceinline__ void for_each_accumulator(const Problem& p, const Tile& tile, int wg, int t, F&& f) {
  const int warp = t / 32, lane = t % 32;
  const std::int64_t row0 = std::int64_t(tile.m) * BM + wg * 64 + warp * 16 + lane / 4;
  const std::int64_t col0 = std::int64_t(tile.n) * BN + 2 * (lane % 4);
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int x = 0; x < 4; ++x) {
      const std::int64_t row = row0 + 8 * (x / 2), col = col0 + 8 * j + x % 2;
      if (row < p.m && col < p.n) f(row, col, 4 * j + x);
    }
}

// Chunk value d of chunk `chunk` of warpgroup wg's part of the tile into p.values.
template <int BN>
__device__ __forceinline__ void store_values(const float (&d)[BN / 2], const Problem& p, const Tile& tile, int wg,
                                             int t, int chunk) {
  float* const v = p.values + (std::int64_t(chunk) * p.batch + tile.entry) * p.m * p.n;
  for_each_accumulator<BN>(p, tile, wg, t,
                           [&](std::int64_t row, std::int64_t col, int x) { v[row * p.n + col] = d[x]; });
}

// The canonical sum (common/canonical.hpp, lane_tree) of chunks <= 32 values: at[0], at[slab], ..., then last.
// (Not inlined: one tree for the 128 accumulators of a thread.)
static __device__ __noinline__ float chunk_values_sum(const float* at, std::int64_t slab, int chunks, float last) {
  return detail::canonical::lane_tree(0, chunks, [&](int c) { return c + 1 < chunks ? at[c * slab] : last; });
}

// d = the canonical sum of each element's p.chunks chunk values: the earlier ones from p.values, the last one d
// itself.
template <int BN>
__device__ __forceinline__ void sum_chunks(float (&d)[BN / 2], const Problem& p, const Tile& tile, int wg, int t) {
  const std::int64_t slab = std::int64_t(p.batch) * p.m * p.n;
  const float* const v = p.values + std::int64_t(tile.entry) * p.m * p.n;
  for_each_accumulator<BN>(p, tile, wg, t, [&](std::int64_t row, std::int64_t col, int x) {
    d[x] = chunk_values_sum(v + row * p.n + col, slab, p.chunks, d[x]);
  });
}

// One stage: A's BM rows of 128 bytes (K-major), then B: BN rows of 128 bytes (K-major) or, MN-major,
// BN / 64 column blocks of kTileK k-rows of 128 bytes (64 elements of N).
// In a cluster of two (Cta == 2: wgmma_cluster) the two CTAs hold tiles of C in one column of tiles, so they
// read the same tile of B: CTA `rank` fetches its half of it (half of the column blocks, or of the rows) once
// and the copy engine writes it into both CTAs' stages (multicast), each CTA's full barrier counting the
// whole stage's bytes. (b's box is then half as wide for a K-major B.)
// SwapAB (wgmma_swap_ab, tf32): A's tile is MN-major, BM / kK column blocks of kK k-rows of 128 bytes (32 rows of
// the tile each), read by the consumers into registers (multiply_stage_rs).
template <class In, int BN, bool MnMajorB, int Cta = 1, int BM = kBlockM, bool SwapAB = false>
__device__ __forceinline__ void load_stage(const CUtensorMap* a, const CUtensorMap* b, std::uint32_t stage,
                                           std::uint32_t full, int kt, const Tile& t, std::uint32_t rank = 0) {
  constexpr int kK = kTileK<In>;
  mbarrier_arrive_expect_tx(full, (BM + BN) * kRowBytes);
  if constexpr (SwapAB) {
#pragma unroll
    for (int j = 0; j < BM / kK; ++j)
      tma_load(stage + j * kK * kRowBytes, a, t.m * BM + j * kK, kt * kK, t.a_entry, full);
  } else {
    tma_load(stage, a, kt * kK, t.row0 + t.m * BM, t.a_entry, full);
  }
  const std::uint32_t b_stage = stage + BM * kRowBytes;
  if constexpr (Cta == 2) {
    if constexpr (MnMajorB) {
#pragma unroll
      for (int j = 0; j < BN / 128; ++j) {
        const int block = int(rank) * (BN / 128) + j;
        tma_load_multicast(b_stage + block * kK * kRowBytes, b, t.n * BN + block * 64, kt * kK, t.entry, full, 0x3);
      }
    } else {
      tma_load_multicast(b_stage + rank * (BN / 2) * kRowBytes, b, kt * kK, t.n * BN + int(rank) * (BN / 2), t.entry,
                         full, 0x3);
    }
  } else if constexpr (MnMajorB) {
#pragma unroll
    for (int j = 0; j < BN / 64; ++j)
      tma_load(b_stage + j * kK * kRowBytes, b, t.n * BN + j * 64, kt * kK, t.entry, full);
  } else {
    tma_load(b_stage, b, kt * kK, t.n * BN, t.entry, full);
  }
}

// Warpgroup wg's 64 x BN part of the tile times one k-tile: four instructions of 32 bytes of K each.
template <class In, int BN, bool MnMajorB, int BM = kBlockM>
__device__ __forceinline__ void multiply_stage(float (&d)[BN / 2], std::uint32_t stage, int wg) {
  const std::uint32_t a = stage + wg * 64 * kRowBytes, b = stage + BM * kRowBytes;
  fence_registers(d);
  wgmma_fence();
#pragma unroll
  for (int step = 0; step < 4; ++step) {
    const std::uint64_t a_desc = descriptor(a + step * 32, 16, 1024);
    const std::uint64_t b_desc = MnMajorB ? descriptor(b + step * kStepK<In> * kRowBytes, kTileK<In> * kRowBytes, 1024)
                                          : descriptor(b + step * 32, 16, 1024);
    wgmma_ss<In::kWgmma, BN, MnMajorB>(d, a_desc, b_desc);
  }
  wgmma_commit();
}

__device__ __forceinline__ std::uint32_t load_shared(std::uint32_t addr) {
  std::uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  return v;
}

// wgmma_swap_ab (tf32): warpgroup wg's 64 x BN part of the tile times one k-tile, A's 64 x 32 part read from the
// stage's MN-major blocks (load_stage) into registers f, rounded to tf32 (to nearest, as the packing pass rounds),
// then four instructions with A from registers (wgmma_rs; thread t of 128). f must not be the registers of the
// k-tile before (still being multiplied): the caller alternates two sets. In the 128-byte swizzle the 16-byte
// chunk c of k-row k sits at chunk c ^ (k % 8) of the row.
template <int BN, int BM = kBlockM>
__device__ __forceinline__ void multiply_stage_rs(float (&d)[BN / 2], std::uint32_t (&f)[16], std::uint32_t stage,
                                                  int wg, int t) {
  constexpr int kK = kTileK<HopperTf32>;
  const int warp = t / 32, lane = t % 32;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int row = wg * 64 + warp * 16 + lane / 4 + 8 * (i % 2), k = lane % 4 + 4 * (i / 2);  // (k % 8 == k)
    const std::uint32_t at =
        stage + (row / kK) * kK * kRowBytes + k * kRowBytes + ((((row % kK) / 4) ^ k) << 4) + (row % 4) * 4;
#pragma unroll
    for (int step = 0; step < 4; ++step)  // (8 k-rows further on: the same swizzle)
      f[4 * step + i] = __float_as_uint(HopperTf32::convert(__uint_as_float(load_shared(at + step * 8 * kRowBytes))));
  }
  const std::uint32_t b = stage + BM * kRowBytes;
  fence_registers(d);
  wgmma_fence();
#pragma unroll
  for (int step = 0; step < 4; ++step) wgmma_rs<BN>(d, f + 4 * step, descriptor(b + step * 32, 16, 1024));
  wgmma_commit();
}

// wgmma_swap_ab's epilogue: the tile is one of C^T (the Problem in C^T's terms: m is C's columns, n its rows), so
// element (row, col) of the tile is C's (col, row). The lanes of a warp that hold one column of the tile write 8
// neighbouring elements of one row of C. Not deterministic mode (wgmma_swap_ab runs as wgmma_persistent there).
template <int BN, int BM = kBlockM>
__device__ __forceinline__ void store_tile_transposed(const float (&d)[BN / 2], const Problem& p, const Tile& tile,
                                                      int wg, int t) {
  float* const c = p.c + tile.entry * p.stride_c;
  for_each_accumulator<BN, BM>(p, tile, wg, t, [&](std::int64_t row, std::int64_t col, int x) {
    float* const out = c + col * p.ldc + row;
    float v = p.alpha * d[x];
    if (p.beta != 0.0f) v += p.beta * *out;
    *out = v;
  });
}

// C = alpha * d + beta * C for warpgroup wg's part (thread t of 128); C is not read when beta is 0.
// Accumulator layout (per warp, 16 rows): d[4j + {0,1}] at row lane / 4, columns 8j + 2 (lane % 4) + {0,1};
// d[4j + {2,3}] the same 8 rows further down. The bounds and the mode are settled once per thread, and a
// plain store (beta 0, C pairs aligned) writes each pair as one float2: the epilogue is the tile's whole
// work when K is short (a batch of 64^3 products spent 0.6 of its time in the earlier per-element checks).
template <int BN, int BM = kBlockM>
__device__ __forceinline__ void store_tile(const float (&d)[BN / 2], const Problem& p, const Tile& tile, int wg,
                                           int t) {
  const int warp = t / 32, lane = t % 32;
  // (64-bit rows and columns: with 32-bit ones ptxas serialized tma_kernel's multiplies, warning C7515, which
  // cost that rung about 15% from 2048^3 to 8192^3.)
  const std::int64_t row0 = tile.row0 + std::int64_t(tile.m) * BM + wg * 64 + warp * 16 + lane / 4,
                     col0 = std::int64_t(tile.n) * BN + 2 * (lane % 4);
  if (row0 >= tile.row_end) return;  // (and row0 + 8 is the thread's other row)
  const bool second = row0 + 8 < tile.row_end;
  const std::int64_t cols_left = p.n - col0;  // columns of C from the thread's first one
  float* const c = p.c + tile.entry * p.stride_c + row0 * p.ldc + col0;
  const std::int64_t down = 8 * p.ldc;
  const bool plain = !p.canonical && p.beta == 0.0f && p.c_pairs;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
    if (8 * j >= cols_left) break;
    const bool both = 8 * j + 1 < cols_left;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (h == 1 && !second) break;
      float* const out = c + (h == 1 ? down : 0) + 8 * j;
      const float x0 = d[4 * j + 2 * h], x1 = d[4 * j + 2 * h + 1];
      if (plain && both) {
        *reinterpret_cast<float2*>(out) = make_float2(p.alpha * x0, p.alpha * x1);
        continue;
      }
      float v0 = p.alpha * x0, v1 = p.alpha * x1;
      if (p.canonical) {
        v0 = detail::canonical_nan(
            detail::canonical::gemm_epilogue(x0, p.beta != 0.0f ? out[0] : 0.0f, p.alpha, p.beta));
        v1 = detail::canonical_nan(
            detail::canonical::gemm_epilogue(x1, p.beta != 0.0f && both ? out[1] : 0.0f, p.alpha, p.beta));
      } else if (p.beta != 0.0f) {
        v0 += p.beta * out[0];
        if (both) v1 += p.beta * out[1];
      }
      if (both && p.c_pairs) {
        *reinterpret_cast<float2*>(out) = make_float2(v0, v1);
      } else {
        out[0] = v0;
        if (both) out[1] = v1;
      }
    }
  }
}

// wgmma_tma_store's epilogue: C = alpha * d of warpgroup wg's 64 rows of the tile (thread t of 128; beta 0, C's rows
// and entries 16-byte aligned), through shared memory and the copy engine, 32 columns at a time: the warpgroup writes
// them into one of its two buffers of 64 x 32 floats (the 128-byte swizzle, so that the float2 writes of a warp fall
// on distinct banks) and one thread stores the buffer as a box of C's tensor map. The stores run on while the
// warpgroup goes on to its next tile's products; a buffer is written again once the store from it (two boxes
// back, counted by `boxes` across the block's tiles) has read it. Rows and columns past C's are not stored.
constexpr int kStoreBoxBytes = 64 * 32 * 4;
constexpr int kStoreBytes = 2 * 2 * kStoreBoxBytes;  // (two buffers for each of the two consumer warpgroups)
template <int BN>
__device__ __forceinline__ void store_tile_tma(const float (&d)[BN / 2], const Problem& p, const Tile& tile, int wg,
                                               int t, const CUtensorMap* c_map, std::uint32_t buffers, int& boxes) {
  const int warp = t / 32, lane = t % 32;
#pragma unroll
  for (int q = 0; q < BN / 32; ++q, ++boxes) {
    const std::uint32_t buffer = buffers + (2 * wg + boxes % 2) * kStoreBoxBytes;
    if (boxes >= 2) {  // the store from this buffer two boxes back has read it
      if (t == 0) bulk_wait_read<1>();
      named_barrier_sync(3 + wg, 128);
    }
#pragma unroll
    for (int j = 4 * q; j < 4 * q + 4; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = warp * 16 + lane / 4 + 8 * h, chunk = 2 * (j - 4 * q) + (lane % 4) / 2;
        store_shared(buffer + row * 128 + ((chunk ^ (row % 8)) << 4) + (lane % 2) * 8, p.alpha * d[4 * j + 2 * h],
                     p.alpha * d[4 * j + 2 * h + 1]);
      }
    fence_async_shared();
    named_barrier_sync(3 + wg, 128);
    if (t == 0) {
      tma_store(c_map, buffer, tile.n * BN + 32 * q, tile.m * kBlockM + 64 * wg, tile.entry);
      bulk_commit();
    }
  }
}

}  // namespace tandem::cuda::hopper
