// topk and argsort in the conformance matrix (conformance.hpp): element type x data (ties from a small set;
// random or full-range; NaN, inf and signed zeros among ties) x length (1, 2, 7, 64, 4097) x k (1, 2,
// n / 2 + 1, n) x order (largest, smallest) x form (span, StridedView with stride 3 and 0, per row and per
// column of a matrix with ld > cols into outputs with ld > their width, their padding poisoned; host memory and
// Buffers, which CUDA runs on the GPU), and argsort per row and per column (host memory and Buffers). Each result
// is judged against a reference written here from the documented order (include/tandem/engine.hpp): topk takes
// NaN first (by index), then the values from the most extreme, equal values by index; argsort ascending,
// equal values by index, NaN last. The indices must be exactly the reference's, the values the elements'
// bits, the outputs' padding untouched. k = 0 and k past the length must throw tandem::Error.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "verify/cases.hpp"
#include "verify/rng.hpp"

namespace tandem_verify::conformance {
namespace {

enum class Kind { ties, random, specials };
constexpr const char* kKindNames[] = {"ties", "random", "nan/inf/-0"};

template <class T>
bool is_nan(T v) {
  if constexpr (tandem::is_floating_v<T>)
    return std::isnan(tandem::compute_t<T>(v));
  else
    return false;
}

template <class T>
Vector<T> elements(Kind kind, std::size_t n, std::uint64_t seed) {
  SplitMix64 g{seed};
  if (kind == Kind::random) return random_vector<T>(n, g, std::is_integral_v<T> ? Values::full_range : Values::uniform);
  Vector<T> x = random_vector<T>(n, g, Values::small_integers);  // (17 values: many ties)
  if constexpr (std::is_same_v<T, bool>) {
    return x;
  } else if constexpr (tandem::is_floating_v<T>) {
    using C = tandem::compute_t<T>;
    if (kind == Kind::specials)
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t r = g.next() % 8;
        if (r == 0) x[i] = T(std::numeric_limits<C>::quiet_NaN());
        if (r == 1) x[i] = T(std::numeric_limits<C>::infinity());
        if (r == 2) x[i] = T(-C(0));
        if (r == 3) x[i] = T(C(0));
        if (r == 4) x[i] = T(-std::numeric_limits<C>::infinity());
      }
  }
  return x;
}

template <class T>
std::string shown(T v) {
  if constexpr (std::is_same_v<T, bool>)
    return v ? "true" : "false";
  else
    return show(tandem::compute_t<T>(v));
}

// The documented order of the indices of one line (element i: at(i)): topk's (largest or smallest) or
// argsort's. Values are compared as the compute type (16-bit ones as the floats they are), so -0 == +0.
template <class T, class At>
std::vector<std::int64_t> reference(std::size_t n, At&& at, bool argsort, bool largest) {
  using C = tandem::compute_t<T>;
  std::vector<std::int64_t> idx(n);
  std::iota(idx.begin(), idx.end(), std::int64_t(0));
  std::stable_sort(idx.begin(), idx.end(), [&](std::int64_t a, std::int64_t b) {
    const T x = at(std::size_t(a)), y = at(std::size_t(b));
    const bool nx = is_nan(x), ny = is_nan(y);
    if (nx || ny) return argsort ? (!nx && ny) : (nx && !ny);  // NaN last for argsort, first for topk
    const C cx = C(x), cy = C(y);
    return argsort || !largest ? cx < cy : cx > cy;  // (stable: equal values keep their index order)
  });
  return idx;
}

// "" when line `got` (k indices and values, the v-th at got_index(v) / got_value(v)) is the reference's.
template <class T, class At, class GotIndex, class GotValue>
std::string judge_line(std::size_t k, const std::vector<std::int64_t>& want, At&& at, GotIndex&& got_index,
                       GotValue&& got_value) {
  for (std::size_t v = 0; v < k; ++v) {
    const std::int64_t i = got_index(v);
    if (i != want[v])
      return "result " + std::to_string(v) + ": index " + std::to_string(i) + ", expected " + std::to_string(want[v]);
    if (!same_bits(got_value(v), at(std::size_t(i))))
      return "result " + std::to_string(v) + ": value " + shown(got_value(v)) + " is not element " + std::to_string(i);
  }
  return {};
}

template <class T>
void cases(const tandem::Engine& eng, Report& report) {
  const std::string backend = backend_name(eng), type = type_name<T>();
  const tandem::KernelInfo kernel = eng.reduce_kernel_info().front();  // (a copy: the table is a temporary)
  const bool quick = report.options.quick;
  const std::vector<std::size_t> lengths =
      quick ? std::vector<std::size_t>{1, 7, 4097} : std::vector<std::size_t>{1, 2, 7, 64, 4097};
  const T pad = poison<T>(false);
  for (Kind kind : {Kind::ties, Kind::random, Kind::specials}) {
    if (kind == Kind::specials && !tandem::is_floating_v<T>) continue;
    for (std::size_t n : lengths) {
      const Vector<T> x = elements<T>(kind, n, 1000 * n + std::size_t(kind));
      const std::string data = backend + ": " + type + " " + kKindNames[int(kind)] + " n=" + std::to_string(n);
      std::vector<std::size_t> ks = {1, 2, n / 2 + 1, n};
      std::sort(ks.begin(), ks.end());
      ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
      std::erase_if(ks, [&](std::size_t k) { return k > n; });
      // Strided copies: every third element, the others poison; and the one element of stride 0.
      Vector<T> strided(3 * n, pad);
      for (std::size_t i = 0; i < n; ++i) strided[3 * i] = x[i];
      // A 3 x n matrix (rows: x rotated by 0, 1, 2) with ld n + 2, and its transpose n x 3 with ld 5.
      const std::size_t lines = 3, ldr = n + 2, ldc = lines + 2;
      Vector<T> rows(lines * ldr, pad), cols(n * ldc, pad);
      for (std::size_t r = 0; r < lines; ++r)
        for (std::size_t j = 0; j < n; ++j) rows[r * ldr + j] = cols[j * ldc + r] = x[(j + r) % n];
      auto line = [&](std::size_t r) { return [&x, r, n](std::size_t j) { return x[(j + r) % n]; }; };
      for (bool largest : {true, false}) {
        const tandem::TopkOptions o{largest};
        for (std::size_t k : ks) {
          const std::string what = data + " k=" + std::to_string(k) + (largest ? " largest" : " smallest");
          // Vectors: span, stride 3, stride 0.
          for (int form = 0; form < 3; ++form) {
            const std::string name = what + (form == 0 ? " (span)" : form == 1 ? " (stride 3)" : " (stride 0)");
            Vector<T> values(k + 1, pad);
            Vector<std::int64_t> indices(k + 1, -7);
            auto at = [&](std::size_t i) { return form == 2 ? x[0] : x[i]; };
            one_case(
                report, eng, name, false, kernel,
                [&] {
                  const std::span<T> vs(values.data(), k);
                  const std::span<std::int64_t> is(indices.data(), k);
                  if (form == 0) eng.topk(std::span<const T>(x.data(), n), k, vs, is, o);
                  if (form == 1) eng.topk(tandem::StridedView<T>{strided.data(), n, 3}, k, vs, is, o);
                  if (form == 2) eng.topk(tandem::StridedView<T>{x.data(), n, 0}, k, vs, is, o);
                  return 0;
                },
                [&](int) -> std::string {
                  if (!same_bits(values[k], pad) || indices[k] != -7) return "wrote past its k results";
                  return judge_line<T>(
                      k, reference<T>(n, at, false, largest), at, [&](std::size_t v) { return indices[v]; },
                      [&](std::size_t v) { return values[v]; });
                });
          }
          // Per row (3 x k results, ld k + 1) and per column (k x 3 results, ld 4), of host memory and of
          // Buffers (on CUDA a kernel of its own).
          for (tandem::Per per : {tandem::Per::row, tandem::Per::col})
            for (bool in_buffer : {false, true}) {
              const bool by_row = per == tandem::Per::row;
              const std::size_t out_ld = by_row ? k + 1 : lines + 1, out_rows = by_row ? lines : k;
              Vector<T> values(out_rows * out_ld, pad);
              Vector<std::int64_t> indices(out_rows * out_ld, -7);
              one_case(
                  report, eng, what + (by_row ? " (per row" : " (per column") + (in_buffer ? ", Buffers)" : ")"), false,
                  kernel,
                  [&] {
                    const tandem::MatrixView<const T> a = by_row
                                                              ? tandem::MatrixView<const T>{rows.data(), lines, n, ldr}
                                                              : tandem::MatrixView<const T>{cols.data(), n, lines, ldc};
                    const std::size_t oc = by_row ? k : lines;
                    if (in_buffer) {
                      const auto ab = eng.upload<T>(std::span<const T>(a.data, (a.rows - 1) * a.ld + a.cols));
                      auto vb = eng.upload<T>(values);
                      auto ib = eng.upload<std::int64_t>(indices);
                      eng.topk(ab.matrix(a.rows, a.cols, a.ld), per, k, vb.matrix(out_rows, oc, out_ld),
                               ib.matrix(out_rows, oc, out_ld), o);
                      vb.download(values), ib.download(indices);
                      return 0;
                    }
                    eng.topk(a, per, k, tandem::MatrixView<T>{values.data(), out_rows, oc, out_ld},
                             tandem::MatrixView<std::int64_t>{indices.data(), out_rows, oc, out_ld}, o);
                    return 0;
                  },
                  [&](int) -> std::string {
                    auto slot = [&](std::size_t l, std::size_t v) { return by_row ? l * out_ld + v : v * out_ld + l; };
                    for (std::size_t p = 0; p < values.size(); ++p) {
                      const bool used = by_row ? p % out_ld < k : p % out_ld < lines;
                      if (!used && (!same_bits(values[p], pad) || indices[p] != -7)) return "wrote into the padding";
                    }
                    return first_wrong(lines, slice_name(per), [&](std::size_t l) {
                      return judge_line<T>(
                          k, reference<T>(n, line(l), false, largest), line(l),
                          [&](std::size_t v) { return indices[slot(l, v)]; },
                          [&](std::size_t v) { return values[slot(l, v)]; });
                    });
                  });
            }
        }
        // k = 0 and k past the length: errors.
        for (std::size_t k : {std::size_t(0), n + 1}) {
          Vector<T> values(k + 1, pad);
          Vector<std::int64_t> indices(k + 1, -7);
          one_case(
              report, eng, data + " k=" + std::to_string(k) + (largest ? " largest" : " smallest") + " (refused)", true,
              kernel,
              [&] {
                eng.topk(std::span<const T>(x.data(), n), k, std::span<T>(values.data(), k),
                         std::span<std::int64_t>(indices.data(), k), o);
                return 0;
              },
              [](int) { return std::string(); });
        }
      }
      // argsort per row (ld n + 3) and per column (ld 4), of host memory and of Buffers (on CUDA sorted on the GPU).
      for (tandem::Per per : {tandem::Per::row, tandem::Per::col})
        for (bool in_buffer : {false, true}) {
          const bool by_row = per == tandem::Per::row;
          const std::size_t out_ld = by_row ? n + 3 : lines + 1, out_rows = by_row ? lines : n;
          Vector<std::int64_t> out(out_rows * out_ld, -7);
          one_case(
              report, eng,
              data + (by_row ? " argsort (per row" : " argsort (per column") + (in_buffer ? ", Buffers)" : ")"), false,
              kernel,
              [&] {
                const tandem::MatrixView<const T> a = by_row ? tandem::MatrixView<const T>{rows.data(), lines, n, ldr}
                                                             : tandem::MatrixView<const T>{cols.data(), n, lines, ldc};
                const std::size_t oc = by_row ? n : lines;
                if (in_buffer) {
                  const auto ab = eng.upload<T>(std::span<const T>(a.data, (a.rows - 1) * a.ld + a.cols));
                  auto ob = eng.upload<std::int64_t>(out);
                  eng.argsort(ab.matrix(a.rows, a.cols, a.ld), per, ob.matrix(out_rows, oc, out_ld));
                  ob.download(out);
                  return 0;
                }
                eng.argsort(a, per, tandem::MatrixView<std::int64_t>{out.data(), out_rows, oc, out_ld});
                return 0;
              },
              [&](int) -> std::string {
                auto slot = [&](std::size_t l, std::size_t v) { return by_row ? l * out_ld + v : v * out_ld + l; };
                for (std::size_t p = 0; p < out.size(); ++p)
                  if (p % out_ld >= (by_row ? n : lines) && out[p] != -7) return "wrote into the padding";
                return first_wrong(lines, slice_name(per), [&](std::size_t l) {
                  const std::vector<std::int64_t> want = reference<T>(n, line(l), true, true);
                  for (std::size_t v = 0; v < n; ++v)
                    if (out[slot(l, v)] != want[v])
                      return "position " + std::to_string(v) + ": index " + std::to_string(out[slot(l, v)]) +
                             ", expected " + std::to_string(want[v]);
                  return std::string();
                });
              });
        }
    }
  }
}

}  // namespace

void run_topk(const tandem::Engine& eng, Report& report) {
  for_each_type([&]<class T>() { cases<T>(eng, report); });
}

}  // namespace tandem_verify::conformance
