// Independent references: what every reduction and matrix product of tandem must return, computed by
// plain serial loops in wider types. They are written from the documented rules (include/tandem/
// engine.hpp, common/canonical.hpp's description), never from the backends' code
// (common/reduce_ops.hpp and friends), so that a shared mistake cannot hide.
//
// Reductions  ReduceReference<T>, fed one element at a time (add) or by reduce_reference():
//               sums          every additive op of the table (sum, sumsq, ...) from its Term: integers in
//                             a uint64 loop, wrapping modulo 2^64 as the library's int64 sums do (and in
//                             128 bits for means); floats in a long double loop over the finite terms,
//                             with sum |term| for the bound (bounds.hpp); NaN, +inf and -inf are tracked
//                             apart: any NaN or both infinities make the sum NaN, one infinity makes it
//                             that infinity
//               products      prod: integers wrapping modulo 2^64; floats as sign, significand and
//                             exponent, with the range of every partial product (ProductReference)
//               min / max     NaN if any element is NaN, else the least / greatest element in the
//                             order where -0.0 comes before +0.0
//             canonical_sum(): deterministic mode's documented association order, bit for bit.
// Matmul      matmul_reference(): every element of C (or a sample, for large products), accumulated
//             in double for float inputs and long double for double inputs, with sum_k |a_ik b_kj|.
//             fma_chain_matmul(): one fma chain per element: deterministic mode's bits for K <= 4096 (longer K
//             is chunked: common/canonical.hpp, canonical::matmul_element).
//             tensor_core_step(): one k-step of the tensor-core arithmetic (deterministic 16-bit and tf32
//             products), from its documented rules in double arithmetic; tensor_core_chain() the chain of them.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/vector.hpp"
#include "tandem/types.hpp"
#include "verify/bounds.hpp"
#include "verify/rng.hpp"

namespace tandem_verify {

// ---- Reductions -------------------------------------------------------------------------------------

// Whether op's result is a sum (the op table, include/tandem/ops.hpp: the op it is computed as returns
// ResultKind::sum): sum, mean (computed as sum) and sumsq today, and any such op added to the table. Their
// floating-point results depend on the order of the additions, which deterministic mode fixes.
constexpr bool is_additive(tandem::Op op) {
  const tandem::OpInfo& computed = tandem::info(tandem::info(op).computed_as);
  return computed.result == tandem::ResultKind::sum && computed.identity == tandem::Identity::zero;
}
// Whether op's result is a product (ResultKind::sum from the identity one: prod). Its floating-point results
// depend on the order of the multiplications too, which deterministic mode fixes.
constexpr bool is_product(tandem::Op op) {
  const tandem::OpInfo& computed = tandem::info(tandem::info(op).computed_as);
  return computed.result == tandem::ResultKind::sum && computed.identity == tandem::Identity::one;
}

// The term each additive op that the backends run adds for element x, as the op table's description
// defines it: the one place a new additive op writes its reference (an additive op without a Term does not
// compile). real(): the term of a float element, rounded to its type (-ffp-contract=off: never fused into
// the sum); wrapped(): an integer element's term modulo 2^64, as the library's int64 sums wrap; exact():
// the same term in 128 bits (a mean divides the exact sum). kNonNegative: no term is below zero, so that
// the rounding errors of a long sum do not cancel (its bound, bounds.hpp).
template <tandem::Op O>
struct Term;
template <>
struct Term<tandem::Op::sum> {
  static constexpr bool kNonNegative = false;
  template <class C>
  static C real(C x) {
    return x;
  }
  template <class I>
  static std::uint64_t wrapped(I v) {
    return std::uint64_t(v);
  }
  template <class I>
  static __int128 exact(I v) {
    return __int128(v);
  }
};
template <>
struct Term<tandem::Op::sumsq> {
  static constexpr bool kNonNegative = true;
  template <class C>
  static C real(C x) {
    return x * x;
  }
  template <class I>
  static std::uint64_t wrapped(I v) {
    return std::uint64_t(v) * std::uint64_t(v);
  }
  template <class I>  // (modulo 2^128 past it: only a mean divides the exact sum, and no mean is of squares)
  static __int128 exact(I v) {
    return __int128(static_cast<unsigned __int128>(__int128(v)) * static_cast<unsigned __int128>(__int128(v)));
  }
};

// The reference of one additive op: its terms summed exactly (integers: modulo 2^64 and in 128 bits) or in
// long double (floats: the finite terms, with sum |term| for the bound; NaN, +inf and -inf tracked apart:
// any NaN or both infinities make the sum NaN, one infinity makes it that infinity).
template <tandem::Element T>
struct AdditiveReference {
  // Every term has one sign (Term<O>::kNonNegative, or one element repeated: ReduceReference::one_sign):
  // their rounding errors do not cancel, so the bound is the classical one of any order.
  bool one_signed = false;
  std::size_t count = 0;
  std::uint64_t wrapped = 0;    // integers: the sum modulo 2^64
  unsigned __int128 exact = 0;  // integers: the sum itself (as a two's-complement 128-bit value)
  long double sum = -0.0L;      // the sum of the finite terms; starts at -0.0, so that a sum of only -0.0
                                // stays -0.0 (IEEE 754)
  long double abs_sum = 0;      // the sum of |term| over the finite terms
  bool nan = false, pos_inf = false, neg_inf = false;

