// Deterministic mode: results bitwise equal to an independent implementation of the canonical order
// (written here from the description in backends/common/canonical.hpp, not from its code). Every backend is
// compared with the same reference, so the CPU and CUDA results are bitwise equal to each other.
#include <tbb/info.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>

#include "tests/support.hpp"

namespace {

// The documented order: chunks of 4096, lane i % 32 adds element i of the chunk, the lanes meet in a
// halving tree, and chunk values are summed again the same way until one is left.
template <class T>
T reference_canonical_sum(std::vector<T> v) {
  if (v.empty()) return T(0);
  while (v.size() > 1) {
    std::vector<T> next;
    for (std::size_t c = 0; c < v.size(); c += 4096) {
      T lanes[32] = {};
      for (std::size_t i = c; i < std::min(v.size(), c + 4096); ++i) lanes[(i - c) % 32] += v[i];
      for (int s = 16; s >= 1; s /= 2)
        for (int j = 0; j < s; ++j) lanes[j] = lanes[j] + lanes[j + s];
      next.push_back(lanes[0]);
    }
    v.swap(next);
  }
  return v[0];
}

template <class T>
std::vector<T> random_reals(std::size_t n, std::mt19937_64& g) {
  // Wide dynamic range and both signs, so that any other association order changes the bits.
  std::uniform_real_distribution<T> d(T(-1), T(1));
  std::uniform_int_distribution<int> e(-20, 20);
  std::vector<T> v(n);
  for (auto& x : v) x = std::ldexp(d(g), e(g));
  return v;
}

template <class T>
void check_sums(const tandem::Engine& eng) {
  std::mt19937_64 g(31);
  const tandem::ReduceOptions det{"auto", true};
  std::vector<std::size_t> sizes = test::reduce_sizes();
  sizes.push_back(4096 * 4096 + 17);  // three levels of chunks
  for (std::size_t n : sizes) {
    for (std::size_t stride : {1, 3}) {
      if (test::quick() && n > 70000) continue;
      CAPTURE(n);
      CAPTURE(stride);
      auto data = random_reals<T>(n * stride, g);
      std::vector<T> picked(n);
      long double exact = 0, abs_sum = 0;
      for (std::size_t i = 0; i < n; ++i) {
        picked[i] = data[i * stride];
        exact += picked[i];
        abs_sum += std::fabs((long double)picked[i]);
      }
      const T expect = reference_canonical_sum(picked);
      const T got = eng.sum(tandem::StridedView<T>{data.data(), n, stride}, det);
      CHECK_MESSAGE(test::same_bits(got, expect), "got " << test::show(got) << ", canonical " << test::show(expect));
      const long double u = std::numeric_limits<T>::epsilon() / 2;
      CHECK(std::fabs((long double)got - exact) <= 8 * u * abs_sum);
      if (n > 0) {
        CHECK(test::same_bits(eng.mean(tandem::StridedView<T>{data.data(), n, stride}, det), double(expect) / double(n)));
      }
    }
  }
  // Device-resident input gives the same bits.
  auto data = random_reals<T>(100003, g);
  auto buf = eng.upload<T>(data);
  CHECK(test::same_bits(eng.sum(buf, det), reference_canonical_sum(data)));
  // NaN and infinities.
  data[500] = std::numeric_limits<T>::infinity();
  CHECK(eng.sum<T>(data, det) == std::numeric_limits<T>::infinity());
  data[9000] = -std::numeric_limits<T>::infinity();
  CHECK(test::same_bits(eng.sum<T>(data, det), std::numeric_limits<T>::quiet_NaN()));
}

}  // namespace

TANDEM_BACKEND_TEST(deterministic_float_sum, "deterministic: float sums bitwise equal to the canonical order") {
  check_sums<float>(eng);
}
TANDEM_BACKEND_TEST(deterministic_double_sum, "deterministic: double sums bitwise equal to the canonical order") {
  check_sums<double>(eng);
}

TANDEM_BACKEND_TEST(deterministic_other_ops, "deterministic: integer sums, min and max (order-independent)") {
  std::mt19937_64 g(32);
  const tandem::ReduceOptions det{"auto", true};
  for (std::size_t n : {1, 257, 65537, 1000003}) {
    std::vector<std::int32_t> xi(n);
    std::int64_t si = 0;
    for (auto& x : xi) si += x = std::int32_t(g());
    CHECK(eng.sum<std::int32_t>(xi, det) == si);
    auto xf = random_reals<float>(n, g);
    CHECK(eng.min<float>(xf, det) == *std::min_element(xf.begin(), xf.end()));
    CHECK(eng.max<float>(xf, det) == *std::max_element(xf.begin(), xf.end()));
  }
}

