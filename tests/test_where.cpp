// ReduceOptions::where and ReduceOptions::initial (NumPy's where= and initial=) on every backend, element type
// and op, against independent references written from the definitions:
// - the result over a mask is the op over the kept elements only: the verify/ reference of those elements
//   (compacted), and initial is the reduction's first element: the reference of [initial, kept...];
// - deterministic mode's bits: test::canonical_sum of the input with the masked elements replaced by +0.0,
//   as documented (then + initial).
// Also the rules: the mask's size, min / max without initial, argmin with a mask, mean with initial, an
// integer initial out of range, Buffers and the *_into calls, every element masked, and var / std.
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "tests/support.hpp"

using tandem::Op;
using tandem::Per;
using tandem::ReduceOptions;

namespace {

// A mask of n entries: every `period`-th pattern, or random with about one in three false.
test::Vector<bool> make_mask(std::size_t n, std::uint64_t seed) {
  test::SplitMix64 g{seed};
  test::Vector<bool> m(n);
  for (std::size_t i = 0; i < n; ++i) m[i] = g.below(3) != 0;
  return m;
}

// An initial value of compute type C that the op's result type holds exactly.
template <class C>
double initial_for(Op op) {
  if (tandem::info(op).identity == tandem::Identity::one) return 2;
  if constexpr (std::is_same_v<C, bool>) return tandem::info(op).identity == tandem::Identity::highest ? 1 : 0;
  if constexpr (std::is_unsigned_v<C>)
    if (tandem::info(op).identity == tandem::Identity::lowest) return 0;
  return tandem::info(op).identity == tandem::Identity::lowest ? -3 : 3;
}

template <class T>
void check_vector(const tandem::Engine& eng, std::size_t n, std::size_t stride) {
  using C = tandem::compute_t<T>;
  test::SplitMix64 g{n * 31 + stride};
  const test::Vector<T> x = test::random_vector<T>(n * stride, g);
  const tandem::StridedView<T> view{x.data(), n, stride};
  const test::Vector<bool> mask = make_mask(n, n + 7);
  test::Vector<C> kept;
  for (std::size_t i = 0; i < n; ++i)
    if (mask[i]) kept.push_back(C(x[i * stride]));
  test::for_each_op([&]<Op O>() {
    constexpr tandem::OpInfo op = tandem::info(O);
    if constexpr (op.result != tandem::ResultKind::index) {
      for (bool with_initial : {false, true}) {
        if (op.result == tandem::ResultKind::mean && with_initial) continue;    // (mean takes no initial)
        if (op.result == tandem::ResultKind::value && !with_initial) continue;  // (min / max need it)
        if (op.result == tandem::ResultKind::mean && kept.empty()) continue;    // (thrown: where_initial_errors)
        // (initial of a sum, a compute-type element of the reference: not for bool, nor added to sumsq's squares)
        if (op.result == tandem::ResultKind::sum && with_initial && (std::is_same_v<C, bool> || O == Op::sumsq))
          continue;
        CAPTURE(n);
        CAPTURE(stride);
        CAPTURE(op.name);
        CAPTURE(with_initial);
        ReduceOptions o;
        o.where = std::span<const bool>(mask.data(), n);
        test::Vector<C> elements;
        if (with_initial) {
          o.initial = initial_for<C>(O);
          elements.push_back(C(*o.initial));
        }
        for (const C& v : kept) elements.push_back(v);
        auto ref = test::reduce_reference(std::span<const C>(elements.data(), elements.size()));
        const auto got = eng.reduce<O>(view, o);
        const test::Judgement j = test::judge_op<O, C>(got, ref);
        CHECK_MESSAGE(j.ok, op.name << " = " << test::show(got) << ", expected " << j.expected);
        // Deterministic mode's bits. (Two conditions: Clang 14 checks a call whose arguments no longer
        // depend on the lambda's parameters even inside an `if constexpr` on both.)
        if constexpr (std::is_floating_point_v<C>)
          if constexpr (O == Op::sum) {
            test::Vector<C> filled(n);
            for (std::size_t i = 0; i < n; ++i) filled[i] = mask[i] ? C(x[i * stride]) : C(0);
            C want = test::canonical_sum(std::span<const C>(filled.data(), n));
            if (with_initial) want = want + C(*o.initial);
            o.deterministic = true;
            CHECK(test::same_bits(C(eng.reduce<O>(view, o)), want));
          }
      }
    }
  });
}

template <class T>
void check_matrix(const tandem::Engine& eng, std::size_t rows, std::size_t cols) {
  using C = tandem::compute_t<T>;
  const std::size_t ld = cols + 2;
  const test::Vector<T> m = test::random_vector<T>(rows * ld, rows * 100 + cols);
  const tandem::MatrixView<const T> view{m.data(), rows, cols, ld};
  const test::Vector<bool> mask = make_mask(rows * cols, rows + cols);
  for (Per per : {Per::row, Per::col}) {
    const std::size_t count = per == Per::row ? rows : cols, length = per == Per::row ? cols : rows;
    auto kept_of = [&](std::size_t k) {
      test::Vector<C> v;
      for (std::size_t i = 0; i < length; ++i) {
        const std::size_t r = per == Per::row ? k : i, c = per == Per::row ? i : k;
        if (mask[r * cols + c]) v.push_back(C(m[r * ld + c]));
      }
      return v;
    };
    CAPTURE(rows);
    CAPTURE(cols);
    CAPTURE(to_string(per));
    ReduceOptions o;
    o.where = std::span<const bool>(mask.data(), rows * cols);
    // sum and mean over the mask; max with initial over the mask.
    std::vector<tandem::op_result_t<Op::sum, T>> sums(count);
    eng.sum(view, per, std::span(sums), o);
    bool any_empty = false;
    for (std::size_t k = 0; k < count; ++k) any_empty = any_empty || kept_of(k).empty();
    std::vector<double> means(count);
    if (any_empty)
      CHECK_THROWS_AS(eng.mean(view, per, std::span(means), o), tandem::Error);
    else
      eng.mean(view, per, std::span(means), o);
    using M = tandem::op_result_t<Op::max, T>;
    test::Vector<M> maxes(count);
    o.initial = initial_for<C>(Op::max);
    eng.max(view, per, std::span<M>(maxes.data(), count), o);
    for (std::size_t k = 0; k < count; ++k) {
      CAPTURE(k);
      test::Vector<C> v = kept_of(k);
      const auto ref = test::reduce_reference(std::span<const C>(v.data(), v.size()));
      const test::Judgement js = test::judge_op<Op::sum, C>(sums[k], ref);
      CHECK_MESSAGE(js.ok, "sum = " << test::show(sums[k]) << ", expected " << js.expected);
      if (!any_empty) {
        const test::Judgement jm = test::judge_op<Op::mean, C>(means[k], ref);
        CHECK_MESSAGE(jm.ok, "mean = " << test::show(means[k]) << ", expected " << jm.expected);
      }
      test::Vector<C> w;
      w.push_back(C(*o.initial));
      for (const C& e : v) w.push_back(e);
      const auto with = test::reduce_reference(std::span<const C>(w.data(), w.size()));
      const test::Judgement jx = test::judge_op<Op::max, C>(maxes[k], with);
      CHECK_MESSAGE(jx.ok, "max = " << test::show(maxes[k]) << ", expected " << jx.expected);
    }
  }
}

}  // namespace

