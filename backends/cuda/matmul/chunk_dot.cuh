// register_tiled's kernel for products with few outputs: C narrow (n <= 4 or m <= 4, any K, e.g. X b or r^T X)
// or small (m * n <= 4096 with K > 4096, e.g. X^T r and X^T X of a tall X). Their fma chains are few and long, so
// register_tiled's large tiles leave most of the GPU idle, and each of their k-tiles waits for its global loads.
// Here a block takes a small tile of C for one chunk of K (common/canonical.hpp: 4096 k, one fma chain per element
// from +0.0, in order of k; the chunk values then go to chunk_combine.cuh), and keeps kStages stages of k in flight
// with asynchronous copies into shared memory (cp.async; __pipeline_memcpy_async copies synchronously on GPUs
// older than sm_80). Operands are read as stored: op(A) = A^T and op(B) = B^T need no transposed copy first. Each
// element's chain is the same fma chain as register_tiled's, so the bits are the same (the CPU's too).
// Mixed products (A and B two of float, bfloat16 and half): each operand is copied into shared memory as stored (a
// 16-bit one at half the bytes) and converted to float as it is read from there (exact), so the chains, and the
// bits, are those of the float product of the converted operands without a widened copy of either.
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backends/cuda/matmul/chunk_combine.cuh"
#include "backends/cuda/matmul/forms.cuh"
#include "backends/cuda/matmul/params.cuh"
#include "backends/cuda/matmul/register_tiled.cuh"
#include "common/backend.hpp"
#include "common/canonical.hpp"
#include "common/dispatch.hpp"

