// Engine::var and Engine::std (vectors, strided and broadcast views, per row / column) on every backend and
// element type, against two independent references written here from the definitions:
// - the two-pass variance in long double, within the error bound of two passes in the working type;
// - deterministic mode's bits, built step by step as the API documents them: the mean (the canonical sum of
//   the elements as doubles, or the exact integer sum, divided by n), rounded to the working type; each
//   deviation and its square rounded once; test::canonical_sum of the squares; one division; sqrt.
// Also ddof, n - ddof <= 0, the output's size, and a large mean with a small spread (where sumsq / n -
// mean^2 loses every digit).
#include <cmath>
#include <limits>
#include <vector>

#include "tests/support.hpp"

using tandem::Per;

namespace {

using test::make;

// Small values with ties, offset so that the mean is not 0: exact in every type's compute type.
template <class T>
test::Vector<T> data(std::size_t n, std::uint64_t seed) {
  test::SplitMix64 g{seed};
  test::Vector<T> x(n);
  for (auto& v : x) {
    if constexpr (std::is_same_v<T, bool>)
      v = g.below(2) != 0;
    else if constexpr (std::is_unsigned_v<T>)
      v = make<T>(double(g.below(200)));
    else if constexpr (std::is_integral_v<T>)
      v = make<T>(double(g.below(201)) - 100);
    else
      v = make<T>(double(g.below(2001)) / 16 - 40);
  }
  return x;
}

template <class T>
long double wide(T v) {
  return static_cast<long double>(static_cast<tandem::compute_t<T>>(v));
}

// The two-pass variance (std) in long double.
template <class T>
long double reference(const std::vector<T>& x, double ddof, bool root) {
  long double s = 0;
  for (const T& v : x) s += wide(v);
  const long double mean = s / x.size();
  long double q = 0;
  for (const T& v : x) q += (wide(v) - mean) * (wide(v) - mean);
  const long double var = q / (x.size() - ddof);
  return root ? std::sqrt(var) : var;
}

// Deterministic mode's result, step by step from the documented definition.
template <class T>
tandem::var_result_t<T> deterministic_reference(const std::vector<T>& x, double ddof, bool root) {
  using W = tandem::var_result_t<T>;
  using C = tandem::compute_t<T>;
  double mean;
  if constexpr (std::is_integral_v<C>) {
    long double s = 0;  // (exact: small integers)
    for (const T& v : x) s += wide(v);
    mean = double(s) / double(x.size());
  } else {  // (the elements as doubles)
    std::vector<double> c;
    for (const T& v : x) c.push_back(double(static_cast<C>(v)));
    mean = test::canonical_sum(std::span<const double>(c)) / double(x.size());
  }
  const W m = W(mean);
  std::vector<W> sq(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const W d = W(static_cast<C>(x[i])) - m;
    sq[i] = d * d;
  }
  const W var = test::canonical_sum(std::span<const W>(sq)) / W(double(x.size()) - ddof);
  return root ? std::sqrt(var) : var;
}

// |got - want| within the two passes' bound in the working type W: a few units per level of the sums,
// relative, plus what the mean's rounding adds where the spread is 0 or tiny.
template <class T>
void check_close(tandem::var_result_t<T> got, const std::vector<T>& x, double ddof, bool root) {
  using W = tandem::var_result_t<T>;
  const long double want = reference(x, ddof, root);
  const long double tol = 8 * std::numeric_limits<W>::epsilon() * (1 + std::log2(double(x.size()) + 1));
  long double biggest = 0;
  for (const T& v : x) biggest = std::max(biggest, std::fabs(wide(v)));
  const long double delta = tol * biggest;
  const long double bound = tol * std::fabs(want) + (root ? delta : 2 * delta * delta);
  INFO(std::string(test::type_name<T>()) << (root ? " std" : " var") << " of " << x.size() << " ddof " << ddof
                                         << ": got " << test::show(got) << ", want " << test::show(want));
  CHECK(std::fabs(static_cast<long double>(got) - want) <= bound);
}

template <class T>
void check_vectors(const tandem::Engine& eng) {
  using W = tandem::var_result_t<T>;
  for (std::size_t n : test::reduce_sizes()) {
    if (n == 0 || n > 300000) continue;
    const test::Vector<T> x = data<T>(n, n);
    const std::vector<T> plain(x.begin(), x.end());
    for (double ddof : {0.0, 1.0}) {
      if (double(n) - ddof <= 0) continue;
      for (bool root : {false, true}) {
        const W got = root ? eng.std(x, ddof) : eng.var(x, ddof);
        check_close<T>(got, plain, ddof, root);
        const W det = root ? eng.std(x, ddof, {.deterministic = true}) : eng.var(x, ddof, {.deterministic = true});
        const W want = deterministic_reference(plain, ddof, root);
        INFO(std::string(test::type_name<T>()) << (root ? " std" : " var") << " of " << n << " deterministic: got "
                                               << test::show(det) << ", want " << test::show(want));
        CHECK(test::same_bits(det, want));
      }
    }
    // Every third element of a longer vector, and one element repeated (stride 0).
    test::Vector<T> wide_x(3 * n);
    for (std::size_t i = 0; i < n; ++i) wide_x[3 * i] = x[i];
    check_close<T>(eng.var(tandem::StridedView<T>{wide_x.data(), n, 3}, 1.0 * (n > 1)), plain, 1.0 * (n > 1), false);
    const std::vector<T> same(n, x[0]);
    check_close<T>(eng.std(tandem::StridedView<T>{x.data(), n, 0}), same, 0, true);
  }
}

template <class T>
void check_matrices(const tandem::Engine& eng) {
  using W = tandem::var_result_t<T>;
  for (const auto& shape :
       {std::pair<std::size_t, std::size_t>{1, 1}, {1, 33}, {33, 1}, {7, 257}, {130, 5}, {3, 4097}}) {
    const std::size_t rows = shape.first, cols = shape.second;  // (CAPTURE is a lambda: no structured bindings)
    const std::size_t ld = cols + 3;
    const test::Vector<T> m = data<T>(rows * ld, rows * 1000 + cols);
    const tandem::MatrixView<const T> view{m.data(), rows, cols, ld};
    for (Per per : {Per::row, Per::col}) {
      const std::size_t count = per == Per::row ? rows : cols, len = per == Per::row ? cols : rows;
      const double ddof = len > 1 ? 1.0 : 0.0;
      for (bool deterministic : {false, true}) {
        std::vector<W> var(count), sd(count);
        eng.var(view, per, std::span<W>(var), ddof, {.deterministic = deterministic});
        eng.std(view, per, std::span<W>(sd), ddof, {.deterministic = deterministic});
        for (std::size_t v = 0; v < count; ++v) {
          std::vector<T> x;
          for (std::size_t k = 0; k < len; ++k) x.push_back(per == Per::row ? m[v * ld + k] : m[k * ld + v]);
          CAPTURE(rows);
          CAPTURE(cols);
          CAPTURE(v);
          if (deterministic) {
            CHECK(test::same_bits(var[v], deterministic_reference(x, ddof, false)));
            CHECK(test::same_bits(sd[v], deterministic_reference(x, ddof, true)));
          } else {
            check_close<T>(var[v], x, ddof, false);
            check_close<T>(sd[v], x, ddof, true);
          }
        }
      }
    }
  }
}

}  // namespace

