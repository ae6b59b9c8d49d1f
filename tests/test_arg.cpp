// argmin / argmax on every backend, against the test-support reference (ReduceReference::argmin/argmax:
// a plain loop keeping the first position of the least / greatest element and of the first NaN):
// - every kernel whose KernelInfo lists the op, every dtype, every width of reduce_sizes(), data with
//   many ties (small integers), contiguous, strided, Buffers and Buffer views with an offset;
// - a NaN, an infinity, a zero of the other sign, or the extreme value at the first, a middle and the last
//   position, with and without a second copy later on (the first must win);
// - *_into (Buffer<int64_t> output, no wait), empty inputs, kernels that do not run the op.
#include <cmath>
#include <limits>

#include "tests/support.hpp"

using tandem::Op;

namespace {

template <class T>
test::Vector<T> tie_values(std::size_t n, test::SplitMix64& g) {
  // Values in [-8, 8]: every extreme occurs many times, so "the first" is tested everywhere.
  return test::random_vector<T>(n, g, test::Values::small_integers);
}

// Checks argmin and argmax of view (elements x[0], x[stride], ...) with every kernel that runs them.
template <class T, class View>
void check_view(const tandem::Engine& eng, const View& view, const T* x, std::size_t n, std::size_t stride) {
  const test::ReduceReference<T> ref = test::reduce_reference(x, n, stride);
  for (const tandem::KernelInfo& k : eng.reduce_kernel_info()) {
    if (!k.accepts(tandem::dtype_of<T>)) continue;
    CAPTURE(k.name);
    for (Op op : tandem::all_ops) {  // the ops that give an index (the op table's ResultKind::index)
      if (!tandem::is_arg(op)) continue;
      CAPTURE(std::string(tandem::to_string(op)));
      const auto call = [&] { return op == Op::argmin ? eng.argmin(view, {k.name}) : eng.argmax(view, {k.name}); };
      if (!k.accepts(op) || n == 0) {
        CHECK_THROWS_AS(call(), tandem::Error);
        continue;
      }
      const std::size_t got = call();
      CHECK(got == (op == Op::argmin ? ref.argmin() : ref.argmax()));
      if (k.deterministic) {  // deterministic mode changes nothing for an order-independent op
        const tandem::ReduceOptions det{k.name, true};
        CHECK((op == Op::argmin ? eng.argmin(view, det) : eng.argmax(view, det)) == got);
      }
    }
  }
}

template <class T>
void check_widths(const tandem::Engine& eng) {
  test::SplitMix64 g{202611221};
  for (std::size_t n : test::reduce_sizes()) {
    CAPTURE(n);
    const test::Vector<T> x = tie_values<T>(n, g);
    check_view<T>(eng, std::span<const T>(x), x.data(), n, 1);
    // Strided (every third element) and a Buffer view with an offset of 2.
    const std::size_t m = n / 3;
    if (n >= 1) check_view<T>(eng, tandem::StridedView<T>{x.data() + 1, m, 3}, x.data() + 1, m, 3);
    if (n >= 2) {
      const tandem::Buffer<T> buf = eng.upload<T>(x);
      check_view<T>(eng, buf.view(2, n - 2, 1), x.data() + 2, n - 2, 1);
      check_view<T>(eng, buf.view(1, m, 3), x.data() + 1, m, 3);
    }
  }
}

}  // namespace

TANDEM_BACKEND_TEST(arg_every_kernel_dtype_width, "argmin/argmax: every kernel, dtype and width, with ties") {
  test::for_each_type([&]<class T>() {  // (16-bit inputs: test_float16.cpp and the conformance matrix)
    if constexpr (!tandem::is_storage_type_v<T>) check_widths<T>(eng);
  });
}

