// The top rungs of the matmul ladder (hopper.hpp): wgmma_tma, wgmma_warp_specialized, wgmma_persistent.
// They keep the wgmma stages' tile of C (128 x BN per block, two warpgroups of 64 rows, one m64nBNk
// instruction per 32 bytes of K, tiles of K of 128 bytes in the 128-byte swizzle) and change, one rung at a
// time, how the tiles reach shared memory and who waits for whom:
//   1. wgmma_tma: the copy engine (TMA) fetches each k-tile of A and B as whole boxes described by tensor
//      maps; one thread asks for them and an mbarrier counts the bytes in, so the threads stop computing
//      addresses and bounds (boxes past the matrices' edges arrive as zeros). The block still meets at a
//      __syncthreads per k-tile before a stage is refilled. B is read as stored (row-major k x n: wgmma's
//      MN-major operand) for bfloat16 / half, so nothing is packed first.
//   2. wgmma_warp_specialized: a third warpgroup only loads (it gives its registers to the two that
//      multiply: setmaxnreg). Full and empty mbarriers per stage replace the __syncthreads: the consumers
//      wait for a stage's bytes, the producer for the consumers' release of a stage.
//   3. wgmma_persistent: one block per SM (no more blocks than tiles) walks the tiles of every batch entry
//      in grouped order; its producer runs ahead into the next tile while the consumers store this one.
//   4. wgmma_cluster: wgmma_persistent in clusters of two CTAs on neighbouring SMs, which take two tiles of
//      one column of C at once: each fetches half of their common tile of B, and the copy engine writes
//      it into both CTAs' shared memory (TMA multicast), so B is read from L2 once per two tiles.
//   5. wgmma_pingpong: wgmma_persistent with tiles of 64 rows (and 64 columns where C has no more), each
//      multiplied by one consumer warpgroup; the two take the block's tiles in turns, so that one stores its
//      tile while the other multiplies the next (small products and batches of them, whose K is short).
//   6. wgmma_swap_ab: wgmma_persistent for float (tf32) products whose B is row-major, without the pass that
//      transposes B. tf32 wgmma reads only K-major tiles from shared memory, and a row-major B is MN-major; but
//      wgmma's A may come from registers, in any layout. So the rung computes C^T = B^T A^T: B^T is the A
//      operand, its MN-major tiles read by the consumers into registers, A (K-major) the B operand, and the
//      tiles of C^T are stored transposed.
//   7. wgmma_tma_store: wgmma_persistent whose consumers store each tile of C through shared memory by the copy
//      engine (store_tile_tma) and go on to the next tile's products while those stores run.
// In deterministic mode (MatmulArgs::deterministic) C is stored with the canonical epilogue: each element of C
// is one chain of k-steps over K in increasing k, so wgmma_persistent computes the tensor-core arithmetic of
// deterministic mode (tensor_core_canonical.cu). Batches are one launch on every rung (tiles of all entries in one
// grid, or one queue). Operands that the copy engine cannot read as they are (rows not 16-byte aligned, transposed A,
// float B not transposed: tf32 wgmma reads K-major operands only) are first packed K-major into the workspace, rounded
// to the input type (float: tf32, to nearest). float A read in place is truncated to tf32 by the tensor cores.
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cuda/common.cuh"
#include "backends/cuda/matmul/hopper.hpp"
#include "backends/cuda/matmul/hopper_maps.cuh"
#include "backends/cuda/matmul/hopper_pack.cuh"
#include "backends/cuda/matmul/hopper_tiles.cuh"
#include "common/canonical.hpp"
#include "common/reduce_ops.hpp"
#include "tandem/float16.hpp"

