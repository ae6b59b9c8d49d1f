// The test-support library itself (verify/): its generator, references and verdicts against
// answers worked out by hand, so that a mistake in a reference cannot pass every test that relies on it.
#include <cmath>
#include <limits>

#include "tests/support.hpp"

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
}  // namespace

TEST_CASE("support: splitmix64 is the classic stream, sequential or by index" * doctest::test_suite("common")) {
  test::SplitMix64 g{0};
  CHECK(g.next() == 0xE220A8397B1DCDAFull);  // the published first value of splitmix64 from seed 0
  CHECK(g.next() == 0x6E789E6AA1B965F4ull);
  const test::SplitMix64 h{12345};
  test::SplitMix64 s = h;
  for (std::uint64_t i = 0; i < 100; ++i) CHECK(s.next() == h.at(i));
  test::SplitMix64 skipped = h;
  skipped.skip(7);
  CHECK(skipped.next() == h.at(7));
}

TEST_CASE("support: generated values lie in their documented ranges" * doctest::test_suite("common")) {
  test::SplitMix64 g{3};
  for (float x : test::random_vector<float>(10000, g)) CHECK((x >= -1.0f && x < 1.0f));
  for (double x : test::random_vector<double>(10000, g, test::Values::wide_range))
    CHECK((std::fabs(x) <= std::ldexp(1.0, 20) && std::isfinite(x)));
  for (float x : test::random_vector<float>(10000, g, test::Values::small_integers))
    CHECK((x == std::trunc(x) && x >= -8 && x <= 8));
  for (std::int32_t x : test::random_vector<std::int32_t>(10000, g)) CHECK((x >= -(1 << 20) && x < (1 << 20)));
  for (float x : test::random_vector<float>(10000, g, test::Values::nonzero))
    CHECK((std::fabs(x) >= 0.5f && std::fabs(x) < 1.5f && x * 64 == std::trunc(x * 64)));
  for (std::int32_t x : test::random_vector<std::int32_t>(10000, g, test::Values::nonzero))
    CHECK((x != 0 && x >= -1000 && x <= 1000));
  // Element i of a fill is value_from_bits(at(i)): parallel fills give the same data.
  const test::SplitMix64 start{99};
  test::SplitMix64 seq = start;
  const auto v = test::random_vector<double>(50, seq, test::Values::wide_range);
  for (std::size_t i = 0; i < v.size(); ++i)
    CHECK(test::same_bits(v[i], test::value_from_bits<double>(start.at(i), test::Values::wide_range)));
  bool wide = false;  // full_range reaches beyond the readable range
  for (std::int64_t x : test::random_vector<std::int64_t>(100, g, test::Values::full_range))
    wide |= x > (std::int64_t(1) << 41);
  CHECK(wide);
}

TEST_CASE("support: the reduce reference's rules on hand-made inputs" * doctest::test_suite("common")) {
  auto ref = [](std::vector<float> v) { return test::reduce_reference<float>(v); };
  // Zeros of both signs: min -0, max +0, in either order.
  for (const auto& v : {std::vector<float>{0.0f, -0.0f}, std::vector<float>{-0.0f, 0.0f}}) {
    CHECK(test::same_bits(ref(v).min(), -0.0f));
    CHECK(test::same_bits(ref(v).max(), 0.0f));
  }
  // NaN wins min and max (the canonical quiet NaN) and makes the sum NaN.
  const auto with_nan = ref({1.0f, -std::nanf("7"), 3.0f});
  CHECK(test::same_bits(with_nan.min(), kNaN));
  CHECK(test::same_bits(with_nan.max(), kNaN));
  CHECK(test::same_bits(with_nan.sum_result(), kNaN));
  // Infinities: one kind gives it, both give NaN; the finite part keeps its bound.
  CHECK(ref({kInf, 1.0f, 2.0f}).sum_result() == kInf);
  CHECK(ref({-kInf, 1.0f}).sum_result() == -kInf);
  CHECK(test::same_bits(ref({kInf, -kInf}).sum_result(), kNaN));
  CHECK(ref({-kInf, 5.0f}).min() == -kInf);
  // Sums in long double: 2^24 + 1 + 1 is exact there, not in float.
  const auto big = ref({16777216.0f, 1.0f, 1.0f});
  CHECK(big.of(tandem::Op::sum).sum == 16777218.0L);
  CHECK(big.sum_result() == 16777218.0f);
  CHECK(big.of(tandem::Op::sum).abs_sum == 16777218.0L);
  // The sum of squares from its Term: each square rounded to float (3^2 + 4^2 = 25), +inf past the range,
  // NaN with a NaN, and its bound (n + 8) u sum (its terms are never negative).
  CHECK(ref({3.0f, -4.0f}).of(tandem::Op::sumsq).result() == 25.0f);
  CHECK(ref({1e20f, 1.0f}).of(tandem::Op::sumsq).result() == kInf);
  CHECK(test::same_bits(with_nan.of(tandem::Op::sumsq).result(), kNaN));
  CHECK(ref({3.0f, -4.0f}).of(tandem::Op::sumsq).bound() == 10 * 0x1p-24L * 25);
  const std::vector<std::int32_t> squares = {-3, 65536};
  CHECK(test::reduce_reference<std::int32_t>(squares).of(tandem::Op::sumsq).result() == 9 + (std::int64_t{1} << 32));
  // Integer sums wrap modulo 2^64; the mean is the exact sum (2^63 + 2, whose nearest double is 2^63) / n.
  const std::vector<std::int64_t> wrap = {std::numeric_limits<std::int64_t>::max(), 1, 2};
  const auto w = test::reduce_reference<std::int64_t>(wrap);
  CHECK(w.sum_result() == std::numeric_limits<std::int64_t>::min() + 2);
  CHECK(w.integer_mean() == 9223372036854775808.0 / 3);
  const auto six = test::reduce_reference<std::int64_t>(std::vector<std::int64_t>(6, 1700000000000000000));
  CHECK(six.integer_mean() == 1.7e18);
  // Strided input, and a reference merged from pieces equals the whole.
  const std::vector<float> x = {5, -1, 7, -0.0f, 2, 0.0f, -3, 9};
  const auto every_other = test::reduce_reference(x.data(), 4, 2);
  CHECK(every_other.count == 4);
  CHECK(every_other.sum_result() == 11.0f);
  CHECK(every_other.min() == -3.0f);
  auto merged = test::reduce_reference(x.data(), 3, 1);
  merged.merge(test::reduce_reference(x.data() + 3, 5, 1));
  const auto whole = test::reduce_reference<float>(x);
  CHECK(merged.count == whole.count);
  CHECK(merged.of(tandem::Op::sum).sum == whole.of(tandem::Op::sum).sum);
  CHECK(merged.of(tandem::Op::sumsq).sum == whole.of(tandem::Op::sumsq).sum);
  CHECK(test::same_bits(merged.min(), whole.min()));
  CHECK(test::same_bits(merged.max(), whole.max()));
}

