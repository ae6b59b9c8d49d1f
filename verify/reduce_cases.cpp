// The reductions of the conformance matrix (conformance.hpp): every op x element type x data x size x
// layout x form x kernel x deterministic mode, vectors and matrices (per row, per column).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "verify/cases.hpp"
#include "verify/rng.hpp"

namespace tandem_verify::conformance {
namespace {

using tandem::Op;

// ---- Data ------------------------------------------------------------------------------------------

enum class Kind { exact, random, specials, zeros, full_range };
const char* kind_name(Kind k) {
  constexpr const char* names[] = {"exact", "random", "nan/inf", "zeros", "full-range"};
  return names[int(k)];
}

template <class T>
std::vector<Kind> kinds(bool quick) {
  if constexpr (std::is_integral_v<T>)
    return {Kind::full_range, Kind::exact};
  else if (quick)
    return {Kind::exact, Kind::specials};
  else
    return {Kind::exact, Kind::random, Kind::specials, Kind::zeros};
}

// n elements of kind k, the same for every layout and form (so that deterministic results compare).
template <class T>
Vector<T> elements(Kind k, std::size_t n, std::uint64_t seed) {
  SplitMix64 g{seed};
  const Values v = k == Kind::exact        ? Values::small_integers
                   : k == Kind::full_range ? Values::full_range
                                           : Values::uniform;
  Vector<T> x = random_vector<T>(n, g, v);
  if constexpr (tandem::is_floating_v<T>) {
    using C = tandem::compute_t<T>;
    if (k == Kind::specials && n > 0) {  // a NaN in the middle, -inf first, +inf last
      x[n / 2] = T(std::numeric_limits<C>::quiet_NaN());
      if (n > 2) x[0] = T(-std::numeric_limits<C>::infinity()), x[n - 1] = T(std::numeric_limits<C>::infinity());
    }
    if (k == Kind::zeros)
      for (std::size_t i = 0; i < n; ++i) x[i] = T(g.next() & 1 ? C(-0.0) : C(0.0));
  }
  return x;
}

template <class T>
Vector<tandem::compute_t<T>> as_compute(const T* x, std::size_t n, std::size_t stride) {
  Vector<tandem::compute_t<T>> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = tandem::compute_t<T>(x[i * stride]);
  return v;
}

template <class T>
ReduceReference<tandem::compute_t<T>> reference_of(const Vector<tandem::compute_t<T>>& v) {
  return reduce_reference<tandem::compute_t<T>>(v.data(), v.size(), 1);
}

// What a result should have been, in words ("" when right).
template <Op O, class T>
std::string verdict(const tandem::op_result_t<O, T>& got, const ReduceReference<tandem::compute_t<T>>& ref,
                    const Vector<tandem::compute_t<T>>& values, bool det, bool exact) {
  const Judgement j = det ? judge_op_canonical<O, T>(got, ref, values) : judge_op<O, T>(got, ref, exact);
  return j.ok ? std::string() : "got " + show(got) + ", expected " + j.expected;
}

struct Mode {
  const tandem::KernelInfo* kernel;
  bool det;
};
template <class T>
std::vector<Mode> modes(const std::vector<tandem::KernelInfo>& infos) {
  std::vector<Mode> m;
  for (const tandem::KernelInfo& k : infos)
    for (bool det : {false, true}) m.push_back({&k, det});
  return m;
}

std::string mode_name(const Mode& m) { return m.kernel->name + (m.det ? " deterministic" : ""); }

// Whether kernel k must refuse op O on T in this mode (its KernelInfo), before any data is looked at.
template <Op O, class T>
bool kernel_refuses(const Mode& m) {
  return !m.kernel->accepts(tandem::dtype_of<T>) || !m.kernel->accepts(O) || (m.det && !m.kernel->deterministic);
}

// ---- Vectors ---------------------------------------------------------------------------------------

enum class Layout { contiguous, misaligned, strided, zero_stride };
enum class Form { span, range, strided_view, buffer, buffer_view, into };
constexpr const char* kLayoutNames[] = {"contiguous", "misaligned", "stride 3", "stride 0"};
constexpr const char* kFormNames[] = {"span", "std::vector", "StridedView", "Buffer", "BufferView", "*_into"};

bool expressible(Layout l, Form f) {
  switch (f) {
    case Form::span:
      return l == Layout::contiguous || l == Layout::misaligned;
    case Form::range:
    case Form::buffer:
      return l == Layout::contiguous;
    case Form::strided_view:
      return l != Layout::misaligned;
    case Form::buffer_view:
      return l != Layout::contiguous;
    case Form::into:
      return l != Layout::misaligned;
  }
  return false;
}

// The elements placed in a host arena of poison (NaN, or the integer type's largest value): element i at
// arena[first + i * stride], and in a Buffer holding the same arena.
template <class T>
struct Placed {
  Vector<T> arena;
  std::size_t first = 0, stride = 1, n = 0;
  tandem::Buffer<T> buffer;  // the arena
  tandem::Buffer<T> whole;   // exactly the elements (Layout::contiguous)
};

template <class T>
Placed<T> place(const tandem::Engine& eng, const Vector<T>& x, Layout l) {
  Placed<T> p;
  p.n = x.size();
  p.first = l == Layout::misaligned ? 1 : 0;
  p.stride = l == Layout::strided ? 3 : l == Layout::zero_stride ? 0 : 1;
  const std::size_t extent = p.n == 0 ? 0 : (p.n - 1) * p.stride + 1;
  p.arena.assign(p.first + extent + 3, poison<T>(false));
  for (std::size_t i = 0; i < p.n; ++i) p.arena[p.first + i * p.stride] = x[i];
  p.buffer = eng.upload<T>(p.arena);
  if (l == Layout::contiguous) p.whole = eng.upload<T>(x);
  return p;
}

template <Op O, class T>
tandem::op_result_t<O, T> reduce_form(const tandem::Engine& eng, const Placed<T>& p, Form f,
                                      const tandem::ReduceOptions& o) {
  const T* data = p.arena.data() + p.first;
  switch (f) {
    case Form::span:
      return eng.reduce<O>(std::span<const T>(data, p.n), o);
    case Form::range:
      return eng.reduce<O>(Vector<T>(data, data + p.n), o);
    case Form::strided_view:
      return eng.reduce<O>(tandem::StridedView<T>{data, p.n, p.stride}, o);
    case Form::buffer:
      return eng.reduce<O>(p.whole, o);
    case Form::buffer_view:
      return eng.reduce<O>(p.buffer.view(p.first, p.n, p.stride), o);
    case Form::into: {
      // Into element 1 of 3; elements 0 and 2 hold a sentinel that must stay.
      using R = tandem::op_buffer_result_t<O, T>;
      const R sentinel = R(7);
      const auto out = eng.upload<R>(Vector<R>(3, sentinel));
      eng.reduce_into<O>(p.buffer.view(p.first, p.n, p.stride), out, 1, o);
      const Vector<R> back = out.to_vector();
      if (!same_bits(back[0], sentinel) || !same_bits(back[2], sentinel))
        throw std::runtime_error("wrote outside its element of the output Buffer");
      return tandem::op_result_t<O, T>(back[1]);
    }
  }
  throw std::logic_error("unknown form");
}

template <class T>
void vectors(const tandem::Engine& eng, Report& report) {
  const bool quick = report.options.quick;
  const std::vector<std::size_t> sizes = quick ? std::vector<std::size_t>{0, 1, 33, 4097}
                                               : std::vector<std::size_t>{0, 1, 2, 31, 33, 257, 4097, 65537, 100003};
  const auto infos = eng.reduce_kernel_info();
  const std::string backend = backend_name(eng), type = type_name<T>();
  for (Kind kind : kinds<T>(quick))
    for (std::size_t n : sizes) {
      const Vector<T> x = elements<T>(kind, n, 1000 + n);
      const std::string data_of_x = type + " " + kind_name(kind) + " n=" + std::to_string(n);
      // Stride 0 reads the one element placed (x's last) n times: its values and reference are those.
      const auto all_values = as_compute(x.data(), n, 1),
                 repeated_values = n > 0 ? as_compute(x.data() + n - 1, n, 0) : all_values;
      const auto all_ref = reference_of<T>(all_values),
                 repeated_ref = n > 0 ? reference_of<T>(repeated_values).one_sign() : all_ref;
      for (Layout layout : {Layout::contiguous, Layout::misaligned, Layout::strided, Layout::zero_stride}) {
        if (layout == Layout::zero_stride && n == 0) continue;
        const bool repeated = layout == Layout::zero_stride;
        const auto& values = repeated ? repeated_values : all_values;
        const auto& ref = repeated ? repeated_ref : all_ref;
        const std::string data = data_of_x + (repeated ? " (one element repeated)" : "");
        const Placed<T> p = place(eng, x, layout);
        for (Form form : {Form::span, Form::range, Form::strided_view, Form::buffer, Form::buffer_view, Form::into}) {
          if (!expressible(layout, form)) continue;
          for_each_op([&]<Op O>() {
            for (const Mode& m : modes<T>(infos)) {
              const bool refused =
                  kernel_refuses<O, T>(m) || (n == 0 && tandem::info(O).empty == tandem::EmptyRule::error);
              const std::string what = backend + ": " + data + " " + kLayoutNames[int(layout)] + " " +
                                       kFormNames[int(form)] + " " + tandem::to_string(O) + " kernel " + mode_name(m);
              const tandem::ReduceOptions o{m.kernel->name, m.det};
              one_case(
                  report, eng, what, refused, *m.kernel, [&] { return reduce_form<O>(eng, p, form, o); },
                  [&](const tandem::op_result_t<O, T>& got) {
                    if (m.det)
                      report.deterministic_bits(backend, data + " " + tandem::to_string(O), what, bytes_of(&got, 1));
                    return verdict<O, T>(got, ref, values, m.det, kind == Kind::exact);
                  });
            }
          });
        }
      }
    }
}

// ---- Matrices: per row and per column --------------------------------------------------------------

enum class MatrixLayout { packed, padded_nan, padded_huge, misaligned, repeated_row };
constexpr const char* kMatrixLayoutNames[] = {"packed", "ld > cols (NaN padding)", "ld > cols (huge padding)",
                                              "misaligned", "ld 0 (the first row repeated)"};

template <class T>
struct PlacedMatrix {
  Vector<T> arena;
  std::size_t first = 0, rows = 0, cols = 0, ld = 0;
  tandem::Buffer<T> buffer;
};

template <class T>
PlacedMatrix<T> place_matrix(const tandem::Engine& eng, const Vector<T>& x, std::size_t rows, std::size_t cols,
                             MatrixLayout l) {
  PlacedMatrix<T> p;
  p.rows = rows, p.cols = cols;
  p.first = l == MatrixLayout::misaligned ? 1 : 0;
  p.ld = l == MatrixLayout::padded_nan || l == MatrixLayout::padded_huge ? cols + 3
         : l == MatrixLayout::repeated_row                               ? 0
                                                                         : cols;
  p.arena.assign(p.first + std::max<std::size_t>(rows * p.ld, cols) + 3, poison<T>(l == MatrixLayout::padded_huge));
  for (std::size_t i = 0; i < (p.ld == 0 ? std::min<std::size_t>(rows, 1) : rows); ++i)
    for (std::size_t j = 0; j < cols; ++j) p.arena[p.first + i * p.ld + j] = x[i * cols + j];
  p.buffer = eng.upload<T>(p.arena);
  return p;
}

// The results of op O per row or column: host views into a span, or Buffers into a Buffer one longer
// than needed whose last element must stay untouched.
template <Op O, class T>
Vector<tandem::op_result_t<O, T>> reduce_matrix(const tandem::Engine& eng, const PlacedMatrix<T>& p, tandem::Per per,
                                                bool in_buffer, const tandem::ReduceOptions& o) {
  const std::size_t count = per == tandem::Per::row ? p.rows : p.cols;
  Vector<tandem::op_result_t<O, T>> out(count);
  if (!in_buffer) {
    eng.reduce<O>(tandem::MatrixView<const T>{p.arena.data() + p.first, p.rows, p.cols, p.ld}, per,
                  std::span<tandem::op_result_t<O, T>>(out), o);
    return out;
  }
  using R = tandem::op_buffer_result_t<O, T>;
  const R sentinel = R(5);
  const auto dst = eng.upload<R>(Vector<R>(count + 1, sentinel));
  eng.reduce<O>(tandem::BufferMatrix<T>{&p.buffer, p.first, p.rows, p.cols, p.ld}, per, dst, o);  // (ld 0 too)
  const Vector<R> back = dst.to_vector();
  if (!same_bits(back[count], sentinel)) throw std::runtime_error("wrote past its results in the output Buffer");
  for (std::size_t i = 0; i < count; ++i) out[i] = tandem::op_result_t<O, T>(back[i]);
  return out;
}

template <class T>
void matrices(const tandem::Engine& eng, Report& report) {
  using C = tandem::compute_t<T>;
  const bool quick = report.options.quick;
  struct Shape {
    std::size_t rows, cols;
  };
  std::vector<Shape> shapes = {{0, 4}, {3, 0}, {1, 1}, {3, 70}, {37, 5}};
  if (!quick) shapes.insert(shapes.end(), {{129, 33}, {5, 4099}, {4099, 3}});
  const auto infos = eng.reduce_kernel_info();
  const std::string backend = backend_name(eng), type = type_name<T>();
  for (Kind kind : kinds<T>(quick))
    for (const Shape& s : shapes) {
      const Vector<T> x = elements<T>(kind, s.rows * s.cols, 77 + s.rows * 31 + s.cols);
      const std::string data_of_x =
          type + " " + kind_name(kind) + " " + std::to_string(s.rows) + "x" + std::to_string(s.cols);
      for (tandem::Per per : {tandem::Per::row, tandem::Per::col}) {
        // Each row's (column's) elements as the compute type, and their references: of x, and of x's first
        // row repeated (ld 0: row i is row 0).
        const std::size_t count = per == tandem::Per::row ? s.rows : s.cols,
                          len = per == tandem::Per::row ? s.cols : s.rows;
        std::vector<Vector<C>> all_vecs(count), repeated_vecs(count);
        std::vector<ReduceReference<C>> all_refs, repeated_refs;
        for (std::size_t v = 0; v < count; ++v) {
          if (len > 0) {  // (else x is empty: no element pointer to make)
            all_vecs[v] = per == tandem::Per::row ? as_compute(x.data() + v * s.cols, len, 1)
                                                  : as_compute(x.data() + v, len, s.cols);
            repeated_vecs[v] =
                per == tandem::Per::row ? as_compute(x.data(), len, 1) : as_compute(x.data() + v, len, 0);
          }
          all_refs.push_back(reference_of<T>(all_vecs[v]));
          repeated_refs.push_back(per == tandem::Per::row ? reference_of<T>(repeated_vecs[v])
                                                          : reference_of<T>(repeated_vecs[v]).one_sign());
        }
        for (MatrixLayout layout : {MatrixLayout::packed, MatrixLayout::padded_nan, MatrixLayout::padded_huge,
                                    MatrixLayout::misaligned, MatrixLayout::repeated_row}) {
          const bool repeated = layout == MatrixLayout::repeated_row;
          const auto& vecs = repeated ? repeated_vecs : all_vecs;
          const auto& refs = repeated ? repeated_refs : all_refs;
          const std::string data = data_of_x + (repeated ? " (row 0 repeated)" : "");
          const PlacedMatrix<T> p = place_matrix(eng, x, s.rows, s.cols, layout);
          for (bool in_buffer : {false, true})
            for_each_op([&]<Op O>() {
              for (const Mode& m : modes<T>(infos)) {
                const bool refused = kernel_refuses<O, T>(m) || !m.kernel->per_row_col ||
                                     (count > 0 && len == 0 && tandem::info(O).empty == tandem::EmptyRule::error);
                const std::string what = backend + ": " + data + " per " + tandem::to_string(per) + " " +
                                         kMatrixLayoutNames[int(layout)] + (in_buffer ? " Buffer " : " host ") +
                                         tandem::to_string(O) + " kernel " + mode_name(m);
                const tandem::ReduceOptions o{m.kernel->name, m.det};
                one_case(
                    report, eng, what, refused, *m.kernel, [&] { return reduce_matrix<O>(eng, p, per, in_buffer, o); },
                    [&](const Vector<tandem::op_result_t<O, T>>& got) {
                      if (m.det)
                        report.deterministic_bits(backend,
                                                  data + " per " + tandem::to_string(per) + " " + tandem::to_string(O),
                                                  what, bytes_of(got.data(), got.size()));
                      return first_wrong(count, slice_name(per), [&](std::size_t v) {
                        return verdict<O, T>(got[v], refs[v], vecs[v], m.det, kind == Kind::exact);
                      });
                    });
              }
            });
        }
      }
    }
}

}  // namespace

void run_reductions(const tandem::Engine& eng, Report& report) {
  for_each_type([&]<class T>() {
    vectors<T>(eng, report);
    matrices<T>(eng, report);
  });
}

}  // namespace tandem_verify::conformance
