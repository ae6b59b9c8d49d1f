// The CPU backend's matrix products: C = alpha * op(A) * op(B) + beta * C for each entry of a batch.
//   eigen_tbb     Eigen's GEMM on 256 x 256 blocks of C, one TBB task per block (Eigen's own threading
//                 is off: tandem builds without OpenMP, so TBB owns the cores); batch entries in parallel
//   eigen_serial  one Eigen GEMM per entry on the calling thread
// Transposes are Eigen expressions over the stored matrices (no copies); alpha and beta go into the
// GEMM. Deterministic mode (common/canonical.hpp) runs fma_chain: register blocks of C, one fma
// chain per element, on op(A) and op(B) packed row-major when transposed, then the canonical epilogue.
#include "backends/cpu/matmul.hpp"

#include <tbb/blocked_range.h>
#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/canonical.hpp"
#include "common/dispatch.hpp"
#include "common/operands.hpp"

namespace tandem::detail {
namespace {

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using ConstMap = Eigen::Map<const RowMajor<T>, 0, Eigen::OuterStride<>>;
template <class T>
using MutMap = Eigen::Map<RowMajor<T>, 0, Eigen::OuterStride<>>;

// One plain product C (m x n) = A (m x k) * B (k x n), row-major: what fma_chain computes.
template <class T>
struct Plain {
  const T* a;
  const T* b;
  T* c;
  std::int64_t m, k, n, lda, ldb, ldc;
};

// One register block of C: rows [i0, i0 + H) x columns [j0, j0 + W) (H <= R, W <= kCols), steps
// k0 .. k1 - 1 of each element's fma chain. The chain continues from the value C holds after the
// previous block of k (an exact float, so splitting k changes no bit) or starts at +0.0; the last block
// of k stores NaN as the canonical quiet NaN. Full blocks have compile-time bounds, so the j loop
// becomes SIMD fmas on kCols / lanes registers per row.
template <class T, int R, int kCols, bool kFull>
void fma_chain_block(const Plain<T>& g, std::int64_t i0, std::int64_t j0, int h, int w, std::int64_t k0,
                     std::int64_t k1) {
  const int rows = kFull ? R : h, cols = kFull ? kCols : w;
  T acc[R][kCols] = {};
  if (k0 > 0)
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) acc[i][j] = g.c[(i0 + i) * g.ldc + j0 + j];
  for (std::int64_t p = k0; p < k1; ++p) {
    const T* brow = g.b + p * g.ldb + j0;
    for (int i = 0; i < rows; ++i) {
      const T av = g.a[(i0 + i) * g.lda + p];
      for (int j = 0; j < cols; ++j) acc[i][j] = std::fma(av, brow[j], acc[i][j]);
    }
  }
  const bool last = k1 == g.k;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      g.c[(i0 + i) * g.ldc + j0 + j] = last && std::isnan(acc[i][j]) ? std::numeric_limits<T>::quiet_NaN() : acc[i][j];
}

template <class T>
void fma_chain(const Plain<T>& g) {
  // Register block of C: 8 rows x 32 floats (16 doubles) = 16 of AVX-512's 32 vector registers;
  // 4 x 16 floats on narrower SIMD (8 of AVX2's 16). 8 rows ran 1.7x faster than 4 with AVX-512.
#ifdef __AVX512F__
  constexpr int R = 8, kCols = 128 / sizeof(T);
#else
  constexpr int R = 4, kCols = 64 / sizeof(T);
#endif
  // k in blocks of 256, so that the B panel a task walks (256 x 256) stays in L2.
  constexpr std::int64_t kBlockK = 256;
  tbb::parallel_for(tbb::blocked_range2d<std::int64_t>(0, g.m, 64, 0, g.n, 256),
                    [&](const tbb::blocked_range2d<std::int64_t>& r) {
                      for (std::int64_t k0 = 0; k0 < g.k; k0 += kBlockK) {
                        const std::int64_t k1 = std::min(g.k, k0 + kBlockK);
                        for (std::int64_t j0 = r.cols().begin(); j0 < r.cols().end(); j0 += kCols)
                          for (std::int64_t i0 = r.rows().begin(); i0 < r.rows().end(); i0 += R) {
                            const int h = int(std::min<std::int64_t>(R, r.rows().end() - i0));
                            const int w = int(std::min<std::int64_t>(kCols, r.cols().end() - j0));
                            if (h == R && w == kCols)
                              fma_chain_block<T, R, kCols, true>(g, i0, j0, h, w, k0, k1);
                            else
                              fma_chain_block<T, R, kCols, false>(g, i0, j0, h, w, k0, k1);
                          }
                      }
                    });
}

// C(i, j) = f(C(i, j)) over the m x n elements, rows in parallel.
template <class T, class F>
void for_each_c(T* c, std::int64_t m, std::int64_t n, std::int64_t ldc, F f) {
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, m, 16), [&](const tbb::blocked_range<std::int64_t>& r) {
    for (std::int64_t i = r.begin(); i < r.end(); ++i)
      for (std::int64_t j = 0; j < n; ++j) c[i * ldc + j] = f(c[i * ldc + j], i, j);
  });
}

