// Deterministic mode: results bitwise equal to an independent implementation of the canonical order
// (the test-support library's canonical_sum and fma_chain_matmul, written from the description in
// common/canonical.hpp, not from its code). Every backend is compared with the same reference,
// so the CPU and CUDA results are bitwise equal to each other.
#include <tbb/info.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>

#include "tests/support.hpp"

namespace {

// Wide dynamic range and both signs, so that any other association order changes the bits.
template <class T>
std::vector<T> random_reals(std::size_t n, test::SplitMix64& g) {
  return test::random_vector<T>(n, g, test::Values::wide_range);
}

template <class T>
void check_sums(const tandem::Engine& eng) {
  test::SplitMix64 g{31};
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
      for (std::size_t i = 0; i < n; ++i) picked[i] = data[i * stride];
      const T expect = test::canonical_sum<T>(picked);
      const T got = eng.sum(tandem::StridedView<T>{data.data(), n, stride}, det);
      CHECK_MESSAGE(test::same_bits(got, expect), "got " << test::show(got) << ", canonical " << test::show(expect));
      const test::Judgement j = test::judge_sum<T>(got, test::reduce_reference<T>(picked));
      CHECK_MESSAGE(j.ok, "got " << test::show(got) << ", expected " << j.expected);
      if (n > 0) {
        CHECK(
            test::same_bits(eng.mean(tandem::StridedView<T>{data.data(), n, stride}, det), double(expect) / double(n)));
      }
    }
  }
  // Device-resident input gives the same bits.
  auto data = random_reals<T>(100003, g);
  auto buf = eng.upload<T>(data);
  CHECK(test::same_bits(eng.sum(buf, det), test::canonical_sum<T>(data)));
  // NaN and infinities.
  data[500] = std::numeric_limits<T>::infinity();
  CHECK(eng.sum<T>(data, det) == std::numeric_limits<T>::infinity());
  data[9000] = -std::numeric_limits<T>::infinity();
  CHECK(test::same_bits(eng.sum<T>(data, det), std::numeric_limits<T>::quiet_NaN()));
}

}  // namespace

TANDEM_BACKEND_TEST(deterministic_sums, "deterministic: float and double sums bitwise equal to the canonical order") {
  test::for_each_type([&]<class T>() {  // (16-bit inputs: test_float16.cpp and the conformance matrix)
    if constexpr (std::is_floating_point_v<T>) check_sums<T>(eng);
  });
}

TANDEM_BACKEND_TEST(deterministic_other_ops, "deterministic: integer sums, min and max (order-independent)") {
  test::SplitMix64 g{32};
  const tandem::ReduceOptions det{"auto", true};
  for (std::size_t n : {1, 257, 65537, 1000003}) {
    std::vector<std::int32_t> xi(n);
    std::int64_t si = 0;
    for (auto& x : xi) si += x = std::int32_t(g.next());
    CHECK(eng.sum<std::int32_t>(xi, det) == si);
    auto xf = random_reals<float>(n, g);
    xf[n / 2] = -0.0f;
    const auto ref = test::reduce_reference<float>(xf);
    CHECK(test::same_bits(eng.min<float>(xf, det), ref.min()));
    CHECK(test::same_bits(eng.max<float>(xf, det), ref.max()));
  }
}

