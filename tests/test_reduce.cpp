// Reductions: every kernel of the backend x op x dtype x width, against the independent references of
// the test-support library (verify/reference.hpp) within its bounds (verify/bounds.hpp):
// - integers over their whole range (sums wrap): compared exactly with a uint64 wrapping loop.
// - "exact" floats, small integers in [-8, 8]: every partial sum of n <= 2^21 of them is an integer
//   below 2^24 and so exact in float, whatever the order: sums are compared bit for bit.
// - "random" floats in [-1, 1): a long double sum; |result - ref| <= 8 u sum|x| (u = 2^-24 for float,
//   2^-53 for double). Every kernel sums in blocks/trees, whose error is far below that; the bound
//   still catches a lost or doubled element of the "exact" data's size only there, which is why both
//   data sets are used.
// - min/max: bit for bit (NaN wins; min(-0, +0) = -0, max(-0, +0) = +0).
// A kernel whose KernelInfo does not list the dtype or the op must be refused with tandem::Error.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tests/support.hpp"

using tandem::Op;
using tandem::ReduceOptions;

namespace {

// Integers over their whole range; floats small integers (exact) or uniform in [-1, 1).
template <class T>
test::Vector<T> random_values(std::size_t n, bool exact, test::SplitMix64& g) {
  const test::Values kind = std::is_integral_v<T> ? test::Values::full_range
                            : exact               ? test::Values::small_integers
                                                  : test::Values::uniform;
  return test::random_vector<T>(n, g, kind);
}

template <class R>
void check_judgement(const test::Judgement& j, Op op, R got) {
  CHECK_MESSAGE(j.ok, tandem::to_string(op) << " = " << test::show(got) << ", expected " << j.expected);
}

// Checks every op of the table on x (n elements, stride) with every kernel against the reference (judge_op:
// bit for bit with `exact`, data whose sums are exact in any order).
template <class T>
void check_all_kernels(const tandem::Engine& eng, const test::Vector<T>& data, std::size_t n, std::size_t stride,
                       bool exact) {
  const test::ReduceReference<T> ref = test::reduce_reference(data.data(), n, stride);
  const tandem::StridedView<T> view{data.data(), n, stride};
  for (const tandem::KernelInfo& info : eng.reduce_kernel_info()) {
    const std::string& k = info.name;
    CAPTURE(k);
    const ReduceOptions o{k};
    test::for_each_op([&]<Op O>() {
      // What the kernel does not take, or an empty input of an op without an identity: tandem::Error.
      if (!info.accepts(tandem::dtype_of<T>) || !info.accepts(O) ||
          (n == 0 && tandem::info(O).empty == tandem::EmptyRule::error)) {
        CHECK_THROWS_AS((void)eng.reduce<O>(view, o), tandem::Error);
      } else {
        const auto got = eng.reduce<O>(view, o);
        check_judgement(test::judge_op<O, T>(got, ref, exact), O, got);
      }
    });
  }
}

template <class T>
void check_widths(const tandem::Engine& eng) {
  test::SplitMix64 g{20261121};
  for (std::size_t n : test::reduce_sizes()) {
    CAPTURE(n);
    for (bool exact : {true, false}) {
      if (std::is_integral_v<T> && !exact) continue;
      CAPTURE(exact);
      auto data = random_values<T>(n, exact, g);
      check_all_kernels(eng, data, n, 1, exact);
    }
  }
}

}  // namespace

TANDEM_BACKEND_TEST(reduce_every_kernel_and_width, "reduce: every kernel, element type and width") {
  test::for_each_type([&]<class T>() {  // (16-bit inputs: test_float16.cpp and the conformance matrix)
    if constexpr (!tandem::is_storage_type_v<T>) check_widths<T>(eng);
  });
}

