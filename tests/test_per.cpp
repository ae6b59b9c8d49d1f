// Per-row and per-column reductions (Engine::sum(MatrixView, Per, out), ... and the Buffer forms) on every
// backend, against the test-support reference run on each row or column as a vector (ReduceReference:
// plain loops in wider types) and, for deterministic sums, test::canonical_sum of each row or column:
// - shapes 1x1, 1xN, Nx1, primes, 2^k +- 1, sizes that miss every block and chunk, ld > cols with NaN (or
//   the largest integer) in the padding, every op and dtype, data with many ties (small integers);
// - NaN, +-inf and zeros of both signs at the first, a middle and the last position of rows and columns;
// - empty rows and columns, Buffer forms (with an offset, synchronize, read back), error cases.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "tests/support.hpp"

using tandem::Op;
using tandem::Per;

namespace {

struct Shape {
  std::size_t rows, cols, pad;
};

// A NaN as the canonical quiet NaN (what every result holds), other values unchanged.
template <class V>
V canon(V v) {
  if constexpr (std::is_floating_point_v<V>)
    if (v != v) return std::numeric_limits<V>::quiet_NaN();
  return v;
}

template <class T>
T poison() {
  if constexpr (std::is_floating_point_v<T>)
    return std::numeric_limits<T>::quiet_NaN();
  else
    return std::numeric_limits<T>::max();
}

// Vector v (row v or column v) of the matrix as a reference, and as a copy (for canonical_sum).
template <class T>
test::Vector<T> vector_of(const test::Vector<T>& m, const Shape& s, Per per, std::size_t v) {
  test::Vector<T> out;
  const std::size_t ld = s.cols + s.pad;
  if (per == Per::row)
    for (std::size_t j = 0; j < s.cols; ++j) out.push_back(m[v * ld + j]);
  else
    for (std::size_t i = 0; i < s.rows; ++i) out.push_back(m[i * ld + v]);
  return out;
}

// Results compared bit for bit (NaN: the canonical quiet NaN); the first mismatch is reported.
template <class Got, class Want>
void expect_equal(const Got& got, const Want& want, const char* what) {
  using V = typename Want::value_type;  // (std::vector<bool>'s elements are proxies)
  REQUIRE(got.size() == want.size());
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!test::same_bits(V(got[i]), V(want[i])) && bad++ == 0) first = i;
  INFO(std::string(what) << ": " << bad << " mismatches, first at " << first << ": got "
                         << (bad ? test::show(V(got[first])) : "") << ", want "
                         << (bad ? test::show(V(want[first])) : ""));
  CHECK(bad == 0);
}
void expect_equal(const std::vector<std::size_t>& got, const std::vector<std::size_t>& want, const char* what) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) bad += got[i] != want[i];
  INFO(std::string(what) << ": " << bad << " mismatches");
  CHECK(got.size() == want.size());
  CHECK(bad == 0);
}