  template <class Term>
  void add(T v) {
    ++count;
    if constexpr (std::is_integral_v<T>) {
      wrapped += Term::wrapped(v);
      exact += static_cast<unsigned __int128>(Term::exact(v));
      const long double t = (long double)Term::exact(v);
      sum += t, abs_sum += std::fabs(t);
    } else {
      const T t = Term::real(v);
      if (std::isnan(t))
        nan = true;
      else if (std::isinf(t))
        (t > 0 ? pos_inf : neg_inf) = true;
      else
        sum += t, abs_sum += std::fabs((long double)t);
    }
  }
  void merge(const AdditiveReference& o) {
    count += o.count, wrapped += o.wrapped, exact += o.exact, sum += o.sum, abs_sum += o.abs_sum;
    nan |= o.nan, pos_inf |= o.pos_inf, neg_inf |= o.neg_inf;
  }
  bool finite() const { return !nan && !pos_inf && !neg_inf; }

  // What the op must return: integers exactly (wrapped); floats: NaN (canonical), an infinity, or the
  // long double sum rounded to T (equal to the result for data whose sums are exact, e.g.
  // Values::small_integers; otherwise compare within bound()).
  tandem::sum_result_t<T> result() const {
    if constexpr (std::is_integral_v<T>) {
      return tandem::sum_result_t<T>(wrapped);
    } else {
      if (nan || (pos_inf && neg_inf)) return std::numeric_limits<T>::quiet_NaN();
      if (pos_inf) return std::numeric_limits<T>::infinity();
      if (neg_inf) return -std::numeric_limits<T>::infinity();
      return count == 0 ? T(0) : T(sum);  // the empty sum is +0.0
    }
  }
  // |result - sum| may be at most this for floats (bounds.hpp; integers: 0, they are exact): 8 u sum|term|,
  // or (n + 8) u sum|term| for terms of one sign.
  long double bound() const {
    if constexpr (std::is_integral_v<T>)
      return 0;
    else
      return one_signed ? tandem_verify::sumsq_bound<T>(abs_sum, count) : tandem_verify::sum_bound<T>(abs_sum);
  }
  // The mean of integers as mean() computes it: the exact sum rounded to double once, divided by n (count
  // > 0). (GCC converts __int128 to the nearest double.)
  double integer_mean() const requires std::is_integral_v<T> { return double(__int128(exact)) / double(count); }
  // |mean - sum / count| may be at most this for floats (count > 0).
  long double mean_bound() const { return tandem_verify::mean_bound(bound(), sum, count); }
};

// The reference of a product. Integers: the wrapping product modulo 2^64 (as the library's int64 results
// wrap). Floats: the exact product's sign (the parity of the negative elements), its magnitude as a long
// double significand and a separate exponent (no overflow), and the range every partial product of any
// order lies in: between the product of the magnitudes below 1 and that of those above 1 (log2 down and
// up). While that range is inside the type's normal numbers (in_range), every order gives the exact product
// within expm1(n log1p(u)) of it; outside it, an intermediate result may overflow or underflow, and only the
// sign (or a NaN, from an infinity times a zero) is certain. NaN, infinities and zeros are tracked apart.
template <tandem::Element T>
struct ProductReference {
  std::size_t count = 0;
  std::uint64_t wrapped = 1;  // integers
  bool nan = false, inf = false, zero = false, negative = false;
  long double significand = 1;  // of the finite nonzero magnitudes' product, in [0.5, 1) after each step
  long long exponent = 0;
  long double up = 0, down = 0;  // log2 of the products of the magnitudes above 1 and below 1