TANDEM_BACKEND_TEST(reduce_strided_every_kernel, "reduce: strided input (struct fields, columns) for every kernel") {
  const std::vector<std::size_t> widths = test::quick()
                                              ? std::vector<std::size_t>{1, 33, 1025, 65537}
                                              : std::vector<std::size_t>{1, 2, 33, 257, 1025, 4097, 65537, 300007};
  test::SplitMix64 g{11};
  for (std::size_t stride : {2, 3, 7}) {
    for (std::size_t n : widths) {
      CAPTURE(stride);
      CAPTURE(n);
      auto f = random_values<float>(n * stride, true, g);
      check_all_kernels(eng, f, n, stride, true);
      auto i = random_values<std::int32_t>(n * stride, true, g);
      check_all_kernels(eng, i, n, stride, true);
      auto d = random_values<double>(n * stride, false, g);
      check_all_kernels(eng, d, n, stride, false);
    }
  }
  // One float field of an array of structs.
  struct Particle {
    float x, mass;
  };
  std::vector<Particle> ps(100003);
  long double expect = 0;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    ps[i] = {-1.0f, float(i % 17)};
    expect += ps[i].mass;
  }
  for (const auto& k : eng.reduce_kernels())
    CHECK(eng.sum(tandem::field(std::span<const Particle>(ps), &Particle::mass), {k}) == float(expect));
}

TANDEM_BACKEND_TEST(reduce_nan_inf_and_signed_zeros, "reduce: NaN propagates, infinities, signed zeros") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<std::size_t> widths =
      test::quick() ? std::vector<std::size_t>{1, 33, 65537} : std::vector<std::size_t>{1, 2, 33, 1000, 65537, 1000003};
  for (std::size_t n : widths) {
    for (const auto& k : eng.reduce_kernels()) {
      CAPTURE(n);
      CAPTURE(k);
      std::vector<float> x(n, 1.5f);
      x[(n * 7) / 11] = nan;
      CHECK(std::isnan(eng.sum<float>(x, {k})));
      CHECK(std::isnan(eng.min<float>(x, {k})));
      CHECK(std::isnan(eng.max<float>(x, {k})));
      CHECK(std::isnan(eng.mean<float>(x, {k})));
      // A NaN result is the canonical quiet NaN on every backend.
      CHECK(test::same_bits(eng.min<float>(x, {k}), nan));

      std::vector<double> y(n, -2.0);
      y[n / 3] = -std::numeric_limits<double>::infinity();
      CHECK(eng.min<double>(y, {k}) == -std::numeric_limits<double>::infinity());
      CHECK(eng.sum<double>(y, {k}) == -std::numeric_limits<double>::infinity());
      if (n > 1) {
        std::vector<float> z(n, 0.0f);
        z[n - 1] = inf;
        z[0] = -inf;
        CHECK(std::isnan(eng.sum<float>(z, {k})));  // inf + -inf
        CHECK(eng.max<float>(z, {k}) == inf);
      }
      // Zeros of both signs: min is -0.0 and max is +0.0, bit for bit, in any order.
      std::vector<float> zeros(n, 0.0f);
      zeros[n / 2] = -0.0f;
      CHECK(test::same_bits(eng.min<float>(zeros, {k}), -0.0f));
      CHECK(test::same_bits(eng.max<float>(zeros, {k}), n == 1 ? -0.0f : 0.0f));
    }
  }
}