// Every op, both directions, host view and Buffer form, against the references. The data's sums must be
// exact in T (small integers and specials), so that every association order gives the same bits.
template <class T>
void check_matrix(const tandem::Engine& eng, const test::Vector<T>& m, const Shape& s) {
  using Sum = tandem::sum_result_t<T>;
  CAPTURE(s.rows);
  CAPTURE(s.cols);
  CAPTURE(s.pad);
  const std::size_t ld = s.cols + s.pad;
  const tandem::MatrixView<const T> view{m.data(), s.rows, s.cols, ld};
  const tandem::Buffer<T> buf = eng.upload<T>(m);
  for (Per per : {Per::row, Per::col}) {
    CAPTURE(std::string(tandem::to_string(per)));
    const std::size_t count = per == Per::row ? s.rows : s.cols, len = per == Per::row ? s.cols : s.rows;
    std::vector<Sum> sum_want(count);
    test::Vector<T> min_want(count), max_want(count);
    std::vector<double> mean_want(count);
    std::vector<std::size_t> argmin_want(count), argmax_want(count);
    for (std::size_t v = 0; v < count; ++v) {
      const test::Vector<T> x = vector_of(m, s, per, v);
      const auto ref = test::reduce_reference(std::span<const T>(x));
      sum_want[v] = canon(ref.sum_result());
      if (len == 0) continue;
      min_want[v] = ref.min(), max_want[v] = ref.max();
      argmin_want[v] = ref.argmin(), argmax_want[v] = ref.argmax();
      if constexpr (std::is_integral_v<T>)
        mean_want[v] = ref.integer_mean();
      else
        mean_want[v] = canon(double(sum_want[v]) / double(len));
    }
    std::vector<Sum> sums(count);
    eng.sum(view, per, std::span<Sum>(sums));
    expect_equal(sums, sum_want, "sum");
    const auto bsum = eng.buffer<Sum>(count);
    eng.sum(buf.matrix(s.rows, s.cols, ld), per, bsum);
    eng.synchronize();
    expect_equal(bsum.to_vector(), sum_want, "sum (Buffer)");
    if (len == 0 && count > 0) {
      test::Vector<T> out(count);
      CHECK_THROWS_AS(eng.min(view, per, std::span<T>(out)), tandem::Error);
      CHECK_THROWS_AS(eng.max(buf.matrix(s.rows, s.cols, ld), per, eng.buffer<T>(count)), tandem::Error);
      std::vector<double> mo(count);
      CHECK_THROWS_AS(eng.mean(view, per, std::span<double>(mo)), tandem::Error);
      std::vector<std::size_t> io(count);
      CHECK_THROWS_AS(eng.argmax(view, per, std::span<std::size_t>(io)), tandem::Error);
      continue;
    }
    test::Vector<T> mins(count), maxs(count);
    std::vector<double> means(count);
    std::vector<std::size_t> argmins(count), argmaxs(count);
    eng.min(view, per, std::span<T>(mins));
    eng.max(view, per, std::span<T>(maxs));
    eng.mean(view, per, std::span<double>(means));
    eng.argmin(view, per, std::span<std::size_t>(argmins));
    eng.argmax(view, per, std::span<std::size_t>(argmaxs));
    expect_equal(mins, min_want, "min");
    expect_equal(maxs, max_want, "max");
    expect_equal(means, mean_want, "mean");
    expect_equal(argmins, argmin_want, "argmin");
    expect_equal(argmaxs, argmax_want, "argmax");
    // Buffer forms, with the matrix at an offset of one row (the first row of buf is skipped).
    if (s.rows >= 2) {
      const Shape t{s.rows - 1, s.cols, s.pad};
      const auto bm = buf.matrix(t.rows, t.cols, ld, ld);
      const std::size_t tc = per == Per::row ? t.rows : t.cols;
      const auto bmin = eng.buffer<T>(tc), bmax = eng.buffer<T>(tc);
      const auto bmean = eng.buffer<double>(tc);
      const auto bargmin = eng.buffer<std::int64_t>(tc), bargmax = eng.buffer<std::int64_t>(tc);
      eng.min(bm, per, bmin);
      eng.max(bm, per, bmax);
      eng.mean(bm, per, bmean);
      eng.argmin(bm, per, bargmin);
      eng.argmax(bm, per, bargmax);
      eng.synchronize();
      const test::Vector<T> rest(m.begin() + std::ptrdiff_t(ld), m.end());
      test::Vector<T> wmin(tc), wmax(tc);
      std::vector<double> wmean(tc);
      std::vector<std::int64_t> wargmin(tc), wargmax(tc);
      for (std::size_t v = 0; v < tc; ++v) {
        const test::Vector<T> x = vector_of(rest, t, per, v);
        const auto ref = test::reduce_reference(std::span<const T>(x));
        wmin[v] = ref.min(), wmax[v] = ref.max();
        wargmin[v] = std::int64_t(ref.argmin()), wargmax[v] = std::int64_t(ref.argmax());
        if constexpr (std::is_integral_v<T>)
          wmean[v] = ref.integer_mean();
        else
          wmean[v] = canon(double(canon(ref.sum_result())) / double(x.size()));
      }
      expect_equal(bmin.to_vector(), wmin, "min (Buffer)");
      expect_equal(bmax.to_vector(), wmax, "max (Buffer)");
      expect_equal(bmean.to_vector(), wmean, "mean (Buffer)");
      expect_equal(bargmin.to_vector(), wargmin, "argmin (Buffer)");
      expect_equal(bargmax.to_vector(), wargmax, "argmax (Buffer)");
    }
  }
}

