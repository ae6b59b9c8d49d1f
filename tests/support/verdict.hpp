// Verdicts: a result of tandem against its reference (reference.hpp) and bound (bounds.hpp), with the
// error and, when it fails, what was expected in words. Shared by the tests (which CHECK ok), the CLI
// (which prints error and expected) and anything else that checks results.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tandem/types.hpp"
#include "tests/support/reference.hpp"

namespace tandem_test {

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

// argmin() or argmax(): exactly the expected index.
inline Judgement judge_index(std::size_t got, std::size_t expect) {
  if (got == expect) return {};
  return {false, got > expect ? (long double)(got - expect) : (long double)(expect - got),
          "index " + std::to_string(expect)};
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

}  // namespace tandem_test