TEST_CASE("cpu: deterministic sums are the same bits for every thread count" * doctest::test_suite("cpu")) {
  tandem::Engine eng(tandem::Backend::cpu);
  test::SplitMix64 g{33};
  auto data = random_reals<float>(5'000'011, g);
  const tandem::ReduceOptions det{"auto", true};
  const float expect = test::canonical_sum<float>(data);
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
  test::SplitMix64 g{34};
  struct Shape {
    std::size_t m, k, n;
    bool tight = false;  // ld = cols: rows 16-byte aligned (the GPU kernels' vector path)
  };
  // (1537 x 1543 and 1536 x 1536: enough tiles for register_tiled's largest block tile on a GPU of up to
  // 169 and 144 SMs, unaligned and aligned; the smaller shapes run its smaller tiles)
  std::vector<Shape> shapes = {{1, 1, 1},       {3, 3, 3},        {17, 33, 65},           {129, 1, 257},
                               {130, 257, 131}, {1537, 15, 1543}, {1536, 16, 1536, true}, {64, 32, 64, true}};
  if (!test::quick()) shapes.push_back({255, 700, 253});
  const T tiny = std::is_same_v<T, float> ? T(1e-30) : T(1e-200);  // products underflow to -0.0
  for (auto s : shapes) {
    CAPTURE(s.m);
    CAPTURE(s.k);
    CAPTURE(s.n);
    const std::size_t lda = s.tight ? s.k : s.k + 1, ldb = s.tight ? s.n : s.n + 2, ldc = s.tight ? s.n : s.n + 3;
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
    test::fma_chain_matmul<T>({a.data(), s.m, s.k, lda}, {b.data(), s.k, s.n, ldb}, {expect.data(), s.m, s.n, ldc});
    eng.matmul<T>({a.data(), s.m, s.k, lda}, {b.data(), s.k, s.n, ldb}, {c.data(), s.m, s.n, ldc}, {"auto", true});
    std::size_t differ = 0;
    for (std::size_t i = 0; i < c.size(); ++i) differ += !test::same_bits(c[i], expect[i]);
    CHECK_MESSAGE(differ == 0, differ << " elements differ from the fma chain (padding included)");
    CHECK(test::same_bits(c[0], T(-0.0)));
  }
}
}  // namespace

TANDEM_BACKEND_TEST(deterministic_matmul, "deterministic: float and double matmul bitwise equal to the fma chain") {
  test::for_each_type<tandem::matmul_element_types>([&]<class T>() {
    if constexpr (!tandem::is_storage_type_v<T>) check_deterministic_matmul<T>(eng);
  });
}
TANDEM_BACKEND_TEST(deterministic_matmul_k0, "deterministic: K = 0 writes +0.0 (found by fuzz/fuzz_api)") {
  std::vector<double> a(1), b(1), c(12, 5.0);
  eng.matmul<double>({a.data(), 3, 0, 0}, {b.data(), 0, 4, 4}, {c.data(), 3, 4, 4}, {"auto", true});
  for (double v : c) CHECK(test::same_bits(v, 0.0));
}

TANDEM_BACKEND_TEST(deterministic_kernels, "deterministic: kernels whose KernelInfo is not deterministic are refused") {
  std::vector<float> x(10, 1.0f);
  std::vector<float> a(4, 1), b(4, 1), c(4);
  std::size_t refused = 0;
  for (const tandem::KernelInfo& info : eng.reduce_kernel_info()) {
    CAPTURE(info.name);
    if (info.deterministic) {
      CHECK(eng.sum<float>(x, {info.name, true}) == 10.0f);
    } else {
      CHECK_THROWS_AS(eng.sum<float>(x, {info.name, true}), tandem::Error);
      ++refused;
    }
  }
  for (const tandem::KernelInfo& info : eng.matmul_kernel_info()) {
    CAPTURE(info.name);
    const auto run = [&] {
      eng.matmul<float>({a.data(), 2, 2, 2}, {b.data(), 2, 2, 2}, {c.data(), 2, 2, 2}, {info.name, true});
    };
    if (!info.deterministic) {
      CHECK_THROWS_AS(run(), tandem::Error);
      ++refused;
    } else if (info.requirement.empty()) {
      run();
      CHECK(c == std::vector<float>{2, 2, 2, 2});
    }
  }
  CHECK(refused > 0);  // both backends have stages that are not canonical
}

// ---- KernelInfo::determinism: the level of each kernel's default mode ------------------------------

namespace {

// Calls f `times` more times after a first call and checks every result has the first one's bits.
template <class F>
void same_bits_every_call(F&& f, int times = 6) {
  const auto first = f();
  using T = typename decltype(first)::value_type;
  for (int i = 0; i < times; ++i) {
    const auto again = f();
    CHECK(test::same_bits(std::span<const T>(again), std::span<const T>(first)));
  }
}

template <class T>
std::vector<T> as_vector(T v) {
  return {v};
}
template <class T>
std::vector<T> as_vector(std::vector<T> v) {
  return v;
}

}  // namespace