std::vector<Shape> shapes() {
  std::vector<Shape> s = {{1, 1, 0},     {1, 1, 3},     {1, 257, 0},  {257, 1, 2}, {2, 3, 1},    {3, 2, 0},
                          {7, 13, 5},    {13, 7, 0},    {31, 33, 1},  {33, 31, 0}, {63, 65, 3},  {65, 63, 0},
                          {127, 129, 0}, {129, 127, 7}, {255, 2, 1},  {2, 255, 0}, {1, 4097, 0}, {4097, 1, 0},
                          {1, 1025, 9},  {1025, 3, 0},  {5, 2049, 0}, {2049, 5, 1}};
  // Rows of 8, 16 and 32 (whole pieces of the CPU's narrow rows, backends/cpu/narrow.hpp), columns read
  // in groups of rows with the padding between them (ld 16, 64), and a slice of 5 columns of a wider matrix.
  s.insert(s.end(), {{9, 8, 1}, {100, 16, 0}, {50, 32, 0}, {130, 9, 7}, {200, 64, 0}, {70, 16, 48}, {300, 5, 100}});
  if (!test::quick()) s.push_back({1000, 1000, 3});
  return s;
}

template <class T>
void check_shapes(const tandem::Engine& eng) {
  test::SplitMix64 g{90210};
  for (const Shape& s : shapes()) {
    const std::size_t ld = s.cols + s.pad;
    test::Vector<T> m = test::random_vector<T>(s.rows * ld, g, test::Values::small_integers);
    for (std::size_t i = 0; i < s.rows; ++i)
      for (std::size_t j = s.cols; j < ld; ++j) m[i * ld + j] = poison<T>();  // must not leak
    check_matrix<T>(eng, m, s);
  }
}

}  // namespace

TANDEM_BACKEND_TEST(per_every_op_dtype_shape, "per row/col: every op, dtype and shape, ld > cols, host and Buffer") {
  test::for_each_type([&]<class T>() {  // (16-bit inputs: test_float16.cpp)
    if constexpr (!tandem::is_storage_type_v<T>) check_shapes<T>(eng);
  });
}

namespace {

// NaN, +-inf and zeros of both signs at the first, a middle and the last position of some rows and some
// columns; a row and a column of only -0.0 (their sum is -0.0); ties everywhere.
template <class T>
void check_specials(const tandem::Engine& eng) {
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const T specials[] = {nan, inf, -inf, T(-0.0), T(0.0)};
  // (40 x 1500 and 7 x 3000: wider than a CPU task's rows split well, so split by columns there.)
  for (const Shape& s : {Shape{9, 11, 2}, Shape{37, 300, 0}, Shape{300, 37, 1}, Shape{1100, 5, 0}, Shape{40, 1500, 3},
                         Shape{7, 3000, 0}, Shape{300, 100, 1}}) {
    test::SplitMix64 g{s.rows * 131 + s.cols};
    const std::size_t ld = s.cols + s.pad;
    test::Vector<T> m = test::random_vector<T>(s.rows * ld, g, test::Values::small_integers);
    for (std::size_t i = 0; i < s.rows; ++i)
      for (std::size_t j = s.cols; j < ld; ++j) m[i * ld + j] = nan;
    std::size_t k = 0;
    for (std::size_t i = 1; i + 1 < s.rows; i += 2, ++k) {  // rows: first, middle, last position
      const std::size_t pos[] = {0, s.cols / 2, s.cols - 1};
      m[i * ld + pos[k % 3]] = specials[k % 5];
      if (k % 4 == 0) m[i * ld + s.cols - 1 - pos[k % 3] / 2] = specials[k % 5];  // a second copy later
    }
    for (std::size_t j = 1; j + 1 < s.cols; j += 2, ++k) {  // columns
      const std::size_t pos[] = {0, s.rows / 2, s.rows - 1};
      m[pos[k % 3] * ld + j] = specials[(k + 1) % 5];
    }
    for (std::size_t j = 0; j < s.cols; ++j) m[j] = T(-0.0);                    // row 0: only -0.0
    for (std::size_t i = 0; i < s.rows; ++i) m[i * ld + s.cols - 1] = T(-0.0);  // last column: only -0.0
    check_matrix<T>(eng, m, s);
  }
}

}  // namespace