  void add(T v) {
    ++count;
    if constexpr (std::is_integral_v<T>) {
      wrapped *= std::is_signed_v<T> ? std::uint64_t(std::int64_t(v)) : std::uint64_t(v);
    } else {
      if (std::isnan(v)) {
        nan = true;
        return;
      }
      negative ^= bool(std::signbit(v));
      if (std::isinf(v)) {
        inf = true;
      } else if (v == 0) {
        zero = true;
      } else {
        const long double a = std::fabs((long double)v);
        int e = 0;
        significand = std::frexp(significand * a, &e);
        exponent += e;
        (a > 1 ? up : down) += std::log2(a);
      }
    }
  }
  void merge(const ProductReference& o) {
    count += o.count, wrapped *= o.wrapped;
    nan |= o.nan, inf |= o.inf, zero |= o.zero, negative ^= o.negative;
    int e = 0;
    significand = std::frexp(significand * o.significand, &e);
    exponent += o.exponent + e, up += o.up, down += o.down;
  }
  // No partial product of the finite nonzero elements can overflow or reach the subnormals (a margin of 1).
  bool in_range() const {
    return up + 1 < std::numeric_limits<T>::max_exponent && down - 1 > std::numeric_limits<T>::min_exponent;
  }
  // The exact product of the finite nonzero elements, signed (meaningful when in_range()).
  long double value() const {
    const long double m = std::ldexp(significand, int(exponent));
    return negative ? -m : m;
  }
  // |result - value()| may be at most this when in_range(): n roundings of at most u each, and the
  // reference's own (long double: 2^-63 per element).
  long double bound() const {
    const long double u = std::ldexp(1.0L, -std::numeric_limits<T>::digits);
    return (std::expm1(double(count) * std::log1p(double(u))) * 1.001L + double(count) * 0x1p-63) * std::fabs(value());
  }
};

template <tandem::Element T>
struct ReduceReference {
  std::size_t count = 0;
  // One reference per additive op the backends run (indexed by Op; the others stay empty): of(op).
  std::array<AdditiveReference<T>, std::size(tandem::ops)> additive{};
  ProductReference<T> product;  // prod's
  bool nan = false;
  std::size_t nan_count = 0;
  T lo{}, hi{};  // the least and greatest non-NaN element (-0.0 before +0.0); set once count > nan_count
  // Their first positions, and the first NaN's (what argmin / argmax must return, NumPy's rule).
  std::size_t lo_index = 0, hi_index = 0, nan_index = 0;

  ReduceReference() {
    each_additive([&]<tandem::Op O>() { additive[std::size_t(O)].one_signed = Term<O>::kNonNegative; });
  }
  // The elements are one value repeated (a stride-0 view): every op's terms have one sign.
  ReduceReference& one_sign() {
    for (auto& a : additive) a.one_signed = true;
    return *this;
  }

  // The reference of additive op `op` (a mean: of the op it is computed as).
  const AdditiveReference<T>& of(tandem::Op op) const { return additive[std::size_t(tandem::info(op).computed_as)]; }

