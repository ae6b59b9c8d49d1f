// Verdicts: a result of tandem against its reference (reference.hpp) and bound (bounds.hpp), with the
// error and, when it fails, what was expected in words. Shared by the tests (which CHECK ok), the CLI
// (which prints error and expected) and anything else that checks results.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tandem/types.hpp"
#include "verify/bounds.hpp"
#include "verify/reference.hpp"
#include "verify/values.hpp"

namespace tandem_verify {

struct Judgement {
  bool ok = true;
  long double error = 0;  // |result - expected| (infinite where one is NaN and the other not)
  std::string expected;   // filled when !ok: the expected value (and bound), for a message
};

// An additive op's result (sum, sumsq, ...): integers exactly; floats within AdditiveReference::bound() of
// the long double sum of the terms (bit for bit with `exact` while the sum of the
// terms' magnitudes fits its digits, or when the reference is NaN or infinite).
template <tandem::Element T>
Judgement judge_additive(tandem::sum_result_t<T> s, const AdditiveReference<T>& a, bool exact);
// sum(): judge_additive of the sum, and bit for bit (for data whose every partial sum is exact,
// Values::small_integers, whatever the order).
template <tandem::Element T>
Judgement judge_sum(tandem::sum_result_t<T> s, const ReduceReference<T>& r) {
  return judge_additive<T>(s, r.of(tandem::Op::sum), false);
}
template <tandem::Element T>
Judgement judge_sum_bits(tandem::sum_result_t<T> s, const ReduceReference<T>& r) {
  return judge_additive<T>(s, r.of(tandem::Op::sum), true);
}
// min() or max() (and anything else that must be bitwise equal): got and expect have the same bits.
template <tandem::Element T>
Judgement judge_extreme(T got, T expect);
// A mean (the op it is computed as, divided by n): bit for bit for integers (the exact sum rounded once);
// within mean_bound() for floats (count > 0).
template <tandem::Element T>
Judgement judge_mean(double m, const AdditiveReference<T>& a);
template <tandem::Element T>
Judgement judge_mean(double m, const ReduceReference<T>& r) {
  return judge_mean<T>(m, r.of(tandem::Op::mean));
}

// prod(): integers exactly (modulo 2^64); floats: NaN for a NaN or an infinity times a zero, else the sign
// of the exact product always, and while no partial product can overflow or underflow (in_range) the
// exact infinity or zero, or the exact product within bound(); outside that range a NaN is allowed too (an
// infinity met a zero on the way).
template <tandem::Element T>
Judgement judge_product(tandem::sum_result_t<T> got, const ProductReference<T>& p);

// argmin() or argmax(): exactly the expected index.
inline Judgement judge_index(std::size_t got, std::size_t expect) {
  if (got == expect) return {};
  return {false, got > expect ? (long double)(got - expect) : (long double)(expect - got),
          "index " + std::to_string(expect)};
}

// The verdict of op O's result for elements of type T (include/tandem/ops.hpp), against the reference of
// the elements as their compute type (float for bfloat16 / half), by the op table's columns: a sum
// (ResultKind::sum) its additive reference (reference.hpp's Term) within its bound, bit for bit with
// `exact` (data whose sums are exact in any order, Values::small_integers); a mean that sum divided by n;
// a value or an index the least element (identity highest: min, argmin) or the greatest (identity lowest:
// max, argmax), bit for bit and the exact first index.
template <tandem::Op O, tandem::Element T>
Judgement judge_op(const tandem::op_result_t<O, T>& got, const ReduceReference<tandem::compute_t<T>>& r,
                   bool exact = false) {
  using C = tandem::compute_t<T>;
  using tandem::ResultKind;
  constexpr tandem::OpInfo op = tandem::info(O);
  constexpr bool least = op.identity == tandem::Identity::highest;
  if constexpr (is_product(O))
    return judge_product<C>(got, r.product);
  else if constexpr (op.result == ResultKind::sum)
    return judge_additive<C>(got, r.of(O), exact);
  else if constexpr (op.result == ResultKind::mean)
    return judge_mean<C>(got, r.of(O));
  else if constexpr (op.result == ResultKind::value)
    return judge_extreme<C>(got, least ? r.min() : r.max());
  else
    return judge_index(got, least ? r.argmin() : r.argmax());
}

// The term additive op O adds for element x (reference.hpp's Term of the op it is computed as).
template <tandem::Op O, class C>
C additive_term(C x) {
  static_assert(is_additive(O));
  return Term<tandem::info(O).computed_as>::real(x);
}

// Deterministic mode's result of op O, bit for bit: the additive ops of floats (is_additive: sum, mean,
// sumsq) from the canonical order over their terms, `values` being the elements as their compute type in
// order (a mean: the canonical sum / n); every other case as judge_op (order-independent already).
template <tandem::Op O, tandem::Element T>
Judgement judge_op_canonical(const tandem::op_result_t<O, T>& got, const ReduceReference<tandem::compute_t<T>>& r,
                             std::span<const tandem::compute_t<T>> values) {
  using C = tandem::compute_t<T>;
  if constexpr (std::is_floating_point_v<C> && is_product(O)) {
    const C p = canonical_product<C>(values);
    const bool ok = same_bits(got, p);
    return {ok, 0, ok ? "" : show(p) + " (the canonical order, bit for bit)"};
  } else if constexpr (std::is_floating_point_v<C> && is_additive(O)) {
    Vector<C> terms(values.size());
    std::transform(values.begin(), values.end(), terms.begin(), additive_term<O, C>);
    const C s = terms.empty() ? C(0) : canonical_sum<C>(std::span<const C>(terms));
    if constexpr (tandem::info(O).result != tandem::ResultKind::mean) {
      const bool ok = same_bits(got, s);
      return {ok, 0, ok ? "" : show(s) + " (the canonical order, bit for bit)"};
    } else {
      const double m = double(s) / double(values.size());
      const bool ok = same_bits(got, std::isnan(m) ? std::numeric_limits<double>::quiet_NaN() : m);
      return {ok, 0, ok ? "" : show(m) + " (the canonical sum / n, bit for bit)"};
    }
  } else {
    return judge_op<O, T>(got, r, std::is_integral_v<C>);
  }
}

// One matrix product against matmul_reference().
struct MatmulVerdict {
  struct Bad {
    std::size_t i, j;
    long double got, expected, bound;
  };
  double worst = 0;  // max over the checked elements of |error| / bound (infinite for a NaN error)
  std::size_t checked = 0, outside = 0, not_finite = 0;
  std::vector<Bad> first_bad;  // the first few elements outside the bound