namespace {

// The CPU min/max leaf keeps SIMD lanes and settles NaN and the sign of zero after its loop, with a
// scalar tail: one special value at each position of full blocks and of the tail (sizes that are not a
// multiple of the lane count), contiguous and strided (the gaps hold NaN, which must not be read).
template <class T>
void check_special_positions(const tandem::Engine& eng) {
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  struct Case {
    T special;
    bool zeros;  // the other elements: the zero of the other sign (special is a zero), else random in [-8, 8]
  };
  const std::vector<Case> cases = {{nan, false},  {-nan, false},   {inf, false},
                                   {-inf, false}, {T(-0.0), true}, {T(0.0), true}};
  const std::vector<std::size_t> sizes =
      test::quick() ? std::vector<std::size_t>{100} : std::vector<std::size_t>{1, 100, 333};
  const std::size_t step = test::quick() ? 9 : 1;
  test::SplitMix64 g{13};
  for (std::size_t stride : {1, 3})
    for (std::size_t n : sizes)
      for (const Case& c : cases)
        for (std::size_t pos = 0; pos < n; pos += step) {
          test::Vector<T> x(n * stride, nan);
          const auto vals = random_values<T>(n, true, g);
          for (std::size_t i = 0; i < n; ++i) x[i * stride] = c.zeros ? -c.special : vals[i];
          x[pos * stride] = c.special;
          const tandem::StridedView<T> view{x.data(), n, stride};
          // The documented rules (NaN wins, -0.0 below +0.0), by the library's reference.
          const test::ReduceReference<T> ref = test::reduce_reference(x.data(), n, stride);
          for (const auto& k : eng.reduce_kernels()) {
            CAPTURE(k);
            CAPTURE(stride);
            CAPTURE(n);
            CAPTURE(pos);
            CHECK(test::same_bits(eng.min(view, {k}), ref.min()));
            CHECK(test::same_bits(eng.max(view, {k}), ref.max()));
          }
        }
}

}  // namespace

TANDEM_BACKEND_TEST(reduce_min_max_special_positions,
                    "reduce: min/max with a NaN, an infinity or a zero of the other sign at every position") {
  test::for_each_type([&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) check_special_positions<T>(eng);
  });
}

namespace {

// A sum of only -0.0 is -0.0 (IEEE 754, NumPy); with one +0.0 among them it is +0.0. Every kernel,
// deterministic mode, host and Buffer inputs, contiguous and strided (the gaps hold 1.0, which must
// not be read).
template <class T>
void check_negative_zero_sums(const tandem::Engine& eng) {
  const std::vector<std::size_t> sizes = test::quick()
                                             ? std::vector<std::size_t>{1, 33, 4097, 65537}
                                             : std::vector<std::size_t>{1, 2, 31, 33, 4096, 4097, 65537, 1000003};
  for (std::size_t stride : {1, 3})
    for (std::size_t n : sizes) {
      test::Vector<T> x(n * stride, T(1));
      for (std::size_t i = 0; i < n; ++i) x[i * stride] = T(-0.0);
      const tandem::StridedView<T> view{x.data(), n, stride};
      const tandem::Buffer<T> buf = eng.upload<T>(x);
      const tandem::BufferView<T> bview = buf.view(0, n, stride);
      for (const tandem::KernelInfo& k : eng.reduce_kernel_info()) {
        if (!k.accepts(tandem::dtype_of<T>) || !k.accepts(Op::sum)) continue;
        CAPTURE(k.name);
        CAPTURE(n);
        CAPTURE(stride);
        CHECK(test::same_bits(eng.sum(view, {k.name}), T(-0.0)));
        CHECK(test::same_bits(eng.sum(bview, {k.name}), T(-0.0)));
        CHECK(test::same_bits(T(eng.mean(view, {k.name})), T(-0.0)));
        if (k.deterministic) {
          CHECK(test::same_bits(eng.sum(view, {k.name, true}), T(-0.0)));
          CHECK(test::same_bits(eng.sum(bview, {k.name, true}), T(-0.0)));
        }
      }
      x[(n / 2) * stride] = T(0.0);
      for (const std::string& k : eng.reduce_kernels()) {
        CAPTURE(k);
        CHECK(test::same_bits(eng.sum(view, {k}), T(0.0)));
      }
    }
}

}  // namespace

TANDEM_BACKEND_TEST(reduce_negative_zero_sums, "reduce: a sum of only -0.0 is -0.0 on every kernel") {
  test::for_each_type([&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) check_negative_zero_sums<T>(eng);
  });
}