  void add(T v) {
    const std::size_t i = count;
    ++count;
    each_additive([&]<tandem::Op O>() { additive[std::size_t(O)].template add<Term<O>>(v); });
    product.add(v);
    if constexpr (!std::is_integral_v<T>) {
      if (std::isnan(v)) {
        if (!nan) nan_index = i;
        nan = true;
        ++nan_count;
        return;
      }
    }
    const bool first = count - nan_count == 1;
    if (first || below(v, lo)) lo = v, lo_index = i;
    if (first || below(hi, v)) hi = v, hi_index = i;
  }
  // The order of min and max: v < w, or -0.0 against +0.0.
  static bool below(T v, T w) { return v < w || (v == w && std::signbit(v) && !std::signbit(w)); }

  // The reference of both parts together (for references built in parallel pieces).
  void merge(const ReduceReference& o) {
    for (std::size_t k = 0; k < additive.size(); ++k) additive[k].merge(o.additive[k]);
    product.merge(o.product);
    const bool empty = count == nan_count, o_empty = o.count == o.nan_count;
    const std::size_t offset = count;  // o's elements follow this one's
    count += o.count, nan_count += o.nan_count;
    if (!nan && o.nan) nan_index = offset + o.nan_index;
    nan |= o.nan;
    if (o_empty) return;
    if (empty || below(o.lo, lo)) lo = o.lo, lo_index = offset + o.lo_index;
    if (empty || below(hi, o.hi)) hi = o.hi, hi_index = offset + o.hi_index;
  }

  // sum() and sumsq(): what they must return, and the bound around of(op).sum for floats.
  tandem::sum_result_t<T> sum_result() const { return of(tandem::Op::sum).result(); }
  long double sum_bound() const { return of(tandem::Op::sum).bound(); }
  double integer_mean() const requires std::is_integral_v<T> { return of(tandem::Op::mean).integer_mean(); }
  long double mean_bound() const { return of(tandem::Op::mean).mean_bound(); }

  // What min() and max() must return (count > 0), bit for bit.
  T min() const { return nan ? std::numeric_limits<T>::quiet_NaN() : lo; }
  T max() const { return nan ? std::numeric_limits<T>::quiet_NaN() : hi; }
  // What argmin() and argmax() must return (count > 0).
  std::size_t argmin() const { return nan ? nan_index : lo_index; }
  std::size_t argmax() const { return nan ? nan_index : hi_index; }

 private:
  // f.template operator()<O>() for every additive op the backends run (sum, sumsq, ...).
  template <class F>
  static void each_additive(F&& f) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (
          [&] {
            constexpr tandem::Op O = tandem::all_ops[I];
            if constexpr (is_additive(O) && tandem::is_backend_op(O)) f.template operator()<O>();
          }(),
          ...);
    }
    (std::make_index_sequence<std::size(tandem::all_ops)>{});
  }
};

// The reference of x[0], x[stride], ..., x[(n - 1) * stride].
template <tandem::Element T>
ReduceReference<T> reduce_reference(const T* x, std::size_t n, std::size_t stride = 1);
template <tandem::Element T>
ReduceReference<T> reduce_reference(std::span<const T> x) {
  return reduce_reference(x.data(), x.size(), 1);
}

// The sum in deterministic mode's canonical order, as documented: chunks of 4096 elements; within a
// chunk, lane i % 32 adds element i in order; the 32 lanes meet in a halving tree (lane j += lane
// j + s for s = 16, 8, 4, 2, 1); the chunk values are summed the same way again until one is left.
// NaN results are the canonical quiet NaN. Floats only.
template <class T>
requires std::is_floating_point_v<T> T canonical_sum(std::span<const T> x);

// The product in deterministic mode's canonical order, as documented: canonical_sum's chunks, lanes and tree
// with * for + and lanes starting at 1. NaN results are the canonical quiet NaN. Floats only.
template <class T>
requires std::is_floating_point_v<T> T canonical_product(std::span<const T> x);

// ---- Matrix products ----------------------------------------------------------------------------------

// Which elements matmul_reference() computes: every element while M N K <= full_work and
// M N <= full_elements, otherwise the four corners and `samples` elements drawn from `seed`.
struct MatmulSampling {
  double full_work = 0x1p30;
  double full_elements = 0x1p24;
  std::size_t samples = 512;
  std::uint64_t seed = 1;
};

