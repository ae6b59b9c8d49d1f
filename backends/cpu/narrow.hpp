// The leaves of per-row reductions of narrow rows and per-column reductions of tall matrices
// (backends/cpu/per_matrix_kernels.hpp): plain loops the compiler vectorises, with the results of
// common/reduce_ops.hpp's operators (NaN wins, the first NaN for arg ops; -0.0 below +0.0; the first
// least or greatest index).
//
// The vector leaves (leaves.hpp) are built for long ranges: a leaf sets up 32 to 128 lanes and combines
// them with the operators at the end, about 85 ns per row whatever its length (a 200000 x 16 float
// argmin took 17 ms on 2 cores, NumPy 7). Here a row is one short loop:
//   min / max     over keys: a floating element's bits as a signed integer, the magnitude bits flipped
//                 for negative values (Keyed::key), whose integer order is the order of the values with
//                 -0.0 below +0.0; an integer min / max (vpminsd) and an OR of NaN tests, no compare
//                 of floats. A 16-bit element's key is its own 16 bits: no conversion.
//   argmin / max  the extreme key as above, then the first index holding it (or the first NaN): a
//                 second loop, an integer min of (match ? j : n), over a row still in L1.
//   sum / sumsq   floats: the canonical order of a row of at most canonical::kChunk elements (32 lanes
//                 and their tree, common/canonical.hpp), in both modes. Integers: one wrapping uint64 sum.
//   prod          floats: the canonical order too (canonical::chunk_sum_of); integers in order.
// Per column, a leaf's rows are read as groups of k rows (about kColumnBytes when ld is small): lane
// l of a group accumulates column l % ld of its rows, so the loop over the lanes is long enough to be
// vectorised even for one column; lanes over the padding between rows are read and ignored.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "backends/cpu/leaves.hpp"
#include "common/canonical.hpp"
#include "common/reduce_ops.hpp"