TANDEM_BACKEND_TEST(reduce_float_sum_accuracy, "reduce: a float32 sum of 2^22 equal values, every kernel") {
  // 0.1f, whose every add rounds the same way: a running sum that takes many adds in a row drifts with it
  // (32 lanes of 2^17 adds: 3e-4 relative). The exact sum is 0.1f * 2^22; any order whose running sums
  // take a few thousand adds each stays within 2e-6 of it.
  const std::size_t n = std::size_t(1) << 22;
  const std::vector<float> x(n, 0.1f);
  const double exact = double(0.1f) * double(n);
  for (const tandem::KernelInfo& k : eng.reduce_kernel_info()) {
    if (!k.accepts(Op::sum)) continue;
    CAPTURE(k.name);
    for (bool det : {false, true}) {
      if (det && !k.deterministic) continue;
      CAPTURE(det);
      CHECK(std::abs(double(eng.sum(x, {k.name, det})) - exact) <= 2e-6 * exact);
    }
  }
}

TANDEM_BACKEND_TEST(reduce_identity_edges, "reduce: values at the identity and integer wrap-around") {
  for (const auto& k : eng.reduce_kernels()) {
    CAPTURE(k);
    // 2^21 + 3: past the 2^20-element blocks in which the CPU's int32 sums add 16-bit halves in 32-bit lanes.
    for (std::size_t n :
         {std::size_t(1), std::size_t(3), std::size_t(257), std::size_t(65537), (std::size_t(1) << 21) + 3}) {
      std::vector<std::int32_t> lo(n, std::numeric_limits<std::int32_t>::min());
      CHECK(eng.min<std::int32_t>(lo, {k}) == std::numeric_limits<std::int32_t>::min());
      CHECK(eng.max<std::int32_t>(lo, {k}) == std::numeric_limits<std::int32_t>::min());
      CHECK(eng.sum<std::int32_t>(lo, {k}) == std::int64_t(n) * std::numeric_limits<std::int32_t>::min());
      const std::vector<std::int32_t> top(n, std::numeric_limits<std::int32_t>::max());
      CHECK(eng.sum<std::int32_t>(top, {k}) == std::int64_t(n) * std::numeric_limits<std::int32_t>::max());
      std::vector<std::int64_t> hi(n, std::numeric_limits<std::int64_t>::max());
      CHECK(eng.max<std::int64_t>(hi, {k}) == std::numeric_limits<std::int64_t>::max());
      CHECK(eng.min<std::int64_t>(hi, {k}) == std::numeric_limits<std::int64_t>::max());
      // n * INT64_MAX modulo 2^64.
      CHECK(eng.sum<std::int64_t>(hi, {k}) == std::int64_t(std::uint64_t(n) * std::uint64_t(INT64_MAX)));
      std::vector<double> big(n, std::numeric_limits<double>::max());
      CHECK(eng.max<double>(big, {k}) == std::numeric_limits<double>::max());
      CHECK(eng.min<double>(big, {k}) == std::numeric_limits<double>::max());
    }
  }
}

TANDEM_BACKEND_TEST(reduce_integer_extremes, "reduce: every integer type at its extremes, past every lane's block") {
  // n copies of the type's least and greatest value: the sum is exactly n times it (as the sum type wraps
  // it), the mean that exact sum rounded once and divided by n; 3 * 2^20 + 5 passes the blocks in which narrow lanes
  // add (2^15 per lane).
  test::for_each_type([&]<class T>() {
    if constexpr (std::is_integral_v<T>) {
      CAPTURE(std::string(test::type_name<T>()));
      for (const T v : {std::numeric_limits<T>::min(), std::numeric_limits<T>::max()})
        for (std::size_t n : {std::size_t(1), std::size_t(97), (std::size_t(3) << 20) + 5}) {
          CAPTURE(n);
          const test::Vector<T> x(n, v);
          using S = tandem::sum_result_t<T>;
          const S want = S(std::uint64_t(n) * std::uint64_t(S(v)));  // (modulo 2^64)
          const tandem::Buffer<T> b = eng.upload<T>(x);
          for (const tandem::KernelInfo& k : eng.reduce_kernel_info()) {
            if (!k.accepts(tandem::dtype_of<T>)) continue;
            CAPTURE(k.name);
            CHECK(eng.sum<T>(x, {k.name}) == want);
            CHECK(eng.sum(b.view(), {k.name}) == want);
            CHECK(eng.mean<T>(x, {k.name}) == double(__int128(n) * __int128(v)) / double(n));  // (rounded once)
            CHECK(eng.max<T>(x, {k.name}) == v);
          }
        }
    }
  });
}