TANDEM_BACKEND_TEST(determinism_levels,
                    "KernelInfo::determinism: run_to_run kernels repeat their bits, every_backend ones are canonical") {
  test::SplitMix64 g{20261124};
  // Wide dynamic range and both signs: another order of the additions changes the bits.
  const std::size_t n = test::quick() ? (1 << 18) + 17 : (1 << 21) + 17;
  const std::vector<float> x = random_reals<float>(n, g);
  const auto buffer = eng.upload<float>(x);
  for (const tandem::KernelInfo& k : eng.reduce_kernel_info()) {
    CAPTURE(k.name);
    if (!k.accepts(tandem::Dtype::f32) || k.determinism == tandem::Determinism::not_guaranteed) continue;
    test::for_each_op([&]<tandem::Op O>() {
      if (!k.accepts(O)) return;
      CAPTURE(tandem::to_string(O));
      same_bits_every_call([&] { return as_vector(eng.reduce<O>(x, {k.name})); });
      same_bits_every_call([&] { return as_vector(eng.reduce<O>(buffer, {k.name})); });
    });
    if (k.determinism == tandem::Determinism::every_backend)
      CHECK(test::same_bits(eng.sum(x, {k.name}), test::canonical_sum(std::span<const float>(x))));
  }
  // Per row and per column ("auto"), and the product of a tall-skinny matrix with a small one (a data
  // scientist's X B: 200000 x 32 by 32 x 16), as each matmul kernel computes them.
  const std::size_t rows = test::quick() ? 20000 : 200000, cols = 32;
  const std::vector<float> m = random_reals<float>(rows * cols, g), b = random_reals<float>(cols * 16, g);
  const tandem::KernelInfo autok = eng.reduce_kernel_info().front();
  if (autok.determinism != tandem::Determinism::not_guaranteed)
    for (tandem::Per per : {tandem::Per::row, tandem::Per::col}) {
      CAPTURE(tandem::to_string(per));
      same_bits_every_call([&] {
        std::vector<float> out(per == tandem::Per::row ? rows : cols);
        eng.sum<const float>({m.data(), rows, cols, cols}, per, out);
        return out;
      });
    }
  for (const tandem::KernelInfo& k : eng.matmul_kernel_info()) {
    CAPTURE(k.name);
    if (!k.accepts(tandem::Dtype::f32) || k.determinism == tandem::Determinism::not_guaranteed) continue;
    const auto product = [&] {
      std::vector<float> c(rows * 16);
      eng.matmul<float>({m.data(), rows, cols, cols}, {b.data(), cols, 16, 16}, {c.data(), rows, 16, 16}, {k.name});
      return c;
    };
    if (!k.requirement.empty()) {  // (a kernel this machine cannot run says so)
      try {
        product();
      } catch (const tandem::Error& e) {
        CHECK(test::contains(e.what(), k.requirement));
        continue;
      }
    }
    same_bits_every_call(product, 3);
    if (k.determinism == tandem::Determinism::every_backend) {
      std::vector<float> want(rows * 16);
      test::fma_chain_matmul<float>({m.data(), rows, cols, cols}, {b.data(), cols, 16, 16},
                                    {want.data(), rows, 16, 16});
      CHECK(test::same_bits(std::span<const float>(product()), std::span<const float>(want)));
    }
  }
}

TEST_CASE("KernelInfo::determinism: auto states the weakest level of the kernels it may pick" *
          doctest::test_suite("common")) {
  for (const tandem::BackendStatus& s : tandem::backend_status()) {
    if (!s.usable) continue;
    const tandem::Engine eng(s.backend);
    for (const auto& table : {eng.reduce_kernel_info(), eng.matmul_kernel_info()}) {
      tandem::Determinism weakest = tandem::Determinism::every_backend;
      for (const tandem::KernelInfo& k : table)
        if (k.auto_pick) weakest = std::min(weakest, k.determinism);
      CHECK(table.front().name == "auto");
      CHECK(table.front().determinism == weakest);
      CHECK(table.front().determinism != tandem::Determinism::not_guaranteed);  // the default is reproducible
    }
  }
}