namespace tandem::cuda::matmul_stages {

// C (m x n) = op(A) (m x k) * op(B) (k x n); op(A)(i, p) = trans_a ? a[p * lda + i] : a[i * lda + p], likewise B.
// Chunk z's value of C(i, j) goes to out[z * slab + i * out_rs + j * out_cs] (or C itself: one chunk). A and B are
// of TA and TB (T, or a 16-bit type converted to float T on the way).
template <class T, class TA = T, class TB = T>
struct DotProblem {
  const TA* a;
  const TB* b;
  T* out;
  std::int64_t m, k, n, lda, ldb;
  std::int64_t out_rs, out_cs, slab;
};

// A block tile of kRows x kCols elements of C, kThreadRows x kThreadCols per thread, kStepK k per stage of shared
// memory (a row of 256 / 128 bytes).
template <class T, int kRows_, int kCols_, int kThreadRows_, int kThreadCols_, int kStepBytes>
struct DotShape {
  static constexpr int kRows = kRows_, kCols = kCols_, kThreadRows = kThreadRows_, kThreadCols = kThreadCols_;
  static constexpr int kStepK = kStepBytes / int(sizeof(T)), kStages = 5;
  static constexpr int kThreads = (kRows / kThreadRows) * (kCols / kThreadCols);
};
// A warp issues its instructions in order and each of its threads has long chains: the column kernel's warp takes 32
// rows, one chain each (4 rows each ran 5x slower on an H200 for X^T r: twice the copies per warp, half the warps);
// the small kernel's threads take 2 x 2 elements, 256 to a block (4 x 4 with 64 threads: 0.174 against 0.156 ms for
// X^T X, X 200000 x 64 float).
template <class T>
using DotColumn = DotShape<T, 32, 1, 1, 1, 256>;  // one warp: 32 rows of one column
template <class T>
using DotSmall = DotShape<T, 32, 32, 2, 2, 128>;  // 256 threads, 2 x 2 elements each

// The shared copy of one operand for one stage: kSlow rows of kFast elements from src + row * ld + col, row stride
// kPitch; rows past rows_ok and columns past cols_ok are not copied (they feed only outputs outside C, or steps of k
// past the end, which are skipped). vec: 16-byte copies (src and ld aligned) where a row holds whole vectors.
template <class T, int kSlow, int kFast, int kPitch, int kThreads>
__device__ __forceinline__ void copy_stage(T* dst, const T* __restrict__ src, std::int64_t ld, std::int64_t rows_ok,
                                           std::int64_t cols_ok, bool vec) {
  constexpr int kUnit = kFast % (16 / int(sizeof(T))) == 0 ? 16 / int(sizeof(T)) : 1, kUnits = kFast / kUnit;
  for (int v = threadIdx.x; v < kSlow * kUnits; v += kThreads) {
    const int r = v / kUnits, c = (v % kUnits) * kUnit;
    T* d = dst + r * kPitch + c;
    const T* s = src + r * ld + c;
    if (kUnit > 1 && vec && r < rows_ok && c + kUnit <= cols_ok) {
      __pipeline_memcpy_async(d, s, 16);
    } else {
      for (int u = 0; u < kUnit; ++u)
        if (r < rows_ok && c + u < cols_ok) {
          if constexpr (sizeof(T) >= 4)
            __pipeline_memcpy_async(d + u, s + u, sizeof(T));
          else
            d[u] = s[u];  // (cp.async copies 4, 8 or 16 bytes; a plain store is seen after the stage's barrier too)
        }
    }
  }
}

// out[0 .. kN) = p[0 .. kN) from shared memory, in one load where kN elements make 8 or 16 aligned bytes.
template <class T, int kN>
__device__ __forceinline__ void load_n(const T* p, T* out) {
  if constexpr (kN * sizeof(T) == 16) {
    const typename Vector16<T>::type v = *reinterpret_cast<const typename Vector16<T>::type*>(p);
    if constexpr (sizeof(T) == 4)
      out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
    else
      out[0] = v.x, out[1] = v.y;
  } else if constexpr (kN == 2 && sizeof(T) == 4) {
    const float2 v = *reinterpret_cast<const float2*>(p);
    out[0] = v.x, out[1] = v.y;
  } else {
#pragma unroll
    for (int e = 0; e < kN; ++e) out[e] = p[e];
  }
}

template <class T>
__device__ __forceinline__ void load_vector(const T* p, T* out) {
  load_n<T, 16 / int(sizeof(T))>(p, out);
}

// out[0 .. kN) = p[0 .. kN) converted to T: load_n where S is T; 16-bit elements in one 8- or 4-byte load where kN
// of them make that many aligned bytes.
template <class T, int kN, class S>
__device__ __forceinline__ void load_n_as(const S* p, T* out) {
  if constexpr (std::is_same_v<S, T>) {
    load_n<T, kN>(p, out);
  } else if constexpr (sizeof(S) == 2 && (kN == 4 || kN == 2)) {
    using Word = std::conditional_t<kN == 4, uint2, unsigned>;
    const Word w = *reinterpret_cast<const Word*>(p);
    S e[kN];
    static_assert(sizeof(e) == sizeof(Word));
    memcpy(e, &w, sizeof(Word));
#pragma unroll
    for (int i = 0; i < kN; ++i) out[i] = T(float(e[i]));
  } else {
#pragma unroll
    for (int i = 0; i < kN; ++i) out[i] = T(float(p[i]));
  }
}

// out[e][u] = tile[u * kPitch + e] for e < kCount, u < kSteps: kCount consecutive elements of kSteps rows of a
// k-major tile (kPitch 1: the kSteps values of one column, consecutive), converted to T.
template <class T, int kCount, int kSteps, int kPitch, class S>
__device__ __forceinline__ void load_across(const S* tile, T (&out)[kCount][kSteps]) {
  if constexpr (kCount == 1 && kPitch == 1) {
    load_n_as<T, kSteps>(tile, out[0]);
  } else {
#pragma unroll
    for (int u = 0; u < kSteps; ++u) {
      T w[kCount];
      load_n_as<T, kCount>(tile + u * kPitch, w);
#pragma unroll
      for (int e = 0; e < kCount; ++e) out[e][u] = w[e];
    }
  }
}

// The shared memory of one stage of chunk_dot_kernel: op(A) stored k-major (kTransA) as [k][row], else [row][k]
// (pitch padded by a 16-byte vector, so that a warp's vector reads of different rows fall in different banks); B
// likewise. Sizes in elements of TA and TB, and the stage's bytes (a multiple of 16).
template <class T, class S, bool kTransA, bool kTransB, class TA, class TB>
struct DotStage {
  static constexpr int kK = S::kStepK, kPitchA = kK + 16 / int(sizeof(TA)), kPitchB = kK + 16 / int(sizeof(TB));
  static constexpr int kASize = kTransA ? kK * S::kRows : S::kRows * kPitchA;
  static constexpr int kBSize = kTransB ? S::kCols * kPitchB : kK * S::kCols;
  static constexpr int kABytes = (kASize * int(sizeof(TA)) + 15) / 16 * 16;
  static constexpr int kBytes = kABytes + (kBSize * int(sizeof(TB)) + 15) / 16 * 16;
};

// Block (blockIdx.x, blockIdx.y) computes rows blockIdx.x * kRows.. and columns blockIdx.y * kCols.. of chunk
// z0 + blockIdx.z (DotStage: the shared layouts).
template <class T, class S, bool kTransA, bool kTransB, class TA = T, class TB = T>
__global__ void __launch_bounds__(S::kThreads)
    chunk_dot_kernel(const DotProblem<T, TA, TB> p, std::int64_t z0, bool vec_a, bool vec_b) {
  using St = DotStage<T, S, kTransA, kTransB, TA, TB>;
  constexpr int kWidth = 16 / int(sizeof(T)), kK = S::kStepK, kPitchA = St::kPitchA, kPitchB = St::kPitchB;
  extern __shared__ __align__(16) unsigned char dot_smem[];  // kStages * St::kBytes (dot_smem_bytes)
  auto stage_a = [](int s) { return reinterpret_cast<TA*>(dot_smem + (s % S::kStages) * St::kBytes); };
  auto stage_b = [](int s) { return reinterpret_cast<TB*>(dot_smem + (s % S::kStages) * St::kBytes + St::kABytes); };

  constexpr int kThreadsAcross = S::kCols / S::kThreadCols;
  const int tc = threadIdx.x % kThreadsAcross, tr = threadIdx.x / kThreadsAcross;
  const std::int64_t i0 = std::int64_t(blockIdx.x) * S::kRows, j0 = std::int64_t(blockIdx.y) * S::kCols;
  constexpr std::int64_t kChunk = detail::canonical::kMatmulChunk;
  const std::int64_t z = z0 + blockIdx.z, k0 = z * kChunk;
  const int len = int(p.k - k0 < kChunk ? p.k - k0 : kChunk);
  const int steps = (len + kK - 1) / kK;

  auto issue = [&](int s) {
    TA* as = stage_a(s);
    TB* bs = stage_b(s);
    const std::int64_t ks = k0 + std::int64_t(s) * kK, k_ok = std::min<std::int64_t>(kK, k0 + len - ks);
    if constexpr (kTransA)  // rows of k, i contiguous
      copy_stage<TA, kK, S::kRows, S::kRows, S::kThreads>(as, p.a + ks * p.lda + i0, p.lda, k_ok, p.m - i0, vec_a);
    else
      copy_stage<TA, S::kRows, kK, kPitchA, S::kThreads>(as, p.a + i0 * p.lda + ks, p.lda, p.m - i0, k_ok, vec_a);
    if constexpr (kTransB)
      copy_stage<TB, S::kCols, kK, kPitchB, S::kThreads>(bs, p.b + j0 * p.ldb + ks, p.ldb, p.n - j0, k_ok, vec_b);
    else
      copy_stage<TB, kK, S::kCols, S::kCols, S::kThreads>(bs, p.b + ks * p.ldb + j0, p.ldb, k_ok, p.n - j0, vec_b);
  };

  T acc[S::kThreadRows][S::kThreadCols];
  for (auto& row : acc)
    for (T& v : row) v = T(0);  // +0.0: the chain's start

  // One group of kWidth steps of k from shared memory; guarded: only the steps below kn (the last stage's tail).
  // A thread's rows (columns) are consecutive: from a k-major tile they come as vectors too.
  auto group = [&](const TA* as, const TB* bs, int kk, bool guarded, int kn) {
    T av[S::kThreadRows][kWidth], bv[S::kThreadCols][kWidth];
    if constexpr (kTransA)
      load_across<T, S::kThreadRows, kWidth, S::kRows>(as + kk * S::kRows + tr * S::kThreadRows, av);
    else
#pragma unroll
      for (int ii = 0; ii < S::kThreadRows; ++ii)
        load_n_as<T, kWidth>(as + (tr * S::kThreadRows + ii) * kPitchA + kk, av[ii]);
    if constexpr (kTransB)
#pragma unroll
      for (int jj = 0; jj < S::kThreadCols; ++jj)
        load_n_as<T, kWidth>(bs + (tc * S::kThreadCols + jj) * kPitchB + kk, bv[jj]);
    else
      load_across<T, S::kThreadCols, kWidth, S::kCols>(bs + kk * S::kCols + tc * S::kThreadCols, bv);
#pragma unroll
    for (int u = 0; u < kWidth; ++u) {
      if (guarded && kk + u >= kn) break;
#pragma unroll
      for (int ii = 0; ii < S::kThreadRows; ++ii)
#pragma unroll
        for (int jj = 0; jj < S::kThreadCols; ++jj) acc[ii][jj] = fma_rn(av[ii][u], bv[jj][u], acc[ii][jj]);
    }
  };

  for (int s = 0; s < S::kStages - 1; ++s) {
    if (s < steps) issue(s);
    __pipeline_commit();
  }
  for (int s = 0; s < steps; ++s) {
    if (s + S::kStages - 1 < steps) issue(s + S::kStages - 1);
    __pipeline_commit();
    __pipeline_wait_prior(S::kStages - 1);  // stage s has landed
    __syncthreads();
    const TA* as = stage_a(s);
    const TB* bs = stage_b(s);
    const int kn = std::min(kK, len - s * kK);
    if (kn == kK) {
#pragma unroll 4
      for (int kk = 0; kk < kK; kk += kWidth) group(as, bs, kk, false, kK);
    } else {
      for (int kk = 0; kk < kn; kk += kWidth) group(as, bs, kk, true, kn);
    }
    __syncthreads();  // before the buffer is filled again
  }

#pragma unroll
  for (int ii = 0; ii < S::kThreadRows; ++ii)
#pragma unroll
    for (int jj = 0; jj < S::kThreadCols; ++jj) {
      const std::int64_t i = i0 + tr * S::kThreadRows + ii, j = j0 + tc * S::kThreadCols + jj;
      if (i < p.m && j < p.n) p.out[z * p.slab + i * p.out_rs + j * p.out_cs] = detail::canonical_nan(acc[ii][jj]);
    }
}

template <class T, class S, bool kTransA, bool kTransB, class TA, class TB>
void launch_chunk_dot_shape(const DotProblem<T, TA, TB>& p, std::int64_t chunks, cudaStream_t stream) {
  constexpr int kBytes = S::kStages * DotStage<T, S, kTransA, kTransB, TA, TB>::kBytes;
  const auto kernel = chunk_dot_kernel<T, S, kTransA, kTransB, TA, TB>;
  if constexpr (kBytes > 48 * 1024)
    TANDEM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kBytes));
  const bool vec_a = vector_aligned<TA>(p.a, p.lda), vec_b = vector_aligned<TB>(p.b, p.ldb);
  dim3 grid(static_cast<unsigned>(ceil_div(p.m, S::kRows)), static_cast<unsigned>(ceil_div(p.n, S::kCols)));
  for (std::int64_t z0 = 0; z0 < chunks; z0 += 65535) {  // grid z is at most 65535
    grid.z = static_cast<unsigned>(std::min<std::int64_t>(65535, chunks - z0));
    kernel<<<grid, S::kThreads, kBytes, stream>>>(p, z0, vec_a, vec_b);
    TANDEM_CUDA_CHECK_LAUNCH();
  }
}