template <class T>
struct MatmulReference {
  // The accumulation type: double for float inputs (exact products, 2^-53 per addition), long double
  // for double inputs.
  using Acc = std::conditional_t<std::is_same_v<T, float>, double, long double>;
  std::size_t m = 0, k = 0, n = 0;
  std::vector<std::size_t> sample;  // the index i * n + j of each checked element; empty: every element
  std::vector<Acc> value;           // sum_k a_ik b_kj, one per checked element
  std::vector<double> abs;          // sum_k |a_ik b_kj|, one per checked element (it only scales a bound)

  std::size_t checked() const { return value.size(); }
  // The index i * n + j of checked element e.
  std::size_t index(std::size_t e) const { return sample.empty() ? e : sample[e]; }
};

// The reference of A * B (row-major views, any ld). Rows are computed on all hardware threads.
template <class T>
requires tandem::is_matmul_type_v<T> MatmulReference<T> matmul_reference(tandem::MatrixView<const T> a,
                                                                         tandem::MatrixView<const T> b,
                                                                         const MatmulSampling& sampling = {});

// C = A * B as deterministic mode documents it: each C(i, j) is one fma chain over p = 0 .. K-1 from
// +0.0 (acc = fma(a_ip, b_pj, acc)), NaN results canonical. Writes the rows x cols elements of c only.
template <class T>
requires tandem::is_matmul_type_v<T>
void fma_chain_matmul(tandem::MatrixView<const T> a, tandem::MatrixView<const T> b, tandem::MatrixView<T> c);

// One k-step of deterministic mode's tensor-core arithmetic (docs/API.md) as its rules read: the products
// exact, E the largest alignment exponent (a product's: the sum of its factors' exponents; c's: its own;
// subnormals: the format's least normal exponent) of the nonzero terms, each term truncated toward zero to a
// multiple of 2^(E - 25), their exact sum rounded toward zero to float (0: +0.0; 2^128 and beyond: inf); NaN for
// a NaN, inf * 0 or inf - inf. x[k], y[k]: the K inputs as doubles (exact), emin the format's least normal
// exponent (-126 for bfloat16 and tf32, -14 for half).
inline float tensor_core_step(const double* x, const double* y, int K, float c, int emin) {
  auto exponent = [](double v, int least) { return std::max(std::ilogb(v), least); };
  bool nan = std::isnan(c), pos_inf = c == INFINITY, neg_inf = c == -INFINITY;
  int e = std::numeric_limits<int>::min();
  for (int k = 0; k < K; ++k) {
    const double p = x[k] * y[k];  // exact (at most 22 significant bits), or inf / NaN
    if (std::isnan(p)) nan = true;
    if (std::isinf(p)) (p > 0 ? pos_inf : neg_inf) = true;
    if (std::isfinite(p) && p != 0) e = std::max(e, exponent(x[k], emin) + exponent(y[k], emin));
  }
  if (nan || (pos_inf && neg_inf)) return std::numeric_limits<float>::quiet_NaN();
  if (pos_inf || neg_inf) return pos_inf ? INFINITY : -INFINITY;
  if (c != 0) e = std::max(e, exponent(c, -126));
  if (e == std::numeric_limits<int>::min()) return 0.0f;
  double units = 0;  // the sum in units of 2^(e - 25): integers below 2^40, exact in double
  for (int k = 0; k < K; ++k)
    if (x[k] * y[k] != 0) units += std::trunc(std::ldexp(x[k] * y[k], 25 - e));
  units += std::trunc(std::ldexp(double(c), 25 - e));
  const double sum = std::ldexp(units, e - 25);
  if (sum == 0) return 0.0f;
  if (std::fabs(sum) >= 0x1p128) return sum > 0 ? INFINITY : -INFINITY;
  float f = float(sum);  // to nearest; then toward zero
  if (std::fabs(double(f)) > std::fabs(sum)) f = std::nextafter(f, 0.0f);
  return f;
}

