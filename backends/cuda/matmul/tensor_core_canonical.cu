// Deterministic products in the tensor-core arithmetic on the GPU (common/tensor_core.hpp; the definition in
// common/canonical.hpp): bfloat16 / half inputs, and float inputs rounded to tf32 where
// MatmulOptions::precision allows tf32. Each C(i, j) is, per chunk of 4096 k, the chain of k-steps from +0.0;
// the chunk values are summed in the canonical order, then the canonical epilogue.
//   On an H100 / H200 the chains run on wgmma: wgmma_persistent (hopper.cu) computes every element of C as
//   one chain of k-steps over its K in increasing k, whatever the tile, the shape or the batch, and in
//   deterministic mode it stores with the canonical epilogue. K <= 4096 is that one launch. A longer K computes
//   chunk values, which combine_kernel sums: where C has few tiles, every (tile, chunk) pair side by side in one
//   launch (split); otherwise one launch per chunk.
//   TANDEM_LAB_KERNELS builds (not yet run on a GPU) also offer: a large C summing each tile's chunks in the
//   kernel, split launches of any size, tf32 chains with K > 4096, and chunk_values_kernel, which emulates the
//   k-step (tensor_core::decoded_step, the CPU's code) on other GPUs and past 2^31. Other builds refuse those
//   products with a tandem::Error.
// tf32: both operands are rounded to tf32 (to nearest, ties away) and packed K-major first (the tensor cores
// would truncate a float read in place), or rounded as they are read (the emulation).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "backends/cuda/kernels.hpp"
#include "backends/cuda/matmul/chunk_combine.cuh"
#include "backends/cuda/matmul/hopper.hpp"
#include "common/canonical.hpp"
#include "common/reduce_ops.hpp"
#include "common/tensor_core.hpp"