namespace tandem::detail::cpu_narrow {

// Rows of at most this many elements take row_acc (the canonical sum of a row of floats is one chunk;
// with rows of 2048 and 4096 the vector leaves were faster for float and double argmin), integer sums
// rows of fewer than kNarrowIntegerSum (from 256 elements the vector leaves were as fast, from 512
// faster for int32 sums, whose leaf adds in 32-bit lanes).
inline constexpr std::int64_t kNarrowRow = 1024, kNarrowIntegerSum = 256;
static_assert(kNarrowRow <= canonical::kChunk && kNarrowRow < (1 << 15));
template <Op O, class T>
bool narrow_row(std::int64_t n) {
  return n <= (additive<typename OpFor<O, T>::type> && std::is_integral_v<T> ? kNarrowIntegerSum - 1 : kNarrowRow);
}
// Columns: at most kNarrowColumns of them; a group of rows holds at least kColumnBytes (k =
// ceil(lanes_of<T> / ld) rows when ld <= lanes_of<T>, else one row of `cols` lanes). (64 double lanes
// ran at half the speed of 32 on Zen 4, 16-bit elements were fastest with 128.)
inline constexpr std::int64_t kNarrowColumns = 64;
inline constexpr std::int64_t kColumnBytes = 256;
template <class T>
inline constexpr std::int64_t lanes_of = kColumnBytes / std::int64_t(sizeof(T));
inline constexpr std::int64_t kMaxLanes = kColumnBytes + kNarrowColumns;  // (k - 1) * ld + cols < lanes_of + cols
// Whether column_acc takes the columns: at most kNarrowColumns, and groups of several rows (ld <
// lanes_of<T>), or else an op whose plain loop over one row's columns (per_matrix_kernels.hpp) does not
// vectorise: compares of floats by the operators' rules, arg ops, 16-bit conversions, integer sums.
// (Float and double sums and integer min / max of one row at a time vectorise there: 64 columns of
// doubles took half the time.)
template <Op O, class T>
bool narrow_columns(std::int64_t cols, std::int64_t ld) {
  constexpr bool plain_vectorises = (additive<typename OpFor<O, T>::type> && std::is_floating_point_v<T>) ||
                                    ((O == Op::min || O == Op::max) && std::is_integral_v<T>);
  return ld > 0 && cols <= kNarrowColumns && (ld < lanes_of<T> || !plain_vectorises);  // (ld 0: one row repeated)
}

// The key of an element: an integer whose order is the order of the values (floats: -0.0 below +0.0;
// NaNs outside the range of every other value, told apart by nan()); value() turns a key back into the
// element's compute type.
template <class T>
struct Keyed {  // integers: the element itself
  using Key = T;
  static constexpr bool kFloating = false;
  static Key key(T x) { return x; }
  static Key nan(T) { return 0; }
  static compute_t<T> value(Key k) { return k; }
};

// Floating types: Bits is the signed integer of the element's size, kAbs its magnitude bits, kInf
// infinity's bits; flip() is its own inverse.
template <class T, class Bits, Bits kAbs, Bits kInf>
struct KeyedFloat {
  using Key = Bits;
  static constexpr bool kFloating = true;
  static Key flip(Key b) { return Key(b ^ ((b >> (8 * sizeof(Key) - 1)) & kAbs)); }
  static Key bits(T x) {
    if constexpr (is_storage_type_v<T>)
      return Key(x.bits);
    else
      return std::bit_cast<Key>(x);
  }
  static Key key(T x) { return flip(bits(x)); }
  static Key nan(T x) { return Key((bits(x) & kAbs) > kInf); }
  static compute_t<T> value(Key k) {
    const Key b = flip(k);
    if constexpr (is_storage_type_v<T>)
      return T::from_bits(std::uint16_t(b));
    else
      return std::bit_cast<T>(b);
  }
};
template <>
struct Keyed<float> : KeyedFloat<float, std::int32_t, 0x7fffffff, 0x7f800000> {};
template <>
struct Keyed<double> : KeyedFloat<double, std::int64_t, 0x7fffffffffffffff, 0x7ff0000000000000> {};
template <>
struct Keyed<bfloat16> : KeyedFloat<bfloat16, std::int16_t, 0x7fff, 0x7f80> {};
template <>
struct Keyed<half> : KeyedFloat<half, std::int16_t, 0x7fff, 0x7c00> {};

// The smallest (Max: greatest) key of x[0 .. n) and whether one of them is NaN.
template <bool Max, class T>
std::pair<typename Keyed<T>::Key, bool> row_extreme(const T* x, std::int64_t n) {
  using K = Keyed<T>;
  using Key = typename K::Key;
  Key m = Max ? std::numeric_limits<Key>::lowest() : std::numeric_limits<Key>::max(), nan = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    const Key k = K::key(x[j]);
    m = Max ? std::max(m, k) : std::min(m, k);
    nan |= K::nan(x[j]);
  }
  return {m, nan != 0};
}

// The index of the first x[j] (j < n) with key m, or the first NaN.
template <class T>
std::int64_t first_index(const T* x, std::int64_t n, typename Keyed<T>::Key m, bool nan) {
  using K = Keyed<T>;
  // (32-bit indices counted by a 64-bit j: the form GCC 12 vectorises; an int32 j, or j | mask, it did not)
  // 16-bit keys take 16-bit indices (kNarrowRow < 2^15), others 32-bit: lanes of one width.
  using I = std::conditional_t<sizeof(typename K::Key) == 2, std::int16_t,
                               std::conditional_t<sizeof(typename K::Key) == 8, std::int64_t, std::int32_t>>;
  const I none = I(n);
  I first = none;
  if (nan)
    for (std::int64_t j = 0; j < n; ++j) first = std::min(first, K::nan(x[j]) ? I(j) : none);
  else
    for (std::int64_t j = 0; j < n; ++j) first = std::min(first, K::key(x[j]) == m ? I(j) : none);
  return first;
}

