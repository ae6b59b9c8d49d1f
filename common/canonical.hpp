// The canonical association order of deterministic mode (ReduceOptions/MatmulOptions::deterministic),
// implemented exactly by both backends so that float results are bitwise identical on CPU and GPU,
// across runs, thread counts, grid sizes and GPU models.
//
// Sum of n floating-point values x[0..n) (a sum-like op's loaded values: the elements for sum, their
// squares, rounded to the element's compute type, for sumsq; reduce_ops.hpp's kAdditive operators).
// prod follows the same order with * for + and 1 for -0.0 (reduce_ops.hpp's canonical_order: every float
// operator whose bits depend on the order):
//   1. Split x into chunks of kChunk = 4096 consecutive elements (the last one may be shorter).
//   2. In a chunk, lane j (0 <= j < 32) starts at -0.0 and adds the chunk's elements j, j + 32,
//      j + 64, ... in increasing order (one accumulator per lane, no fused or reordered adds). -0.0 is
//      the additive identity that keeps every sign: a sum of only -0.0 is -0.0 (IEEE 754, NumPy).
//   3. The 32 lanes are combined by a fixed tree: for s = 16, 8, 4, 2, 1: lane[j] = lane[j] + lane[j + s]
//      for j < s. lane[0] is the chunk's value.
//   4. The chunk values, in order, are a new input: repeat from 1 until one value remains.
// Per-row and per-column sums (Engine::sum(MatrixView, Per, ...)): each row's (column's) value is the sum
// above, steps 1-4, of that row (column) taken as a vector: x[k] = A(i, k) for row i, A(k, j) for column j
// (an empty row or column: +0.0).
// A 16-bit input (bfloat16, half) is summed as the floats it converts to, exactly (steps 1-4 in float).
// (On a GPU a chunk is one warp, lane j is thread j and step 3 is a __shfl_down_sync tree; on a CPU the
// 32 lanes are SIMD registers.) Integer sums, min and max are order-independent already.
//
// Matrix product C = alpha * op(A) * op(B) + beta * C (in the element type T, alpha and beta rounded
// to T), for each C(i, j) of float (precision full) or double inputs (16-bit inputs, and float inputs whose
// precision allows tf32: step 2's fma chain is a chain of tensor-core k-steps, common/tensor_core.hpp):
//   1. K is cut into chunks of kMatmulChunk = 4096 consecutive k (the last one may be shorter): q = ceil(K / 4096).
//   2. Chunk c's value v_c starts at +0.0 and takes v = fma(op(A)(i, k), op(B)(k, j), v) for the chunk's k in
//      increasing order, one accumulator (a transpose only changes where an element is read).
//   3. acc(i, j) = the canonical sum above, steps 1-4, of v_0 .. v_{q-1} (lanes from -0.0). With q = 1 that is v_0
//      itself, bit for bit (-0.0 + v_0 = v_0 and v_0 + -0.0 = v_0 for every v_0, +0.0 and -0.0 included): a product
//      with K <= 4096 is the one fma chain over k from +0.0.
//   4. C(i, j) = gemm_epilogue(acc, C(i, j), alpha, beta) below; with alpha = 0 or K = 0 no product is computed and
//      C(i, j) = beta == 0 ? +0.0 : beta * C(i, j). A NaN result is stored as the canonical quiet NaN.
// Each entry of a batch is one such product. matmul_element() below is the reference of steps 1-3. (The chunks let
// a long K run in parallel: the CPU computes the chunk values of row x column blocks x chunks as tasks, the GPU
// one chunk per grid z, then both combine them per element with chunk_sum_of.)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/dispatch.hpp"
#include "common/reduce_ops.hpp"

namespace tandem::detail::canonical {

// The epilogue of one element of C: alpha * acc, plus beta * c_old in one fma when beta != 0 (beta == 0
// never reads c_old, so a NaN there does not leak). alpha == 1: acc itself.
template <class T>
TANDEM_HD T gemm_epilogue(T acc, T c_old, T alpha, T beta) {
  const T t = alpha * acc;
#ifdef __CUDA_ARCH__
  if constexpr (sizeof(T) == 4)
    return beta == T(0) ? t : __fmaf_rn(beta, c_old, t);
  else
    return beta == T(0) ? t : __fma_rn(beta, c_old, t);
#else
  return beta == T(0) ? t : std::fma(beta, c_old, t);
#endif
}
// C(i, j) when no product is computed (alpha == 0 or K == 0).
template <class T>
TANDEM_HD T gemm_scale(T c_old, T beta) {
  return beta == T(0) ? T(0) : beta * c_old;
}

inline constexpr std::int64_t kLanes = 32;
inline constexpr std::int64_t kChunk = 4096;

// Step 2 and 3 for one chunk x[0], x[stride], ... (len <= kChunk elements; the CPU's prod leaves pass longer
// ranges: the same lanes and tree over any length) of an operator Op in the canonical
// order (reduce_ops.hpp's canonical_order: sum, sumsq and prod of floats): lanes start at Op::identity() (-0.0
// for the sums, 1 for prod) and combine Op::load(x) (a 16-bit input's elements converted to float, exactly).
// (Host and device: the GPU's matmul combines its chunk values with it.)
template <class Op, class T = typename Op::Acc>
TANDEM_HD T chunk_sum_of(const typename Op::In* x, std::int64_t len, std::int64_t stride) {
  static_assert(canonical_order<Op>, "the canonical order is for floating-point values whose order matters");
  T lane[kLanes];
  for (T& l : lane) l = Op::identity();
  const std::int64_t rows = len / kLanes;
  if (stride == 1) {
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < kLanes; ++j) lane[j] = Op::combine(lane[j], Op::load(x[r * kLanes + j], 0));
  } else {
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < kLanes; ++j)
        lane[j] = Op::combine(lane[j], Op::load(x[(r * kLanes + j) * stride], 0));
  }
  for (std::int64_t j = 0; j < len - rows * kLanes; ++j)
    lane[j] = Op::combine(lane[j], Op::load(x[(rows * kLanes + j) * stride], 0));
  for (std::int64_t s = kLanes / 2; s > 0; s /= 2)
    for (std::int64_t j = 0; j < s; ++j) lane[j] = Op::combine(lane[j], lane[j + s]);
  return lane[0];
}
// The sum's: the elements themselves.
template <class In, class T = compute_t<In>>
TANDEM_HD T chunk_sum(const In* x, std::int64_t len, std::int64_t stride) {
  return chunk_sum_of<SumOp<In>>(x, len, stride);
}