namespace tandem::cuda::hopper {

namespace {

__device__ __forceinline__ std::uint32_t aligned_base(unsigned char* raw) {
  return (shared_address(raw) + 1023) & ~1023u;
}

// ---- Rung 1: wgmma_tma --------------------------------------------------------------------------------
template <class In, int BN, int Stages, bool MnMajorB>
__global__ void __launch_bounds__(256, 1)
    tma_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map, const Problem p) {
  using S = Shape<BN, Stages>;
  extern __shared__ unsigned char shared_raw[];
  const std::uint32_t base = aligned_base(shared_raw), bars = base + Stages * S::kStageBytes;
  auto stage = [&](int s) { return base + s * S::kStageBytes; };
  auto full = [&](int s) { return bars + s * 8; };
  const int tid = threadIdx.x, wg = tid / 128;
  const Tile tile = tile_of(p, blockIdx.x);
  if (tid == 0) {
    for (int s = 0; s < Stages; ++s) mbarrier_init(full(s), 1);
    fence_barrier_init();
  }
  __syncthreads();
  if (tid == 0)
    for (int s = 0; s < Stages - 1 && s < p.k_tiles; ++s)
      load_stage<In, BN, MnMajorB>(&a_map, &b_map, stage(s), full(s), s, tile);

  float d[BN / 2];
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
  for (int kt = 0; kt < p.k_tiles; ++kt) {
    const int s = kt % Stages;
    mbarrier_wait(full(s), (kt / Stages) & 1);
    multiply_stage<In, BN, MnMajorB>(d, stage(s), wg);
    wgmma_wait<1>();  // this warpgroup's multiplies of k-tile kt - 1 are done
    fence_registers(d);
    __syncthreads();  // both warpgroups' are: stage (kt - 1) % Stages is free
    const int next = kt + Stages - 1;
    if (tid == 0 && next < p.k_tiles)
      load_stage<In, BN, MnMajorB>(&a_map, &b_map, stage(next % Stages), full(next % Stages), next, tile);
  }
  wgmma_wait<0>();
  fence_registers(d);
  store_tile<BN>(d, p, tile, wg, tid % 128);
}

// ---- Rungs 2 and 3: wgmma_warp_specialized, wgmma_persistent --------------------------------------------
// Warpgroup 0 loads (one thread issues the copies), warpgroups 1 and 2 multiply, 64 rows of the tile each.
// Persistent: at most one block per SM, block b takes the tiles b, b + gridDim.x, ...; otherwise one tile
// per block. Both sides count k-tiles across tiles (it), so stage and phase follow from it, and the
// producer runs ahead into the next tile while the consumers store this one. (Consumers taking whole
// 128 x 128 tiles in turns, "ping-pong", so that one stores while the other multiplies, ran at 0.73x of this
// at 8192^3 on an H100: one warpgroup's instructions alone leave the tensor cores idle part of the time.)
// Cta == 2 (wgmma_cluster, persistent): clusters of two CTAs walk pairs of tiles (pair_tile_of), B's tiles
// multicast (load_stage); a stage is refilled once the consumers of both CTAs are done with it, so each
// consumer warp releases it in its own CTA and in the other (one arrival each: 16 per stage), and both CTAs
// meet before they exit, so that no arrival or copy reaches a CTA that has ended.
// BM == 64 (wgmma_pingpong, persistent): tiles of 64 rows, each multiplied by one consumer, in turns
// (pingpong_consumers below).
// SwapAB (wgmma_swap_ab, wgmma_pingpong_swap_ab): A's tiles MN-major, multiplied from registers
// (multiply_stage_rs), C's tiles stored transposed; every tile has all of K.
// TmaStore (wgmma_tma_store, persistent): the tiles of C go out through shared memory by the copy engine (c_map;
// store_tile_tma), whose stores run on while the consumers multiply the next tile. (c_map is unused elsewhere.)
template <class In, int BN, int Stages, bool MnMajorB, bool Persistent, int Cta = 1, int BM = kBlockM,
          bool SwapAB = false, bool TmaStore = false>
__global__ void __launch_bounds__(384, 1)
    specialized_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                       const __grid_constant__ CUtensorMap c_map, const Problem p) {
  static_assert(Cta == 1 || (Cta == 2 && Persistent));
  static_assert(BM == kBlockM || (BM == 64 && Persistent && Cta == 1));
  static_assert(!SwapAB || (std::is_same_v<In, HopperTf32> && !MnMajorB && Cta == 1));
  static_assert(!TmaStore || (Persistent && Cta == 1 && BM == kBlockM && !SwapAB));
  using S = Shape<BN, Stages, BM, TmaStore ? kStoreBytes : 0>;
  extern __shared__ unsigned char shared_raw[];
  const std::uint32_t base = aligned_base(shared_raw), bars = base + S::kBarrierOffset;
  auto stage = [&](int s) { return base + s * S::kStageBytes; };
  auto full = [&](int s) { return bars + s * 8; };
  auto empty = [&](int s) { return bars + (Stages + s) * 8; };
  const int tid = threadIdx.x, wg = tid / 128;
  const std::uint32_t rank = Cta == 2 ? cluster_rank() : 0;
  if (tid == 0) {
    for (int s = 0; s < Stages; ++s) {
      mbarrier_init(full(s), 1);
      // every consumer thread releases the stage (of 64-row tiles: one consumer's); in a cluster, each
      // consumer warp of both CTAs
      mbarrier_init(empty(s), Cta == 2 ? 16 : BM == 64 ? 128 : 256);
    }
    fence_barrier_init();
  }
  if constexpr (Cta == 2)
    cluster_sync();  // (the other CTA's barriers are ready before any copy or arrival reaches them)
  else
    __syncthreads();
  const int rows = Cta == 2 ? (p.tiles_m + 1) / 2 : p.tiles_m;
  const int tiles = rows * p.tiles_n * p.batch * (p.split ? p.chunks : 1);
  const int first = int(blockIdx.x) / Cta, step = Persistent ? int(gridDim.x) / Cta : tiles;
  auto tile_at = [&](int t) {
    if constexpr (Cta == 2)
      return pair_tile_of(p, t, rank);
    else
      return tile_of(p, t);
  };

  if (wg == 0) {  // the producer
    release_registers<40>();
    if (tid == 0) {
      prefetch_tensor_map(&a_map);
      prefetch_tensor_map(&b_map);
      int it = 0;
      for (int t = first; t < tiles; t += step) {
        const Tile tile = tile_at(t);
        for (int kt = tile.k_first; kt < tile.k_end; ++kt, ++it) {
          const int s = it % Stages;
          mbarrier_wait(empty(s), ((it / Stages) & 1) ^ 1);
          load_stage<In, BN, MnMajorB, Cta, BM, SwapAB>(&a_map, &b_map, stage(s), full(s), kt, tile, rank);
        }
      }
    }
    if constexpr (Cta == 2) cluster_sync();
    return;
  }

  claim_registers<232>();
  const int cw = wg - 1;  // consumer 0 or 1: rows 64 * cw of the tile
  auto release = [&](int s) {
    if constexpr (Cta == 2) {
      const int lane = tid % 32;
      if (lane == 0) mbarrier_arrive(empty(s));
      if (lane == 1) mbarrier_arrive_cluster(empty(s), rank ^ 1);
    } else {
      mbarrier_arrive(empty(s));
    }
  };
  // One k-tile's products of a part of the tile (its 64 rows `part`) from stage `at`, and the tile's stores. SwapAB:
  // A's registers alternate between two sets by k-tile (an in-flight wgmma still reads the k-tile before's).
  [[maybe_unused]] std::uint32_t even[16], odd[16];
  auto multiply = [&](float(&d)[BN / 2], int kt, std::uint32_t at, int part) {
    if constexpr (SwapAB) {
      if (kt % 2 == 0)
        multiply_stage_rs<BN, BM>(d, even, at, part, tid % 128);
      else
        multiply_stage_rs<BN, BM>(d, odd, at, part, tid % 128);
    } else {
      multiply_stage<In, BN, MnMajorB, BM>(d, at, part);
    }
  };
  [[maybe_unused]] int boxes = 0;  // (TmaStore: the boxes of C this warpgroup has stored)
  auto store = [&](const float(&d)[BN / 2], const Tile& tile, int part) {
    if constexpr (SwapAB)
      store_tile_transposed<BN, BM>(d, p, tile, part, tid % 128);
    else if constexpr (TmaStore)
      store_tile_tma<BN>(d, p, tile, part, tid % 128, &c_map, base + S::kStoreOffset, boxes);
    else
      store_tile<BN, BM>(d, p, tile, part, tid % 128);
  };
  if constexpr (BM == 64) {  // wgmma_pingpong: this block's tiles i = 0, 1, ... (t = first + i * step) in turns
    // Tile i is consumer i % 2's. The main loops run in tile order, one consumer's at a time (named barrier 1
    // gives consumer 0 its turn, 2 consumer 1), so the stages are taken in the order the producer fills them
    // (a consumer that waited on a stage out of turn could read a phase too early); each consumer's stores
    // then overlap the other's main loop. Every tile has all of K (no chunks): tile i's k-tiles are
    // it = i * k_tiles, ...
    const int count = (tiles - first + step - 1) / step, rounds = (count + 1) / 2;
    for (int r = 0; r < rounds; ++r) {
      const int i = 2 * r + cw;
      if (cw == 1 || r > 0) named_barrier_sync(1 + cw, 256);  // this consumer's turn
      float d[BN / 2];
#pragma unroll
      for (int x = 0; x < BN / 2; ++x) d[x] = 0.0f;
      Tile tile{};
      if (i < count) {
        tile = tile_of(p, first + i * step);
        int it = i * p.k_tiles;
        for (int kt = 0; kt < p.k_tiles; ++kt, ++it) {
          const int s = it % Stages;
          mbarrier_wait(full(s), (it / Stages) & 1);
          multiply(d, kt, stage(s), 0);
          wgmma_wait<1>();
          fence_registers(d);
          if (kt > 0) release((it - 1) % Stages);
        }
        wgmma_wait<0>();
        fence_registers(d);
        release((it - 1) % Stages);
      }
      if (cw == 0 || r + 1 < rounds) named_barrier_arrive(2 - cw, 256);  // the other consumer's turn
      if (i < count) store(d, tile, 0);
    }
    return;
  }
  int it = 0;
  for (int t = first; t < tiles; t += step) {
    const Tile tile = tile_at(t);
    float d[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
    for (int kt = tile.k_first; kt < tile.k_end; ++kt, ++it) {
      if (!SwapAB && p.chunks > 1 && !p.split && kt > 0 &&
          kt % p.chunk_tiles == 0) {  // a chunk ends: keep its values, start the next at 0
        wgmma_wait<0>();
        fence_registers(d);
        store_values<BN>(d, p, tile, cw, tid % 128, kt / p.chunk_tiles - 1);
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
      }
      const int s = it % Stages;
      mbarrier_wait(full(s), (it / Stages) & 1);
      multiply(d, kt, stage(s), cw);
      wgmma_wait<1>();
      fence_registers(d);
      if (kt > tile.k_first) release((it - 1) % Stages);  // k-tile kt - 1 is done with its stage
    }
    wgmma_wait<0>();
    fence_registers(d);
    release((it - 1) % Stages);
    if constexpr (!SwapAB) {
      if (p.split) {
        store_values<BN>(d, p, tile, cw, tid % 128, tile.chunk);
        continue;
      }
      if (p.chunks > 1) sum_chunks<BN>(d, p, tile, cw, tid % 128);
    }
    store(d, tile, cw);
  }
  if constexpr (TmaStore) {
    if (tid % 128 == 0) bulk_wait_all();  // (its shared memory is read, and C written, before the block ends)
  }
  if constexpr (Cta == 2) cluster_sync();
}

// ---- Host side ----------------------------------------------------------------------------------------------

const char* rung_name(HopperRung r) {
  return r == HopperRung::tma                ? "wgmma_tma"
         : r == HopperRung::warp_specialized ? "wgmma_warp_specialized"
         : r == HopperRung::persistent       ? "wgmma_persistent"
         : r == HopperRung::cluster          ? "wgmma_cluster"
         : r == HopperRung::pingpong         ? "wgmma_pingpong"
         : r == HopperRung::swap_ab          ? "wgmma_swap_ab"
         : r == HopperRung::pingpong_swap_ab ? "wgmma_pingpong_swap_ab"
                                             : "wgmma_tma_store";
}

// (c: C's tensor map, for wgmma_tma_store)
template <class In, int BN, int Stages, bool MnMajorB>
void launch(HopperRung rung, const CUtensorMap& a, const CUtensorMap& b, const CUtensorMap& c, const Problem& p,
            cudaStream_t stream) {
  using S = Shape<BN, Stages>;
  const int tiles = p.tiles_m * p.tiles_n * p.batch * (p.split ? p.chunks : 1);
  if (rung == HopperRung::tma) {
    const auto kernel = tma_kernel<In, BN, Stages, MnMajorB>;
    allow_dynamic_shared_memory(reinterpret_cast<const void*>(kernel), S::kSharedBytes);
    kernel<<<unsigned(tiles), 256, S::kSharedBytes, stream>>>(a, b, p);
  } else if (rung == HopperRung::warp_specialized) {
    const auto kernel = specialized_kernel<In, BN, Stages, MnMajorB, false>;
    allow_dynamic_shared_memory(reinterpret_cast<const void*>(kernel), S::kSharedBytes);
    kernel<<<unsigned(tiles), 384, S::kSharedBytes, stream>>>(a, b, c, p);
  } else if (rung == HopperRung::persistent) {
    const auto kernel = specialized_kernel<In, BN, Stages, MnMajorB, true>;
    allow_dynamic_shared_memory(reinterpret_cast<const void*>(kernel), S::kSharedBytes);
    kernel<<<unsigned(std::min(tiles, multiprocessor_count())), 384, S::kSharedBytes, stream>>>(a, b, c, p);
  } else if (rung == HopperRung::tma_store) {
    const auto kernel = specialized_kernel<In, BN, Stages, MnMajorB, true, 1, kBlockM, false, true>;
    constexpr int bytes = Shape<BN, Stages, kBlockM, kStoreBytes>::kSharedBytes;
    allow_dynamic_shared_memory(reinterpret_cast<const void*>(kernel), bytes);
    kernel<<<unsigned(std::min(tiles, multiprocessor_count())), 384, bytes, stream>>>(a, b, c, p);
  } else if (rung == HopperRung::swap_ab) {
    if constexpr (std::is_same_v<In, HopperTf32> && !MnMajorB) {
      const auto kernel = specialized_kernel<In, BN, Stages, false, true, 1, kBlockM, true>;
      allow_dynamic_shared_memory(reinterpret_cast<const void*>(kernel), S::kSharedBytes);
      kernel<<<unsigned(std::min(tiles, multiprocessor_count())), 384, S::kSharedBytes, stream>>>(a, b, c, p);
    } else {
      throw Error("tandem: internal error: wgmma_swap_ab on 16-bit inputs or an MN-major B");
    }
  } else {  // clusters of two: as many as fit on the GPU at once (no more than pairs of tiles)
    const auto kernel = specialized_kernel<In, BN, Stages, MnMajorB, true, 2>;
    allow_dynamic_shared_memory(reinterpret_cast<const void*>(kernel), S::kSharedBytes);
    const int pairs = (p.tiles_m + 1) / 2 * p.tiles_n * p.batch * (p.split ? p.chunks : 1);
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = 2, cluster.val.clusterDim.y = 1, cluster.val.clusterDim.z = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(unsigned(2 * std::max(1, multiprocessor_count() / 2)));
    config.blockDim = dim3(384);
    config.dynamicSmemBytes = S::kSharedBytes;
    config.stream = stream;
    config.attrs = &cluster;
    config.numAttrs = 1;
    int fit = 0;
    TANDEM_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&fit, kernel, &config));
    config.gridDim = dim3(unsigned(2 * std::max(1, std::min(pairs, fit))));
    TANDEM_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, a, b, c, p));
  }
  TANDEM_CUDA_CHECK_LAUNCH();
}