TANDEM_BACKEND_TEST(per_specials, "per row/col: NaN, infinities and signed zeros first, middle, last; ties") {
  test::for_each_type([&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) check_specials<T>(eng);
  });
}

TANDEM_BACKEND_TEST(per_empty, "per row/col: empty rows and columns") {
  for (const Shape& s : {Shape{0, 0, 0}, Shape{0, 5, 0}, Shape{5, 0, 0}, Shape{4, 0, 3}}) {
    std::vector<float> m(std::max<std::size_t>(1, s.rows * (s.cols + s.pad)), 1.0f);
    check_matrix<float>(eng, m, s);
    std::vector<std::int64_t> mi(m.size(), 7);
    check_matrix<std::int64_t>(eng, mi, s);
  }
  // An output of 0 results is fine for every op, even with an empty reduced dimension's partner.
  std::vector<float> none;
  CHECK_NOTHROW(eng.min(tandem::MatrixView<const float>{nullptr, 0, 4, 4}, Per::row, std::span<float>(none)));
  CHECK_NOTHROW(eng.argmax(tandem::MatrixView<const float>{nullptr, 4, 0, 0}, Per::col, std::span<std::size_t>()));
}

namespace {

template <class T>
void check_deterministic(const tandem::Engine& eng) {
  for (const Shape& s : {Shape{3, 9000, 1}, Shape{9000, 3, 2}, Shape{4097, 33, 0}, Shape{33, 4097, 0},
                         Shape{1, 100000, 0}, Shape{100000, 1, 0}, Shape{300, 200, 5}}) {
    CAPTURE(s.rows);
    CAPTURE(s.cols);
    test::SplitMix64 g{s.rows + 7 * s.cols};
    const std::size_t ld = s.cols + s.pad;
    test::Vector<T> m = test::random_vector<T>(s.rows * ld, g, test::Values::wide_range);
    for (std::size_t i = 0; i < s.rows; ++i)
      for (std::size_t j = s.cols; j < ld; ++j) m[i * ld + j] = std::numeric_limits<T>::quiet_NaN();
    const tandem::MatrixView<T> view{m.data(), s.rows, s.cols, ld};  // non-const views work too
    const tandem::Buffer<T> buf = eng.upload<T>(m);
    for (Per per : {Per::row, Per::col}) {
      CAPTURE(std::string(tandem::to_string(per)));
      const std::size_t count = per == Per::row ? s.rows : s.cols;
      test::Vector<T> want(count);
      for (std::size_t v = 0; v < count; ++v) {
        const test::Vector<T> x = vector_of(m, s, per, v);
        want[v] = test::canonical_sum(std::span<const T>(x));
      }
      test::Vector<T> got(count);
      eng.sum(view, per, got, {"auto", true});  // any contiguous range converts to the span
      expect_equal(got, want, "deterministic sum");
      const auto out = eng.buffer<T>(count);
      eng.sum(buf.matrix(s.rows, s.cols, ld), per, out, {"auto", true});
      eng.synchronize();
      expect_equal(out.to_vector(), want, "deterministic sum (Buffer)");
    }
  }
}

}  // namespace

