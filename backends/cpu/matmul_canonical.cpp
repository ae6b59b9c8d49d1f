// The CPU backend's deterministic products (backends/cpu/matmul.hpp: cpu_canonical_entry) of float and double:
// the canonical fma chain of common/canonical.hpp. fma_chain: register blocks of C, one fma chain per element,
// on op(A) and op(B) packed row-major when transposed, then the canonical epilogue. With K > 4096
// (canonical.hpp's chunks of K) chunked_entry: the chunk values of row x column blocks x chunks as TBB tasks
// (fma_chain_tile on each chunk's k-range into scratch), then per element their canonical sum and the
// epilogue; so does a tall C narrower than a register block (X b), as C^T, and a product whose B is 16-bit
// (cpu_canonical_entry_16bit_b: B converted as the tasks pack it).
#include <tbb/blocked_range.h>
#include <tbb/blocked_range2d.h>
#include <tbb/blocked_range3d.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cpu/leaves.hpp"
#include "backends/cpu/matmul.hpp"
#include "common/canonical.hpp"
#include "common/dispatch.hpp"

namespace tandem::detail {
namespace {
// One plain product C (m x n) = A (m x k) * B (k x n), row-major: what fma_chain computes. (fma_chain_tile
// with kATrans reads A stored transposed instead: A(i, p) = a[p * lda + i].) continues: C holds the chains of
// earlier k already, and they go on from there.
template <class T>
struct Plain {
  const T* a;
  const T* b;
  T* c;
  std::int64_t m, k, n, lda, ldb, ldc;
  bool continues = false;
};

// One register block of C: rows [i0, i0 + H) x columns [j0, j0 + W) (H <= R, W <= kCols), steps
// k0 .. k1 - 1 of each element's fma chain. The chain continues from the value C holds after the
// previous block of k (an exact float, so splitting k changes no bit) or starts at +0.0; the last block
// of k stores NaN as the canonical quiet NaN. (Blocks of full width run simd_block instead, where the build
// has the vectors.)
template <class T, int R, int kCols, bool kFull, bool kATrans = false>
void fma_chain_block(const Plain<T>& g, std::int64_t i0, std::int64_t j0, int h, int w, std::int64_t k0,
                     std::int64_t k1) {
  const int rows = kFull ? R : h, cols = kFull ? kCols : w;
  T acc[R][kCols] = {};
  if (k0 > 0 || g.continues)
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) acc[i][j] = g.c[(i0 + i) * g.ldc + j0 + j];
  for (std::int64_t p = k0; p < k1; ++p) {
    const T* brow = g.b + p * g.ldb + j0;
    for (int i = 0; i < rows; ++i) {
      const T av = kATrans ? g.a[p * g.lda + i0 + i] : g.a[(i0 + i) * g.lda + p];
      for (int j = 0; j < cols; ++j) acc[i][j] = std::fma(av, brow[j], acc[i][j]);
    }
  }
  const bool last = k1 == g.k;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      g.c[(i0 + i) * g.ldc + j0 + j] = last && std::isnan(acc[i][j]) ? std::numeric_limits<T>::quiet_NaN() : acc[i][j];
}

// The build's vectors of T and their fused multiply-add (one rounding: each lane is std::fma's value). GCC
// vectorised fma_chain_block's full blocks of floats with AVX-512 (115 GFLOP/s a core) but not doubles (5.1) nor
// anything with AVX2 (floats 5.3); simd_block with these runs doubles at 37-55 and AVX2's floats at 74.
template <class T>
struct Simd {
  static constexpr bool kOn = false;
};
#if defined(__AVX512F__)
template <>
struct Simd<float> {
  static constexpr bool kOn = true;
  static constexpr int kLanes = 16;
  using V = __m512;
  static V zero() { return _mm512_setzero_ps(); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
};
template <>
struct Simd<double> {
  static constexpr bool kOn = true;
  static constexpr int kLanes = 8;
  using V = __m512d;
  static V zero() { return _mm512_setzero_pd(); }
  static V set1(double x) { return _mm512_set1_pd(x); }
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static void store(double* p, V v) { _mm512_storeu_pd(p, v); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
};
#elif defined(__AVX2__) && defined(__FMA__)
template <>
struct Simd<float> {
  static constexpr bool kOn = true;
  static constexpr int kLanes = 8;
  using V = __m256;
  static V zero() { return _mm256_setzero_ps(); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
};
template <>
struct Simd<double> {
  static constexpr bool kOn = true;
  static constexpr int kLanes = 4;
  using V = __m256d;
  static V zero() { return _mm256_setzero_pd(); }
  static V set1(double x) { return _mm256_set1_pd(x); }
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
};
#endif

// fma_chain_block for H rows x kCols columns (a whole number of vectors) in vector registers: the same fmas.
template <class T, int H, int kCols, bool kATrans>
void simd_block(const Plain<T>& g, std::int64_t i0, std::int64_t j0, std::int64_t k0, std::int64_t k1) {
  using S = Simd<T>;
  constexpr int kVectors = kCols / S::kLanes;
  static_assert(kVectors * S::kLanes == kCols);
  typename S::V acc[H][kVectors];
  for (int i = 0; i < H; ++i)
    for (int v = 0; v < kVectors; ++v)
      acc[i][v] = k0 > 0 || g.continues ? S::load(g.c + (i0 + i) * g.ldc + j0 + v * S::kLanes) : S::zero();
  for (std::int64_t p = k0; p < k1; ++p) {
    const T* brow = g.b + p * g.ldb + j0;
    typename S::V b[kVectors];
    for (int v = 0; v < kVectors; ++v) b[v] = S::load(brow + v * S::kLanes);
    for (int i = 0; i < H; ++i) {
      const auto av = S::set1(kATrans ? g.a[p * g.lda + i0 + i] : g.a[(i0 + i) * g.lda + p]);
      for (int v = 0; v < kVectors; ++v) acc[i][v] = S::fma(av, b[v], acc[i][v]);
    }
  }
  for (int i = 0; i < H; ++i) {
    T* c = g.c + (i0 + i) * g.ldc + j0;
    for (int v = 0; v < kVectors; ++v) S::store(c + v * S::kLanes, acc[i][v]);
    if (k1 == g.k)
      for (int j = 0; j < kCols; ++j)
        if (std::isnan(c[j])) c[j] = std::numeric_limits<T>::quiet_NaN();
  }
}

// Register block of C: 8 rows x 32 floats (16 doubles) = 16 of AVX-512's 32 vector registers;
// 4 x 16 floats on narrower SIMD (8 of AVX2's 16). 8 rows ran 1.7x faster than 4 with AVX-512.
#ifdef __AVX512F__
constexpr int kBlockRows = 8, kBlockBytes = 128;
#else
constexpr int kBlockRows = 4, kBlockBytes = 64;
#endif
template <class T>
constexpr int kBlockCols = kBlockBytes / int(sizeof(T));

// Rows [r0, r1) x columns [c0, c1) of g's C, every step of k, on the calling thread. k in blocks of 256, so
// that the B panel a task walks (256 x 256) stays in L2. Blocks of full width run simd_block for their rows.
template <class T, bool kATrans = false>
void fma_chain_tile(const Plain<T>& g, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
  constexpr int R = kBlockRows, kCols = kBlockCols<T>;
  constexpr std::int64_t kBlockK = 256;
  for (std::int64_t k0 = 0; k0 < g.k; k0 += kBlockK) {
    const std::int64_t k1 = std::min(g.k, k0 + kBlockK);
    if constexpr (Simd<T>::kOn) {
      if (r1 - r0 == 1) {  // one row (C^T of X^T r): blocks up to 4x wider, so that B's rows stream in one pass
        std::int64_t j0 = c0;
        for (; j0 + 4 * kCols <= c1; j0 += 4 * kCols) simd_block<T, 1, 4 * kCols, kATrans>(g, r0, j0, k0, k1);
        for (; j0 + 2 * kCols <= c1; j0 += 2 * kCols) simd_block<T, 1, 2 * kCols, kATrans>(g, r0, j0, k0, k1);
        for (; j0 + kCols <= c1; j0 += kCols) simd_block<T, 1, kCols, kATrans>(g, r0, j0, k0, k1);
        if (j0 < c1) fma_chain_block<T, R, kCols, false, kATrans>(g, r0, j0, 1, int(c1 - j0), k0, k1);
        continue;
      }
    }
    for (std::int64_t j0 = c0; j0 < c1; j0 += kCols)
      for (std::int64_t i0 = r0; i0 < r1; i0 += R) {
        const int h = int(std::min<std::int64_t>(R, r1 - i0));
        const int w = int(std::min<std::int64_t>(kCols, c1 - j0));
        if constexpr (Simd<T>::kOn) {
          if (w == kCols) {
            [&]<int... H>(std::integer_sequence<int, H...>) {  // h rows: simd_block<T, h, ...>
              (void)((h == H + 1 ? (simd_block<T, H + 1, kCols, kATrans>(g, i0, j0, k0, k1), true) : false) || ...);
            }
            (std::make_integer_sequence<int, R>{});
            continue;
          }
        }
        if (h == R && w == kCols)
          fma_chain_block<T, R, kCols, true, kATrans>(g, i0, j0, h, w, k0, k1);
        else
          fma_chain_block<T, R, kCols, false, kATrans>(g, i0, j0, h, w, k0, k1);
      }
  }
}

template <class T>
void fma_chain(const Plain<T>& g) {
  tbb::parallel_for(tbb::blocked_range2d<std::int64_t>(0, g.m, 64, 0, g.n, 256),
                    [&](const tbb::blocked_range2d<std::int64_t>& r) {
                      fma_chain_tile(g, r.rows().begin(), r.rows().end(), r.cols().begin(), r.cols().end());
                    });
}

// x (rows x cols, ld) transposed into a packed cols x rows matrix, in tiles of 64 x 64 (every dimension split:
// a tall, narrow x is as parallel as a square one).
template <class T>
std::vector<T> transposed(const T* x, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  std::vector<T> t(std::size_t(rows * cols));
  tbb::parallel_for(tbb::blocked_range2d<std::int64_t>(0, rows, 64, 0, cols, 64),
                    [&](const tbb::blocked_range2d<std::int64_t>& r) {
                      for (std::int64_t j = r.cols().begin(); j < r.cols().end(); ++j)
                        for (std::int64_t i = r.rows().begin(); i < r.rows().end(); ++i)
                          t[std::size_t(j * rows + i)] = x[i * ld + j];
                    });
  return t;
}

#if defined(__AVX2__)
// dst[p * ldd + j] = src[j * lds + p] for an 8 x 8 block of floats, through registers.
inline void transpose_8x8(const float* src, std::int64_t lds, float* dst, std::int64_t ldd) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * lds);
  for (int i = 0; i < 8; i += 2)
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]), t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  for (int i = 0; i < 8; i += 4)
    for (int h = 0; h < 2; ++h) {
      r[i + 2 * h] = _mm256_shuffle_ps(t[i + h], t[i + h + 2], 0x44);
      r[i + 2 * h + 1] = _mm256_shuffle_ps(t[i + h], t[i + h + 2], 0xEE);
    }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(dst + i * ldd, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(dst + (i + 4) * ldd, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}
#endif

// packed[p * w + j] = b[j * ldb + p] for p < kb, j < w (floats 8 x 8 through registers where the build has AVX2:
// 2-3x the loop's speed; doubles ran no faster that way).
template <class T>
void pack_transposed(const T* b, std::int64_t ldb, std::int64_t kb, std::int64_t w, T* packed) {
  std::int64_t j0 = 0;
#if defined(__AVX2__)
  if constexpr (std::is_same_v<T, float>)
    for (; j0 + 8 <= w; j0 += 8) {
      std::int64_t p0 = 0;
      for (; p0 + 8 <= kb; p0 += 8) transpose_8x8(b + j0 * ldb + p0, ldb, packed + p0 * w + j0, w);
      for (; p0 < kb; ++p0)
        for (std::int64_t j = j0; j < j0 + 8; ++j) packed[p0 * w + j] = b[j * ldb + p0];
    }
#endif
  for (; j0 < w; ++j0)
    for (std::int64_t p = 0; p < kb; ++p) packed[p * w + j0] = b[j0 * ldb + p];
}

// packed[p * w + j] = op(B)(k0 + p, j0 + j) as float for p < kb, j < w, of a 16-bit B read as stored: k x n (row
// p at b + p * ldb) or, transposed, n x k (each of its rows converted into `rows`, then packed as pack_transposed).
template <class TB>
void pack_converted(const TB* b, std::int64_t ldb, bool transposed, std::int64_t k0, std::int64_t kb, std::int64_t j0,
                    std::int64_t w, float* packed, std::vector<float>& rows) {
  using cpu_leaves::widen_run;
  if (!transposed) {
    for (std::int64_t p = 0; p < kb; ++p) widen_run(b + (k0 + p) * ldb + j0, w, packed + p * w);
    return;
  }
  rows.resize(std::size_t(w * kb));
  for (std::int64_t j = 0; j < w; ++j) widen_run(b + (j0 + j) * ldb + k0, kb, rows.data() + j * kb);
  pack_transposed(rows.data(), kb, kb, w, packed);
}

// fma_chain_tile on op(B) packed by the tasks: columns [c0, c1) 256 bytes at a time, each block of 256 k of them
// packed row-major into this thread's buffer (64 floats x 64 k: in L1) by pack(k0, kb, j0, w, packed), the chains
// continuing across the blocks.
template <class T, bool kATrans, class Pack>
void fma_chain_tile_packed(const Plain<T>& g, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1,
                           Pack&& pack) {
  constexpr std::int64_t kBlockK = 256, kPackCols = 256 / std::int64_t(sizeof(T));
  thread_local std::vector<T> buffer;
  buffer.resize(std::size_t(kBlockK * kPackCols));
  T* const packed = buffer.data();
  for (std::int64_t j0 = c0; j0 < c1; j0 += kPackCols) {
    const std::int64_t w = std::min(kPackCols, c1 - j0);
    for (std::int64_t k0 = 0; k0 < g.k; k0 += kBlockK) {
      const std::int64_t kb = std::min(kBlockK, g.k - k0);
      pack(k0, kb, j0, w, packed);
      const Plain<T> block{
          kATrans ? g.a + k0 * g.lda : g.a + k0, packed, g.c + j0, g.m, kb, w, g.lda, w, g.ldc, g.continues || k0 > 0};
      fma_chain_tile<T, kATrans>(block, r0, r1, 0, w);
    }
  }
}

// fma_chain_tile where B is stored transposed (B(p, j) = b[j * ldb + p]): packed by pack_transposed.
template <class T, bool kATrans>
void fma_chain_tile_packed_b(const Plain<T>& g, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
  fma_chain_tile_packed<T, kATrans>(g, r0, r1, c0, c1,
                                    [&](std::int64_t k0, std::int64_t kb, std::int64_t j0, std::int64_t w, T* packed) {
                                      pack_transposed(g.b + j0 * g.ldb + k0, g.ldb, kb, w, packed);
                                    });
}

// chunked_entry's scratch: C is done in panels whose q chunk values fit in 16 MiB (a panel of 4096 x 4096 floats
// with K = 8192 is 512 rows: 256 tasks).
constexpr std::int64_t kChunkScratchBytes = std::int64_t(16) << 20;

// Deterministic mode with K > kMatmulChunk (common/canonical.hpp), and C narrower than a register block: the chunk
// values v_c of a panel of C, every chunk c, as TBB tasks over chunks x blocks of rows x blocks of columns
// (fma_chain_tile on the chunk's k-range) into scratch; then per element the canonical sum of its q values (q = 1:
// v_0 itself, which is that sum) and the epilogue. The kernel computes C, or C^T = op(B)^T op(A)^T, whose chains
// are the same fmas (fma(x, y, v) = fma(y, x, v): the product is exact before the one rounding), so that C's long
// side runs along the SIMD lanes and the stored operands are read in place where they can be: C^T where op(A) is
// transposed and C is taller than wide (X^T r) or both are transposed, or C is narrower than a register block and
// taller than wide (X b: then A is packed by the tasks, fma_chain_tile_packed_b); a transposed A read column-wise
// (kATrans). Otherwise a transposed B is packed whole, as canonical_entry does. A 16-bit B (TB: a mixed product's,
// float C) is never copied: Y = op(B) as stored, converted as the tasks pack it a block of k at a time
// (pack_converted), the chains those of the float product of the converted B.
template <class T, class TB = T>
void chunked_entry(const MatmulArgs& g, const T* a, const TB* b, T* c) {
  using canonical::kMatmulChunk;
  constexpr bool kConvert = !std::is_same_v<TB, T>;
  static_assert(!kConvert || (std::is_same_v<T, float> && sizeof(TB) == 2), "a 16-bit B in a float product");
  const T alpha = T(g.alpha), beta = T(g.beta);
  const std::int64_t q = canonical::matmul_chunk_count(g.k);
  // The kernel's product X (rows x k) * Y (k x cols): X row-major or, x_trans, stored k x rows; Y row-major.
  const bool swap = !kConvert && ((g.m > g.n && (g.trans_a || g.n < kBlockCols<T>)) || (g.trans_a && g.trans_b));
  const std::int64_t rows = swap ? g.n : g.m, cols = swap ? g.m : g.n;
  const T* x = a;
  const T* y = nullptr;  // (kConvert: B, of TB, is read by the tasks' packing)
  std::int64_t ldx = g.lda, ldy = g.ldb;
  bool x_trans = g.trans_a;
  bool y_trans = false;  // Y stored transposed (cols x k): packed by the tasks, a block of k at a time
  std::vector<T> packed;
  if constexpr (!kConvert) {
    y = b;
    if (swap) {  // X = op(B)^T: B as stored (n x k), or a k x n B read transposed; Y = op(A)^T: A (k x m, or m x k)
      x = b, ldx = g.ldb, x_trans = !g.trans_b;
      y = a, ldy = g.lda, y_trans = !g.trans_a;
    } else if (g.trans_b) {  // Y = op(B) packed
      packed = transposed(b, g.n, g.k, g.ldb), y = packed.data(), ldy = g.n;
    }
  }
  // Panels of rows x columns of the kernel's product whose q chunk values fit in the scratch.
  // (Rows in multiples of the tasks' 64 where they can be; columns are cut only where one row's q values do not fit.)
  const std::int64_t budget = std::max<std::int64_t>(1, kChunkScratchBytes / std::int64_t(sizeof(T)) / q);
  const std::int64_t pc = std::min(cols, budget);
  std::int64_t pr = std::min(rows, std::max<std::int64_t>(1, budget / pc));
  if (pr < rows && pr > 64) pr -= pr % 64;
  const std::unique_ptr<T[]> values(new T[std::size_t(q * pr * pc)]);
  for (std::int64_t r0 = 0; r0 < rows; r0 += pr)
    for (std::int64_t c0 = 0; c0 < cols; c0 += pc) {
      const std::int64_t h = std::min(pr, rows - r0), w = std::min(pc, cols - c0), slab = h * w;
      // values[ch * slab + i * w + j]: chunk ch's value of the panel's element (i, j).
      tbb::parallel_for(
          tbb::blocked_range3d<std::int64_t>(0, q, 1, 0, h, 64, 0, w, 256),
          [&](const tbb::blocked_range3d<std::int64_t>& r) {
            for (std::int64_t ch = r.pages().begin(); ch < r.pages().end(); ++ch) {
              const std::int64_t k0 = ch * kMatmulChunk;
              const Plain<T> p{x_trans ? x + k0 * ldx + r0 : x + r0 * ldx + k0,
                               kConvert  ? nullptr
                               : y_trans ? y + c0 * ldy + k0
                                         : y + k0 * ldy + c0,
                               values.get() + ch * slab,
                               h,
                               std::min(kMatmulChunk, g.k - k0),
                               w,
                               ldx,
                               ldy,
                               w};
              const auto [i0, i1] = std::pair(r.rows().begin(), r.rows().end());
              const auto [j0, j1] = std::pair(r.cols().begin(), r.cols().end());
              if constexpr (kConvert) {
                thread_local std::vector<float> rows_of_b;  // (a transposed B's rows, converted)
                auto pack = [&](std::int64_t kk, std::int64_t kb, std::int64_t jj, std::int64_t wj, T* out) {
                  pack_converted(b, g.ldb, g.trans_b, k0 + kk, kb, c0 + jj, wj, out, rows_of_b);
                };
                x_trans ? fma_chain_tile_packed<T, true>(p, i0, i1, j0, j1, pack)
                        : fma_chain_tile_packed<T, false>(p, i0, i1, j0, j1, pack);
              } else if (y_trans)
                x_trans ? fma_chain_tile_packed_b<T, true>(p, i0, i1, j0, j1)
                        : fma_chain_tile_packed_b<T, false>(p, i0, i1, j0, j1);
              else
                x_trans ? fma_chain_tile<T, true>(p, i0, i1, j0, j1) : fma_chain_tile<T, false>(p, i0, i1, j0, j1);
            }
          });
      tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, h, 16), [&](const tbb::blocked_range<std::int64_t>& r) {
        for (std::int64_t i = r.begin(); i < r.end(); ++i)
          for (std::int64_t j = 0; j < w; ++j) {
            const T* v = values.get() + i * w + j;
            const T acc = q == 1 ? *v : canonical::canonical_sum_strided(v, q, slab);
            T& out = swap ? c[(c0 + j) * g.ldc + r0 + i] : c[(r0 + i) * g.ldc + c0 + j];
            out = canonical_nan(canonical::gemm_epilogue(acc, out, alpha, beta));  // (beta == 0 never reads out)
          }
      });
    }
}