// wgmma_pingpong: 64-row tiles, at most one block per SM (SwapAB: wgmma_pingpong_swap_ab).
template <class In, int BN, int Stages, bool MnMajorB, bool SwapAB = false>
void launch_pingpong(const CUtensorMap& a, const CUtensorMap& b, const Problem& p, cudaStream_t stream) {
  using S = Shape<BN, Stages, 64>;
  const auto kernel = specialized_kernel<In, BN, Stages, MnMajorB, true, 1, 64, SwapAB>;
  allow_dynamic_shared_memory(reinterpret_cast<const void*>(kernel), S::kSharedBytes);
  const int tiles = p.tiles_m * p.tiles_n * p.batch;
  kernel<<<unsigned(std::min(tiles, multiprocessor_count())), 384, S::kSharedBytes, stream>>>(a, b, CUtensorMap{}, p);
  TANDEM_CUDA_CHECK_LAUNCH();
}

// The tile width: 256 is the fastest per tile; where C has few tiles, 128 keeps more SMs busy, and where
// n is narrow, it computes fewer zero columns. Each width's estimate: its speed per tile relative to 256,
// times the busy fraction of its waves, times the share of its columns inside C.
int choose_block_n(std::int64_t tiles_m_batch, std::int64_t n, int sms) {
  auto rate = [&](int bn, double speed) {
    const std::int64_t tiles = tiles_m_batch * round_up(n, bn) / bn;
    const std::int64_t waves = (tiles + sms - 1) / sms;
    return speed * double(tiles) / double(waves * sms) * double(n) / double(round_up(n, bn));
  };
  return rate(256, 1.0) >= rate(128, 0.8) ? 256 : 128;
}