TANDEM_BACKEND_TEST(where_vectors, "where/initial: every op and dtype over a mask, strided, deterministic bits") {
  test::for_each_type([&]<class T>() {
    for (std::size_t n : {0, 1, 2, 3, 31, 33, 257, 1000, 4097, 65537})
      for (std::size_t stride : {1, 3}) check_vector<T>(eng, n, stride);
  });
}

TANDEM_BACKEND_TEST(where_per_row_col, "where/initial per row/col: sum, mean, max with initial, ld > cols") {
  test::for_each_type([&]<class T>() {
    for (auto [rows, cols] :
         {std::pair<std::size_t, std::size_t>{1, 1}, {1, 33}, {33, 1}, {7, 257}, {130, 5}, {301, 257}})
      check_matrix<T>(eng, rows, cols);
  });
}

TANDEM_BACKEND_TEST(where_initial_edges, "where/initial: empty inputs, every element masked, plain equivalence") {
  const std::vector<float> x = {1.5f, -2.0f, 100.0f, 4.0f};
  const bool keep[] = {true, true, false, true}, none[] = {false, false, false, false},
             all[] = {true, true, true, true};
  CHECK(eng.sum(x, {.where = keep}) == 3.5f);
  CHECK(eng.sum(x, {.where = none}) == 0.0f);
  CHECK(!std::signbit(eng.sum(x, {.where = none})));
  CHECK(eng.sum(x, {.where = none, .initial = 7}) == 7.0f);
  CHECK(eng.min(x, {.where = none, .initial = 7}) == 7.0f);
  CHECK(eng.max(x, {.where = keep, .initial = -1e30}) == 4.0f);
  CHECK(eng.prod(x, {.where = keep, .initial = 0.5}) == -6.0f);
  CHECK(eng.mean(x, {.where = keep}) == 3.5 / 3);
  CHECK(eng.sumsq(x, {.where = keep, .initial = 1}) == 1 + 2.25f + 4 + 16);  // (initial added, not squared)
  CHECK(test::same_bits(eng.sum(x, {.deterministic = true, .where = all}), eng.sum(x, {.deterministic = true})));
  // Empty inputs: initial, as NumPy's.
  const std::vector<double> empty;
  CHECK(eng.min(empty, {.initial = 2}) == 2.0);
  CHECK(eng.sum(empty, {.initial = 2}) == 2.0);
  CHECK(eng.prod(empty, {.initial = 5}) == 5.0);
  // Integers: sums wrap as the ops' own; min / max of the type.
  const std::vector<std::int64_t> big = {std::numeric_limits<std::int64_t>::max(), 5};
  CHECK(eng.sum(big, {.initial = 1}) == std::numeric_limits<std::int64_t>::min() + 5);
  const bool second[] = {false, true};
  CHECK(eng.max(big, {.where = second, .initial = 0}) == 5);
  // 64-bit initial values are exact: the type's extremes, and 2^53 + 1.
  CHECK(eng.min(big, {.where = std::span<const bool>(none, 2), .initial = std::numeric_limits<std::int64_t>::max()}) ==
        std::numeric_limits<std::int64_t>::max());
  CHECK(eng.sum(std::vector<std::int64_t>{5, 7}, {.initial = 9007199254740993LL}) == 9007199254741005LL);
  CHECK(eng.min(std::vector<std::uint64_t>{3}, {.initial = std::numeric_limits<std::uint64_t>::max()}) == 3u);
  const std::vector<std::uint8_t> bytes = {200, 100, 7};
  CHECK(eng.min(bytes, {.where = std::span<const bool>(none, 3), .initial = 255}) == 255);
  CHECK(eng.sum(bytes, {.initial = 1}) == 308u);
  // NaN in initial propagates; -0.0 is below +0.0.
  CHECK(std::isnan(eng.min(x, {.initial = std::numeric_limits<double>::quiet_NaN()})));
  CHECK(std::signbit(eng.min(std::vector<float>{0.0f}, {.initial = -0.0})));
  CHECK(std::signbit(eng.min(std::vector<float>{-0.0f}, {.initial = 0.0})));
  CHECK(!std::signbit(eng.max(std::vector<float>{-0.0f}, {.initial = 0.0})));
  // Per row: an empty matrix row gives initial.
  std::vector<float> rows(2);
  eng.min(tandem::MatrixView<const float>{x.data(), 2, 0, 0}, Per::row, std::span(rows), {.initial = 9});
  CHECK((rows[0] == 9.0f && rows[1] == 9.0f));
  // Per row: a row with every element masked gives initial itself (its sign too).
  const bool row_mask[] = {true, true, false, false};
  eng.sum(tandem::MatrixView<const float>{x.data(), 2, 2, 2}, Per::row, std::span(rows),
          {.where = row_mask, .initial = -0.0});
  CHECK((rows[0] == -0.5f && std::signbit(rows[1])));
}