// Deterministic mode, one entry: the canonical fma chain on op(A) and op(B), then the epilogue (K > 4096, or a
// tall C narrower than a register block: chunked_entry).
template <class T>
void canonical_entry(const MatmulArgs& g, const T* a, const T* b, T* c) {
  const T alpha = T(g.alpha), beta = T(g.beta);
  if (g.k == 0 || alpha == T(0))
    return for_each_c(c, g.m, g.n, g.ldc,
                      [&](T v, auto, auto) { return canonical_nan(canonical::gemm_scale(v, beta)); });
  if (g.k > canonical::kMatmulChunk || (g.n < kBlockCols<T> && g.m > g.n)) return chunked_entry(g, a, b, c);
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

}  // namespace

void cpu_canonical_entry_16bit_b(const MatmulArgs& g, const float* a, const void* b, Dtype b_type, float* c) {
  if (g.k == 0 || float(g.alpha) == 0.0f) return canonical_entry<float>(g, a, nullptr, c);  // (C = beta * C)
  visit(
      b_type, [&]<class TB>(std::type_identity<TB>) { chunked_entry<float, TB>(g, a, static_cast<const TB*>(b), c); },
      type_list<bfloat16, half>{});
}

void cpu_canonical_entry(const MatmulArgs& g, const void* a, const void* b, void* c) {
  visit(
      g.dtype,
      [&]<class T>(std::type_identity<T>) {
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
          canonical_entry(g, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(c));
      },
      matmul_types{});
}

}  // namespace tandem::detail
