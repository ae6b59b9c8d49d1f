// Independent references: what every reduction and matrix product of tandem must return, computed by
// plain serial loops in wider types. They are written from the documented rules (include/tandem/
// engine.hpp, common/canonical.hpp's description), never from the backends' code
// (common/reduce_ops.hpp and friends), so that a shared mistake cannot hide.
//
// Reductions  ReduceReference<T>, fed one element at a time (add) or by reduce_reference():
//               integer sums  a uint64 loop, wrapping modulo 2^64 as the library's int64 sums do
//               float sums    a long double loop over the finite elements, with sum |x| for the bound
//                             (bounds.hpp); NaN, +inf and -inf are tracked apart: any NaN or both
//                             infinities make the sum NaN, one infinity makes it that infinity
//               min / max     NaN if any element is NaN, else the least / greatest element in the
//                             order where -0.0 comes before +0.0
//             canonical_sum(): deterministic mode's documented association order, bit for bit.
// Matmul      matmul_reference(): every element of C (or a sample, for large products), accumulated
//             in double for float inputs and long double for double inputs, with sum_k |a_ik b_kj|.
//             fma_chain_matmul(): one fma chain per element: deterministic mode's bits for K <= 4096 (longer K
//             is chunked: common/canonical.hpp, canonical::matmul_element).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <thread>
#include <type_traits>
#include <vector>

#include "tandem/types.hpp"
#include "verify/bounds.hpp"
#include "verify/rng.hpp"

namespace tandem_verify {

// ---- Reductions -------------------------------------------------------------------------------------

template <tandem::Element T>
struct ReduceReference {
  std::size_t count = 0;
  std::uint64_t wrapped_sum = 0;  // integers: the sum modulo 2^64
  __int128 exact_sum = 0;         // integers: the sum itself (GCC's 128-bit integer; any count below 2^63)
  long double sum = -0.0L;        // the sum of the finite elements (integers: exact below 2^64); starts
                                  // at -0.0, so that a sum of only -0.0 stays -0.0 (IEEE 754)
  long double abs_sum = 0;        // the sum of |x| over the finite elements
  bool nan = false, pos_inf = false, neg_inf = false;
  // sumsq: the squares as the op defines them, each rounded to T (integers: wrapping 64-bit products),
  // summed exactly (integers modulo 2^64) or in long double; an infinite square (an infinity, or a
  // square past T's range) makes the sum +inf.
  std::uint64_t wrapped_sumsq = 0;
  long double sumsq = 0;
  bool sumsq_inf = false;
  std::size_t nan_count = 0;
  T lo{}, hi{};  // the least and greatest non-NaN element (-0.0 before +0.0); set once count > nan_count
  // Their first positions, and the first NaN's (what argmin / argmax must return, NumPy's rule).
  std::size_t lo_index = 0, hi_index = 0, nan_index = 0;

  void add(T v) {
    const std::size_t i = count;
    ++count;
    if constexpr (std::is_integral_v<T>) {
      wrapped_sum += std::uint64_t(std::int64_t(v));
      exact_sum += __int128(v);
      wrapped_sumsq += std::uint64_t(std::int64_t(v)) * std::uint64_t(std::int64_t(v));
      sum += v;
      abs_sum += std::fabs((long double)v);
    } else {
      if (std::isnan(v)) {
        if (!nan) nan_index = i;
        nan = true;
        ++nan_count;
        return;
      }
      if (std::isinf(v))
        (v > 0 ? pos_inf : neg_inf) = true;
      else
        sum += v, abs_sum += std::fabs((long double)v);
      const T square = v * v;  // rounded to T, as sumsq defines it
      if (std::isinf(square))
        sumsq_inf = true;
      else
        sumsq += square;
    }
    const bool first = count - nan_count == 1;
    if (first || below(v, lo)) lo = v, lo_index = i;
    if (first || below(hi, v)) hi = v, hi_index = i;
  }
  // The order of min and max: v < w, or -0.0 against +0.0.
  static bool below(T v, T w) { return v < w || (v == w && std::signbit(v) && !std::signbit(w)); }

