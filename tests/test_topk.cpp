// Engine::topk and Engine::argsort (vectors, strided and stride-0 views, per row / column of padded matrices
// into padded outputs) on every backend and element type, against a reference written here from the
// documented order: each line's (value, index) pairs sorted by a key tuple, NaN first for topk (largest and
// smallest), last for argsort, equal values by index. Data with many ties, signed zeros and NaN; k from 1 to
// the length; the errors (k out of range, outputs too small or misshapen, null data).
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "tests/support.hpp"

using tandem::Per;

namespace {

using test::make;

// Values from a small set (ties) with, for floats, signed zeros and a NaN every 13th element past the first.
template <class T>
test::Vector<T> data(std::size_t n, std::uint64_t seed) {
  test::SplitMix64 g{seed};
  test::Vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, bool>) {
      v[i] = g.below(2) == 1;
    } else {
      const double x = std::is_unsigned_v<T> ? double(g.below(9)) : double(g.below(9)) - 4.0;
      v[i] = make<T>(x);
      if constexpr (!std::is_integral_v<T>) {
        if (x == 0.0 && g.below(2) == 1) v[i] = make<T>(-0.0);
        if (i % 13 == 5) v[i] = make<T>(std::numeric_limits<double>::quiet_NaN());
      }
    }
  }
  return v;
}

// The reference order of the indices 0 .. n - 1 of line x (x(i): element i as a double).
template <class X>
std::vector<std::int64_t> reference(std::size_t n, X&& x, bool argsort, bool largest) {
  auto key = [&](std::int64_t i) {
    const double v = x(std::size_t(i));
    const bool nan = std::isnan(v);
    const double order = nan ? 0.0 : argsort || !largest ? v : -v;
    return std::tuple{argsort ? nan : !nan, order, i};
  };
  std::vector<std::int64_t> idx(n);
  for (std::size_t i = 0; i < n; ++i) idx[i] = std::int64_t(i);
  std::sort(idx.begin(), idx.end(), [&](std::int64_t a, std::int64_t b) { return key(a) < key(b); });
  return idx;
}

template <class T>
double as_double(T v) {
  if constexpr (std::is_same_v<T, bool>)
    return v ? 1.0 : 0.0;
  else
    return double(tandem::compute_t<T>(v));
}