enum class DotKind { none, column, small };

// Which products chunk_dot takes (the others go to register_tiled's tiles): n <= 4 (a column tile per column),
// m <= 4 (the same on the transposed problem), or m * n <= 4096 with K > 4096.
inline DotKind chunk_dot_kind(std::int64_t m, std::int64_t k, std::int64_t n) {
  if (std::min(m, n) <= 4 && ceil_div(std::max(m, n), 32) <= INT_MAX) return DotKind::column;
  if (k > detail::canonical::kMatmulChunk && m * n <= 4096) return DotKind::small;
  return DotKind::none;
}

// The chunk values (or, one chunk, C) of p: the problem as given, or transposed so that the narrow side is n.
template <class T, class TA, class TB>
void chunk_dot_values(const DotProblem<T, TA, TB>& p, bool trans_a, bool trans_b, std::int64_t chunks,
                      cudaStream_t stream) {
  const DotKind kind = chunk_dot_kind(p.m, p.k, p.n);
  auto run = [&]<class S, class XA, class XB>(S, const DotProblem<T, XA, XB>& q, bool ta, bool tb) {
    if (ta && tb) return launch_chunk_dot_shape<T, S, true, true>(q, chunks, stream);
    if (ta) return launch_chunk_dot_shape<T, S, true, false>(q, chunks, stream);
    if (tb) return launch_chunk_dot_shape<T, S, false, true>(q, chunks, stream);
    launch_chunk_dot_shape<T, S, false, false>(q, chunks, stream);
  };
  if (kind == DotKind::column && p.n > 4)  // C^T = op(B)^T op(A)^T: B in A's place, each transposed
    return run(DotColumn<T>{},
               DotProblem<T, TB, TA>{p.b, p.a, p.out, p.n, p.k, p.m, p.ldb, p.lda, p.out_cs, p.out_rs, p.slab},
               !trans_b, !trans_a);
  if (kind == DotKind::column)
    run(DotColumn<T>{}, p, trans_a, trans_b);
  else
    run(DotSmall<T>{}, p, trans_a, trans_b);
}

