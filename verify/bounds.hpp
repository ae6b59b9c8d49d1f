// The error bounds every check of tandem's results uses (tests, CLI, benchmarks, fuzzer), in one place.
//
//   sum of floats    |result - sum| <= 8 u sum|x|        u = 2^-24 for float, 2^-53 for double
//                    (every kernel sums in blocks or trees, whose error is far below this for signed data)
//   sum of terms of one sign (sumsq; one element repeated)   |result - s| <= (n + 8) u |s|
//                    (any order; exact data is compared bit for bit)
//   mean of floats   |result - sum/n| <= (the sum's bound + |sum| eps_double) / n   (mean is double(sum) / n)
//   integer sums, min and max: exact (bit for bit)
//   matmul           |C - ref| <= (c_in + 2 K u) sum_k |a_ik b_kj|   per element, u of the element type
//                    c_in: the input rounding of the kernel's KernelInfo::precision:
//                    0 for full, 2^-9 for tf32, 2^-6 for bf16
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>

#include "tandem/types.hpp"

namespace tandem_verify {

// The unit roundoff of T: 2^-24 for float, 2^-53 for double (0 for integers).
template <class T>
constexpr long double unit_roundoff() {
  return (long double)std::numeric_limits<T>::epsilon() / 2;
}

// The bound of a float sum of elements whose |x| sum to abs_sum.
template <class T>
constexpr long double sum_bound(long double abs_sum) {
  return 8 * unit_roundoff<T>() * abs_sum;
}

// The bound of a float sum of n squares (sumsq) whose sum is sq_sum: (n + 8) u sq_sum, the classical
// bound of any summation order. Squares never cancel, so the blocked sums' error grows with the length of
// their serial chains (sum_bound's 8 u holds for signed data, whose errors largely cancel); bit-exact
// data (small integers) is what catches a lost or doubled element.
template <class T>
constexpr long double sumsq_bound(long double sq_sum, std::size_t n) {
  return ((long double)n + 8) * unit_roundoff<T>() * sq_sum;
}

// The bound of a float mean (double(sum) / n) around sum / n, from the bound of its sum (sum_bound, or
// sumsq_bound for terms of one sign); n > 0.
inline long double mean_bound(long double sum_error, long double sum, std::size_t n) {
  return (sum_error + std::fabs(sum) * (long double)std::numeric_limits<double>::epsilon()) / (long double)n;
}

// c_in: the relative rounding of each input of a kernel computing in precision p.
constexpr long double input_rounding(tandem::Precision p) {
  switch (p) {
    case tandem::Precision::tf32:
      return 0x1p-9L;
    case tandem::Precision::bf16:
      return 0x1p-6L;
    case tandem::Precision::full:
      break;
  }
  return 0;
}

// The factor (c_in + 2 K u) of the matmul bound: an element passes when
// |C - ref| <= matmul_bound_factor * sum_k |a_ik b_kj|.
template <class T>
constexpr long double matmul_bound_factor(tandem::Precision p, std::size_t k) {
  return input_rounding(p) + 2 * (long double)k * unit_roundoff<T>();
}

}  // namespace tandem_verify