  // The reference of both parts together (for references built in parallel pieces).
  void merge(const ReduceReference& o) {
    if (o.count == o.nan_count) {
      if (!nan && o.nan) nan_index = count + o.nan_index;
      count += o.count, nan_count += o.nan_count, nan |= o.nan;
      return;
    }
    const bool empty = count == nan_count;
    const std::size_t offset = count;  // o's elements follow this one's
    count += o.count, nan_count += o.nan_count;
    wrapped_sum += o.wrapped_sum, exact_sum += o.exact_sum, sum += o.sum, abs_sum += o.abs_sum;
    wrapped_sumsq += o.wrapped_sumsq, sumsq += o.sumsq, sumsq_inf |= o.sumsq_inf;
    if (!nan && o.nan) nan_index = offset + o.nan_index;
    nan |= o.nan, pos_inf |= o.pos_inf, neg_inf |= o.neg_inf;
    if (empty || below(o.lo, lo)) lo = o.lo, lo_index = offset + o.lo_index;
    if (empty || below(hi, o.hi)) hi = o.hi, hi_index = offset + o.hi_index;
  }

  // What sum() must return: integers exactly (wrapped); floats: NaN (canonical), an infinity, or the
  // long double sum rounded to T (equal to the result for data whose sums are exact, e.g.
  // Values::small_integers; otherwise compare within sum_bound(), bounds.hpp).
  tandem::sum_result_t<T> sum_result() const {
    if constexpr (std::is_integral_v<T>) {
      return std::int64_t(wrapped_sum);
    } else {
      if (nan || (pos_inf && neg_inf)) return std::numeric_limits<T>::quiet_NaN();
      if (pos_inf) return std::numeric_limits<T>::infinity();
      if (neg_inf) return -std::numeric_limits<T>::infinity();
      return count == 0 ? T(0) : T(sum);  // the empty sum is +0.0
    }
  }
  // What sumsq() must return: integers exactly (wrapped); floats NaN (canonical), +inf, or the long
  // double sum of the squares rounded to T (compare within sumsq_bound()).
  tandem::sum_result_t<T> sumsq_result() const {
    if constexpr (std::is_integral_v<T>) {
      return std::int64_t(wrapped_sumsq);
    } else {
      if (nan) return std::numeric_limits<T>::quiet_NaN();
      if (sumsq_inf) return std::numeric_limits<T>::infinity();
      return T(sumsq);  // (+0.0 when empty or all zeros: squares are never -0.0)
    }
  }
  // |sumsq() - sumsq| may be at most this for floats (bounds.hpp; integers: 0).
  long double sumsq_bound() const { return std::is_integral_v<T> ? 0 : tandem_verify::sumsq_bound<T>(sumsq, count); }

  // What min() and max() must return (count > 0), bit for bit.
  T min() const { return nan ? std::numeric_limits<T>::quiet_NaN() : lo; }
  T max() const { return nan ? std::numeric_limits<T>::quiet_NaN() : hi; }
  // What argmin() and argmax() must return (count > 0).
  std::size_t argmin() const { return nan ? nan_index : lo_index; }
  std::size_t argmax() const { return nan ? nan_index : hi_index; }
  // The mean of integers as mean() computes it: the exact sum rounded to double once, divided by n (count
  // > 0). (GCC converts __int128 to the nearest double.)
  double integer_mean() const requires std::is_integral_v<T> { return double(exact_sum) / double(count); }
  // |sum() - sum| may be at most this for floats (integers: 0, sums are exact): 8 u sum|x|.
  long double sum_bound() const { return std::is_integral_v<T> ? 0 : tandem_verify::sum_bound<T>(abs_sum); }
  // |mean() - sum / count| may be at most this for floats (count > 0).
  long double mean_bound() const { return tandem_verify::mean_bound<T>(sum, abs_sum, count); }
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

// ---- Definitions -------------------------------------------------------------------------------------
template <tandem::Element T>
ReduceReference<T> reduce_reference(const T* x, std::size_t n, std::size_t stride) {
  ReduceReference<T> r;
  for (std::size_t i = 0; i < n; ++i) r.add(x[i * stride]);
  return r;
}

template <class T>
requires std::is_floating_point_v<T> T canonical_sum(std::span<const T> x) {
  if (x.empty()) return T(0);
  std::vector<T> v(x.begin(), x.end());
  while (v.size() > 1) {
    std::vector<T> next;
    for (std::size_t c = 0; c < v.size(); c += 4096) {
      T lanes[32];
      std::fill_n(lanes, 32, T(-0.0));  // lanes start at -0.0 (canonical.hpp)
      for (std::size_t i = c; i < std::min(v.size(), c + 4096); ++i) lanes[(i - c) % 32] += v[i];
      for (int s = 16; s >= 1; s /= 2)
        for (int j = 0; j < s; ++j) lanes[j] = lanes[j] + lanes[j + s];
      next.push_back(lanes[0]);
    }
    v.swap(next);
  }
  return std::isnan(v[0]) ? std::numeric_limits<T>::quiet_NaN() : v[0];
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

}  // namespace detail

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
    std::vector<T> bt;
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