// The tensor-core chain of deterministic mode for one element of C: per chunk of 4096 k a chain of k-steps of K
// (16 for 16-bit inputs, 8 for tf32) from +0.0, the last step padded with zeros; the chunk values summed by
// canonical_sum. x(p), y(p): op(A)(i, p) and op(B)(p, j) as doubles (tf32 inputs rounded to tf32 already).
template <class X, class Y>
float tensor_core_chain(std::size_t k_total, int K, int emin, X&& x, Y&& y) {
  std::vector<float> values;
  for (std::size_t k0 = 0; k0 < k_total; k0 += 4096) {
    float v = 0.0f;
    for (std::size_t s = k0; s < std::min(k_total, k0 + 4096); s += std::size_t(K)) {
      double xs[16] = {}, ys[16] = {};
      for (int k = 0; k < K && s + std::size_t(k) < k_total; ++k) xs[k] = x(s + k), ys[k] = y(s + k);
      v = tensor_core_step(xs, ys, K, v, emin);
    }
    values.push_back(v);
  }
  return canonical_sum<float>(std::span<const float>(values));
}
// A float rounded to tf32 as deterministic tf32 products take it: 10 fraction bits, to nearest, ties away from zero.
inline double tf32_rounded(float v) {
  if (!std::isfinite(v) || v == 0) return v;
  int e;
  const double m = std::frexp(double(v), &e);              // |m| in [0.5, 1): 11 significant bits are m * 2^11
  const int shift = 11 - std::max(e - 1, -126) + (e - 1);  // subnormals keep fewer bits
  const double r = std::ldexp(std::round(std::ldexp(m, shift)), e - shift);  // std::round: ties away from zero
  return std::fabs(r) >= 0x1p128 ? (r > 0 ? INFINITY : -INFINITY) : r;
}

// ---- Definitions -------------------------------------------------------------------------------------
template <tandem::Element T>
ReduceReference<T> reduce_reference(const T* x, std::size_t n, std::size_t stride) {
  ReduceReference<T> r;
  for (std::size_t i = 0; i < n; ++i) r.add(x[i * stride]);
  return r;
}

namespace detail {

// Runs f(begin, end) over [0, rows) in one block per hardware thread.
template <class F>
void parallel_rows(std::size_t rows, F f) {
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 64);
  const std::size_t block = (rows + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (std::size_t begin = 0; begin < rows; begin += block)
    pool.emplace_back([=] { f(begin, std::min(rows, begin + block)); });
  for (auto& t : pool) t.join();
}

// The canonical order as documented, over `start` (each lane's first value) and `op` (+ or *): chunks of 4096,
// lane i % 32 takes element i in order, the 32 lanes meet in a halving tree, the chunk values again until one
// is left; NaN as the canonical quiet NaN; no elements: `empty`.
template <class T, class Combine>
T canonical_fold(std::span<const T> x, T start, T empty, Combine op) {
  if (x.empty()) return empty;
  tandem::detail::Vector<T> v(x.begin(), x.end());
  while (v.size() > 1) {
    tandem::detail::Vector<T> next;
    for (std::size_t c = 0; c < v.size(); c += 4096) {
      T lanes[32];
      std::fill_n(lanes, 32, start);
      for (std::size_t i = c; i < std::min(v.size(), c + 4096); ++i)
        lanes[(i - c) % 32] = op(lanes[(i - c) % 32], v[i]);
      for (int s = 16; s >= 1; s /= 2)
        for (int j = 0; j < s; ++j) lanes[j] = op(lanes[j], lanes[j + s]);
      next.push_back(lanes[0]);
    }
    v.swap(next);
  }
  return std::isnan(v[0]) ? std::numeric_limits<T>::quiet_NaN() : v[0];
}
}  // namespace detail

template <class T>
requires std::is_floating_point_v<T> T canonical_sum(std::span<const T> x) {
  // Lanes start at -0.0 (canonical.hpp); the empty sum is +0.0.
  return detail::canonical_fold<T>(x, T(-0.0), T(0), [](T a, T b) { return a + b; });
}