// chunk_sum of n <= 32 float values value(0), ..., value(n - 1) (steps 2-3 with one row of lanes), written as the
// tree itself so that nothing is indexed at run time (a GPU keeps it in registers): node<S>(j) is lane j after
// the level of stride S; a lane at or past n is -0.0, which every add leaves unchanged, so it is skipped.
template <int S = 1, class Value>
TANDEM_HD float lane_tree(int j, int n, Value&& value) {
  if constexpr (S == int(kLanes)) {
    return j < n ? -0.0f + value(j) : -0.0f;
  } else {
    const float left = lane_tree<2 * S>(j, n, value);
    return j + S < n ? left + lane_tree<2 * S>(j + S, n, value) : left;
  }
}

TANDEM_HD constexpr std::int64_t chunk_count(std::int64_t n) { return (n + kChunk - 1) / kChunk; }

// Whether deterministic mode runs op (a backend op) of dtype in the canonical order: reduce_ops.hpp's
// canonical_order (sum, sumsq and prod of floating-point elements). (Integer sums and products, min, max,
// argmin and argmax give the same bits in any order already.)
inline bool in_canonical_order(Op op, Dtype dtype) {
  return visit(dtype, [&]<class T>(std::type_identity<T>) {
    return visit_backend_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      return is_floating_v<T> && canonical_order<typename OpFor<O, T>::type>;
    });
  });
}

// The backend op that combines op's chunk values (of its dtype's compute type) in the canonical order: sum
// for the sum-like ops (sumsq's chunk values are sums of squares), the op itself for prod.
inline Op chunk_values_op(Op op) {
  return visit_backend_op(
      op, [&]<Op O>(std::integral_constant<Op, O>) { return additive<typename OpFor<O, float>::type> ? Op::sum : O; });
}

// Step 4 over chunk values already computed (serially: there are n / 4096 of them), combined by Partial: the
// operator of an op's partial results (reduce_ops.hpp's PartialOp: the sums' values added, prod's multiplied).
template <class T, class Partial = SumOp<T>>
T sum_of_chunk_values(std::vector<T> values) {
  while (values.size() > 1) {
    const auto n = std::int64_t(values.size());
    std::vector<T> next(chunk_count(n));
    for (std::int64_t c = 0; c < std::int64_t(next.size()); ++c)
      next[c] = chunk_sum_of<Partial>(values.data() + c * kChunk, std::min(kChunk, n - c * kChunk), 1);
    values.swap(next);
  }
  if (values.empty()) return additive<Partial> ? T(0) : T(Partial::identity());  // nothing: +0.0, or prod's 1
  return values[0];
}

// The canonical sum, steps 1-4, of n >= 1 values x[0], x[stride], ..., x[(n - 1) * stride] (a matmul's chunk values:
// n <= 4096, one chunk, unless K > 2^24).
template <class T>
T canonical_sum_strided(const T* x, std::int64_t n, std::int64_t stride) {
  if (n <= kChunk) return chunk_sum(x, n, stride);
  std::vector<T> values(chunk_count(n));
  for (std::int64_t c = 0; c < std::int64_t(values.size()); ++c)
    values[c] = chunk_sum(x + c * kChunk * stride, std::min(kChunk, n - c * kChunk), stride);
  return sum_of_chunk_values(std::move(values));
}

// ---- Matrix products: the chunks of K (steps 1-3 of the product above) ----

inline constexpr std::int64_t kMatmulChunk = 4096;
TANDEM_HD constexpr std::int64_t matmul_chunk_count(std::int64_t k) { return (k + kMatmulChunk - 1) / kMatmulChunk; }

// The reference of steps 1-3 for one element of C, written as the definition reads (for tests; the backends compute
// the same values blockwise): acc = the canonical sum of the chunk values, each an fma chain from +0.0 over its k.
// opa(k) = op(A)(i, k) and opb(k) = op(B)(k, j) as T (16-bit inputs converted to float). K = 0: +0.0.
template <class T, class OpA, class OpB>
T matmul_element(std::int64_t K, OpA&& opa, OpB&& opb) {
  std::vector<T> values(std::size_t(matmul_chunk_count(K)));
  for (std::int64_t c = 0; c < std::int64_t(values.size()); ++c) {
    T v = T(0);
    for (std::int64_t k = c * kMatmulChunk; k < std::min(K, (c + 1) * kMatmulChunk); ++k)
      v = std::fma(opa(k), opb(k), v);
    values[std::size_t(c)] = v;
  }
  return sum_of_chunk_values(std::move(values));
}

}  // namespace tandem::detail::canonical
