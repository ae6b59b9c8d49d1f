// Deterministic mode: results bitwise equal to an independent implementation of the canonical order
// (the test-support library's canonical_sum and fma_chain_matmul, written from the description in
// common/canonical.hpp, not from its code). Every backend is compared with the same reference,
// so the CPU and CUDA results are bitwise equal to each other.
#include <tbb/info.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>

#include "common/canonical.hpp"
#include "tests/support.hpp"

namespace {

// Wide dynamic range and both signs, so that any other association order changes the bits.
template <class T>
test::Vector<T> random_reals(std::size_t n, test::SplitMix64& g) {
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
      test::Vector<T> picked(n);
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
  // (Float on a GPU of 132 SMs, an H100 SXM or H200, register_tiled's with_float_tile: 1537 x 1543 and 1536 x 1536
  // run its 64 x 128 tiles, unaligned and aligned; 2047 x 2046 and 2048 x 2048 its 128 x 256 tiles; 2310 x 1544
  // and 2312 x 1544 its 128 x 128 tiles of 128 threads; 1000 x 1000 its 128 x 64 tiles; the smaller shapes its
  // 64 x 64 tiles. Other GPUs run some of these on other tiles.)
  std::vector<Shape> shapes = {{1, 1, 1},
                               {3, 3, 3},
                               {17, 33, 65},
                               {129, 1, 257},
                               {130, 257, 131},
                               {1537, 15, 1543},
                               {1536, 16, 1536, true},
                               {64, 32, 64, true},
                               {2047, 15, 2046},
                               {2048, 16, 2048, true},
                               {2310, 17, 1544},
                               {2312, 16, 1544, true},
                               {1000, 15, 1000}};
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
    test::Vector<T> c(s.m * ldc, T(42)), expect(s.m * ldc, T(42));
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
// ---- Products with K > 4096: chunks of K, combined by the canonical sum (common/canonical.hpp) ----------------

namespace {

// The definition written out apart from the backends and from common/: each chunk of 4096 consecutive k is one
// fma chain from +0.0, and the chunk values are summed in the canonical order by the test-support canonical_sum
// (one chunk: its value itself; NaN canonical).
// 16-bit inputs (T): the tensor-core chain (test::tensor_core_chain) instead of the fma chain.
template <class C, class T = C, class OpA, class OpB>
C chunked_reference(std::size_t K, OpA&& opa, OpB&& opb) {
  if constexpr (tandem::is_storage_type_v<T>) {
    const int emin = std::is_same_v<T, tandem::half> ? -14 : -126;
    return test::tensor_core_chain(
        K, 16, emin, [&](std::size_t p) { return double(opa(p)); }, [&](std::size_t p) { return double(opb(p)); });
  }
  test::Vector<C> values;
  for (std::size_t k0 = 0; k0 < K; k0 += 4096) {
    C v = C(0);
    for (std::size_t k = k0; k < std::min(K, k0 + 4096); ++k) v = std::fma(opa(k), opb(k), v);
    values.push_back(v);
  }
  return test::canonical_sum<C>(values);
}

struct ChunkForm {
  std::size_t m, k, n;
  bool ta, tb;
  double alpha, beta;
  std::size_t batch;  // entries; B shared (stride 0) when shared_b
  bool shared_b;
  bool aligned = false;  // leading dimensions and entry strides multiples of 16 bytes (else odd)
};

// C = alpha op(A) op(B) + beta C in deterministic mode against chunked_reference and the epilogue, bit for bit,
// padding and gaps included; and common/'s reference (canonical::matmul_element) against the same values.
template <class T>
void check_chunked_form(const tandem::Engine& eng, const ChunkForm& f, test::SplitMix64& g) {
  using C = tandem::compute_t<T>;
  CAPTURE(f.m);
  CAPTURE(f.k);
  CAPTURE(f.n);
  CAPTURE(f.ta);
  CAPTURE(f.tb);
  CAPTURE(f.alpha);
  CAPTURE(f.beta);
  CAPTURE(f.batch);
  const std::size_t ar = f.ta ? f.k : f.m, ac = f.ta ? f.m : f.k, br = f.tb ? f.n : f.k, bc = f.tb ? f.k : f.n;
  const auto up = [&](std::size_t x, std::size_t odd) { return f.aligned ? (x + 7) / 8 * 8 : x + odd; };
  const std::size_t lda = up(ac, 1), ldb = up(bc, 2), ldc = up(f.n, 3);
  const std::size_t sa = up(ar * lda, 5), sb = f.shared_b ? 0 : up(br * ldb, 7), sc = up(f.m * ldc, 2);
  // Half's range ends at 65504: uniform values; the others a wide range, where another order changes the bits.
  const auto kind = std::is_same_v<T, tandem::half> ? test::Values::uniform : test::Values::wide_range;
  auto a = test::random_vector<T>(sa * f.batch, g, kind);
  auto b = test::random_vector<T>(f.shared_b ? br * ldb : sb * f.batch, g, kind);
  auto c = test::random_vector<C>(sc * f.batch, g, test::Values::uniform);
  auto at = [&](std::size_t e, std::size_t i, std::size_t p) -> T& {  // op(A)(i, p) of entry e
    return a[e * sa + (f.ta ? p * lda + i : i * lda + p)];
  };
  auto bt = [&](std::size_t e, std::size_t p, std::size_t j) -> T& {
    return b[e * sb + (f.tb ? j * ldb + p : p * ldb + j)];
  };
  // Row 0 of op(A) times column 0 of op(B): products that underflow to -0.0 in every chunk, so C(0, 0) is -0.0
  // only if the combine's lanes start at -0.0 (float and double: the tensor-core arithmetic of 16-bit inputs keeps
  // the tiny products exact and rounds their sum toward zero to +0.0). An infinity in the last chunk meets a zero
  // (NaN) in column 1 and finite values elsewhere.
  constexpr bool kUnderflows = !tandem::is_storage_type_v<T>;
  const C tiny = std::is_same_v<T, double> ? C(1e-200) : C(1e-30f);
  for (std::size_t e = 0; e < f.batch; ++e) {
    const bool own_b = e == 0 || !f.shared_b;
    for (std::size_t p = 0; p < f.k && kUnderflows; ++p) {
      at(e, 0, p) = T(tiny);
      if (own_b) bt(e, p, 0) = T(-tiny);
    }
    if (f.m > 2 && f.n > 2) {
      at(e, 2, f.k - 1) = T(std::numeric_limits<float>::infinity());
      if (own_b) bt(e, f.k - 1, 1) = T(0);
    }
  }
  test::Vector<C> want = c;
  const C alpha = C(f.alpha), beta = C(f.beta);
  std::size_t common_differ = 0;
  for (std::size_t e = 0; e < f.batch; ++e)
    for (std::size_t i = 0; i < f.m; ++i)
      for (std::size_t j = 0; j < f.n; ++j) {
        const auto opa = [&](std::size_t p) { return C(at(e, i, p)); };
        const auto opb = [&](std::size_t p) { return C(bt(f.shared_b ? 0 : e, p, j)); };
        const C acc = chunked_reference<C, T>(f.k, opa, opb);
        if constexpr (!tandem::is_storage_type_v<T>) {  // (16-bit inputs: the tensor-core chain)
          const C common = tandem::detail::canonical::matmul_element<C>(std::int64_t(f.k), opa, opb);
          common_differ += !test::same_bits(tandem::detail::canonical_nan(common), acc);
        }
        C& out = want[e * sc + i * ldc + j];
        const C r = beta == C(0) ? alpha * acc : std::fma(beta, out, alpha * acc);
        out = std::isnan(r) ? std::numeric_limits<C>::quiet_NaN() : r;
      }
  CHECK_MESSAGE(common_differ == 0, common_differ << " elements of canonical::matmul_element differ");
  tandem::MatmulOptions o{"auto", true};
  o.trans_a = f.ta, o.trans_b = f.tb, o.alpha = f.alpha, o.beta = f.beta;
  if (f.batch == 1)
    eng.matmul<T>({a.data(), ar, ac, lda}, {b.data(), br, bc, ldb}, {c.data(), f.m, f.n, ldc}, o);
  else
    eng.matmul(tandem::BatchView<const T>{a.data(), ar, ac, lda, f.batch, sa},
               tandem::BatchView<const T>{b.data(), br, bc, ldb, f.batch, sb},
               tandem::BatchView<C>{c.data(), f.m, f.n, ldc, f.batch, sc}, o);
  std::size_t differ = 0, first = c.size();
  for (std::size_t x = 0; x < c.size(); ++x)
    if (!test::same_bits(c[x], want[x])) ++differ, first = std::min(first, x);
  CHECK_MESSAGE(differ == 0, differ << " elements differ from the chunked definition (padding included), first at "
                                    << first << ": " << test::show(c[std::min(first, c.size() - 1)]) << ", expected "
                                    << test::show(want[std::min(first, c.size() - 1)]));
  if (kUnderflows && f.alpha == 1 && f.beta == 0) CHECK(test::same_bits(c[0], C(-0.0)));
}

}  // namespace

TANDEM_BACKEND_TEST(
    deterministic_matmul_chunks,
    "deterministic: K > 4096 is chunks of 4096 combined by the canonical sum, every form, bit for bit") {
  // K around the chunk (one chunk: the one fma chain, bit for bit as before), several chunks (3 * 4096 + 5 and
  // 20000: four and five chunk values, whose canonical sum is not the left-to-right one), C wider than tall and
  // taller than wide (the CPU computes C^T where op(A) is transposed and C is tall), transposes, alpha / beta,
  // batches (B shared by stride 0 or not), every element type.
  const std::size_t ks[] = {1, 4095, 4096, 4097, 2 * 4096, 3 * 4096 + 5, 20000};
  // (C narrow, small or neither: CUDA's register_tiled takes n <= 4, m <= 4 and m * n <= 4096 with K > 4096 in
  // kernels of their own, chunk_dot.cuh)
  const std::size_t shapes[][2] = {{9, 35}, {37, 3}, {1, 1}, {17, 16}, {3, 70}, {70, 66}};
  const double scalars[][2] = {{1, 0}, {-2, 0}, {0.5, 1.5}};
  test::SplitMix64 g{35};
  test::for_each_type<tandem::matmul_element_types>([&]<class T>() {
    CAPTURE(std::string(tandem::to_string(tandem::dtype_of<T>)));
    for (std::size_t ki = 0; ki < std::size(ks); ++ki)
      for (std::size_t t = 0; t < 4; ++t) {
        if (test::quick() && (t % 2 != ki % 2)) continue;
        const std::size_t v = ki + t;
        const ChunkForm f{
            shapes[v % 6][0],  ks[ki],          shapes[v % 6][1], (t & 1) != 0, (t & 2) != 0, scalars[v % 3][0],
            scalars[v % 3][1], v % 2 ? 2u : 1u, v % 4 == 3,       v % 3 != 1};
        check_chunked_form<T>(eng, f, g);
      }
  });
}

TANDEM_BACKEND_TEST(deterministic_matmul_chunks_large,
                    "deterministic: K > 4096 on register_tiled's large float tiles has the CPU engine's bits") {
  // (CUDA only: the chunk values of products with many tiles, which the CPU computes like any other; on a GPU of
  // 132 SMs, with two chunks of K, 1024 x 2048 runs 128 x 256 tiles, 1024 x 1152 64 x 128 tiles and 2064 x 784
  // 128 x 128 tiles. Against the CPU engine, whose bits deterministic_matmul_chunks checks against the definition.)
  if (eng.backend() != tandem::Backend::cuda) return;
  const tandem::Engine cpu(tandem::Backend::cpu);
  test::SplitMix64 g{36};
  const std::size_t shapes[][3] = {{1024, 4097, 2048}, {1024, 4097, 1152}, {2064, 4101, 784}};
  for (const auto& s : shapes) {
    const std::size_t m = s[0], k = s[1], n = s[2];
    CAPTURE(m);
    CAPTURE(n);
    const auto a = random_reals<float>(m * k, g);
    const auto b = random_reals<float>(k * n, g);
    test::Vector<float> c(m * n, 42.0f), want(m * n, 42.0f);
    eng.matmul<float>({a.data(), m, k, k}, {b.data(), k, n, n}, {c.data(), m, n, n}, {"auto", true});
    cpu.matmul<float>({a.data(), m, k, k}, {b.data(), k, n, n}, {want.data(), m, n, n}, {"auto", true});
    std::size_t differ = 0;
    for (std::size_t i = 0; i < c.size(); ++i) differ += !test::same_bits(c[i], want[i]);
    CHECK_MESSAGE(differ == 0, differ << " elements differ from the CPU engine's");
  }
}

TANDEM_BACKEND_TEST(deterministic_matmul_tall_skinny,
                    "deterministic: products of a tall X (X^T r, X^T X, X b, r^T X, X^T Y^T), bit for bit") {
  // The gradient-shaped products, natural leading dimensions (16-byte rows): every element against the definition.
  const std::size_t rows = test::quick() ? 9000 : 20011, cols = 64;
  struct Case {
    std::size_t m, k, n;
    bool ta, tb;
  };
  const Case cases[] = {{cols, rows, 1, true, false},  {cols, rows, cols, true, false}, {rows, cols, 1, false, false},
                        {1, rows, cols, false, false}, {cols, rows, 3, true, true},     {4, rows, 8, false, true},
                        {rows, cols, 4, false, true}};
  test::SplitMix64 g{38};
  test::for_each_type<tandem::matmul_element_types>([&]<class T>() {
    using C = tandem::compute_t<T>;
    CAPTURE(std::string(tandem::to_string(tandem::dtype_of<T>)));
    for (const Case& t : cases) {
      CAPTURE(t.m);
      CAPTURE(t.k);
      CAPTURE(t.n);
      CAPTURE(t.ta);
      CAPTURE(t.tb);
      const auto kind = std::is_same_v<T, tandem::half> ? test::Values::uniform : test::Values::wide_range;
      const std::size_t lda = t.ta ? t.m : t.k, ldb = t.tb ? t.k : t.n;
      const auto a = test::random_vector<T>(t.m * t.k, g, kind), b = test::random_vector<T>(t.k * t.n, g, kind);
      test::Vector<C> c(t.m * t.n);
      tandem::MatmulOptions o{"auto", true};
      o.trans_a = t.ta, o.trans_b = t.tb;
      eng.matmul<T>({a.data(), t.ta ? t.k : t.m, t.ta ? t.m : t.k, lda},
                    {b.data(), t.tb ? t.n : t.k, t.tb ? t.k : t.n, ldb}, {c.data(), t.m, t.n, t.n}, o);
      std::size_t differ = 0;
      for (std::size_t i = 0; i < t.m; ++i)
        for (std::size_t j = 0; j < t.n; ++j) {
          const auto opa = [&](std::size_t p) { return C(t.ta ? a[p * lda + i] : a[i * lda + p]); };
          const auto opb = [&](std::size_t p) { return C(t.tb ? b[j * ldb + p] : b[p * ldb + j]); };
          const C want = tandem::detail::canonical_nan(chunked_reference<C, T>(t.k, opa, opb));
          if (!test::same_bits(c[i * t.n + j], want) && differ++ == 0)
            MESSAGE("C(" << i << ", " << j << ") = " << test::show(c[i * t.n + j]) << ", expected "
                         << test::show(want));
        }
      CHECK_MESSAGE(differ == 0, differ << " elements differ from the chunked definition");
    }
  });
}

TANDEM_BACKEND_TEST_UNLESS(
    deterministic_matmul_chunk_panels,
    "deterministic: K > 4096 with more chunk values than the scratch holds (C in panels), sampled", test::quick()) {
  // The backends compute C in panels whose q chunk values fit their scratch (CPU 16 MiB, CUDA 64 MiB): here q * m * n
  // doubles exceed it, for C and for C^T (trans_a, C taller than wide, which the CPU computes transposed). Every
  // element of three whole rows and three whole columns is checked against the definition.
  const std::size_t side = eng.backend() == tandem::Backend::cpu ? 1100 : 2100, k = 2 * 4096 + 1;
  test::SplitMix64 g{36};
  for (bool ta : {false, true}) {
    const std::size_t m = side, n = ta ? side - 100 : side;
    CAPTURE(ta);
    const auto a = random_reals<double>(m * k, g), b = random_reals<double>(k * n, g);
    std::vector<double> c(m * n);
    tandem::MatmulOptions o{"auto", true};
    o.trans_a = ta;
    eng.matmul<double>({a.data(), ta ? k : m, ta ? m : k, ta ? m : k}, {b.data(), k, n, n}, {c.data(), m, n, n}, o);
    std::size_t checked = 0, differ = 0;
    auto check = [&](std::size_t i, std::size_t j) {
      const double want = chunked_reference<double>(
          k, [&](std::size_t p) { return ta ? a[p * m + i] : a[i * k + p]; },
          [&](std::size_t p) { return b[p * n + j]; });
      ++checked;
      if (!test::same_bits(c[i * n + j], want) && differ++ == 0)
        MESSAGE("C(" << i << ", " << j << ") = " << test::show(c[i * n + j]) << ", expected " << test::show(want));
    };
    for (std::size_t x : {std::size_t(0), std::size_t(517), std::size_t(n - 1)}) {
      for (std::size_t i = 0; i < m; ++i) check(i, x);
      for (std::size_t j = 0; j < n; ++j) check(x, j);
    }
    CHECK_MESSAGE(differ == 0, differ << " of " << checked << " sampled elements differ from the chunked definition");
  }
}

TANDEM_BACKEND_TEST_UNLESS(deterministic_matmul_chunk_levels,
                           "deterministic: K > 2^25 has more than 8192 chunk values, summed in two levels, bit for bit",
                           test::quick()) {
  // 8198 chunk values: their chunk values (4096, 4096 and 6 of them) are three, summed by the tree (not in order)
  const std::size_t m = 1, n = 2, k = 4096 * 8197 + 7;
  test::SplitMix64 g{37};
  const auto a = random_reals<float>(m * k, g), b = random_reals<float>(k * n, g);
  std::vector<float> c(m * n);
  eng.matmul<float>({a.data(), m, k, k}, {b.data(), k, n, n}, {c.data(), m, n, n}, {"auto", true});
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      const float want = chunked_reference<float>(
          k, [&](std::size_t p) { return a[i * k + p]; }, [&](std::size_t p) { return b[p * n + j]; });
      CHECK_MESSAGE(test::same_bits(c[i * n + j], want), test::show(c[i * n + j]) << ", expected " << test::show(want));
    }
}

// K past 2^28: more than 65535 chunk values, so the GPU launches its chunks in two grids (grid z is at most 65535)
// and sums them in two levels. 2 GB of operands: runs with TANDEM_TEST_LARGE=1.
TANDEM_BACKEND_TEST_UNLESS(deterministic_matmul_past_2_28,
                           "deterministic: K past 2^28, bit for bit (TANDEM_TEST_LARGE=1)", !test::large()) {
  const std::size_t m = 1, n = 1, k = 4096 * 65537 + 4099;  // 65539 chunk values
  test::SplitMix64 g{41};
  const auto a = random_reals<float>(k, g), b = random_reals<float>(k, g);
  const float want = chunked_reference<float>(
      k, [&](std::size_t p) { return a[p]; }, [&](std::size_t p) { return b[p]; });
  auto da = eng.upload<float>(a), db = eng.upload<float>(b);
  auto dc = eng.buffer<float>(1);
  eng.matmul(da.matrix(m, k), db.matrix(k, n), dc.matrix(m, n), {"auto", true});
  const float got = dc.to_vector()[0];
  CHECK_MESSAGE(test::same_bits(got, want), test::show(got) << ", expected " << test::show(want));
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
    } else if (test::run_kernel(info, run)) {
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
test::Vector<T> as_vector(T v) {
  return {v};
}
template <class T>
test::Vector<T> as_vector(test::Vector<T> v) {
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
      CAPTURE(std::string(tandem::to_string(O)));
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
      CAPTURE(std::string(tandem::to_string(per)));
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
    if (!test::run_kernel(k, [&] { (void)product(); })) continue;  // (a kernel this machine cannot run says so)
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

// canonical::lane_tree (the GPU's sum of up to 32 chunk values in registers) is canonical::chunk_sum, bit for bit.
TEST_CASE("common: lane_tree is the canonical sum of up to 32 values" * doctest::test_suite("common")) {
  test::SplitMix64 g{5};
  for (int n = 1; n <= 32; ++n)
    for (int round = 0; round < 50; ++round) {
      std::vector<float> x(static_cast<std::size_t>(n));
      for (float& v : x) {
        const auto r = g.below(8);
        v = r == 0 ? -0.0f : r == 1 ? 0.0f : std::ldexp(float(int(g.below(2001)) - 1000), int(g.below(40)) - 20);
      }
      const float tree = tandem::detail::canonical::lane_tree(0, n, [&](int l) { return x[std::size_t(l)]; });
      const float sum = tandem::detail::canonical::chunk_sum(x.data(), n, 1);
      CHECK(test::same_bits(tree, sum));
    }
}
