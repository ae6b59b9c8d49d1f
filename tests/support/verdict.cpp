#include "tests/support/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <type_traits>

#include "tests/support/bounds.hpp"
#include "tests/support/values.hpp"

namespace tandem_test {

namespace {

std::string with_bound(long double expect, long double bound) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.17Lg +- %.3Lg", expect, bound);
  return buf;
}

long double distance(long double a, long double b) {
  if (std::isnan(a) != std::isnan(b)) return INFINITY;
  if (std::isnan(a) || a == b) return 0;  // equal infinities too
  return std::fabs(a - b);
}

}  // namespace

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
    return {ok, err, ok ? "" : with_bound(r.sum, r.sum_bound())};
  }
}

template <tandem::Element T>
Judgement judge_sum_bits(tandem::sum_result_t<T> s, const ReduceReference<T>& r) {
  const tandem::sum_result_t<T> expect = r.sum_result();
  const bool ok = same_bits(s, expect);
  return {ok, distance(s, expect), ok ? "" : show(expect) + " (bit for bit)"};
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
      return {ok, distance(m, expect), ok ? "" : show(expect)};
    }
    const long double expect = r.sum / r.count;
    const long double bound = r.mean_bound();
    const long double err = std::fabs((long double)m - expect);
    const bool ok = err <= bound;
    return {ok, err, ok ? "" : with_bound(expect, bound)};
  }
}

std::string MatmulVerdict::problem() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%zu of %zu checked elements outside the bound", outside, checked);
  std::string s = buf;
  if (not_finite) {
    std::snprintf(buf, sizeof buf, "; %zu elements of C not finite (never written?)", not_finite);
    s += buf;
  }
  return s;
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

#define TANDEM_TEST_JUDGE(T)                                                                \
  template Judgement judge_sum<T>(tandem::sum_result_t<T>, const ReduceReference<T>&);      \
  template Judgement judge_sum_bits<T>(tandem::sum_result_t<T>, const ReduceReference<T>&); \
  template Judgement judge_extreme<T>(T, T);                                                \
  template Judgement judge_mean<T>(double, const ReduceReference<T>&);
TANDEM_TEST_JUDGE(std::int32_t)
TANDEM_TEST_JUDGE(std::int64_t)
TANDEM_TEST_JUDGE(float)
TANDEM_TEST_JUDGE(double)
#undef TANDEM_TEST_JUDGE

template MatmulVerdict verify_matmul<float>(tandem::MatrixView<const float>, const MatmulReference<float>&,
                                            tandem::Precision);
template MatmulVerdict verify_matmul<double>(tandem::MatrixView<const double>, const MatmulReference<double>&,
                                             tandem::Precision);

}  // namespace tandem_test