namespace {

// One special value (and optionally a second copy of it later) among ordinary values, at the first, a
// middle and the last position; the ordinary values hold no NaN and lie strictly inside (-8, 8).
template <class T>
void check_special(const tandem::Engine& eng) {
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const test::Vector<T> specials = {nan, -nan, inf, -inf, T(-0.0), T(0.0), T(100), T(-100)};
  const std::vector<std::size_t> sizes =
      test::quick() ? std::vector<std::size_t>{1, 4097} : std::vector<std::size_t>{1, 2, 33, 4097, 1000003};
  test::SplitMix64 g{77};
  for (std::size_t n : sizes)
    for (T special : specials)
      for (std::size_t pos : {std::size_t(0), n / 2, n - 1})
        for (bool twice : {false, true}) {
          CAPTURE(n);
          CAPTURE(test::show(special));
          CAPTURE(pos);
          CAPTURE(twice);
          test::Vector<T> x = test::random_vector<T>(n, g, test::Values::small_integers);
          // Zeros: the others are zeros of the other sign, so that only the sign decides.
          const bool zero = special == T(0);
          if (zero)
            for (T& v : x) v = -special;
          else
            for (T& v : x) v = std::max(T(-7), std::min(T(7), v));
          x[pos] = special;
          if (twice && pos + 1 < n) x[n - 1] = special;
          const test::ReduceReference<T> ref = test::reduce_reference(x.data(), n, 1);
          const tandem::Buffer<T> buf = eng.upload<T>(x);
          for (const tandem::KernelInfo& k : eng.reduce_kernel_info()) {
            if (!k.accepts(Op::argmin)) continue;
            CAPTURE(k.name);
            CHECK(eng.argmin(x, {k.name}) == ref.argmin());
            CHECK(eng.argmax(x, {k.name}) == ref.argmax());
            CHECK(eng.argmin(buf, {k.name}) == ref.argmin());
            CHECK(eng.argmax(buf, {k.name}) == ref.argmax());
          }
        }
}

}  // namespace

TANDEM_BACKEND_TEST(arg_special_values, "argmin/argmax: NaN, infinities, signed zeros, extremes at each position") {
  test::for_each_type([&]<class T>() {
    if constexpr (tandem::is_floating_v<T>) check_special<T>(eng);
  });
  // Integers: the type's extremes (the identities of min and max), and inputs of nothing else.
  test::for_each_type([&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      CAPTURE(tandem::to_string(tandem::dtype_of<T>));
      for (std::size_t n : {std::size_t(77), std::size_t(1000), std::size_t(100003)}) {
        CAPTURE(n);
        std::vector<T> i(n, T(5));
        i[n - 1] = std::numeric_limits<T>::max();
        i[n / 2] = std::numeric_limits<T>::min();
        CHECK(eng.argmax(i) == n - 1);
        CHECK(eng.argmin(i) == n / 2);
        for (T v : {std::numeric_limits<T>::max(), std::numeric_limits<T>::min()}) {
          const std::vector<T> same(n, v);
          CHECK(eng.argmin(same) == 0);
          CHECK(eng.argmax(same) == 0);
        }
      }
    }
  });
}

TANDEM_BACKEND_TEST(arg_into_and_errors, "argmin/argmax: *_into a Buffer<int64_t>, empty inputs, refused kernels") {
  std::vector<float> x(5000);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = float((i * 37) % 101);  // ties: every value repeats
  std::size_t lo = 0, hi = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] < x[lo]) lo = i;
    if (x[i] > x[hi]) hi = i;
  }
  const tandem::Buffer<float> buf = eng.upload<float>(x);
  tandem::Buffer<std::int64_t> out = eng.buffer<std::int64_t>(3);
  out.upload(std::vector<std::int64_t>{-1, -1, -1});
  eng.argmin_into(buf, out, 0);
  eng.argmax_into(buf.view(10, 4000, 1), out, 2);
  eng.synchronize();
  const std::vector<std::int64_t> got = out.to_vector();
  CHECK(got[0] == std::int64_t(lo));
  CHECK(got[1] == -1);  // untouched
  std::size_t hi_view = 0;
  for (std::size_t i = 0; i < 4000; ++i)
    if (x[10 + i] > x[10 + hi_view]) hi_view = i;
  CHECK(got[2] == std::int64_t(hi_view));
  CHECK(eng.argmax(x) == hi);

  // Empty inputs throw, saying so.
  CHECK(test::contains(test::message_of([&] { (void)eng.argmin(std::vector<float>{}); }), "empty"));
  CHECK(test::contains(test::message_of([&] { eng.argmax_into(buf.view(0, 0, 1), out, 0); }), "empty"));
  CHECK_THROWS_AS(eng.argmin_into(buf, out, 3), tandem::Error);  // index outside the output

  // A kernel that does not run argmin: the error names the kernel and the op.
  for (const tandem::KernelInfo& k : eng.reduce_kernel_info())
    if (!k.accepts(Op::argmin)) {
      const std::string msg = test::message_of([&] { (void)eng.argmin(x, {k.name}); });
      CAPTURE(msg);
      CHECK(test::contains(msg, k.name));
      CHECK(test::contains(msg, "argmin"));
    }
}