// x (rows x cols, ld) transposed into a packed cols x rows matrix.
template <class T>
std::vector<T> transposed(const T* x, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  std::vector<T> t(std::size_t(rows * cols));
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, cols, 64), [&](const tbb::blocked_range<std::int64_t>& r) {
    for (std::int64_t j = r.begin(); j < r.end(); ++j)
      for (std::int64_t i = 0; i < rows; ++i) t[std::size_t(j * rows + i)] = x[i * ld + j];
  });
  return t;
}

// Deterministic mode, one entry: the canonical fma chain on op(A) and op(B), then the epilogue.
template <class T>
void canonical_entry(const MatmulArgs& g, const T* a, const T* b, T* c) {
  const T alpha = T(g.alpha), beta = T(g.beta);
  if (g.k == 0 || alpha == T(0))
    return for_each_c(c, g.m, g.n, g.ldc,
                      [&](T v, auto, auto) { return canonical_nan(canonical::gemm_scale(v, beta)); });
  std::vector<T> ta, tb;
  std::int64_t lda = g.lda, ldb = g.ldb;
  if (g.trans_a) ta = transposed(a, g.k, g.m, g.lda), a = ta.data(), lda = g.k;
  if (g.trans_b) tb = transposed(b, g.n, g.k, g.ldb), b = tb.data(), ldb = g.n;
  if (alpha == T(1) && beta == T(0)) return fma_chain(Plain<T>{a, b, c, g.m, g.k, g.n, lda, ldb, g.ldc});
  std::vector<T> acc(std::size_t(g.m * g.n));
  fma_chain(Plain<T>{a, b, acc.data(), g.m, g.k, g.n, lda, ldb, g.n});
  for_each_c(c, g.m, g.n, g.ldc, [&](T v, std::int64_t i, std::int64_t j) {
    return canonical_nan(canonical::gemm_epilogue(acc[std::size_t(i * g.n + j)], v, alpha, beta));
  });
}

// Rows [r0, r1) x columns [c0, c1) of one entry's C = alpha * op(A) * op(B) + beta * C with Eigen.
template <class T, bool kTransA, bool kTransB>
void eigen_block(const MatmulArgs& g, const T* a, const T* b, T* c, std::int64_t r0, std::int64_t r1, std::int64_t c0,
                 std::int64_t c1) {
  MutMap<T> cm(c + r0 * g.ldc + c0, r1 - r0, c1 - c0, Eigen::OuterStride<>(g.ldc));
  const T alpha = T(g.alpha), beta = T(g.beta);
  // op(A)'s rows [r0, r1): rows of A, or columns of the stored k x m A; op(B)'s columns likewise.
  const auto opa = [&] {
    if constexpr (kTransA)
      return ConstMap<T>(a + r0, g.k, r1 - r0, Eigen::OuterStride<>(g.lda)).transpose();
    else
      return ConstMap<T>(a + r0 * g.lda, r1 - r0, g.k, Eigen::OuterStride<>(g.lda));
  }();
  const auto opb = [&] {
    if constexpr (kTransB)
      return ConstMap<T>(b + c0 * g.ldb, c1 - c0, g.k, Eigen::OuterStride<>(g.ldb)).transpose();
    else
      return ConstMap<T>(b + c0, g.k, c1 - c0, Eigen::OuterStride<>(g.ldb));
  }();
  if (beta == T(0)) {
    if (alpha == T(1))
      cm.noalias() = opa * opb;
    else
      cm.noalias() = alpha * opa * opb;
  } else {
    cm *= beta;
    cm.noalias() += alpha * opa * opb;
  }
}