TANDEM_BACKEND_TEST(per_deterministic, "per row/col: deterministic sums are each row's / column's canonical sum") {
  test::for_each_type([&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) check_deterministic<T>(eng);
  });
}

TANDEM_BACKEND_TEST(per_errors, "per row/col: errors at the edge") {
  std::vector<float> m(12, 1.0f);
  const tandem::MatrixView<const float> a{m.data(), 3, 4, 4};
  std::vector<float> rows(3), cols(4);
  using test::contains;
  using test::message_of;
  CHECK(contains(message_of([&] { eng.sum(a, Per::row, std::span<float>(cols)); }), "one result per row"));
  CHECK(contains(message_of([&] { eng.sum(a, Per::col, std::span<float>(rows)); }), "one result per column"));
  CHECK(contains(message_of([&] {
                   eng.sum(tandem::MatrixView<const float>{nullptr, 3, 4, 4}, Per::row, std::span<float>(rows));
                 }),
                 "null"));
  CHECK(contains(message_of([&] {
                   eng.sum(tandem::MatrixView<const float>{m.data(), 3, 4, 3}, Per::row, std::span<float>(rows));
                 }),
                 "ld"));
  CHECK(contains(message_of([&] { eng.sum(a, Per::row, std::span<float>(m.data() + 8, 3)); }), "overlaps"));
  CHECK(contains(message_of([&] { eng.sum(a, Per::row, std::span<float>(rows), {"nope"}); }), "unknown"));
  for (const auto& k : eng.reduce_kernel_info()) {
    CAPTURE(k.name);
    if (k.per_row_col) {
      CHECK_NOTHROW(eng.max(a, Per::row, std::span<float>(rows), {k.name}));
    } else {
      const std::string msg = message_of([&] { eng.max(a, Per::row, std::span<float>(rows), {k.name}); });
      CHECK(contains(msg, "does not run per-row"));
      CHECK(contains(msg, "'auto'"));
    }
  }
  CHECK(eng.reduce_kernel_info().front().per_row_col);
  // Buffers: another engine's, past the end, an empty output, output overlapping the matrix.
  const tandem::Engine other(eng.backend());
  const auto buf = eng.upload<float>(m);
  const auto out = eng.buffer<float>(3);
  CHECK(contains(message_of([&] { eng.sum(other.upload<float>(m).matrix(3, 4), Per::row, out); }), "another engine"));
  CHECK(contains(message_of([&] { eng.sum(buf.matrix(3, 4), Per::row, other.buffer<float>(3)); }), "another engine"));
  CHECK(contains(message_of([&] { eng.sum(buf.matrix(3, 4, 4, 1), Per::row, out); }), "past"));
  CHECK(contains(message_of([&] { eng.sum(buf.matrix(3, 4, 5), Per::row, out); }), "past"));
  CHECK(contains(message_of([&] { eng.sum(buf.matrix(3, 4), Per::row, tandem::Buffer<float>()); }), "elements"));
  CHECK(contains(message_of([&] { eng.sum(buf.matrix(3, 4), Per::row, eng.buffer<float>(2)); }), "at least"));
  // A larger output Buffer: results from element 0, the rest untouched.
  const auto wide = eng.upload<float>(std::vector<float>(6, -5.0f));
  eng.sum(buf.matrix(3, 4), Per::row, wide);
  eng.synchronize();
  CHECK(wide.to_vector() == std::vector<float>{4, 4, 4, -5, -5, -5});
  const auto big = eng.upload<float>(std::vector<float>(20, 1.0f));
  const auto alias = eng.wrap(big.data() + 12, 4);
  CHECK(contains(message_of([&] { eng.sum(big.matrix(3, 4, 5), Per::col, alias); }), "overlaps"));
  CHECK_NOTHROW(eng.sum(big.matrix(3, 4), Per::col, alias));  // elements 0 .. 11: separate
  eng.synchronize();
}
