// Deterministic products in the tensor-core arithmetic (common/tensor_core.hpp, docs/API.md) on every backend:
// hand-worked vectors that tell it from IEEE arithmetic, and batch invariance against test::tensor_core_chain
// (the test-support library's own implementation of the documented rules). The model itself is checked against
// the hardware by tests/tc_model.
#include <cmath>
#include <span>
#include <vector>

#include "tests/support.hpp"

// The tensor-core arithmetic (docs/API.md) on vectors whose results tell it from IEEE arithmetic, each value
// worked out by hand from the rules: C(0, 0) of a 1 x 16 x 1 product, one k-step.
TANDEM_BACKEND_TEST(deterministic_tensor_core_vectors,
                    "deterministic: 16-bit products follow the tensor-core rules (truncation, 25 bits, rounding)") {
  using tandem::bfloat16;
  struct Vector16 {
    const char* what;
    std::vector<float> a, b;
    float want;
  };
  const float t13 = std::ldexp(1.0f, -13), t26 = std::ldexp(1.0f, -26);
  std::vector<float> fifteen_a(16, t13), fifteen_b(16, t13);
  fifteen_a[0] = fifteen_b[0] = 1.0f;
  const std::vector<Vector16> cases = {
      // 1 + 1.5 * 2^-24 is 0.75 of float's ulp above 1: rounded toward zero, 1 (an fma chain rounds to 1 + 2^-23).
      {"sum rounded toward zero", {1.0f, 1.5f * std::ldexp(1.0f, -12)}, {1.0f, std::ldexp(1.0f, -12)}, 1.0f},
      // 15 products of 2^-26 lie below 2^(0 - 25), the cut of the largest term 1: each is dropped (exact: 1 +
      // 15 * 2^-26, which rounds toward zero to 1 + 2^-23).
      {"terms cut at 2^(E - 25)", fifteen_a, fifteen_b, 1.0f},
      // 3 * 2^-25 is kept whole (a multiple of 2^-25); 1 + 3 * 2^-25 rounds toward zero to 1.
      {"terms kept to 2^(E - 25)", {1.0f, 3.0f * std::ldexp(1.0f, -13)}, {1.0f, std::ldexp(1.0f, -12)}, 1.0f},
      // -2^-26 is cut toward zero to 0 (toward -inf it would be -2^-25, and 1 - 2^-25 rounds to 1 - 2^-24).
      {"negative terms cut toward zero", {1.0f, -t13}, {1.0f, t13}, 1.0f},
      // 2 * (1 + 2^-7)^2 = 2 + 2^-5 + 2^-13, exact in 25 bits and in float.
      {"exact products", {1.0f + 0x1p-7f, 1.0f + 0x1p-7f}, {1.0f + 0x1p-7f, 1.0f + 0x1p-7f}, 2.0f + 0x1p-5f + 0x1p-13f},
      // 2^-100 * 2^-100 is exact (no float underflow) but rounds toward zero to +0.0.
      {"tiny products sum to +0.0", {std::ldexp(1.0f, -100)}, {-std::ldexp(1.0f, -100)}, 0.0f},
  };
  (void)t26;
  for (const Vector16& v : cases) {
    CAPTURE(v.what);
    std::vector<bfloat16> a(16, bfloat16(0.0f)), b(16, bfloat16(0.0f));
    for (std::size_t k = 0; k < v.a.size(); ++k) a[k] = bfloat16(v.a[k]), b[k] = bfloat16(v.b[k]);
    for (std::size_t k = 0; k < v.a.size(); ++k) REQUIRE(float(a[k]) == v.a[k]);  // exact in bfloat16
    std::vector<float> c(1, 7.0f);
    eng.matmul<bfloat16>({a.data(), 1, 16, 16}, {b.data(), 16, 1, 1}, {c.data(), 1, 1, 1}, {"auto", true});
    CHECK_MESSAGE(test::same_bits(c[0], v.want), test::show(c[0]) << ", expected " << test::show(v.want));
  }
}