TANDEM_BACKEND_TEST(where_initial_errors, "where/initial: the calls that take neither throw, naming the argument") {
  const std::vector<float> x = {1.0f, 2.0f, 3.0f};
  const bool keep[] = {true, false, true}, none[] = {false, false, false};
  auto arg_of = [](auto&& f) {
    try {
      f();
    } catch (const tandem::Error& e) {
      return e.argument();
    }
    return tandem::Arg::none;
  };
  using tandem::Arg;
  CHECK(arg_of([&] { (void)eng.sum(x, {.where = std::span<const bool>(keep, 2)}); }) == Arg::where);  // size
  CHECK(arg_of([&] { (void)eng.min(x, {.where = keep}); }) == Arg::where);                            // no initial
  CHECK(arg_of([&] { (void)eng.argmin(x, {.where = keep}); }) == Arg::where);
  CHECK(arg_of([&] { (void)eng.argmax(x, {.initial = 1}); }) == Arg::initial);
  CHECK(arg_of([&] { (void)eng.mean(x, {.initial = 1}); }) == Arg::initial);
  CHECK(arg_of([&] { (void)eng.mean(x, {.where = none}); }) == Arg::where);  // every element masked
  const std::vector<std::int32_t> ints = {1, 2};
  CHECK(arg_of([&] { (void)eng.sum(ints, {.initial = 2.5}); }) == Arg::initial);
  CHECK(arg_of([&] { (void)eng.sum(ints, {.initial = 1e19}); }) == Arg::initial);
  CHECK(arg_of([&] { (void)eng.max(std::vector<std::int8_t>{1}, {.initial = 300}); }) == Arg::initial);
  CHECK(arg_of([&] { (void)eng.var(x, 0.0, {.initial = 1}); }) == Arg::initial);
  // A null mask with entries; a masked matrix that is null or whose ld is below cols (checked before reading).
  CHECK(arg_of([&] { (void)eng.sum(x, {.where = std::span<const bool>(static_cast<const bool*>(nullptr), 3)}); }) ==
        Arg::where);
  CHECK(arg_of([&] {
          (void)eng.var(x, 0.0, {.where = std::span<const bool>(static_cast<const bool*>(nullptr), 3)});
        }) == Arg::where);
  const bool four[] = {true, true, true, false};
  std::vector<float> two(2);
  std::vector<double> two_means(2);
  for (Op op : {Op::sum, Op::mean}) {
    auto per_row = [&](tandem::MatrixView<const float> m) {
      if (op == Op::sum)
        eng.sum(m, Per::row, std::span(two), {.where = four});
      else
        eng.mean(m, Per::row, std::span(two_means), {.where = four});
    };
    CHECK(arg_of([&] { per_row({nullptr, 2, 2, 2}); }) == Arg::input);
    CHECK(test::kind_of([&] { per_row({x.data(), 2, 2, 1}); }) == tandem::ErrorKind::value);
  }
  CHECK(arg_of([&] {
          eng.var(tandem::MatrixView<const float>{nullptr, 2, 2, 2}, Per::row, std::span(two), 0.0, {.where = four});
        }) == Arg::input);
  const tandem::Buffer<float> b = eng.upload(std::span<const float>(x));
  const tandem::Buffer<float> out = eng.buffer<float>(1);
  CHECK(arg_of([&] { eng.sum_into(b, out, 0, {.initial = 1}); }) == Arg::initial);
  CHECK(arg_of([&] { eng.sum_into(b, out, 0, {.where = keep}); }) == Arg::where);
  const tandem::BufferMatrix<float> bm{&b, 0, 1, 3, 3};
  const tandem::Buffer<float> row_out = eng.buffer<float>(1);
  CHECK(arg_of([&] { eng.sum(bm, Per::row, row_out, {.where = std::span<const bool>(keep, 2)}); }) == Arg::where);
  CHECK(arg_of([&] { (void)eng.sum(b.view(1, 3), {.where = keep}); }) == Arg::input);  // (past the Buffer)
  CHECK(arg_of([&] { (void)eng.var(b.view(1, 3), 0.0); }) == Arg::input);
}