TANDEM_BACKEND_TEST(reduce_buffers, "reduce: device-resident buffers, views with offset and stride") {
  test::SplitMix64 g{17};
  for (std::size_t n : {1, 1000, 65537}) {
    auto host = random_values<float>(3 * n + 5, true, g);
    auto buf = eng.upload<float>(host);
    CHECK(buf.size() == host.size());
    CHECK(buf.backend() == eng.backend());
    CHECK(buf.to_vector() == host);
    for (const auto& k : eng.reduce_kernels()) {
      CAPTURE(k);
      const auto whole = test::reduce_reference(host.data(), host.size(), 1);
      CHECK(test::same_bits(eng.sum(buf, {k}), whole.sum_result()));
      CHECK(test::same_bits(eng.max(buf, {k}), whole.max()));
      const auto part = test::reduce_reference(host.data() + 5, n, 3);
      CHECK(test::same_bits(eng.sum(buf.view(5, n, 3), {k}), part.sum_result()));
      CHECK(test::same_bits(eng.min(buf.view(5, n, 3), {k}), part.min()));
    }
  }
  // Partial upload and download.
  auto b = eng.buffer<std::int64_t>(10);
  std::vector<std::int64_t> five = {1, 2, 3, 4, 5};
  b.upload(five, 5);
  b.upload(five, 0);
  std::vector<std::int64_t> back(4);
  b.download(back, 6);
  CHECK(back == std::vector<std::int64_t>{2, 3, 4, 5});
  CHECK(eng.sum(b) == 30);
  CHECK_THROWS_AS(b.upload(five, 6), tandem::Error);
  // A null host span with a size is refused, not copied from (found by fuzz/fuzz_api).
  CHECK_THROWS_AS(b.upload(std::span<const std::int64_t>(static_cast<const std::int64_t*>(nullptr), 2)), tandem::Error);
  CHECK_THROWS_AS(b.download(std::span<std::int64_t>(static_cast<std::int64_t*>(nullptr), 2)), tandem::Error);
  CHECK_THROWS_AS(b.download(back, 7), tandem::Error);
}

// Past 2^31 elements: 32-bit index arithmetic would wrap. Needs ~8.6 GB; runs when TANDEM_TEST_LARGE=1.
TANDEM_BACKEND_TEST_UNLESS(reduce_past_2_31, "reduce: more than 2^31 elements (TANDEM_TEST_LARGE=1)", !test::large()) {
  const std::size_t n = (std::size_t(1) << 31) + 1000003;
  std::vector<std::int32_t> host(n);
  // x[i] = i % 7 - 3, except a unique minimum and maximum near the end.
  for (std::size_t i = 0; i < n; ++i) host[i] = std::int32_t(i % 7) - 3;
  host[n - 2] = -1000;
  host[n - 5] = 999;
  std::int64_t expect = 0;
  for (std::size_t i = 0; i < n; ++i) expect += host[i];
  auto buf = eng.upload<std::int32_t>(host);
  host.clear();
  host.shrink_to_fit();
  for (const auto& k : eng.reduce_kernels()) {
    CAPTURE(k);
    CHECK(eng.sum(buf, {k}) == expect);
    CHECK(eng.min(buf, {k}) == -1000);
    CHECK(eng.max(buf, {k}) == 999);
  }
}