template <class T>
void check_type(const tandem::Engine& eng) {
  CAPTURE(std::string(test::type_name<T>()));
  for (std::size_t n :
       {std::size_t(1), std::size_t(2), std::size_t(7), std::size_t(33), std::size_t(257), std::size_t(4097)}) {
    CAPTURE(n);
    const auto x = data<T>(3 * n + 2, n);
    for (std::size_t k : {std::size_t(1), std::size_t(2), n / 2 + 1, n}) {
      if (k > n) continue;
      CAPTURE(k);
      for (bool largest : {true, false}) {
        CAPTURE(largest);
        // A strided view (every third element, from 1) and a span.
        test::Vector<T> values(k);
        std::vector<std::int64_t> indices(k);
        eng.topk(tandem::StridedView<T>{x.data() + 1, n, 3}, k, std::span(values), std::span(indices), {largest});
        const auto want = reference(
            n, [&](std::size_t i) { return as_double(x[1 + 3 * i]); }, false, largest);
        for (std::size_t r = 0; r < k; ++r) {
          CHECK(indices[r] == want[r]);
          CHECK(test::same_bits(values[r], x[1 + 3 * std::size_t(want[r])]));
        }
        eng.topk(std::span<const T>(x.data(), n), k, std::span(values), std::span(indices), {largest});
        const auto flat = reference(
            n, [&](std::size_t i) { return as_double(x[i]); }, false, largest);
        for (std::size_t r = 0; r < k; ++r) CHECK(indices[r] == flat[r]);
      }
    }
    // Stride 0: one element n times, every index a tie: 0, 1, 2, ...
    test::Vector<T> v2(2);
    std::vector<std::int64_t> i2(2);
    if (n >= 2) {
      eng.topk(tandem::StridedView<T>{x.data() + 4, n, 0}, 2, std::span(v2), std::span(i2));
      CHECK(i2[0] == 0);
      CHECK(i2[1] == 1);
    }
  }
  // Per row and per column of a padded matrix into padded outputs.
  for (const auto& shape : {std::pair<std::size_t, std::size_t>{5, 9}, {40, 3}, {1, 17}, {17, 1}}) {
    const std::size_t rows = shape.first, cols = shape.second;
    CAPTURE(rows);
    CAPTURE(cols);
    const std::size_t ld = cols + 2;
    const auto m = data<T>(rows * ld, rows * 7 + cols);
    const tandem::MatrixView<const T> a{m.data(), rows, cols, ld};
    for (Per per : {Per::row, Per::col}) {
      CAPTURE(std::string(tandem::to_string(per)));
      const std::size_t lines = per == Per::row ? rows : cols, length = per == Per::row ? cols : rows;
      auto elem = [&](std::size_t line, std::size_t i) {
        return per == Per::row ? m[line * ld + i] : m[i * ld + line];
      };
      const std::size_t k = (length + 1) / 2;
      const std::size_t vr = per == Per::row ? lines : k, vc = per == Per::row ? k : lines, vld = vc + 1;
      test::Vector<T> values(vr * vld);
      std::vector<std::int64_t> indices(vr * vld);
      std::vector<std::int64_t> sorted(rows * (cols + 3));
      for (bool largest : {true, false}) {
        eng.topk(a, per, k, tandem::MatrixView<T>{values.data(), vr, vc, vld},
                 tandem::MatrixView<std::int64_t>{indices.data(), vr, vc, vld}, {largest});
        for (std::size_t line = 0; line < lines; ++line) {
          const auto want = reference(
              length, [&](std::size_t i) { return as_double(elem(line, i)); }, false, largest);
          for (std::size_t r = 0; r < k; ++r) {
            const std::size_t at = per == Per::row ? line * vld + r : r * vld + line;
            CHECK(indices[at] == want[r]);
            CHECK(test::same_bits(values[at], elem(line, std::size_t(want[r]))));
          }
        }
      }
      eng.argsort(a, per, tandem::MatrixView<std::int64_t>{sorted.data(), rows, cols, cols + 3});
      for (std::size_t line = 0; line < lines; ++line) {
        const auto want = reference(
            length, [&](std::size_t i) { return as_double(elem(line, i)); }, true, true);
        for (std::size_t r = 0; r < length; ++r)
          CHECK(sorted[per == Per::row ? line * (cols + 3) + r : r * (cols + 3) + line] == want[r]);
      }
    }
  }
}