  bool ok() const { return outside == 0 && not_finite == 0; }
  // "3 of 516 checked elements outside the bound[; 2 elements of C not finite (never written?)]"
  std::string problem() const;
};

// |C - ref| <= matmul_bound_factor<T>(precision, K) * sum_k |a_ik b_kj| + 1e-30 for every checked
// element (a NaN or infinite reference: the same value). When the reference is a sample, every element
// of C must also be finite, which catches elements a kernel never wrote if C started as NaN.
template <class T>
requires tandem::is_matmul_type_v<T> MatmulVerdict verify_matmul(tandem::MatrixView<const T> c,
                                                                 const MatmulReference<T>& ref,
                                                                 tandem::Precision precision);

// ---- Definitions -------------------------------------------------------------------------------------
namespace detail {

inline std::string with_bound(long double expect, long double bound) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.17Lg +- %.3Lg", expect, bound);
  return buf;
}

inline long double distance(long double a, long double b) {
  if (std::isnan(a) != std::isnan(b)) return INFINITY;
  if (std::isnan(a) || a == b) return 0;  // equal infinities too
  return std::fabs(a - b);
}

}  // namespace detail

template <tandem::Element T>
Judgement judge_additive(tandem::sum_result_t<T> s, const AdditiveReference<T>& a, bool exact) {
  const tandem::sum_result_t<T> expect = a.result();
  if constexpr (std::is_floating_point_v<T>)  // (exact data stays exact while every partial sum fits T's digits:
    exact = exact && a.abs_sum <= std::ldexp(1.0L, std::numeric_limits<T>::digits);  // squares may outgrow them)
  if (std::is_integral_v<T> || exact || !a.finite()) {
    const bool ok = same_bits(s, expect);
    return {ok, detail::distance(s, expect), ok ? "" : show(expect) + " (bit for bit)"};
  }
  const long double err = std::fabs((long double)s - a.sum);
  const bool ok = err <= a.bound();
  return {ok, err, ok ? "" : detail::with_bound(a.sum, a.bound())};
}