TEST_CASE("support: verdicts pass inside the bound and fail outside it" * doctest::test_suite("common")) {
  std::vector<float> v(1000, 0.5f);
  const auto r = test::reduce_reference<float>(v);
  CHECK(r.sum_bound() == 8 * 0x1p-24L * 500);
  CHECK(test::judge_sum<float>(500.0f, r).ok);
  CHECK(test::judge_sum<float>(500.0f + 0.0002f, r).ok);  // within 8 u sum|x| ~ 2.4e-4
  CHECK_FALSE(test::judge_sum<float>(500.0f + 0.001f, r).ok);
  CHECK_FALSE(test::judge_sum_bits<float>(std::nextafter(500.0f, 0.0f), r).ok);
  CHECK_FALSE(test::judge_extreme(-0.0f, 0.0f).ok);
  CHECK(test::judge_mean<float>(0.5, r).ok);
  CHECK_FALSE(test::judge_mean<float>(0.5001, r).ok);
  const std::vector<std::int32_t> ints = {1, 2};
  CHECK_FALSE(test::judge_sum<std::int32_t>(4, test::reduce_reference<std::int32_t>(ints)).ok);
}

TEST_CASE("support: canonical sum follows the documented lanes and tree" * doctest::test_suite("common")) {
  // Lanes 0, 1, 2 hold 1e8, 1, -1e8; the tree adds lane 2 to lane 0 before lane 1 meets them: 1, where
  // a left-to-right float sum gives 0.
  const std::vector<float> x = {1e8f, 1.0f, -1e8f};
  CHECK(test::canonical_sum<float>(x) == 1.0f);
  // 33 elements: element 32 goes to lane 0 after element 0.
  std::vector<float> y(33, 0.0f);
  y[0] = 1e8f, y[32] = -1e8f, y[1] = 1.0f;
  CHECK(test::canonical_sum<float>(y) == 1.0f);
  // Lane 0 holds x0 + x32 = 0 and lane 16 holds x16 = 1; the tree then gives 1 (with 16 lanes, or in
  // order, 2^24 + 1 would round to 2^24 first and the sum be 0).
  std::vector<float> z(33, 0.0f);
  z[0] = 0x1p24f, z[16] = 1.0f, z[32] = -0x1p24f;
  CHECK(test::canonical_sum<float>(z) == 1.0f);
  CHECK(test::same_bits(test::canonical_sum<float>(std::vector<float>{-0.0f}), -0.0f));  // one value remains
  CHECK(test::same_bits(test::canonical_sum<float>(std::vector<float>{}), 0.0f));
}

