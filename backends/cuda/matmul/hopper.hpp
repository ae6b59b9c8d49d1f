// The top rungs of the matmul ladder (hopper.cu, sm_90a only): each adds one Hopper technique to the wgmma
// stages (wgmma.cu):
//   wgmma_tma               the tiles come by the bulk tensor copy engine (TMA) into an mbarrier pipeline
//   wgmma_warp_specialized  a producer warpgroup loads, two consumer warpgroups multiply (setmaxnreg)
//   wgmma_persistent        one block per SM walks the tiles of every batch entry; loads of the next tile
//                           overlap the stores of this one
//   wgmma_cluster           clusters of two CTAs share each tile of B: each fetches half, multicast to both
//   wgmma_pingpong          wgmma_persistent with tiles of 64 rows, the two consumers taking them in turns, so
//                           that one's stores overlap the other's products (small products and batches)
//   wgmma_swap_ab           float (tf32) only: a row-major B without the pass that transposes it, as C^T = B^T A^T
//                           with B^T's tiles multiplied from registers (elsewhere it is wgmma_persistent)
//   wgmma_pingpong_swap_ab  wgmma_swap_ab on wgmma_pingpong's 64-row tiles in turns (smaller products; elsewhere it
//                           is wgmma_pingpong)
//   wgmma_tma_store         wgmma_persistent whose tiles of C go out by the copy engine from shared memory, the stores
//                           running on while the next tile is multiplied (C with 16-byte aligned rows and entries and
//                           a multiple of 4 columns, beta 0, not deterministic mode; elsewhere it is wgmma_persistent)
// Each takes float (tf32 inputs), bfloat16 and half (read as stored; the swap_ab rungs: float only), every form
// (transposes, alpha / beta, batches in one launch), C float.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <span>

#include "backends/cuda/common.cuh"
#include "backends/cuda/matmul/params.cuh"

namespace tandem::cuda {

enum class HopperRung { tma, warp_specialized, persistent, cluster, pingpong, swap_ab, pingpong_swap_ab, tma_store };

// Deterministic mode's chunks of K (K > 4096, common/canonical.hpp) on wgmma_persistent: memory for their
// values, q * batch * m * n floats (q = the number of chunks, at most 32 unless split), and how they are
// computed: split: every (tile, chunk) on its own, the values stored for tensor_core_canonical.cu to combine;
// otherwise each tile runs its chunks in turn and sums them itself before the epilogue.
struct HopperChunks {
  float* values;
  bool split;
};

// C = alpha * op(A) * op(B) + beta * C for every entry of g: dtype f32 (inputs as tf32), bf16 or f16, C
// float, k >= 1, alpha != 0, sizes below 2^31. With `chunks` (deterministic mode, wgmma_persistent only) K is
// cut into deterministic mode's chunks; without, every element is one chain over all of K. Throws
// tandem::Error on a GPU other than compute capability 9.0.
void hopper_matmul(HopperRung rung, const detail::MatmulArgs& g, Workspace& ws, cudaStream_t stream,
                   const HopperChunks* chunks = nullptr);
// A grouped product (Engine::matmul_grouped) in one launch: A (m x k) and C (m x n) one matrix each, their rows cut
// into groups of groups[i] rows (adding up to m), group i multiplied by B's entry i (g.batch entries, g.stride_b
// apart, or stride 0); g's other fields as above (stride_a, stride_c unused). Each group's rows are what the rung
// computes for the group alone. Not on wgmma_cluster, not with chunks.
void hopper_matmul_grouped(HopperRung rung, const detail::MatmulArgs& g, std::span<const std::int64_t> groups,
                           Workspace& ws, cudaStream_t stream, const HopperChunks* chunks = nullptr);
// Whether wgmma_swap_ab computes g as C^T = B^T A^T: a float product (not mixed) whose B is row-major with rows and
// entries the copy engine reads in place (16-byte aligned), in default mode. Otherwise it runs as wgmma_persistent.
bool hopper_swaps_ab(const detail::MatmulArgs& g);
// Whether wgmma_tma_store stores g's C by the copy engine, as far as the entries' shape and the scalars say: beta 0,
// rows of a multiple of 4 columns, default mode. (It also needs C's rows and entries to start on 16-byte boundaries,
// which depends on where C lies; elsewhere it runs as wgmma_persistent, whose bits are the same. auto's choice
// reads this alone, so that it never depends on C's address, ld or stride, nor on how a batch is split.)
bool hopper_stores_by_tma(const detail::MatmulArgs& g);
// Whether the current GPU runs them (compute capability 9.0).
inline bool hopper_runs_here() { return device_is_sm90(); }

namespace matmul_stages {
template <HopperRung R>
void launch_hopper(const GemmParams<float>& p, const GemmContext& ctx) {
  hopper_matmul(R,
                detail::MatmulArgs{.dtype = Dtype::f32,
                                   .a = p.a,
                                   .b = p.b,
                                   .c = p.c,
                                   .m = p.m,
                                   .k = p.k,
                                   .n = p.n,
                                   .lda = p.lda,
                                   .ldb = p.ldb,
                                   .ldc = p.ldc,
                                   .resident = true},
                ctx.ws, ctx.stream);
}
template <HopperRung R>
void launch_hopper_batch(const GemmBatch<float>& b, const GemmContext& ctx) {
  detail::MatmulArgs g{.dtype = Dtype::f32,
                       .a = b.p.a,
                       .b = b.p.b,
                       .c = b.p.c,
                       .m = b.p.m,
                       .k = b.p.k,
                       .n = b.p.n,
                       .lda = b.p.lda,
                       .ldb = b.p.ldb,
                       .ldc = b.p.ldc,
                       .resident = true};
  g.trans_a = b.trans_a, g.trans_b = b.trans_b, g.alpha = b.alpha, g.beta = b.beta;
  g.batch = b.batch, g.stride_a = b.stride_a, g.stride_b = b.stride_b, g.stride_c = b.stride_c;
  hopper_matmul(R, g, ctx.ws, ctx.stream);
}
}  // namespace matmul_stages

}  // namespace tandem::cuda
