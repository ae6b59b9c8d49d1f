#include "tests/support/reference.hpp"

#include <algorithm>
#include <thread>

#include "tests/support/rng.hpp"

namespace tandem_test {

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

namespace {

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

}  // namespace

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
    parallel_rows(m, [&](std::size_t begin, std::size_t end) {
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

#define TANDEM_TEST_REDUCE(T) template ReduceReference<T> reduce_reference<T>(const T*, std::size_t, std::size_t);
TANDEM_TEST_REDUCE(std::int32_t)
TANDEM_TEST_REDUCE(std::int64_t)
TANDEM_TEST_REDUCE(float)
TANDEM_TEST_REDUCE(double)
#undef TANDEM_TEST_REDUCE

#define TANDEM_TEST_FLOAT(T)                                                                                \
  template T canonical_sum<T>(std::span<const T>);                                                          \
  template MatmulReference<T> matmul_reference<T>(tandem::MatrixView<const T>, tandem::MatrixView<const T>, \
                                                  const MatmulSampling&);                                   \
  template void fma_chain_matmul<T>(tandem::MatrixView<const T>, tandem::MatrixView<const T>, tandem::MatrixView<T>);
TANDEM_TEST_FLOAT(float)
TANDEM_TEST_FLOAT(double)
#undef TANDEM_TEST_FLOAT

}  // namespace tandem_test
