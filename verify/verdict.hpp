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

// sum(): integers exactly; floats within ReduceReference::sum_bound() of the long double sum (a NaN or
// infinite reference: the same bits).
template <tandem::Element T>
Judgement judge_sum(tandem::sum_result_t<T> s, const ReduceReference<T>& r);
// sum() bit for bit equal to the reference rounded to T: for data whose every partial sum is exact
// (Values::small_integers), whatever the order.
template <tandem::Element T>
Judgement judge_sum_bits(tandem::sum_result_t<T> s, const ReduceReference<T>& r);
// min() or max() (and anything else that must be bitwise equal): got and expect have the same bits.
template <tandem::Element T>
Judgement judge_extreme(T got, T expect);
// mean() = double(sum) / n: bit for bit for integers; within mean_bound() for floats (count > 0).
template <tandem::Element T>
Judgement judge_mean(double m, const ReduceReference<T>& r);

// sumsq(): integers exactly; floats within sumsq_bound() of the long double sum of the squares (bit for bit
// with `exact`, or when the reference is NaN or infinite).
template <tandem::Element T>
Judgement judge_sumsq(tandem::sum_result_t<T> s, const ReduceReference<T>& r, bool exact);

// argmin() or argmax(): exactly the expected index.
inline Judgement judge_index(std::size_t got, std::size_t expect) {
  if (got == expect) return {};
  return {false, got > expect ? (long double)(got - expect) : (long double)(expect - got),
          "index " + std::to_string(expect)};
}

// The verdict of op O's result for elements of type T (include/tandem/ops.hpp), against the reference of
// the elements as their compute type (float for bfloat16 / half): sums within their bound (bit for bit
// with `exact`: data whose sums are exact in any order, Values::small_integers), min and max bit for bit,
// mean within its bound, argmin and argmax the exact index. An op of the table without a branch here is
// a compile error: its reference must be written before it can be tested.
template <tandem::Op O, tandem::Element T>
Judgement judge_op(const tandem::op_result_t<O, T>& got, const ReduceReference<tandem::compute_t<T>>& r,
                   bool exact = false) {
  using C = tandem::compute_t<T>;
  using tandem::Op;
  if constexpr (O == Op::sum)
    return exact ? judge_sum_bits<C>(got, r) : judge_sum<C>(got, r);
  else if constexpr (O == Op::min)
    return judge_extreme<C>(got, r.min());
  else if constexpr (O == Op::max)
    return judge_extreme<C>(got, r.max());
  else if constexpr (O == Op::mean)
    return judge_mean<C>(got, r);
  else if constexpr (O == Op::argmin)
    return judge_index(got, r.argmin());
  else if constexpr (O == Op::argmax)
    return judge_index(got, r.argmax());
  else if constexpr (O == Op::sumsq)
    return judge_sumsq<C>(got, r, exact);
  else
    static_assert(O == Op::sum, "tests/support: this op of the table has no reference; add it to judge_op");
}

// Whether op's result is a sum (the op table, include/tandem/ops.hpp: the op it is computed as returns
// ResultKind::sum): sum, mean (computed as sum) and sumsq today, and any such op added to the table. Their
// floating-point results depend on the order of the additions, which deterministic mode fixes.
constexpr bool is_additive(tandem::Op op) {
  return tandem::info(tandem::info(op).computed_as).result == tandem::ResultKind::sum;
}

// The term an additive op O adds for element x, as the backends' operator of its computed_as loads it: x,
// or x * x (sumsq). An additive op of the table without a branch here is a compile error.
template <tandem::Op O, class C>
C additive_term(C x) {
  using tandem::Op;
  constexpr Op base = tandem::info(O).computed_as;
  static_assert(is_additive(O));
  if constexpr (base == Op::sum)
    return x;
  else if constexpr (base == Op::sumsq)
    return x * x;  // the square, rounded (-ffp-contract=off: never fused into the sum)
  else
    static_assert(base == Op::sum, "verify/verdict.hpp: this additive op of the table has no term; add it here");
}

// Deterministic mode's result of op O, bit for bit: the additive ops of floats (is_additive: sum, mean,
// sumsq) from the canonical order over their terms, `values` being the elements as their compute type in
// order (a mean: the canonical sum / n); every other case as judge_op (order-independent already).
template <tandem::Op O, tandem::Element T>
Judgement judge_op_canonical(const tandem::op_result_t<O, T>& got, const ReduceReference<tandem::compute_t<T>>& r,
                             std::span<const tandem::compute_t<T>> values) {
  using C = tandem::compute_t<T>;
  if constexpr (std::is_floating_point_v<C> && is_additive(O)) {
    std::vector<C> terms(values.size());
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
Judgement judge_sum(tandem::sum_result_t<T> s, const ReduceReference<T>& r) {
  if constexpr (std::is_integral_v<T>) {
    const std::int64_t expect = r.sum_result();
    const bool ok = s == expect;
    return {ok, std::fabs((long double)s - (long double)expect), ok ? "" : std::to_string(expect)};
  } else {
    if (r.nan || r.pos_inf || r.neg_inf) return judge_sum_bits(s, r);
    const long double err = std::fabs((long double)s - r.sum);
    const bool ok = err <= r.sum_bound();
    return {ok, err, ok ? "" : detail::with_bound(r.sum, r.sum_bound())};
  }
}

template <tandem::Element T>
Judgement judge_sum_bits(tandem::sum_result_t<T> s, const ReduceReference<T>& r) {
  const tandem::sum_result_t<T> expect = r.sum_result();
  const bool ok = same_bits(s, expect);
  return {ok, detail::distance(s, expect), ok ? "" : show(expect) + " (bit for bit)"};
}

template <tandem::Element T>
Judgement judge_sumsq(tandem::sum_result_t<T> s, const ReduceReference<T>& r, bool exact) {
  const tandem::sum_result_t<T> expect = r.sumsq_result();
  if (std::is_integral_v<T> || exact || r.nan || r.sumsq_inf) {
    const bool ok = same_bits(s, expect);
    return {ok, detail::distance(s, expect), ok ? "" : show(expect) + " (bit for bit)"};
  }
  const long double err = std::fabs((long double)s - r.sumsq);
  const bool ok = err <= r.sumsq_bound();
  return {ok, err, ok ? "" : detail::with_bound(r.sumsq, r.sumsq_bound())};
}

template <tandem::Element T>
Judgement judge_extreme(T got, T expect) {
  const bool ok = same_bits(got, expect);
  return {ok, std::fabs((long double)got - (long double)expect), ok ? "" : show(expect) + " (bit for bit)"};
}

template <tandem::Element T>
Judgement judge_mean(double m, const ReduceReference<T>& r) {
  if constexpr (std::is_integral_v<T>) {
    const double expect = r.integer_mean();
    const bool ok = same_bits(m, expect);
    return {ok, std::fabs((long double)m - expect), ok ? "" : show(expect)};
  } else {
    if (r.nan || r.pos_inf || r.neg_inf) {
      const double expect = double(r.sum_result()) / double(r.count);
      const bool ok = std::isnan(expect) ? std::isnan(m) : m == expect;
      return {ok, detail::distance(m, expect), ok ? "" : show(expect)};
    }
    const long double expect = r.sum / r.count;
    const long double bound = r.mean_bound();
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