TANDEM_BACKEND_TEST(where_buffers, "where/initial: Buffer inputs give the host inputs' results") {
  // 1, 2, 3 with the 2 masked, in a Buffer: a vector, a stride-2 view and a 2 x 3 matrix (ld 3).
  const std::vector<float> x = {1.0f, 2.0f, 3.0f, -4.0f, 8.0f, 0.5f};
  const bool keep[] = {true, false, true}, keep6[] = {true, false, true, false, true, true};
  const tandem::Buffer<float> b = eng.upload(std::span<const float>(x));
  CHECK(eng.sum(b.view(0, 3), {.where = keep}) == 4.0f);
  CHECK(eng.mean(b.view(0, 3), {.where = keep}) == 2.0);
  CHECK(eng.sum(b.view(0, 3, 2), {.where = keep}) == 9.0f);  // 1 + 8 (3 masked)
  CHECK(eng.max(b.view(0, 3), {.where = keep, .initial = -100}) == 3.0f);
  CHECK(eng.sum(b.view(0, 3), {.initial = 4}) == 10.0f);
  const tandem::BufferMatrix<float> bm{&b, 0, 2, 3, 3};
  const tandem::Buffer<float> rows = eng.buffer<float>(2);
  eng.sum(bm, Per::row, rows, {.where = keep6});
  CHECK(rows.to_vector() == std::vector<float>{4.0f, 8.5f});
  eng.sum(bm, Per::row, rows, {.where = keep6, .initial = 1});  // (combined on the host)
  CHECK(rows.to_vector() == std::vector<float>{5.0f, 9.5f});
  const tandem::Buffer<double> means = eng.buffer<double>(3);
  eng.mean(bm, Per::col, means, {.where = keep6});  // columns 1, (2 and 8: 2 masked), 3 and 0.5
  CHECK(means.to_vector() == std::vector<double>{1.0, 8.0, 1.75});
  // Integer means, exact: two int64 elements near 2^62 kept, one masked.
  const std::vector<std::int64_t> big = {std::int64_t(1) << 62, -7, (std::int64_t(1) << 62) + 2};
  const tandem::Buffer<std::int64_t> bb = eng.upload(std::span<const std::int64_t>(big));
  CHECK(eng.mean(bb, {.where = keep}) == double((std::int64_t(1) << 62) + 1));
  const tandem::Buffer<double> one_mean = eng.buffer<double>(1);
  eng.mean(tandem::BufferMatrix<std::int64_t>{&bb, 0, 1, 3, 3}, Per::row, one_mean, {.where = keep});
  CHECK(one_mean.to_vector()[0] == double((std::int64_t(1) << 62) + 1));
}