// C = alpha op(A) op(B) + beta C for each entry of g (chunk_dot_kind(m, k, n) != none), in the canonical order:
// K <= 4096 straight into C (or the product, then the epilogue); otherwise per panel of C its chunk values, then
// their canonical sum (chunk_combine.cuh).
template <class T, class TA = T, class TB = T>
void chunk_dot_matmul(const GemmBatch<T, TA, TB>& g, const GemmContext& ctx, const MatmulWorkspaces& forms) {
  const GemmParams<T, TA, TB>& p = g.p;
  const bool plain_out = g.alpha == T(1) && g.beta == T(0);
  T* product = plain_out ? nullptr : static_cast<T*>(forms.product.get(std::size_t(p.m * p.n) * sizeof(T)));
  const std::int64_t q = detail::canonical::matmul_chunk_count(p.k);
  // Panels of C whose q chunk values (and the second level's, q > 4096) fit in kChunkValuesBytes.
  const std::int64_t slabs = q + (q > detail::canonical::kChunk ? detail::canonical::chunk_count(q) : 0);
  const std::int64_t budget = std::max<std::int64_t>(1, kChunkValuesBytes / std::int64_t(sizeof(T)) / slabs);
  const std::int64_t pc = q == 1 ? p.n : std::min(p.n, budget);
  const std::int64_t pr = q == 1 ? p.m : std::min(p.m, std::max<std::int64_t>(1, budget / pc));
  T* const values = q == 1 ? nullptr : static_cast<T*>(ctx.ws.get(std::size_t(slabs * pr * pc) * sizeof(T)));
  for (std::int64_t e = 0; e < g.batch; ++e) {
    const TA* a = p.a + e * g.stride_a;
    const TB* b = p.b + e * g.stride_b;
    T* const c = plain_out ? p.c + e * g.stride_c : product;
    const std::int64_t ldc = plain_out ? p.ldc : p.n;
    for (std::int64_t r0 = 0; r0 < p.m; r0 += pr)
      for (std::int64_t c0 = 0; c0 < p.n; c0 += pc) {
        const std::int64_t rows = std::min(pr, p.m - r0), cols = std::min(pc, p.n - c0);
        const TA* pa = a + (g.trans_a ? r0 : r0 * p.lda);
        const TB* pb = b + (g.trans_b ? c0 * p.ldb : c0);
        if (q == 1) {
          chunk_dot_values(DotProblem<T, TA, TB>{pa, pb, c + r0 * ldc + c0, rows, p.k, cols, p.lda, p.ldb, ldc, 1, 0},
                           g.trans_a, g.trans_b, 1, ctx.stream);
        } else {
          chunk_dot_values(DotProblem<T, TA, TB>{pa, pb, values, rows, p.k, cols, p.lda, p.ldb, cols, 1, rows * cols},
                           g.trans_a, g.trans_b, q, ctx.stream);
          sum_chunk_values<T>(values, q, rows * cols, rows, cols, cols, c + r0 * ldc + c0, ldc,
                              values + q * rows * cols, ctx.stream);
        }
      }
    if (!plain_out) epilogue<T>(p.c + e * g.stride_c, p.m, p.n, p.ldc, product, g.alpha, g.beta, ctx.stream);
  }
}