namespace tandem::cuda {
namespace {

namespace tc = detail::tensor_core;
namespace canonical = detail::canonical;

// dst[e * dst_stride + r * pitch + c] = tf32 bits of src[e * stride + r * rs + c * cs] (r < rows, c < cols).
__global__ void pack_tf32_kernel(const float* __restrict__ src, std::int64_t rs, std::int64_t cs, std::int64_t stride,
                                 std::uint32_t* __restrict__ dst, std::int64_t rows, std::int64_t cols,
                                 std::int64_t pitch, std::int64_t count) {
  const std::int64_t total = count * rows * cols;
  for (std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t e = t / (rows * cols), rc = t - e * rows * cols, r = rc / cols, c = rc - r * cols;
    dst[e * rows * pitch + r * pitch + c] = tc::tf32_bits(src[e * stride + r * rs + c * cs]);
  }
}

template <tc::Format F>
using Bits = typename tc::FormatTraits<F>::Bits;

// An operand element's bits in format F: 16-bit elements as stored, float rounded to tf32.
template <tc::Format F, class Src>
__device__ __forceinline__ Bits<F> bits_of(Src x) {
  if constexpr (F == tc::Format::tf32)
    return tc::tf32_bits(x);
  else
    return x.bits;
}

// values[c * slab + i * n + j] = chunk c's value of C(i, j): op(A)(i, p) = a[i * ai + p * ap], op(B)(p, j) =
// b[p * bp + j * bj]. One thread per (chunk, element).
template <tc::Format F, class Src>
__global__ void chunk_values_kernel(const Src* __restrict__ a, std::int64_t ai, std::int64_t ap,
                                    const Src* __restrict__ b, std::int64_t bp, std::int64_t bj, std::int64_t m,
                                    std::int64_t n, std::int64_t k, float* __restrict__ values, std::int64_t slab) {
  constexpr int K = tc::FormatTraits<F>::kSteps;
  const std::int64_t q = canonical::matmul_chunk_count(k), total = q * m * n;
  for (std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t c = t / (m * n), e = t - c * m * n, i = e / n, j = e - i * n;
    const std::int64_t end = min(k, (c + 1) * canonical::kMatmulChunk);
    std::uint32_t v = 0;  // +0.0
    for (std::int64_t p0 = c * canonical::kMatmulChunk; p0 < end; p0 += K) {
      Bits<F> ra[K], rb[K];
      tc::Term ta[K], tb[K];
      for (int s = 0; s < K; ++s) {
        const bool in = p0 + s < end;
        ra[s] = in ? bits_of<F>(a[i * ai + (p0 + s) * ap]) : Bits<F>(0);
        rb[s] = in ? bits_of<F>(b[(p0 + s) * bp + j * bj]) : Bits<F>(0);
        ta[s] = tc::term_of<F>(ra[s]);
        tb[s] = tc::term_of<F>(rb[s]);
      }
      v = tc::decoded_step<F>(ta, tb, v, ra, rb);
    }
    values[c * slab + e] = __uint_as_float(v);
  }
}

// C(i, j) = the canonical epilogue of the canonical sum of its q <= 4096 chunk values (values[c * slab + i * n + j]).
__global__ void combine_kernel(const float* __restrict__ values, std::int64_t q, std::int64_t slab, std::int64_t m,
                               std::int64_t n, float* c, std::int64_t ldc, float alpha, float beta) {
  for (std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < m * n;
       t += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = t / n, j = t - i * n;
    const float acc = q <= canonical::kLanes
                          ? canonical::lane_tree(0, int(q), [&](int l) { return values[l * slab + t]; })
                          : canonical::chunk_sum(values + t, q, slab);
    float& out = c[i * ldc + j];
    out = detail::canonical_nan(canonical::gemm_epilogue(acc, beta != 0.0f ? out : 0.0f, alpha, beta));
  }
}

unsigned blocks_for(std::int64_t work) { return unsigned(std::clamp<std::int64_t>((work + 255) / 256, 1, 1 << 16)); }

}  // namespace

void tensor_core_matmul(const detail::MatmulArgs& g, Workspace& ws, const MatmulWorkspaces& forms,
                        cudaStream_t stream) {
  tc::Format format{};
  if (!tc::canonical_format(g.dtype, g.precision, format)) throw Error("tensor_core_matmul: not a tensor-core product");
  const bool wgmma = hopper_runs_here() && std::max({g.m, g.n, g.k, g.lda, g.ldb, g.ldc, g.batch}) <= 0x7FFFFFFF;
  const std::int64_t q = canonical::matmul_chunk_count(g.k);
  const bool tf32 = format == tc::Format::tf32;
#ifndef TANDEM_LAB_KERNELS  // (what has not yet run on a GPU: the emulating kernel, tf32 chains with K > 4096)
  if (!wgmma)
    throw Error(
        "tandem: deterministic 16-bit products (and float products with precision tf32) on CUDA run on the tensor "
        "cores of a GPU of compute capability 9.0 (H100, H200) with sizes below 2^31; use the CPU backend, or a float "
        "product in full precision",
        ErrorKind::value);
  if (tf32 && q > 1)
    throw Error(
        "tandem: deterministic float products with precision tf32 and K > 4096 are not yet available on CUDA; use "
        "precision full, or the CPU backend",
        ErrorKind::value);
#endif
  detail::MatmulArgs h = g;
  h.deterministic = true;
  if (tf32 && wgmma) {  // both operands rounded to tf32, packed K-major: A m x k, B n x k (trans_b)
    const std::int64_t pitch = (g.k + 3) / 4 * 4;
    auto pack = [&](const void* src, bool transposed, std::int64_t ld, std::int64_t stride, std::int64_t rows,
                    Workspace& into, std::int64_t& out_stride) {
      const std::int64_t count = stride == 0 ? 1 : g.batch;
      auto* dst = static_cast<std::uint32_t*>(into.get(std::size_t(count * rows * pitch) * 4));
      // element (r, p) of op(X) as rows x k: X[r * ld + p], or X[p * ld + r] when stored transposed.
      pack_tf32_kernel<<<blocks_for(count * rows * g.k), 256, 0, stream>>>(static_cast<const float*>(src),
                                                                           transposed ? 1 : ld, transposed ? ld : 1,
                                                                           stride, dst, rows, g.k, pitch, count);
      TANDEM_CUDA_CHECK_LAUNCH();
      out_stride = stride == 0 ? 0 : rows * pitch;
      return dst;
    };
    h.a = pack(g.a, g.trans_a, g.lda, g.stride_a, g.m, forms.wide_a, h.stride_a);
    h.b = pack(g.b, !g.trans_b, g.ldb, g.stride_b, g.n, forms.wide_b, h.stride_b);  // B^T: n x k
    h.lda = h.ldb = pitch, h.trans_a = false, h.trans_b = true;
  }
  if (wgmma && q == 1) return hopper_matmul(HopperRung::persistent, h, ws, stream);

  // The chunk values: values[(c * batch + e) * m * n + i * n + j] for chunk c of entry e; then their canonical sum
  // and the epilogue (combine_kernel).
  const std::int64_t per_entry = g.m * g.n, slab = g.batch * per_entry;
  auto* values = static_cast<float*>(forms.product.get(std::size_t(q * slab) * 4));
  const int sms = multiprocessor_count();
  // Every (tile, chunk) pair side by side in one launch (split), where there are no more pairs than SMs.
  const bool split = (g.m + 127) / 128 * ((g.n + 127) / 128) * g.batch * q <= sms;
#ifdef TANDEM_LAB_KERNELS
  // Any number of pairs split; a C of at least as many tiles as SMs runs each tile's chunks in turn and sums them
  // in the kernel (up to 32 chunks).
  const bool in_kernel = !split && q <= canonical::kLanes && (g.m + 127) / 128 * ((g.n + 255) / 256) * g.batch >= sms;
  const bool any_split = !in_kernel;
#else
  const bool in_kernel = false, any_split = split;
#endif
  if (wgmma && (in_kernel || any_split)) {
    const HopperChunks chunks{values, !in_kernel};
    hopper_matmul(HopperRung::persistent, h, ws, stream, &chunks);
    if (in_kernel) return;
  } else if (wgmma) {  // one launch per chunk and entry, into its chunk values
    const std::size_t e_size = tf32 ? 4 : 2;
    const std::int64_t ap = h.trans_a ? h.lda : 1, bp = h.trans_b ? 1 : h.ldb;  // (elements per k)
    for (std::int64_t e = 0; e < h.batch; ++e)
      for (std::int64_t c = 0; c < q; ++c) {
        const std::int64_t p0 = c * canonical::kMatmulChunk;
        detail::MatmulArgs one = h;
        one.a = static_cast<const char*>(h.a) + (e * h.stride_a + p0 * ap) * std::int64_t(e_size);
        one.b = static_cast<const char*>(h.b) + (e * h.stride_b + p0 * bp) * std::int64_t(e_size);
        one.k = std::min(canonical::kMatmulChunk, h.k - p0);
        one.c = values + (c * h.batch + e) * per_entry, one.ldc = h.n;
        one.alpha = 1.0, one.beta = 0.0;
        one.batch = 1, one.stride_a = one.stride_b = one.stride_c = 0;
        hopper_matmul(HopperRung::persistent, one, ws, stream);
      }
  } else {
    const std::int64_t ai = g.trans_a ? 1 : g.lda, ap = g.trans_a ? g.lda : 1;
    const std::int64_t bp = g.trans_b ? 1 : g.ldb, bj = g.trans_b ? g.ldb : 1;
    auto run = [&]<tc::Format F, class Src>() {
      for (std::int64_t e = 0; e < g.batch; ++e) {
        chunk_values_kernel<F, Src><<<blocks_for(q * per_entry), 256, 0, stream>>>(
            static_cast<const Src*>(g.a) + e * g.stride_a, ai, ap, static_cast<const Src*>(g.b) + e * g.stride_b, bp,
            bj, g.m, g.n, g.k, values + e * per_entry, slab);
        TANDEM_CUDA_CHECK_LAUNCH();
      }
    };
    tc::visit_format(format, run);
  }
  float* values_now = values;
  std::int64_t left = q;
  if (left > canonical::kChunk) {  // K > 2^24: the chunk values of the chunk values first (canonical step 4)
    auto* spare = static_cast<float*>(forms.op_a.get(std::size_t(canonical::chunk_count(q) * slab) * 4));
    while (left > canonical::kChunk) {
      matmul_stages::chunk_values_sum(values_now, left, slab, g.batch * g.m, g.n, g.n, spare, slab, g.n, stream);
      std::swap(values_now, spare);
      left = canonical::chunk_count(left);
    }
  }
  for (std::int64_t e = 0; e < g.batch; ++e) {
    combine_kernel<<<blocks_for(per_entry), 256, 0, stream>>>(values_now + e * per_entry, left, slab, g.m, g.n,
                                                              static_cast<float*>(g.c) + e * g.stride_c, g.ldc,
                                                              float(g.alpha), float(g.beta));
    TANDEM_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace tandem::cuda