TANDEM_BACKEND_TEST(where_var_std, "where: var/std over a mask equal var/std of the kept elements") {
  test::for_each_type([&]<class T>() {
    using W = tandem::var_result_t<T>;
    for (std::size_t n : {2, 5, 33, 1000, 4097}) {
      const test::Vector<T> x = test::random_vector<T>(n, n + 3, test::Values::small_integers);
      const test::Vector<bool> mask = make_mask(n, n);
      test::Vector<T> kept;
      for (std::size_t i = 0; i < n; ++i)
        if (mask[i]) kept.push_back(x[i]);
      if (kept.size() < 2) continue;
      CAPTURE(n);
      // The two-pass sample variance of the kept elements in long double.
      long double s = 0, q = 0;
      for (const T& v : kept) s += static_cast<long double>(tandem::compute_t<T>(v));
      const long double mean = s / kept.size();
      for (const T& v : kept) {
        const long double d = static_cast<long double>(tandem::compute_t<T>(v)) - mean;
        q += d * d;
      }
      const long double want = q / (kept.size() - 1), tol = std::is_same_v<W, double> ? 1e-12 : 1e-5;
      for (bool deterministic : {false, true}) {
        ReduceOptions o{.deterministic = deterministic, .where = std::span<const bool>(mask.data(), n)};
        const W got = eng.var(std::span<const T>(x.data(), n), 1.0, o);
        CHECK(std::fabs(got - want) <= tol * want + 1e-30);
      }
      std::vector<W> rows(1);
      eng.std(tandem::MatrixView<const T>{x.data(), 1, n, n}, Per::row, std::span(rows), 1.0,
              {.where = std::span<const bool>(mask.data(), n)});
      CHECK(std::fabs(rows[0] - std::sqrt(want)) <= tol * std::sqrt(want) + 1e-30);
    }
  });
}