// Deterministic products are batch-invariant: row i of C has the same bits whether A has 1, 7 or 4096 rows.
TANDEM_BACKEND_TEST(deterministic_batch_invariant,
                    "deterministic: row i of C is the same in products of 1, 7 and 4096 rows") {
  test::SplitMix64 g{77};
  test::for_each_type<tandem::type_list<float, tandem::bfloat16, tandem::half>>([&]<class T>() {
    CAPTURE(std::string(tandem::to_string(tandem::dtype_of<T>)));
    const std::size_t k = 300, n = 40;
    const auto a = test::random_vector<T>(4096 * k, g, test::Values::uniform);
    const auto b = test::random_vector<T>(k * n, g, test::Values::uniform);
    std::vector<float> full(4096 * n), seven(7 * n), one(n);
    tandem::MatmulOptions o{"auto", true};
    if constexpr (std::is_same_v<T, float>) o.precision = tandem::Precision::tf32;  // the tf32 chain
    eng.matmul<T>({a.data(), 4096, k, k}, {b.data(), k, n, n}, {full.data(), 4096, n, n}, o);
    eng.matmul<T>({a.data(), 7, k, k}, {b.data(), k, n, n}, {seven.data(), 7, n, n}, o);
    eng.matmul<T>({a.data() + 5 * k, 1, k, k}, {b.data(), k, n, n}, {one.data(), 1, n, n}, o);
    CHECK(test::same_bits(std::span<const float>(seven), std::span<const float>(full.data(), 7 * n)));
    CHECK(test::same_bits(std::span<const float>(one), std::span<const float>(full.data() + 5 * n, n)));
    // and against the reference (row 5)
    const int emin = std::is_same_v<T, tandem::half> ? -14 : -126;
    const int steps = std::is_same_v<T, float> ? 8 : 16;
    std::size_t differ = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const float want = test::tensor_core_chain(
          k, steps, emin,
          [&](std::size_t p) {
            const float x = float(a[5 * k + p]);
            return std::is_same_v<T, float> ? test::tf32_rounded(x) : double(x);
          },
          [&](std::size_t p) {
            const float x = float(b[p * n + j]);
            return std::is_same_v<T, float> ? test::tf32_rounded(x) : double(x);
          });
      differ += !test::same_bits(one[j], want);
    }
    CHECK_MESSAGE(differ == 0, differ << " elements of row 5 differ from the tensor-core chain");
  });
}

// K > 4096 on the GPU: a C of many tiles sums each tile's chunks in the kernel, a C of few tiles computes its
// chunks side by side and combines them apart. Both give the tensor-core chain's bits: row i of a 2048-row product
// (3 chunks) equals that row computed alone, and sampled elements equal test::tensor_core_chain. (The CPU: the
// same rows of smaller products.)
TANDEM_BACKEND_TEST_UNLESS(deterministic_tensor_core_long_k,
                           "deterministic: 16-bit products with K > 4096, large and small C", test::quick()) {
  const bool cpu = eng.backend() == tandem::Backend::cpu;
  const std::size_t m = cpu ? 16 : 2048, n = cpu ? 24 : 2304, k = 2 * 4096 + 33;
  test::SplitMix64 g{91};
  test::for_each_type<tandem::type_list<tandem::bfloat16, tandem::half>>([&]<class T>() {
    CAPTURE(std::string(tandem::to_string(tandem::dtype_of<T>)));
    const auto a = test::random_vector<T>(m * k, g, test::Values::uniform);
    const auto b = test::random_vector<T>(k * n, g, test::Values::uniform);
    const auto da = eng.upload<T>(a), db = eng.upload<T>(b);
    tandem::MatmulOptions o{"auto", true};
    o.beta = 0.5;
    std::vector<float> c0(m * n);
    for (std::size_t x = 0; x < c0.size(); ++x) c0[x] = float(int(x % 7) - 3);
    const auto dc = eng.upload<float>(c0);
    eng.matmul(da.matrix(m, k), db.matrix(k, n), dc.matrix(m, n), o);
    const std::vector<float> c = dc.to_vector();
    std::vector<float> row(n);
    for (std::size_t j = 0; j < n; ++j) row[j] = c0[3 * n + j];
    eng.matmul<T>({a.data() + 3 * k, 1, k, k}, {b.data(), k, n, n}, {row.data(), 1, n, n}, o);
    CHECK(test::same_bits(std::span<const float>(row), std::span<const float>(c.data() + 3 * n, n)));
    const int emin = std::is_same_v<T, tandem::half> ? -14 : -126;
    std::size_t differ = 0;
    for (std::size_t s = 0; s < 64; ++s) {
      const std::size_t i = g.below(m), j = g.below(n);
      const float acc = test::tensor_core_chain(
          k, 16, emin, [&](std::size_t p) { return double(float(a[i * k + p])); },
          [&](std::size_t p) { return double(float(b[p * n + j])); });
      const float want = std::fma(0.5f, c0[i * n + j], acc);
      differ += !test::same_bits(c[i * n + j], want);
    }
    CHECK_MESSAGE(differ == 0, differ << " of 64 sampled elements differ from the tensor-core chain");
  });
}