// groups (a grouped product, hopper_matmul_grouped): each group's rows of A and C; empty: not grouped.
template <class In, class Src>
void run(HopperRung rung, const detail::MatmulArgs& g, Workspace& ws, cudaStream_t stream, const HopperChunks* chunks,
         std::span<const std::int64_t> groups = {}) {
  using Element = typename In::Element;
  constexpr int E = int(sizeof(Element));
  const char* name = rung_name(rung);
  if (!device_is_sm90())
    throw Error(std::string("matmul kernel '") + name +
                "' needs a GPU of compute capability 9.0 (H100, H200): it runs Hopper's TMA and wgmma instructions");
  if (std::max({g.m, g.n, g.k}) > 0x7FFFFFFF)
    throw Error(std::string("matmul kernel '") + name + "' takes sizes below 2^31; use register_tiled or cublas");

  // A as a K-major m x k view, B as MN-major k x n (16-bit, read as stored) or K-major n x k; what the copy
  // engine cannot read in place is packed K-major first. A grouped product's A and C are one matrix each (a_batch
  // 1), B one entry per group (g.batch of them, or stride 0).
  const bool grouped = !groups.empty();
  const std::int64_t a_batch = grouped ? 1 : g.batch;
  constexpr bool same = std::is_same_v<Src, Element>;
  const bool a_direct = same && !g.trans_a && readable(g.a, g.lda, g.stride_a, a_batch, E);
  const bool b_mn_major = same && E == 2 && !g.trans_b && readable(g.b, g.ldb, g.stride_b, g.batch, E);
  // wgmma_swap_ab: a float B as stored (k x n, rows readable) is the A operand of C^T = B^T A^T. Elsewhere (B
  // stored transposed or not readable in place, deterministic mode, chunks of K) the rung is wgmma_persistent.
  // (wgmma_pingpong_swap_ab: the same with wgmma_pingpong's tiles)
  const bool swap_rung = rung == HopperRung::swap_ab || rung == HopperRung::pingpong_swap_ab;
  const bool swap =
      swap_rung && std::is_same_v<In, HopperTf32> && same && !grouped && chunks == nullptr && hopper_swaps_ab(g);
  if (swap_rung && !swap) rung = rung == HopperRung::swap_ab ? HopperRung::persistent : HopperRung::pingpong;
  // wgmma_tma_store: where hopper_stores_by_tma(g) (beta 0, rows of a multiple of 4 columns: the copy engine writes
  // whole 16-byte pieces, so the piece at the end of a shorter row would overwrite the padding after it, default
  // mode) and C's rows and entries start on 16-byte boundaries. Elsewhere it is wgmma_persistent: with beta 0 in
  // default mode the same bits (the same products, stored as alpha * d); in deterministic mode the canonical ones.
  if (rung == HopperRung::tma_store &&
      (grouped || chunks != nullptr || !hopper_stores_by_tma(g) || !readable(g.c, g.ldc, g.stride_c, g.batch, 4)))
    rung = HopperRung::persistent;
  const bool b_direct = swap || b_mn_major || (same && g.trans_b && readable(g.b, g.ldb, g.stride_b, g.batch, E));
  const std::int64_t pitch = round_up(g.k, 16 / E);
  const std::size_t a_bytes = a_direct ? 0 : round_up(a_batch * g.m * pitch * E, 256);
  const std::size_t b_bytes = b_direct ? 0 : round_up(g.batch * g.n * pitch * E, 256);
  // (a grouped product's tables after the packed operands: each group's first row, and first row of tiles)
  const std::size_t table_bytes = grouped ? 2 * (groups.size() + 1) * sizeof(int) : 0;
  auto* scratch =
      static_cast<unsigned char*>(a_bytes + b_bytes + table_bytes ? ws.get(a_bytes + b_bytes + table_bytes) : nullptr);
  auto pack = [&](const void* src, std::int64_t ld, std::int64_t stride, bool transposed, void* dst, std::int64_t rows,
                  std::int64_t batch) {
    const dim3 grid(unsigned((g.k + 31) / 32), unsigned(std::min<std::int64_t>((rows + 31) / 32, 65535)),
                    unsigned(std::min<std::int64_t>(batch, 65535)));
    pack_kernel<In, Src><<<grid, dim3(32, 8), 0, stream>>>(static_cast<const Src*>(src), ld, stride, transposed,
                                                           static_cast<Element*>(dst), rows, g.k, pitch, rows * pitch,
                                                           batch);
    TANDEM_CUDA_CHECK_LAUNCH();
  };
  View a{g.a, g.m, g.k, g.lda, g.stride_a}, b{g.b, g.n, g.k, g.ldb, g.stride_b};
  if (!a_direct) {
    pack(g.a, g.lda, g.stride_a, g.trans_a, scratch, g.m, a_batch);
    a = View{scratch, g.m, g.k, pitch, g.m * pitch};
  }
  if (b_mn_major || swap) {
    b = View{g.b, g.k, g.n, g.ldb, g.stride_b};
  } else if (!b_direct) {
    pack(g.b, g.ldb, g.stride_b, !g.trans_b, scratch + a_bytes, g.n, g.batch);
    b = View{scratch + a_bytes, g.n, g.k, pitch, g.n * pitch};
  }

  const bool pingpong = rung == HopperRung::pingpong || rung == HopperRung::pingpong_swap_ab;
  if (pingpong && chunks != nullptr)
    throw Error("tandem: internal error: deterministic mode's chunks of K on wgmma_pingpong");
  if (grouped && (chunks != nullptr || rung == HopperRung::cluster))
    throw Error("tandem: internal error: a grouped product on wgmma_cluster or with chunks of K");
  const int block_m = pingpong ? 64 : kBlockM;
  // The product's rows and columns: C's, or (swap) C^T's.
  const std::int64_t rows = swap ? g.n : g.m, cols = swap ? g.m : g.n;
  // A grouped product: each group's rows of tiles, one after the other (tiles_m: all of them).
  std::vector<int> group_table;
  std::int64_t tiles_m = (rows + block_m - 1) / block_m;
  if (grouped) {
    group_table.assign(2 * (groups.size() + 1), 0);
    int* first_rows = group_table.data();
    int* tile_rows = first_rows + groups.size() + 1;
    std::int64_t r = 0, t = 0;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      r += groups[i], t += (groups[i] + block_m - 1) / block_m;
      first_rows[i + 1] = int(r), tile_rows[i + 1] = int(t);
    }
    if (r != g.m) throw Error("tandem: internal error: the group sizes do not add up to the rows of a grouped product");
    tiles_m = t;
    upload_by_value(scratch + a_bytes + b_bytes, group_table.data(), table_bytes, stream);  // (graphs keep it)
  }
  // (wgmma_pingpong: 64 columns where C has no more, else 128)
  const int block_n = pingpong ? (cols <= 64 ? 64 : 128)
                               : choose_block_n(tiles_m * (grouped ? 1 : g.batch), cols, multiprocessor_count());
  const std::int64_t tiles_n = (cols + block_n - 1) / block_n;
  if (tiles_m * tiles_n * (grouped ? 1 : g.batch) > 0x7FFFFFFF)
    throw Error(std::string("matmul kernel '") + name + "': too many tiles of C for one grid");
  auto* c = static_cast<float*>(g.c);
  Problem p{c,
            g.ldc,
            g.stride_c,
            int(rows),
            int(cols),
            int((g.k + kTileK<In> - 1) / kTileK<In>),
            int(tiles_m),
            int(tiles_n),
            int(g.batch),
            float(g.alpha),
            float(g.beta),
            !swap && reinterpret_cast<std::uintptr_t>(c) % 8 == 0 && g.ldc % 2 == 0 &&
                (g.batch == 1 || grouped || g.stride_c % 2 == 0),
            g.deterministic,
            int(detail::canonical::kMatmulChunk / kTileK<In>),
            int(chunks != nullptr ? detail::canonical::matmul_chunk_count(g.k) : 1),
            chunks != nullptr && chunks->split,
            chunks != nullptr ? chunks->values : nullptr};
  if (grouped) {
    const auto* table = reinterpret_cast<const int*>(scratch + a_bytes + b_bytes);
    p.batch = 1, p.stride_c = 0, p.groups = int(groups.size()), p.group_b_shared = g.batch == 1;
    p.group_rows = table, p.group_tiles = table + groups.size() + 1;
  }
  if (chunks != nullptr && (!g.deterministic || chunks->values == nullptr || (!chunks->split && p.chunks > 32)))
    throw Error(
        "tandem: internal error: chunks of K for a Hopper product that is not deterministic, or without memory");
  if (std::int64_t(tiles_m) * tiles_n * p.batch * (p.split ? p.chunks : 1) > 0x7FFFFFFF)
    throw Error(std::string("matmul kernel '") + name + "': too many tiles of C for one grid");
  // (swap: the A operand is B, in MN-major boxes of kTileK columns by kTileK k-rows; the B operand A)
  const CUtensorMap a_map = swap ? tensor_map(In::kMapType, E, b, g.batch, kTileK<In>, kTileK<In>)
                                 : tensor_map(In::kMapType, E, a, a_batch, kTileK<In>, block_m);
  if (pingpong) {
    auto run_pingpong = [&]<int BN, int Stages>() {
      if constexpr (!std::is_same_v<In, HopperTf32>) {
        if (b_mn_major)
          return launch_pingpong<In, BN, Stages, true>(a_map, tensor_map(In::kMapType, E, b, g.batch, 64, kTileK<In>),
                                                       p, stream);
      }
      if constexpr (std::is_same_v<In, HopperTf32>) {
        if (swap)
          return launch_pingpong<In, BN, Stages, false, true>(
              a_map, tensor_map(In::kMapType, E, a, a_batch, kTileK<In>, BN), p, stream);
      }
      launch_pingpong<In, BN, Stages, false>(a_map, tensor_map(In::kMapType, E, b, g.batch, kTileK<In>, BN), p, stream);
    };
    if (block_n == 64)
      run_pingpong.template operator()<64, 12>();
    else
      run_pingpong.template operator()<128, 8>();
    return;
  }
  auto run_width = [&]<int BN, int Stages>() {
    const CUtensorMap c_map =
        rung == HopperRung::tma_store
            ? tensor_map(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, View{g.c, g.m, g.n, g.ldc, g.stride_c}, g.batch, 32, 64)
            : CUtensorMap{};
    if constexpr (!std::is_same_v<In, HopperTf32>) {
      if (b_mn_major)
        return launch<In, BN, Stages, true>(rung, a_map, tensor_map(In::kMapType, E, b, g.batch, 64, kTileK<In>), c_map,
                                            p, stream);
    }
    const int box_rows = rung == HopperRung::cluster ? BN / 2 : BN;  // (a cluster's CTAs fetch half each)
    launch<In, BN, Stages, false>(
        rung, a_map, tensor_map(In::kMapType, E, swap ? a : b, swap ? a_batch : g.batch, kTileK<In>, box_rows), c_map,
        p, stream);
  };
  if (block_n == 256)
    run_width.template operator()<256, 4>();
  else
    run_width.template operator()<128, 6>();
}

}  // namespace
}  // namespace tandem::cuda::hopper