// Buffers (on CUDA a kernel of its own for k <= 1024, else the host's): rows, columns and vector views, lines
// whose keys fit in a GPU block's shared memory and lines that do not, k from 1 past 1024; values with many
// ties (data()) and, for floats, distinct random ones. Against reference(), outputs' padding untouched.
template <class T>
void check_buffers(const tandem::Engine& eng, bool distinct) {
  CAPTURE(std::string(test::type_name<T>()));
  CAPTURE(distinct);
  struct Shape {
    std::size_t rows, cols;
    Per per;
  };
  const std::vector<Shape> shapes =
      test::quick()
          ? std::vector<Shape>{{1, 70001, Per::row}, {300, 37, Per::row}}
          : std::vector<Shape>{{3, 40000, Per::row}, {2, 70001, Per::row}, {2, 200003, Per::row}, {300, 37, Per::row},
                               {1, 1, Per::row},     {4097, 3, Per::col},  {1500, 2, Per::col}};
  for (const Shape& sh : shapes) {
    const std::size_t ld = sh.cols + 3, lines = sh.per == Per::row ? sh.rows : sh.cols,
                      length = sh.per == Per::row ? sh.cols : sh.rows;
    CAPTURE(sh.rows);
    CAPTURE(sh.cols);
    auto m = data<T>(sh.rows * ld, sh.rows + 3 * sh.cols);
    if constexpr (std::is_floating_point_v<T>)
      if (distinct) {
        test::SplitMix64 g{sh.rows * 5 + sh.cols};
        for (auto& v : m) v = T(std::ldexp(double(g.below(1u << 30)) - double(1u << 29), -int(g.below(40))));
      }
    const auto in = eng.upload<T>(m);
    auto elem = [&](std::size_t line, std::size_t i) {
      return sh.per == Per::row ? m[line * ld + i] : m[i * ld + line];
    };
    for (std::size_t k : {std::size_t(1), std::size_t(2), std::size_t(64), std::size_t(1025), length}) {
      if (k > length) continue;
      CAPTURE(k);
      const std::size_t vr = sh.per == Per::row ? lines : k, vc = sh.per == Per::row ? k : lines, vld = vc + 2;
      for (bool largest : {true, false}) {
        CAPTURE(largest);
        const test::Vector<T> v0(vr * vld, make<T>(7));
        const std::vector<std::int64_t> i0(vr * vld, -5);
        auto vb = eng.upload<T>(v0);
        auto ib = eng.upload<std::int64_t>(i0);
        eng.topk(in.matrix(sh.rows, sh.cols, ld), sh.per, k, vb.matrix(vr, vc, vld), ib.matrix(vr, vc, vld), {largest});
        const auto values = vb.to_vector();
        const auto indices = ib.to_vector();
        std::size_t bad = 0;
        for (std::size_t line = 0; line < lines; ++line) {
          const auto want = reference(
              length, [&](std::size_t i) { return as_double(elem(line, i)); }, false, largest);
          for (std::size_t r = 0; r < k; ++r) {
            const std::size_t at = sh.per == Per::row ? line * vld + r : r * vld + line;
            bad += indices[at] != want[r] || !test::same_bits(values[at], elem(line, std::size_t(want[r])));
          }
        }
        for (std::size_t at = 0; at < vr * vld; ++at)
          if (at % vld >= vc) bad += indices[at] != -5 || !test::same_bits(values[at], v0[at]);
        CHECK(bad == 0);
      }
    }
  }
  // A vector view (every other element from 1) into views of k elements.
  const std::size_t n = 9001, k = 100;
  const auto x = data<T>(2 * n + 1, 77);
  const auto xb = eng.upload<T>(x);
  auto vb = eng.buffer<T>(k + 5);
  auto ib = eng.buffer<std::int64_t>(k + 5);
  eng.topk(xb.view(1, n, 2), k, vb.view(5, k), ib.view(5, k));
  const auto want = reference(
      n, [&](std::size_t i) { return as_double(x[1 + 2 * i]); }, false, true);
  const auto got = ib.to_vector();
  std::size_t bad = 0;
  for (std::size_t r = 0; r < k; ++r) bad += got[5 + r] != want[r];
  CHECK(bad == 0);
}

// argsort of Buffers (on CUDA each line sorted on the GPU): rows and columns, short and long lines, into an
// output with padding; against reference(), the padding untouched.
template <class T>
void check_argsort_buffers(const tandem::Engine& eng) {
  CAPTURE(std::string(test::type_name<T>()));
  struct Shape {
    std::size_t rows, cols;
    Per per;
  };
  const std::vector<Shape> shapes =
      test::quick() ? std::vector<Shape>{{2, 5001, Per::row}, {300, 37, Per::row}, {999, 3, Per::col}}
                    : std::vector<Shape>{{3, 40000, Per::row}, {2, 70001, Per::row}, {300, 37, Per::row},
                                         {1, 1, Per::row},     {4097, 3, Per::col},  {1500, 2, Per::col}};
  for (const Shape& sh : shapes) {
    CAPTURE(sh.rows);
    CAPTURE(sh.cols);
    const std::size_t ld = sh.cols + 3, lines = sh.per == Per::row ? sh.rows : sh.cols,
                      length = sh.per == Per::row ? sh.cols : sh.rows, old = sh.cols + 2;
    const auto m = data<T>(sh.rows * ld, sh.rows + 5 * sh.cols);
    const auto in = eng.upload<T>(m);
    auto ob = eng.upload<std::int64_t>(std::vector<std::int64_t>(sh.rows * old, -5));
    eng.argsort(in.matrix(sh.rows, sh.cols, ld), sh.per, ob.matrix(sh.rows, sh.cols, old));
    const auto got = ob.to_vector();
    std::size_t bad = 0;
    for (std::size_t line = 0; line < lines; ++line) {
      const auto want = reference(
          length, [&](std::size_t i) { return as_double(sh.per == Per::row ? m[line * ld + i] : m[i * ld + line]); },
          true, true);
      for (std::size_t r = 0; r < length; ++r)
        bad += got[sh.per == Per::row ? line * old + r : r * old + line] != want[r];
    }
    for (std::size_t at = 0; at < got.size(); ++at)
      if (at % old >= sh.cols) bad += got[at] != -5;
    CHECK(bad == 0);
  }
}

}  // namespace