template <tandem::Element T>
Judgement judge_product(tandem::sum_result_t<T> got, const ProductReference<T>& p) {
  if constexpr (std::is_integral_v<T>) {
    const auto expect = tandem::sum_result_t<T>(p.wrapped);
    const bool ok = same_bits(got, expect);
    return {ok, detail::distance((long double)got, (long double)expect), ok ? "" : show(expect) + " (modulo 2^64)"};
  } else {
    const T sign = p.negative ? T(-1) : T(1);
    if (p.nan || (p.inf && p.zero)) {
      const bool ok = std::isnan(got);
      return {ok, ok ? 0 : INFINITY, ok ? "" : "NaN"};
    }
    const bool sign_ok = !std::isnan(got) && bool(std::signbit(got)) == p.negative;
    if (!p.in_range()) {  // only the sign is certain (or a NaN: an overflow met an underflow)
      const bool ok = std::isnan(got) || sign_ok;
      return {ok, ok ? 0 : INFINITY, ok ? "" : std::string(p.negative ? "a negative" : "a positive") + " product"};
    }
    if (p.inf || p.zero) {
      const T expect = p.inf ? sign * std::numeric_limits<T>::infinity() : sign * T(0);
      const bool ok = same_bits(got, expect);
      return {ok, detail::distance(got, expect), ok ? "" : show(expect) + " (bit for bit)"};
    }
    const long double err = std::fabs((long double)got - p.value());
    const bool ok = sign_ok && err <= p.bound();
    return {ok, err, ok ? "" : detail::with_bound(p.value(), p.bound())};
  }
}

template <tandem::Element T>
Judgement judge_extreme(T got, T expect) {
  const bool ok = same_bits(got, expect);
  return {ok, std::fabs((long double)got - (long double)expect), ok ? "" : show(expect) + " (bit for bit)"};
}

template <tandem::Element T>
Judgement judge_mean(double m, const AdditiveReference<T>& a) {
  if constexpr (std::is_integral_v<T>) {
    const double expect = a.integer_mean();
    const bool ok = same_bits(m, expect);
    return {ok, std::fabs((long double)m - expect), ok ? "" : show(expect)};
  } else {
    if (!a.finite()) {
      const double expect = double(a.result()) / double(a.count);
      const bool ok = std::isnan(expect) ? std::isnan(m) : m == expect;
      return {ok, detail::distance(m, expect), ok ? "" : show(expect)};
    }
    const long double expect = a.sum / a.count;
    const long double bound = a.mean_bound();
    const long double err = std::fabs((long double)m - expect);
    const bool ok = err <= bound;
    return {ok, err, ok ? "" : detail::with_bound(expect, bound)};
  }
}

template <class T>
requires tandem::is_matmul_type_v<T> MatmulVerdict verify_matmul(tandem::MatrixView<const T> c,
                                                                 const MatmulReference<T>& ref,
                                                                 tandem::Precision precision) {
  const long double factor = matmul_bound_factor<T>(precision, ref.k);
  MatmulVerdict v;
  v.checked = ref.checked();
  for (std::size_t e = 0; e < ref.checked(); ++e) {
    const std::size_t idx = ref.index(e), i = idx / ref.n, j = idx % ref.n;
    const long double got = c.data[i * c.ld + j];
    const long double expect = ref.value[e];
    const long double bound = factor * ref.abs[e] + 1e-30L;
    bool ok;
    if (!std::isfinite(expect)) {
      ok = std::isnan(expect) ? std::isnan(got) : got == expect;
      v.worst = ok ? v.worst : INFINITY;
    } else {
      const long double err = std::fabs(got - expect);
      ok = err <= bound;
      v.worst = std::isnan(err) ? INFINITY : std::max(v.worst, double(err / bound));
    }
    if (!ok && v.outside++ < 3) v.first_bad.push_back({i, j, got, expect, bound});
  }
  if (!ref.sample.empty())
    for (std::size_t i = 0; i < c.rows; ++i)
      for (std::size_t j = 0; j < c.cols; ++j) v.not_finite += !std::isfinite(c.data[i * c.ld + j]);
  return v;
}

}  // namespace tandem_verify