TANDEM_BACKEND_TEST(var_every_dtype, "var/std: every dtype and size, ddof, strided and stride-0, deterministic bits") {
  test::for_each_type([&]<class T>() { check_vectors<T>(eng); });
}

TANDEM_BACKEND_TEST(var_per_row_col, "var/std per row/col: every dtype, ld > cols, deterministic bits") {
  test::for_each_type([&]<class T>() { check_matrices<T>(eng); });
}

TANDEM_BACKEND_TEST(var_large_mean, "var/std: a large mean with a small spread keeps its digits") {
  test::Vector<float> x(100000);
  test::SplitMix64 g{5};
  for (auto& v : x) v = 10000.0f + float(g.below(1024)) / 1024;  // variance about 1/12
  const std::vector<float> plain(x.begin(), x.end());
  const long double want = reference(plain, 0, false);
  CHECK(std::fabs(eng.var(x) - want) <= 1e-3 * want);
}

TANDEM_BACKEND_TEST(var_constant, "var/std: a constant input of float and 16-bit types has variance 0 exactly") {
  test::for_each_type([&]<class T>() {
    if constexpr (tandem::is_floating_v<T> && !std::is_same_v<T, double>) {
      for (std::size_t n : {2, 3, 7, 16, 33, 1000, 4097}) {
        for (double v : {0.1, 4.0221432e16, -3.3e-5, 1e30}) {
          if (std::isinf(float(make<T>(v)))) continue;  // (beyond half's range)
          const test::Vector<T> x(n, make<T>(v));
          for (bool deterministic : {false, true}) {
            INFO(std::string(test::type_name<T>())
                 << " n " << n << " value " << v << " deterministic " << deterministic);
            CHECK(eng.var(x, 0.0, {.deterministic = deterministic}) == 0);
            std::vector<tandem::var_result_t<T>> rows(2);
            const test::Vector<T> m(2 * n, make<T>(v));
            eng.std<const T>({m.data(), 2, n, n}, Per::row, rows, 1.0, {.deterministic = deterministic});
            CHECK((rows[0] == 0 && rows[1] == 0));
          }
        }
      }
    }
  });
}

TANDEM_BACKEND_TEST(var_errors, "var/std: n - ddof <= 0, empty inputs and a wrong output size throw") {
  const std::vector<double> x{1, 2, 4};
  CHECK(test::kind_of([&] { (void)eng.var(x, 3.0); }) == tandem::ErrorKind::value);
  CHECK(test::contains(test::message_of([&] { (void)eng.std(x, 3.0); }), "ddof"));
  CHECK(test::kind_of([&] { (void)eng.var(std::vector<float>{}); }) == tandem::ErrorKind::value);
  std::vector<double> out(2);
  const tandem::MatrixView<const double> m{x.data(), 1, 3, 3};
  CHECK(test::kind_of([&] { eng.var(m, Per::row, std::span<double>(out)); }) == tandem::ErrorKind::value);
  CHECK(test::kind_of([&] { eng.var(m, Per::col, std::span<double>(out)); }) == tandem::ErrorKind::value);
  CHECK(test::contains(test::message_of([&] { (void)eng.var(x, 0.0, {.kernel = "no such kernel"}); }), "var"));
}

TANDEM_BACKEND_TEST(var_pass_errors, "var/std: an error of a pass is the call's own, with its argument and hint") {
  const std::vector<float> x = {1.0f, 2.0f, 4.0f};
  try {
    (void)eng.var(x, 0.0, {.kernel = "no_such_kernel"});
    FAIL("no tandem::Error");
  } catch (const tandem::Error& e) {
    CHECK(e.argument() == tandem::Arg::kernel);
    CHECK(test::contains(e.what(), "no_such_kernel"));
    CHECK(test::contains(e.what(), "var: "));
  }
  try {
    (void)eng.std(tandem::StridedView<const float>{nullptr, 3, 1});
    FAIL("no tandem::Error");
  } catch (const tandem::Error& e) {
    CHECK(e.kind() == tandem::ErrorKind::value);
    CHECK(test::contains(e.what(), "std: "));
  }
}