TANDEM_BACKEND_TEST(topk_buffers, "topk of Buffers: rows, columns, vectors; long lines, k past 1024; every type") {
  check_buffers<float>(eng, false);
  check_buffers<float>(eng, true);
  check_buffers<double>(eng, true);
  check_buffers<tandem::bfloat16>(eng, false);
  check_buffers<tandem::half>(eng, false);
  check_buffers<std::int32_t>(eng, false);
  check_buffers<std::int64_t>(eng, false);
  check_buffers<std::uint8_t>(eng, false);
  check_buffers<bool>(eng, false);
}

TANDEM_BACKEND_TEST_UNLESS(topk_long_row_large_k,
                           "topk of Buffers: a row of 3,000,000 floats with k = 1024 (on CUDA: more pieces than shared "
                           "memory holds the results of: the host's)",
                           test::quick()) {
  const std::size_t n = 3000000, k = 1024;
  test::Vector<float> x(n);
  test::SplitMix64 g{99};
  for (auto& v : x) v = float(int(g.below(1u << 20)) - (1 << 19));  // (ties)
  const auto xb = eng.upload<float>(x);
  auto vb = eng.buffer<float>(k);
  auto ib = eng.buffer<std::int64_t>(k);
  eng.topk(xb.matrix(1, n), Per::row, k, vb.matrix(1, k), ib.matrix(1, k));
  const auto want = reference(
      n, [&](std::size_t i) { return double(x[i]); }, false, true);
  const auto got = ib.to_vector();
  std::size_t bad = 0;
  for (std::size_t r = 0; r < k; ++r) bad += got[r] != want[r];
  CHECK(bad == 0);
}

TANDEM_BACKEND_TEST(argsort_buffers, "argsort of Buffers: rows and columns, long lines, padded output; every type") {
  check_argsort_buffers<float>(eng);
  check_argsort_buffers<double>(eng);
  check_argsort_buffers<tandem::bfloat16>(eng);
  check_argsort_buffers<tandem::half>(eng);
  check_argsort_buffers<std::int8_t>(eng);
  check_argsort_buffers<std::int32_t>(eng);
  check_argsort_buffers<std::int64_t>(eng);
  check_argsort_buffers<std::uint8_t>(eng);
  check_argsort_buffers<std::uint64_t>(eng);
  check_argsort_buffers<bool>(eng);
}

TANDEM_BACKEND_TEST(topk_and_argsort, "topk and argsort: every type, vectors, views, rows and columns") {
  check_type<float>(eng);
  check_type<double>(eng);
  check_type<tandem::bfloat16>(eng);
  check_type<tandem::half>(eng);
  check_type<std::int32_t>(eng);
  check_type<std::int64_t>(eng);
  check_type<std::uint8_t>(eng);
  check_type<bool>(eng);
}