template <class T>
requires std::is_floating_point_v<T> T canonical_product(std::span<const T> x) {
  return detail::canonical_fold<T>(x, T(1), T(1), [](T a, T b) { return a * b; });
}

template <class T>
requires tandem::is_matmul_type_v<T> MatmulReference<T> matmul_reference(tandem::MatrixView<const T> a,
                                                                         tandem::MatrixView<const T> b,
                                                                         const MatmulSampling& sampling) {
  using Acc = typename MatmulReference<T>::Acc;
  const std::size_t m = a.rows, k = a.cols, n = b.cols;
  MatmulReference<T> ref;
  ref.m = m, ref.k = k, ref.n = n;
  if (double(m) * double(n) * double(k) <= sampling.full_work && double(m) * double(n) <= sampling.full_elements) {
    ref.value.assign(m * n, 0);
    ref.abs.assign(m * n, 0);
    // long double: dot products with B transposed, in registers (x87 loads and stores of C are slow).
    tandem::detail::Vector<T> bt;
    if constexpr (std::is_same_v<Acc, long double>) {
      bt.resize(k * n);
      for (std::size_t p = 0; p < k; ++p)
        for (std::size_t j = 0; j < n; ++j) bt[j * k + p] = b.data[p * b.ld + j];
    }
    detail::parallel_rows(m, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        const T* arow = a.data + i * a.ld;
        Acc* value = ref.value.data() + i * n;
        double* abs = ref.abs.data() + i * n;
        for (std::size_t p = 0; p < k; ++p) {
          const T* brow = b.data + p * b.ld;
          if constexpr (std::is_same_v<Acc, double>)
            for (std::size_t j = 0; j < n; ++j) value[j] += double(arow[p]) * double(brow[j]);
          const double abs_a = std::fabs(double(arow[p]));
          for (std::size_t j = 0; j < n; ++j) abs[j] += abs_a * std::fabs(double(brow[j]));
        }
        if constexpr (std::is_same_v<Acc, long double>) {
          for (std::size_t j = 0; j < n; ++j) {
            const T* bcol = bt.data() + j * k;
            long double even = 0, odd = 0;  // two chains hide the x87 add latency
            std::size_t p = 0;
            for (; p + 1 < k; p += 2) {
              even += (long double)arow[p] * bcol[p];
              odd += (long double)arow[p + 1] * bcol[p + 1];
            }
            if (p < k) even += (long double)arow[p] * bcol[p];
            value[j] = even + odd;
          }
        }
      }
    });
    return ref;
  }
  SplitMix64 g{sampling.seed ^ 0x5A5A5A5A5A5A5A5Aull};
  ref.sample = {0, n - 1, (m - 1) * n, m * n - 1};
  while (ref.sample.size() < 4 + sampling.samples) {
    const std::size_t i = g.next() % m, j = g.next() % n;
    ref.sample.push_back(i * n + j);
  }
  for (std::size_t idx : ref.sample) {
    const std::size_t i = idx / n, j = idx % n;
    long double value = 0, abs = 0;
    for (std::size_t p = 0; p < k; ++p) {
      const long double prod = (long double)a.data[i * a.ld + p] * b.data[p * b.ld + j];
      value += prod;
      abs += std::fabs(prod);
    }
    ref.value.push_back(Acc(value));
    ref.abs.push_back(double(abs));
  }
  return ref;
}

template <class T>
requires tandem::is_matmul_type_v<T>
void fma_chain_matmul(tandem::MatrixView<const T> a, tandem::MatrixView<const T> b, tandem::MatrixView<T> c) {
  for (std::size_t i = 0; i < c.rows; ++i)
    for (std::size_t j = 0; j < c.cols; ++j) {
      T acc = T(0);
      for (std::size_t p = 0; p < a.cols; ++p) acc = std::fma(a.data[i * a.ld + p], b.data[p * b.ld + j], acc);
      c.data[i * c.ld + j] = std::isnan(acc) ? std::numeric_limits<T>::quiet_NaN() : acc;
    }
}

}  // namespace tandem_verify