namespace {

// Deterministic mode's result of op O on x (the CPU's), and the same result one ulp off: the verdict of
// deterministic mode takes the first and, for an additive op or a product (whose value depends on the order
// of its additions or multiplications), refuses the second, which the default mode's bound takes.
template <tandem::Op O, class T>
void check_canonical_verdict(const tandem::Engine& cpu, const test::Vector<T>& x) {
  const std::span<const T> values(x);
  const auto ref = test::reduce_reference<T>(x);
  const auto got = cpu.reduce<O>(values, {"auto", true});
  CHECK(test::judge_op_canonical<O, T>(got, ref, values).ok);
  if constexpr (test::is_additive(O) || test::is_product(O)) {
    using R = tandem::op_result_t<O, T>;
    const R off = std::nextafter(got, std::copysign(std::numeric_limits<R>::infinity(), got));  // (the same sign)
    CHECK(test::judge_op<O, T>(off, ref).ok);
    CHECK_FALSE(test::judge_op_canonical<O, T>(off, ref, values).ok);
  }
}

}  // namespace

TEST_CASE("support: deterministic mode's verdict is bit for bit for every additive op of the table" *
          doctest::test_suite("common")) {
  // Additive: the ops whose computed_as returns a sum (the op table), whatever their names.
  CHECK(test::is_additive(tandem::Op::sum));
  CHECK_FALSE(test::is_additive(tandem::Op::min));
  CHECK_FALSE(test::is_additive(tandem::Op::argmax));
  CHECK_FALSE(test::is_product(tandem::Op::sum));
  const tandem::Engine cpu(tandem::Backend::cpu);
  test::SplitMix64 g{2026};
  const test::Vector<float> f = test::random_vector<float>(10007, g);
  const test::Vector<double> d = test::random_vector<double>(10007, g);
  test::for_each_op([&]<tandem::Op O>() {
    const std::string op = tandem::to_string(O);
    CAPTURE(op);
    check_canonical_verdict<O>(cpu, f);
    check_canonical_verdict<O>(cpu, d);
  });
}

TEST_CASE("support: matmul reference, sampling and the bound by precision" * doctest::test_suite("common")) {
  // A = [1 2; 3 4] (ld 3, padding NaN), B = [5 6; 7 8]: C = [19 22; 43 50].
  const std::vector<double> a = {1, 2, kNaN, 3, 4, kNaN}, b = {5, 6, 7, 8};
  const auto ref = test::matmul_reference<double>({a.data(), 2, 2, 3}, {b.data(), 2, 2, 2});
  REQUIRE(ref.checked() == 4);
  CHECK(ref.value[0] == 19);
  CHECK(ref.value[3] == 50);
  CHECK(ref.abs[1] == 22);
  std::vector<double> c = {19, 22, -1, 43, 50, -1};
  CHECK(test::verify_matmul<double>({c.data(), 2, 2, 3}, ref, tandem::Precision::full).ok());
  c[4] = 50 * (1 + 0x1p-10);  // off by more than 2 K u but less than tf32's input rounding
  CHECK_FALSE(test::verify_matmul<double>({c.data(), 2, 2, 3}, ref, tandem::Precision::full).ok());
  CHECK(test::verify_matmul<double>({c.data(), 2, 2, 3}, ref, tandem::Precision::tf32).ok());
  c[4] = kNaN;
  const auto v = test::verify_matmul<double>({c.data(), 2, 2, 3}, ref, tandem::Precision::bf16);
  CHECK(v.outside == 1);
  REQUIRE(v.first_bad.size() == 1);
  CHECK((v.first_bad[0].i == 1 && v.first_bad[0].j == 1));
  // Sampled: the four corners, then `samples` drawn elements; an unwritten (NaN) element fails.
  test::SplitMix64 g{8};
  const auto fa = test::random_vector<float>(40 * 30, g), fb = test::random_vector<float>(30 * 50, g);
  const auto sampled = test::matmul_reference<float>({fa.data(), 40, 30, 30}, {fb.data(), 30, 50, 50},
                                                     {.full_work = 0, .samples = 20, .seed = 5});
  REQUIRE(sampled.checked() == 24);
  CHECK(sampled.index(0) == 0);
  CHECK(sampled.index(3) == 40 * 50 - 1);
  const auto full = test::matmul_reference<float>({fa.data(), 40, 30, 30}, {fb.data(), 30, 50, 50});
  for (std::size_t e = 0; e < sampled.checked(); ++e)  // long double there, double here: equal to ~2^-50
    CHECK(std::fabs(sampled.value[e] - full.value[sampled.index(e)]) <= 1e-15 * full.abs[sampled.index(e)]);
  std::vector<float> fc(40 * 50);
  for (std::size_t e = 0; e < fc.size(); ++e) fc[e] = float(full.value[e]);
  CHECK(test::verify_matmul<float>({fc.data(), 40, 50, 50}, sampled, tandem::Precision::full).ok());
  fc[777] = kNaN;
  CHECK(test::verify_matmul<float>({fc.data(), 40, 50, 50}, sampled, tandem::Precision::full).not_finite == 1);
}