// x[0 .. n) as floats in v[0 .. W), n <= W, -0.0 after them: with AVX-512 masked reads converted 8 at a
// time (F16C), or 16 at a time where widen<half> does (TANDEM_CPU_HALF_512: GCC's Zen tunings read v back in
// 512-bit vectors, which two 256-bit stores do not forward to: rows of 16 and 48 halves ran at a quarter of
// float's bytes per second); else converted from a padded copy (which stalls on store forwarding: 20 ns a row).
template <int W>
void widen_piece(const half* x, std::int64_t n, float* v) {
#if defined(TANDEM_CPU_HALF_512) && defined(__AVX512BW__) && defined(__AVX512VL__)
  if constexpr (W % 16 == 0) {
    for (int j = 0; j < W; j += 16) {
      const auto mask = __mmask16((1u << std::clamp<std::int64_t>(n - j, 0, 16)) - 1);
      const __m256i bits = _mm256_mask_loadu_epi16(_mm256_set1_epi16(short(0x8000)), mask, x + j);
      _mm512_storeu_ps(v + j, _mm512_maskz_cvtph_ps(__mmask16(0xFFFF), bits));  // (leaves.hpp's widen: why maskz)
    }
    return;
  }
#endif
#if defined(__F16C__) && defined(__AVX512BW__) && defined(__AVX512VL__)
  if constexpr (W % 8 == 0) {
    for (int j = 0; j < W; j += 8) {
      const auto mask = __mmask8((1u << std::clamp<std::int64_t>(n - j, 0, 8)) - 1);
      const __m128i bits = _mm_mask_loadu_epi16(_mm_set1_epi16(short(0x8000)), mask, x + j);
      _mm256_storeu_ps(v + j, _mm256_cvtph_ps(bits));
    }
    return;
  }
#endif
  constexpr int P = W < 8 ? 8 : W;
  half padded[P];
  float w[P];
  for (int j = 0; j < P; ++j) padded[j] = j < n ? x[j] : half::from_bits(0x8000);
  cpu_leaves::widen<P>(padded, w);
  std::copy_n(w, W, v);
}

// Step 3 of the canonical order over W lanes: halves of fixed sizes, added lane by lane.
template <int W, class T>
[[gnu::always_inline]] inline T lane_tree(const T* lane) {
  if constexpr (W == 1) {
    return lane[0];
  } else {
    T half[W / 2];
    for (int j = 0; j < W / 2; ++j) half[j] = lane[j] + lane[j + W / 2];
    return lane_tree<W / 2>(half);
  }
}

// The canonical sum (canonical.hpp, one chunk) of Op's terms of x[0 .. n), floats; n <= W for W < 32,
// n <= kChunk for W = 32. Lane j adds the terms j, j + 32, ... to -0.0. A lane that is never added to
// stays -0.0, which leaves any value it is added to as it is: so the padding of the last piece adds
// -0.0, and with n <= W < 32 the steps of the tree above W only add such lanes (W lanes suffice).
template <int W, class Op>
typename Op::Acc row_canonical_sum(const typename Op::In* x, std::int64_t n) {
  using In = typename Op::In;
  using T = typename Op::Acc;
  const auto term = [](T v) { return on_compute_t<Op>::load(v, 0); };  // (a widened element's term)
  T lane[W];
  std::fill_n(lane, W, T(-0.0));  // canonical.hpp: lanes start at -0.0
  std::int64_t i = 0;
  if constexpr (W == canonical::kLanes) {
    for (; i + W <= n; i += W) {
      if constexpr (is_storage_type_v<In>) {
        T v[W];
        cpu_leaves::widen<W>(x + i, v);
        for (int j = 0; j < W; ++j) lane[j] += term(v[j]);
      } else {
        for (int j = 0; j < W; ++j) lane[j] += Op::load(x[i + j], 0);
      }
    }
  }
  // The last piece: a full-width masked read, the padding -0.0. (Lanes written by narrower or scalar
  // stores and read back as vectors stall on store forwarding: a row of 3 doubles took 20 ns.)
  if (const std::int64_t rest = n - i; rest > 0) {
    const In* p = x + i;
    if constexpr (std::is_same_v<In, half>) {
      T v[W];
      widen_piece<W>(p, rest, v);
      for (int j = 0; j < W; ++j) lane[j] += j < rest ? term(v[j]) : T(-0.0);
    } else if constexpr (is_storage_type_v<In>) {
      for (int j = 0; j < W; ++j) lane[j] += j < rest ? term(detail::bfloat16_to_float(p[j].bits)) : T(-0.0);
    } else {
      for (int j = 0; j < W; ++j) lane[j] += j < rest ? Op::load(p[j], 0) : T(-0.0);
    }
  }
  return lane_tree<W>(lane);
}