namespace tandem::cuda {

bool hopper_swaps_ab(const detail::MatmulArgs& g) {
  return g.dtype == Dtype::f32 && !g.mixed() && !g.trans_b && !g.deterministic &&
         hopper::readable(g.b, g.ldb, g.stride_b, g.batch, int(sizeof(float)));
}

bool hopper_stores_by_tma(const detail::MatmulArgs& g) {
  return !g.deterministic && float(g.beta) == 0.0f && g.n % 4 == 0;
}

void hopper_matmul(HopperRung rung, const detail::MatmulArgs& g, Workspace& ws, cudaStream_t stream,
                   const HopperChunks* chunks) {
  hopper_matmul_grouped(rung, g, {}, ws, stream, chunks);
}

void hopper_matmul_grouped(HopperRung rung, const detail::MatmulArgs& g, std::span<const std::int64_t> groups,
                           Workspace& ws, cudaStream_t stream, const HopperChunks* chunks) {
  using namespace hopper;
  switch (g.dtype) {
    case Dtype::f32:
      return run<HopperTf32, float>(rung, g, ws, stream, chunks, groups);
    case Dtype::bf16:
      return run<HopperBf16, bfloat16>(rung, g, ws, stream, chunks, groups);
    case Dtype::f16:
      return run<HopperF16, half>(rung, g, ws, stream, chunks, groups);
    default:
      throw Error(std::string("matmul kernel '") + rung_name(rung) + "' takes float, bfloat16 and float16, not " +
                  to_string(g.dtype));
  }
}

}  // namespace tandem::cuda
