// The Hopper instructions the top rungs of the matmul ladder (hopper.cu) and the wgmma stages (wgmma.cu)
// are built from, each wrapped once (the wgmma instructions themselves: wgmma_ops.cuh): mbarriers (a 64-bit
// counter in shared memory that threads arrive on and wait for, one phase at a time, and that also counts
// the bytes an asynchronous copy still has to deliver), the bulk tensor copy (TMA: one thread asks the copy
// engine for a whole 2-D tile, described by a CUtensorMap made on the host), the shared-memory matrix
// descriptors wgmma reads its operands through, the wgmma fences, and register reallocation between
// warpgroups (setmaxnreg). sm_90a only.
#pragma once

#include <cuda.h>  // CUtensorMap (the type only: the map is encoded through the runtime's driver entry point)

#include <cstdint>

namespace tandem::cuda::hopper {

__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarriers -------------------------------------------------------------------------------------
// A barrier completes a phase when `count` arrivals have happened and every byte announced with
// expect_tx has landed; then the next phase begins. Waiters name the parity (0 or 1) of the phase they
// wait for: the wait returns once that phase has completed. A fresh barrier is in phase 0, and waiting for
// parity 1 returns at once (the phase "before" it counts as completed): a producer that waits for its
// empty slots with parity (round & 1) ^ 1 passes the first round without waiting.
__device__ __forceinline__ void mbarrier_init(std::uint32_t bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialised barriers visible to the copy engine (the async proxy) before any copy uses them.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void mbarrier_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// One arrival that also announces `bytes` to come from asynchronous copies completing on this barrier.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbarrier_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

// ---- Clusters ----------------------------------------------------------------------------------------
// A thread block cluster: CTAs launched together on neighbouring SMs that can read, write and arrive on
// each other's shared memory (distributed shared memory).
__device__ __forceinline__ std::uint32_t cluster_rank() {
  std::uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
// Named barrier `id` (1 .. 15: 0 is __syncthreads') of `threads` threads: wait there until all have arrived,
// or arrive without waiting (wgmma_pingpong's consumers hand their turn over with them).
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
// Every thread of every CTA of the cluster meets here (release / acquire: shared-memory writes and barrier
// initialisations before it are visible to the cluster after it).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// One arrival on the barrier at shared offset bar of CTA `cta` of the cluster. (Release at the default CTA
// scope, as it is used here: to say that this CTA's wgmma reads of a stage are done before the other CTA's
// copy engine refills it. With .release.cluster every arrival waited for this thread's earlier global
// stores: wgmma_cluster ran at 0.74x of wgmma_persistent, against 0.99x without.)
__device__ __forceinline__ void mbarrier_arrive_cluster(std::uint32_t bar, std::uint32_t cta) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(bar),
      "r"(cta)
      : "memory");
}

// ---- The bulk tensor copy (TMA) --------------------------------------------------------------------
// Copies the box of `map` at coordinates (x: innermost, y, z: the batch entry) into shared memory at
// dst, in the map's swizzle; the bytes complete on barrier bar. Parts of the box outside the tensor are
// filled with zeros (and still count as delivered bytes).
__device__ __forceinline__ void tma_load(std::uint32_t dst, const CUtensorMap* map, std::int32_t x, std::int32_t y,
                                         std::int32_t z, std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(bar)
      : "memory");
}
// The same box into shared memory at dst in every CTA of the cluster named by `cta_mask` (bit r: rank r),
// each CTA's barrier bar (the same shared offsets in each) counting the bytes that reach it.
__device__ __forceinline__ void tma_load_multicast(std::uint32_t dst, const CUtensorMap* map, std::int32_t x,
                                                   std::int32_t y, std::int32_t z, std::uint32_t bar,
                                                   std::uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, "
      "{%2, %3, %4}], [%5], %6;" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(bar), "h"(cta_mask)
      : "memory");
}
// The other way (wgmma_tma_store): the box of `map` at (x, y, z) from shared memory at src, in the map's swizzle, as
// one bulk group of this thread's; parts of the box outside the tensor are not written. The threads that wrote src
// make their writes visible to the copy engine first (fence_async_shared), and src is not written again before
// the group has read it (bulk_wait_read).
__device__ __forceinline__ void tma_store(const CUtensorMap* map, std::uint32_t src, std::int32_t x, std::int32_t y,
                                          std::int32_t z) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(src), "r"(x), "r"(y), "r"(z)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Until at most N of this thread's bulk groups still read their shared memory.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
// Until all of this thread's bulk groups are complete (their writes done).
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
__device__ __forceinline__ void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
__device__ __forceinline__ void store_shared(std::uint32_t addr, float x, float y) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(x), "f"(y) : "memory");
}
__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

// ---- wgmma ---------------------------------------------------------------------------------------------
// The matrix descriptor of a tile in the 128-byte swizzle at shared address addr (the swizzle pattern
// repeats every 1024 bytes, and tiles start on such a boundary): bits 0-13 address / 16, 16-29 the
// leading byte offset / 16, 32-45 the stride byte offset / 16, 62-63 the swizzle (1: 128 bytes).
//   K-major (rows of 128 bytes along K): stride = 1024 (from one group of 8 rows to the next); the
//     leading offset is unused (1). Steps along K add their byte offset inside the row to addr.
//   MN-major (rows of 128 bytes along M or N, one row per k): leading = the bytes from one 64-element
//     column block to the next, stride = 1024 (from one group of 8 k-rows to the next).
__device__ __forceinline__ std::uint64_t descriptor(std::uint32_t addr, std::uint32_t leading_bytes,
                                                    std::uint32_t stride_bytes) {
  return std::uint64_t((addr & 0x3FFFF) >> 4) | (std::uint64_t((leading_bytes >> 4) & 0x3FFF) << 16) |
         (std::uint64_t((stride_bytes >> 4) & 0x3FFF) << 32) | (std::uint64_t(1) << 62);
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Keeps the compiler from moving reads or writes of the accumulators across an asynchronous wgmma.
template <int N>
__device__ __forceinline__ void fence_registers(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// ---- Register reallocation -----------------------------------------------------------------------------
// A warpgroup gives registers back (the producer: it only issues copies) or takes them (the consumers:
// their accumulators), so that three warpgroups fit where the compiler's even split would leave the
// consumers short.
template <int Registers>
__device__ __forceinline__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Registers));
}
template <int Registers>
__device__ __forceinline__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Registers));
}

}  // namespace tandem::cuda::hopper