TANDEM_BACKEND_TEST(topk_errors, "topk and argsort: k out of range, outputs too small or misshapen, null data") {
  using K = tandem::ErrorKind;
  const std::vector<float> x = {3, 1, 2, 5};
  std::vector<float> v(4);
  std::vector<std::int64_t> i(4);
  auto topk = [&](std::size_t k, std::size_t vs, std::size_t is) {
    return [&, k, vs, is] { eng.topk(std::span(x), k, std::span(v.data(), vs), std::span(i.data(), is)); };
  };
  CHECK(test::kind_of(topk(0, 4, 4)) == K::value);
  CHECK(test::contains(test::message_of(topk(5, 4, 4)), "1 <= k <= 4"));
  CHECK(test::kind_of(topk(2, 1, 4)) == K::value);
  CHECK(test::contains(test::message_of(topk(2, 4, 1)), "indices has 1 elements for 2 results"));
  const tandem::MatrixView<const float> a{x.data(), 2, 2, 2};
  CHECK(test::contains(test::message_of([&] {
                         eng.topk(a, Per::row, 1, tandem::MatrixView<float>{v.data(), 1, 2, 2},
                                  tandem::MatrixView<std::int64_t>{i.data(), 2, 1, 1});
                       }),
                       "values is 1 x 2 but the results are 2 x 1"));
  CHECK(test::kind_of([&] {
          eng.argsort(a, Per::col, tandem::MatrixView<std::int64_t>{i.data(), 2, 1, 1});
        }) == K::value);
  CHECK(test::kind_of([&] {
          eng.topk(tandem::StridedView<float>{nullptr, 3, 1}, 1, std::span(v.data(), 1), std::span(i.data(), 1));
        }) == K::value);
  CHECK(test::kind_of([&] {
          eng.argsort(tandem::MatrixView<const float>{x.data(), 2, 3, 2}, Per::row,
                      tandem::MatrixView<std::int64_t>{i.data(), 2, 3, 3});
        }) == K::value);  // ld < cols
  // Buffers: k out of range, misshapen outputs, outputs over the input or each other, past their Buffer
  const auto xb = eng.upload<float>(x);
  auto vb = eng.buffer<float>(4);
  auto ib = eng.buffer<std::int64_t>(4);
  const auto am = xb.matrix(2, 2);
  CHECK(test::contains(test::message_of([&] { eng.topk(am, Per::row, 3, vb.matrix(2, 3), ib.matrix(2, 3)); }),
                       "1 <= k <= 2"));
  CHECK(test::contains(test::message_of([&] { eng.topk(am, Per::row, 1, vb.matrix(1, 2), ib.matrix(2, 1)); }),
                       "values is 1 x 2 but the results are 2 x 1"));
  CHECK(test::contains(test::message_of([&] { eng.topk(am, Per::row, 1, xb.matrix(2, 1, 1, 2), ib.matrix(2, 1)); }),
                       "overlaps the input"));
  CHECK(test::kind_of([&] { eng.topk(am, Per::row, 1, vb.matrix(2, 1, 1, 3), ib.matrix(2, 1)); }) == K::value);
  CHECK(test::kind_of([&] { eng.topk(xb.view(0, 4), 5, vb.view(0, 4), ib.view(0, 4)); }) == K::value);
  CHECK(test::kind_of([&] { eng.topk(xb.view(0, 4), 2, vb.view(0, 1), ib.view(0, 2)); }) == K::value);
  // ld 0 (every row the first) is refused on every backend, as for host memory; a vector of stride 0 is taken
  CHECK(test::kind_of([&] {
          eng.topk(tandem::BufferMatrix<float>{&xb, 0, 2, 2, 0}, Per::row, 1, vb.matrix(2, 1), ib.matrix(2, 1));
        }) == K::value);
  eng.topk(xb.view(1, 3, 0), 2, vb.view(0, 2), ib.view(0, 2));
  CHECK(ib.to_vector()[0] == 0);
  CHECK(ib.to_vector()[1] == 1);
  // No lines: nothing to write, outputs without a Buffer
  const tandem::Buffer<float> none_v;
  const tandem::Buffer<std::int64_t> none_i;
  CHECK_NOTHROW(eng.topk(xb.matrix(0, 4), Per::row, 3, none_v.matrix(0, 3), none_i.matrix(0, 3)));
  // argsort of Buffers: the output misshapen, of another type's Buffer... (int64 only), over the input
  auto sb = eng.buffer<std::int64_t>(4);
  CHECK(test::contains(test::message_of([&] { eng.argsort(am, Per::row, sb.matrix(1, 2)); }),
                       "argsort: the output is 1 x 2 but the results are 2 x 2"));
  CHECK(test::kind_of([&] { eng.argsort(am, Per::row, sb.matrix(2, 2, 3)); }) == K::value);  // past its Buffer
  const auto ib8 = eng.upload<std::int64_t>(std::vector<std::int64_t>{4, 3, 2, 1, 0, 0, 0, 0});
  CHECK(test::contains(test::message_of([&] { eng.argsort(ib8.matrix(2, 2), Per::row, ib8.matrix(2, 2, 2, 2)); }),
                       "overlaps the input"));
  CHECK_NOTHROW(eng.argsort(xb.matrix(0, 4), Per::row, none_i.matrix(0, 4)));
  const tandem::Engine other(eng.backend());
  const auto ob = other.upload<float>(x);
  CHECK(test::contains(
      test::message_of([&] { eng.topk(ob.matrix(2, 2), Per::row, 1, vb.matrix(2, 1), ib.matrix(2, 1)); }),
      "another engine"));
}