TEST_CASE("cpu: deterministic sums are the same bits for every thread count" * doctest::test_suite("cpu")) {
  tandem::Engine eng(tandem::Backend::cpu);
  std::mt19937_64 g(33);
  auto data = random_reals<float>(5'000'011, g);
  const tandem::ReduceOptions det{"auto", true};
  const float expect = reference_canonical_sum(data);
  for (int threads : {1, 2, tbb::info::default_concurrency()}) {
    tbb::task_arena arena(threads);
    float got = 0;
    arena.execute([&] { got = eng.sum<float>(data, det); });
    CAPTURE(threads);
    CHECK(test::same_bits(got, expect));
  }
}

namespace {
template <class T>
void check_deterministic_matmul(const tandem::Engine& eng) {
  std::mt19937_64 g(34);
  struct Shape {
    std::size_t m, k, n;
  };
  std::vector<Shape> shapes = {{1, 1, 1}, {3, 3, 3}, {17, 33, 65}, {129, 1, 257}, {130, 257, 131}};
  if (!test::quick()) shapes.push_back({255, 700, 253});
  const T tiny = std::is_same_v<T, float> ? T(1e-30) : T(1e-200);  // products underflow to -0.0
  for (auto s : shapes) {
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(s.n);
    const std::size_t lda = s.k + 1, ldb = s.n + 2, ldc = s.n + 3;
    auto a = random_reals<T>(s.m * lda, g);
    auto b = random_reals<T>(s.k * ldb, g);
    // Special values: a zero row and column, infinities that meet zeros (NaN), -0.0 entries.
    if (s.m > 2 && s.k > 2 && s.n > 2) {
      for (std::size_t p = 0; p < s.k; ++p) a[1 * lda + p] = T(-0.0);
      a[2 * lda + 1] = std::numeric_limits<T>::infinity();
      b[1 * ldb + 2] = T(0);
    }
    // Products that underflow to -0.0: C(0, 0) is -0.0, which padding or reordering would turn into +0.0.
    for (std::size_t p = 0; p < s.k; ++p) {
      a[0 * lda + p] = tiny;
      b[p * ldb + 0] = -tiny;
    }
    std::vector<T> c(s.m * ldc, T(42)), expect(s.m * ldc, T(42));
    for (std::size_t i = 0; i < s.m; ++i)
      for (std::size_t j = 0; j < s.n; ++j) {
        T acc = T(0);
        for (std::size_t p = 0; p < s.k; ++p) acc = std::fma(a[i * lda + p], b[p * ldb + j], acc);
        expect[i * ldc + j] = std::isnan(acc) ? std::numeric_limits<T>::quiet_NaN() : acc;
      }
    eng.matmul<T>({a.data(), s.m, s.k, lda}, {b.data(), s.k, s.n, ldb}, {c.data(), s.m, s.n, ldc}, {"auto", true});
    std::size_t differ = 0;
    for (std::size_t i = 0; i < c.size(); ++i) differ += !test::same_bits(c[i], expect[i]);
    CHECK_MESSAGE(differ == 0, differ << " elements differ from the fma chain (padding included)");
    CHECK(test::same_bits(c[0], T(-0.0)));
  }
}
}  // namespace

TANDEM_BACKEND_TEST(deterministic_matmul_float, "deterministic: float matmul bitwise equal to one fma chain per element") {
  check_deterministic_matmul<float>(eng);
}
TANDEM_BACKEND_TEST(deterministic_matmul_double, "deterministic: double matmul bitwise equal to one fma chain per element") {
  check_deterministic_matmul<double>(eng);
}

TANDEM_BACKEND_TEST(deterministic_matmul_k0, "deterministic: K = 0 writes +0.0 (found by fuzz/fuzz_api)") {
  std::vector<double> a(1), b(1), c(12, 5.0);
  eng.matmul<double>({a.data(), 3, 0, 0}, {b.data(), 0, 4, 4}, {c.data(), 3, 4, 4}, {"auto", true});
  for (double v : c) CHECK(test::same_bits(v, 0.0));
}

TANDEM_BACKEND_TEST(deterministic_needs_auto, "deterministic: a named kernel is refused") {
  std::vector<float> x(10, 1.0f);
  const auto k = eng.reduce_kernels()[1];
  CHECK_THROWS_AS(eng.sum<float>(x, {k, true}), tandem::Error);
  std::vector<float> a(4, 1), b(4, 1), c(4);
  CHECK_THROWS_AS(eng.matmul<float>({a.data(), 2, 2, 2}, {b.data(), 2, 2, 2}, {c.data(), 2, 2, 2},
                                    {eng.matmul_kernels()[1], true}),
                  tandem::Error);
}