template <class T>
void eigen_entry(const MatmulArgs& g, const T* a, const T* b, T* c, bool serial) {
  const T alpha = T(g.alpha), beta = T(g.beta);
  if (g.k == 0 || alpha == T(0))
    return for_each_c(c, g.m, g.n, g.ldc, [&](T v, auto, auto) { return canonical::gemm_scale(v, beta); });
  auto block = [&](std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
    if (g.trans_a)
      g.trans_b ? eigen_block<T, true, true>(g, a, b, c, r0, r1, c0, c1)
                : eigen_block<T, true, false>(g, a, b, c, r0, r1, c0, c1);
    else
      g.trans_b ? eigen_block<T, false, true>(g, a, b, c, r0, r1, c0, c1)
                : eigen_block<T, false, false>(g, a, b, c, r0, r1, c0, c1);
  };
  if (serial) return block(0, g.m, 0, g.n);
  // Blocks of 256 x 256 keep each task large enough for Eigen's GEMM to reach its speed, while a
  // tall or wide C still splits into enough tasks for every core.
  // simple_partitioner: C is cut into the same blocks on every call, so Eigen blocks each the same way and
  // the bits are the same from run to run (auto_partitioner's blocks, and so the bits, varied).
  constexpr std::int64_t kBlock = 256;
  tbb::parallel_for(
      tbb::blocked_range2d<std::int64_t>(0, g.m, kBlock, 0, g.n, kBlock),
      [&](const tbb::blocked_range2d<std::int64_t>& r) {
        block(r.rows().begin(), r.rows().end(), r.cols().begin(), r.cols().end());
      },
      tbb::simple_partitioner());
}

template <class T>
void matmul_typed(const MatmulArgs& g, std::string_view kernel) {
  const bool serial = kernel == "eigen_serial";
  auto entry = [&](std::int64_t e) {
    // (An empty operand, k == 0, comes as a null pointer: it is not offset.)
    const T* a = g.a ? static_cast<const T*>(g.a) + e * g.stride_a : nullptr;
    const T* b = g.b ? static_cast<const T*>(g.b) + e * g.stride_b : nullptr;
    T* c = static_cast<T*>(g.c) + e * g.stride_c;
    if (g.deterministic)
      canonical_entry(g, a, b, c);
    else
      eigen_entry(g, a, b, c, serial);
  };
  if (g.batch == 1 || serial) {
    for (std::int64_t e = 0; e < g.batch; ++e) entry(e);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, g.batch), [&](const tbb::blocked_range<std::int64_t>& r) {
    for (std::int64_t e = r.begin(); e < r.end(); ++e) entry(e);
  });
}

// A 16-bit operand as packed floats (operands.hpp: ld = cols, entries rows * cols apart; exact
// conversions; padding and gaps are not copied).
template <class T>
std::vector<float> widened(const T* x, const OperandLayout& o) {
  std::vector<float> w(std::size_t(std::max<std::int64_t>(o.elements(), 1)));  // never empty: a valid pointer
  const OperandLayout p = o.packed();
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, o.count * o.rows, 64),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      for (std::int64_t er = r.begin(); er < r.end(); ++er) {
                        const std::int64_t e = er / o.rows, i = er % o.rows;
                        for (std::int64_t j = 0; j < o.cols; ++j)
                          w[std::size_t(e * p.stride + i * p.ld + j)] = float(x[e * o.stride + i * o.ld + j]);
                      }
                    });
  return w;
}

}  // namespace

// 16-bit A and B (float C): both are widened to packed floats (exact), then the float product runs, so
// every kernel and deterministic mode give what they give for the converted matrices.
void cpu_matmul(const MatmulArgs& g, std::string_view kernel) {
  visit(
      g.dtype,
      [&]<class T>(std::type_identity<T>) {
        if constexpr (is_storage_type_v<T>) {
          const std::vector<float> a = widened(static_cast<const T*>(g.a), operand_a(g));
          const std::vector<float> b = widened(static_cast<const T*>(g.b), operand_b(g));
          matmul_typed<float>(on_packed_operands(g, Dtype::f32, a.data(), b.data()), kernel);
        } else {
          matmul_typed<T>(g, kernel);
        }
      },
      matmul_types{});
}

}  // namespace tandem::detail