// The canonical sum of a row of n <= 8 terms: the tree of 8 lanes, one term (or -0.0) each, in scalars.
// (Lanes in an array of 4 or 8 came out as a vector store read back in pieces, a store-forwarding stall.)
template <class Op>
typename Op::Acc short_row_canonical_sum(const typename Op::In* x, std::int64_t n) {
  using In = typename Op::In;
  using T = typename Op::Acc;
  const auto l = [&](std::int64_t j) {
    if (j >= n) return T(-0.0);
    if constexpr (std::is_same_v<In, half>) {
#if defined(__F16C__)
      const T v = _cvtsh_ss(x[j].bits);
#else
      const T v = float(x[j]);
#endif
      return on_compute_t<Op>::load(v, 0);
    } else {
      return Op::load(x[j], 0);
    }
  };
  return ((l(0) + l(4)) + (l(2) + l(6))) + ((l(1) + l(5)) + (l(3) + l(7)));
}

// Backend op O's accumulator over the row x[0 .. n), 1 <= n, narrow_row<O, T>(n). A sum-like op of floats
// (additive) is its canonical sum (the row is one chunk), the same bits in both modes and at any address
// (Eigen's sum, which this path used outside deterministic mode, peeled to an aligned address first: the
// same row 16 bytes further gave other bits); an op without a loop of its own here, its operator's load and
// combine in element order.
template <Op O, class T>
typename OpFor<O, T>::type::Acc row_acc(const T* x, std::int64_t n) {
  using Operator = typename OpFor<O, T>::type;
  using K = Keyed<T>;
  if constexpr (additive<Operator>) {
    if constexpr (is_floating_v<T>) {
      if (n <= 8) return short_row_canonical_sum<Operator>(x, n);
      if (n <= 16) return row_canonical_sum<16, Operator>(x, n);
      return row_canonical_sum<int(canonical::kLanes), Operator>(x, n);
    } else {
      typename Operator::Acc s = Operator::identity();  // exact (ExactSum) or wrapping (squares): any order
      for (std::int64_t j = 0; j < n; ++j) s += Operator::load(x[j], 0);
      return s;
    }
  } else if constexpr (O == Op::min || O == Op::max) {
    if (n == 1) return Operator::load(x[0], 0);
    const auto [m, nan] = row_extreme<O == Op::max>(x, n);
    return nan ? std::numeric_limits<compute_t<T>>::quiet_NaN() : K::value(m);
  } else if constexpr (O == Op::argmin || O == Op::argmax) {
    if (n == 1) return Operator::load(x[0], 0);
    const auto [m, nan] = row_extreme<O == Op::argmax>(x, n);
    const std::int64_t k = first_index(x, n, m, nan);
    return {compute_t<T>(x[k]), k};
  } else if constexpr (canonical_order<Operator>) {  // (prod of floats) the canonical order: the row is one chunk
    return canonical::chunk_sum_of<Operator>(x, n, 1);
  } else {  // any other op: its operator, element by element
    typename Operator::Acc acc = Operator::identity();
    for (std::int64_t j = 0; j < n; ++j) acc = Operator::combine(acc, Operator::load(x[j], j));
    return acc;
  }
}

