// var and std in the conformance matrix (conformance.hpp): element type x data x size x layout x form (span,
// std::vector, StridedView with stride 3 and 0, views of a Buffer at offset 1 with stride 1, 3 and 0, per row
// and per column with ld > cols and ld 0 of host memory and of a Buffer) x mask (none,
// or ReduceOptions::where keeping about two elements in three) x ddof (0, 1) x deterministic off / on, with
// kernel "auto" (the kernel the two passes run). Each result is judged against references written here from
// the documented definition (include/tandem/engine.hpp):
// - default mode: the two-pass variance of the kept elements in long double, within the bound of two passes
//   in the result type;
// - deterministic mode: the documented steps, bit for bit: the mean (the canonical sum of the elements as
//   doubles, the masked ones as +0.0, or an integer input's exact sum; divided by the number kept) rounded to
//   the result type, each deviation (0 where masked) and its square rounded once, the canonical sum of the
//   squares, one division by kept - ddof, std's sqrt; and the same bits on every backend run in the process.
// kept - ddof <= 0 must throw tandem::Error.
#include <cmath>
#include <span>
#include <stdexcept>

#include "verify/cases.hpp"
#include "verify/rng.hpp"

namespace tandem_verify::conformance {
namespace {

enum class Kind { exact, random, specials, full_range };
constexpr const char* kKindNames[] = {"exact", "random", "nan/inf", "full-range"};

template <class T>
std::vector<Kind> kinds(bool quick) {
  if constexpr (std::is_integral_v<T>)
    return {Kind::exact, Kind::full_range};
  else if (quick)
    return {Kind::exact, Kind::specials};
  else
    return {Kind::exact, Kind::random, Kind::specials};
}

template <class T>
Vector<T> elements(Kind k, std::size_t n, std::uint64_t seed) {
  SplitMix64 g{seed};
  const Values v = k == Kind::exact        ? Values::small_integers
                   : k == Kind::full_range ? Values::full_range
                                           : Values::uniform;
  Vector<T> x = random_vector<T>(n, g, v);
  if constexpr (tandem::is_floating_v<T>)
    if (k == Kind::specials && n > 2) {  // a NaN in the middle, +inf last
      using C = tandem::compute_t<T>;
      x[n / 2] = T(std::numeric_limits<C>::quiet_NaN());
      x[n - 1] = T(std::numeric_limits<C>::infinity());
    }
  return x;
}

// The elements of one reduction (a vector, a row or a column) and their mask (empty: every one kept).
template <class T>
struct Slice {
  Vector<T> x;
  Vector<bool> keep;
  bool kept(std::size_t i) const { return keep.size() == 0 || keep[i]; }
  std::size_t count() const {
    std::size_t c = 0;
    for (std::size_t i = 0; i < x.size(); ++i) c += kept(i);
    return c;
  }
};

template <class T>
long double wide(T v) {
  return static_cast<long double>(static_cast<tandem::compute_t<T>>(v));
}

// The two-pass variance (std) of the kept elements in long double.
template <class T>
long double two_pass(const Slice<T>& s, double ddof, bool root) {
  const std::size_t n = s.count();
  long double sum = 0, q = 0;
  for (std::size_t i = 0; i < s.x.size(); ++i)
    if (s.kept(i)) sum += wide(s.x[i]);
  const long double mean = sum / n;
  for (std::size_t i = 0; i < s.x.size(); ++i)
    if (s.kept(i)) q += (wide(s.x[i]) - mean) * (wide(s.x[i]) - mean);
  const long double var = q / (n - ddof);
  return root ? std::sqrt(var) : var;
}

// Deterministic mode's result, step by step from the documented definition.
template <class T>
tandem::var_result_t<T> canonical(const Slice<T>& s, double ddof, bool root) {
  using W = tandem::var_result_t<T>;
  using C = tandem::compute_t<T>;
  const std::size_t n = s.x.size(), kept = s.count();
  double mean;
  if constexpr (std::is_integral_v<C>) {
    __int128 sum = 0;  // (exact: 2^64 x 2^17 at most)
    for (std::size_t i = 0; i < n; ++i)
      if (s.kept(i)) sum += static_cast<__int128>(s.x[i]);
    mean = double(sum) / double(kept);
  } else {
    Vector<double> d(n);
    for (std::size_t i = 0; i < n; ++i) d[i] = s.kept(i) ? double(C(s.x[i])) : 0.0;
    mean = canonical_sum(std::span<const double>(d.data(), n)) / double(kept);
  }
  const W m = W(mean);
  Vector<W> sq(n);
  for (std::size_t i = 0; i < n; ++i) {
    const W d = s.kept(i) ? W(C(s.x[i])) - m : W(0);
    sq[i] = d * d;
  }
  const W var = canonical_sum(std::span<const W>(sq.data(), n)) / W(double(kept) - ddof);
  return root ? std::sqrt(var) : var;
}

// What a result should have been, in words ("" when right).
template <class T>
std::string judge(tandem::var_result_t<T> got, const Slice<T>& s, double ddof, bool root, bool det) {
  using W = tandem::var_result_t<T>;
  if (det) {
    const W want = canonical(s, ddof, root);  // (a NaN's bits: compared across backends, not here)
    const bool right = std::isnan(want) ? std::isnan(got) : same_bits(got, want);
    return right ? std::string() : "got " + show(got) + ", expected the bits of " + show(want);
  }
  const long double want = two_pass(s, ddof, root);
  if (std::isnan(want)) return std::isnan(got) ? std::string() : "got " + show(got) + ", expected NaN";
  const long double tol = 8 * std::numeric_limits<W>::epsilon() * (1 + std::log2(double(s.x.size()) + 1));
  long double biggest = 0;
  for (std::size_t i = 0; i < s.x.size(); ++i)
    if (s.kept(i)) biggest = std::max(biggest, std::fabs(wide(s.x[i])));
  // Each deviation is off by up to delta (the mean's rounding, an integer's conversion to double), which moves
  // the variance by up to 2 sqrt(var) delta + delta^2 and std by delta.
  const long double delta = tol * biggest;
  const long double bound =
      tol * std::fabs(want) + (root ? delta : 2 * delta * std::sqrt(std::fabs(want)) + delta * delta);
  if (std::fabs(static_cast<long double>(got) - want) <= bound) return {};
  return "got " + show(got) + ", expected " + show(want) + " within " + show(bound);
}

Vector<bool> mask_of(std::size_t n, std::uint64_t seed) {
  SplitMix64 g{seed};
  Vector<bool> m(n);
  for (std::size_t i = 0; i < n; ++i) m[i] = g.below(3) != 0;
  return m;
}

struct MomentCase {
  bool masked, root, det;
  double ddof;
};
std::vector<MomentCase> settings() {
  std::vector<MomentCase> s;
  for (bool masked : {false, true})
    for (bool root : {false, true})
      for (bool det : {false, true})
        for (double ddof : {0.0, 1.0}) s.push_back({masked, root, det, ddof});
  return s;
}
std::string setting_name(const MomentCase& s) {
  return std::string(s.root ? "std" : "var") + " ddof " + (s.ddof == 0 ? "0" : "1") + (s.masked ? " where" : "") +
         (s.det ? " deterministic" : "");
}

enum class Form { span, misaligned, range, strided, zero_stride, buffer, buffer_strided, buffer_zero_stride };
constexpr const char* kFormNames[] = {"span",
                                      "misaligned span",
                                      "std::vector",
                                      "StridedView stride 3",
                                      "StridedView stride 0",
                                      "BufferView offset 1",
                                      "BufferView stride 3",
                                      "BufferView stride 0"};
constexpr Form kForms[] = {Form::span,        Form::misaligned, Form::range,          Form::strided,
                           Form::zero_stride, Form::buffer,     Form::buffer_strided, Form::buffer_zero_stride};

template <class T>
void vectors(const tandem::Engine& eng, Report& report) {
  using W = tandem::var_result_t<T>;
  const bool quick = report.options.quick;
  const std::vector<std::size_t> sizes =
      quick ? std::vector<std::size_t>{0, 1, 2, 33, 4097} : std::vector<std::size_t>{0, 1, 2, 31, 33, 257, 4097, 20011};
  const std::string backend = backend_name(eng), type = type_name<T>();
  for (Kind kind : kinds<T>(quick))
    for (std::size_t n : sizes) {
      const Vector<T> x = elements<T>(kind, n, 3000 + n);
      const Vector<bool> mask = mask_of(n, n + 11);
      Vector<T> arena(3 * n + 2, poison<T>(false));  // x at 1 (misaligned) and every third element from 0
      for (std::size_t i = 0; i < n; ++i) arena[3 * i] = x[i];
      Vector<T> shifted(n + 1, poison<T>(false));
      for (std::size_t i = 0; i < n; ++i) shifted[1 + i] = x[i];
      // The same three layouts in Buffers (shifted: from element 1; the arena; x, its last element repeated).
      const tandem::Buffer<T> shifted_buffer = eng.upload<T>(shifted), arena_buffer = eng.upload<T>(arena);
      const tandem::Buffer<T> x_buffer = eng.upload<T>(x);
      for (Form form : kForms) {
        const bool repeated = form == Form::zero_stride || form == Form::buffer_zero_stride;
        if (repeated && n == 0) continue;
        Slice<T> s;
        s.x = repeated ? Vector<T>(n, x[n - 1]) : x;
        const std::string data = type + " " + kKindNames[int(kind)] + " n=" + std::to_string(n) +
                                 (repeated ? " (one element repeated)" : "");
        for (const MomentCase& st : settings()) {
          s.keep = st.masked ? mask : Vector<bool>();
          const std::string what = backend + ": " + data + " " + kFormNames[int(form)] + " " + setting_name(st);
          tandem::ReduceOptions o{"auto", st.det};
          if (st.masked) o.where = std::span<const bool>(mask.data(), n);
          const bool refused = !(double(s.count()) - st.ddof > 0);
          auto call = [&]() -> W {
            const auto moment = [&](auto view) {
              return st.root ? eng.std(view, st.ddof, o) : eng.var(view, st.ddof, o);
            };
            switch (form) {
              case Form::span:
                return moment(std::span<const T>(x.data(), n));
              case Form::misaligned:
                return moment(std::span<const T>(shifted.data() + 1, n));
              case Form::range:
                return st.root ? eng.std(Vector<T>(x), st.ddof, o) : eng.var(Vector<T>(x), st.ddof, o);
              case Form::strided:
                return moment(tandem::StridedView<T>{arena.data(), n, 3});
              case Form::zero_stride:
                return moment(tandem::StridedView<T>{x.data() + n - 1, n, 0});
              case Form::buffer:
                return moment(tandem::BufferView<T>{&shifted_buffer, 1, n, 1});
              case Form::buffer_strided:
                return moment(tandem::BufferView<T>{&arena_buffer, 0, n, 3});
              case Form::buffer_zero_stride:
                return moment(tandem::BufferView<T>{&x_buffer, n - 1, n, 0});
            }
            throw std::logic_error("unknown form");
          };
          one_case(report, eng, what, refused, eng.reduce_kernel_info().front(), call, [&](const W& got) {
            if (st.det) report.deterministic_bits(backend, data + " " + setting_name(st), what, bytes_of(&got, 1));
            return judge<T>(got, s, st.ddof, st.root, st.det);
          });
        }
      }
    }
}

template <class T>
void matrices(const tandem::Engine& eng, Report& report) {
  using W = tandem::var_result_t<T>;
  const bool quick = report.options.quick;
  struct Shape {
    std::size_t rows, cols;
  };
  std::vector<Shape> shapes = {{1, 1}, {3, 70}, {37, 5}};
  if (!quick) shapes.insert(shapes.end(), {{129, 33}, {2, 4099}});
  const std::string backend = backend_name(eng), type = type_name<T>();
  for (Kind kind : kinds<T>(quick))
    for (const Shape& sh : shapes) {
      const Vector<T> x = elements<T>(kind, sh.rows * sh.cols, 5000 + sh.rows * 31 + sh.cols);
      const Vector<bool> mask = mask_of(sh.rows * sh.cols, sh.rows + sh.cols);
      Vector<T> padded(sh.rows * (sh.cols + 3), poison<T>(false));
      for (std::size_t i = 0; i < sh.rows; ++i)
        for (std::size_t j = 0; j < sh.cols; ++j) padded[i * (sh.cols + 3) + j] = x[i * sh.cols + j];
      const tandem::Buffer<T> x_buffer = eng.upload<T>(x), padded_buffer = eng.upload<T>(padded);
      const std::string data_of_x =
          type + " " + kKindNames[int(kind)] + " " + std::to_string(sh.rows) + "x" + std::to_string(sh.cols);
      for (tandem::Per per : {tandem::Per::row, tandem::Per::col})
        for (bool in_buffer : {false, true})
          for (bool repeated : {false, true}) {  // ld > cols (NaN padding), or ld 0: row 0 repeated
            const std::size_t count = per == tandem::Per::row ? sh.rows : sh.cols;
            const std::size_t len = per == tandem::Per::row ? sh.cols : sh.rows;
            const tandem::MatrixView<const T> view =
                repeated ? tandem::MatrixView<const T>{x.data(), sh.rows, sh.cols, 0}
                         : tandem::MatrixView<const T>{padded.data(), sh.rows, sh.cols, sh.cols + 3};
            const std::string data =
                data_of_x + " per " + tandem::to_string(per) + (repeated ? " (row 0 repeated)" : "");
            for (const MomentCase& st : settings()) {
              std::vector<Slice<T>> slices(count);
              bool refused = false;
              for (std::size_t v = 0; v < count; ++v) {
                for (std::size_t k = 0; k < len; ++k) {
                  const std::size_t r = per == tandem::Per::row ? v : k, c = per == tandem::Per::row ? k : v;
                  slices[v].x.push_back(x[(repeated ? 0 : r) * sh.cols + c]);
                  if (st.masked) slices[v].keep.push_back(mask[r * sh.cols + c]);
                }
                refused = refused || !(double(slices[v].count()) - st.ddof > 0);
              }
              const std::string what = backend + ": " + data + (in_buffer ? " Buffer " : " ") +
                                       (repeated ? "ld 0 " : "ld > cols ") + setting_name(st);
              tandem::ReduceOptions o{"auto", st.det};
              if (st.masked) o.where = std::span<const bool>(mask.data(), mask.size());
              auto call = [&] {
                Vector<W> out(count);
                if (in_buffer) {  // (into a Buffer one longer, whose last element must stay)
                  const tandem::BufferMatrix<T> m =
                      repeated ? tandem::BufferMatrix<T>{&x_buffer, 0, sh.rows, sh.cols, 0}
                               : tandem::BufferMatrix<T>{&padded_buffer, 0, sh.rows, sh.cols, sh.cols + 3};
                  const auto dst = eng.upload<W>(Vector<W>(count + 1, W(5)));
                  if (st.root)
                    eng.std(m, per, dst, st.ddof, o);
                  else
                    eng.var(m, per, dst, st.ddof, o);
                  const auto back = dst.to_vector();
                  if (!same_bits(back[count], W(5)))
                    throw std::runtime_error("wrote past its results in the output Buffer");
                  for (std::size_t i = 0; i < count; ++i) out[i] = back[i];
                  return out;
                }
                if (st.root)
                  eng.std(view, per, std::span<W>(out.data(), count), st.ddof, o);
                else
                  eng.var(view, per, std::span<W>(out.data(), count), st.ddof, o);
                return out;
              };
              one_case(report, eng, what, refused, eng.reduce_kernel_info().front(), call, [&](const Vector<W>& got) {
                if (st.det)
                  report.deterministic_bits(backend, data + " " + setting_name(st), what, bytes_of(got.data(), count));
                return first_wrong(count, slice_name(per), [&](std::size_t v) {
                  return judge<T>(got[v], slices[v], st.ddof, st.root, st.det);
                });
              });
            }
          }
    }
}

}  // namespace

void run_moments(const tandem::Engine& eng, Report& report) {
  for_each_type([&]<class T>() {
    vectors<T>(eng, report);
    matrices<T>(eng, report);
  });
}

}  // namespace tandem_verify::conformance