// register_tiled's mixed product (g.mixed(): A and B two of float, bfloat16 and half, C float), a product computed
// (k > 0, alpha != 0), on the operands as stored, each 16-bit one converted to float as it is read: with few outputs
// (chunk_dot_kind(m, k, n) != none) chunk_dot_matmul, in its shared-memory reads; otherwise register_tiled's tiles,
// in their global loads (a transposed operand is transposed first in its own type). Either way the bits of
// register_tiled's float product of the converted matrices, without a float copy of the 16-bit one.
inline void register_tiled_mixed(const detail::MatmulArgs& g, const GemmContext& ctx, const MatmulWorkspaces& forms) {
  using Types = type_list<float, bfloat16, half>;
  detail::visit(
      g.dtype,
      [&]<class TA>(std::type_identity<TA>) {
        detail::visit(
            g.b_type(),
            [&]<class TB>(std::type_identity<TB>) {
              if constexpr (!std::is_same_v<TA, TB>) {
                const GemmBatch<float, TA, TB> batch{
                    GemmParams<float, TA, TB>{static_cast<const TA*>(g.a), static_cast<const TB*>(g.b),
                                              static_cast<float*>(g.c), g.m, g.k, g.n, g.lda, g.ldb, g.ldc},
                    g.trans_a,
                    g.trans_b,
                    float(g.alpha),
                    float(g.beta),
                    g.batch,
                    g.stride_a,
                    g.stride_b,
                    g.stride_c};
                if (chunk_dot_kind(g.m, g.k, g.n) != DotKind::none)
                  return chunk_dot_matmul<float, TA, TB>(batch, ctx, forms);
                run_as_plain_products(batch, &launch_register_tiled<float, TA, TB>, ctx, forms);
              }
            },
            Types{});
      },
      Types{});
}

}  // namespace tandem::cuda::matmul_stages