// Per column: combines rows [0, rows) of the matrix x (row i at x + i * ld; `first` the index of row 0)
// into acc[0 .. cols), narrow_columns<O, T>(cols, ld), with Op's rules: groups of rows in lanes for the
// sums, min / max and arg ops, then (for an op without lanes here, every row) one row at a time.
template <Op O, class T>
void column_acc(const T* x, std::int64_t first, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                typename OpFor<O, T>::type::Acc* acc) {
  using Operator = typename OpFor<O, T>::type;
  using Acc = typename Operator::Acc;
  using K = Keyed<T>;
  using Key = typename K::Key;
  // A group is k rows, its lanes x[g * k * ld + l] for l < lanes (the last row's padding is not read).
  constexpr std::int64_t L = lanes_of<T>;
  static_assert(L + kNarrowColumns <= kMaxLanes);
  const std::int64_t k = ld <= L ? (L + ld - 1) / ld : 1;
  const std::int64_t lanes = (k - 1) * ld + cols, groups = rows / k;
  const auto group = [&](std::int64_t g) { return x + g * k * ld; };
  // Lane l of group g holds row g * k + l / ld's column l % ld; f(l, row, column) for every lane of a column.
  const auto fold = [&](auto f) {
    for (std::int64_t j = 0; j < cols; ++j)
      for (std::int64_t q = 0; q < k; ++q) f(q * ld + j, q, j);
  };
  constexpr bool kLanes = additive<Operator> || O == Op::min || O == Op::max || O == Op::argmin || O == Op::argmax;
  if (groups > 0) {
    if constexpr (additive<Operator>) {
      Acc s[kMaxLanes];
      std::fill_n(s, lanes, Operator::identity());
      for (std::int64_t g = 0; g < groups; ++g) {
        const T* p = group(g);
        if constexpr (is_storage_type_v<T>) {
          float v[kMaxLanes];
          std::int64_t l = 0;
          for (; l + 16 <= lanes; l += 16) cpu_leaves::widen<16>(p + l, v + l);  // (one 512-bit store on Zen)
          for (; l + 8 <= lanes; l += 8) cpu_leaves::widen<8>(p + l, v + l);
          for (; l < lanes; ++l) v[l] = float(p[l]);
          for (l = 0; l < lanes; ++l) s[l] += on_compute_t<Operator>::load(v[l], 0);
        } else {
          for (std::int64_t l = 0; l < lanes; ++l) s[l] += Operator::load(p[l], 0);
        }
      }
      fold([&](std::int64_t l, std::int64_t, std::int64_t j) { acc[j] = Operator::combine(acc[j], s[l]); });
    } else if constexpr (O == Op::min || O == Op::max) {
      constexpr bool kMax = O == Op::max;
      Key m[kMaxLanes], nan[kMaxLanes] = {};
      std::fill_n(m, lanes, kMax ? std::numeric_limits<Key>::lowest() : std::numeric_limits<Key>::max());
      for (std::int64_t g = 0; g < groups; ++g) {
        const T* p = group(g);
        for (std::int64_t l = 0; l < lanes; ++l) {
          m[l] = kMax ? std::max(m[l], K::key(p[l])) : std::min(m[l], K::key(p[l]));
          nan[l] |= K::nan(p[l]);
        }
      }
      fold([&](std::int64_t l, std::int64_t, std::int64_t j) {
        acc[j] = Operator::combine(acc[j], nan[l] ? std::numeric_limits<Acc>::quiet_NaN() : K::value(m[l]));
      });
    } else if constexpr (O == Op::argmin || O == Op::argmax) {
      constexpr bool kMax = O == Op::argmax;
      // NaN as the extreme key, whose value() is a NaN; the first group sets every lane (an element equal
      // to the identity must still be found), later ones replace it only when strictly beyond.
      constexpr Key kNan = kMax ? std::numeric_limits<Key>::max() : std::numeric_limits<Key>::lowest();
      const auto key = [](T v) { return K::nan(v) ? kNan : K::key(v); };
      Key m[kMaxLanes];
      std::int32_t at[kMaxLanes] = {};  // the group of m[l]
      for (std::int64_t l = 0; l < lanes; ++l) m[l] = key(x[l]);
      for (std::int32_t g = 1; g < groups; ++g) {
        const T* p = group(g);
        for (std::int64_t l = 0; l < lanes; ++l) {
          const Key v = key(p[l]);
          const bool beyond = kMax ? v > m[l] : v < m[l];
          m[l] = beyond ? v : m[l];
          at[l] = beyond ? g : at[l];
        }
      }
      fold([&](std::int64_t l, std::int64_t q, std::int64_t j) {
        acc[j] = Operator::combine(acc[j], Acc{K::value(m[l]), first + at[l] * k + q});
      });
    }
  }
  for (std::int64_t i = kLanes ? groups * k : 0; i < rows; ++i)  // the rows after the last whole group
    for (std::int64_t j = 0; j < cols; ++j)
      acc[j] = Operator::combine(acc[j], Operator::load(x[i * ld + j], first + i));
}

}  // namespace tandem::detail::cpu_narrow
