// ReduceOptions::where and ReduceOptions::initial in the conformance matrix (conformance.hpp): every op x element
// type x data x size x form (span, StridedView with stride 3 and 0, per row and per column of a padded matrix)
// x memory (host, the same views of a Buffer: its masked copy made where it lies) x mask (none, about two elements in
// three kept, none kept) x initial (absent, present) x every kernel x deterministic off / on. The reference is the op
// over the kept elements, with initial as its first element (the initial values are chosen so that they are elements of
// the compute type: 1 for the sums, whose square is 1 too); deterministic mode's floats are judged bit for bit against
// the canonical order over the input with the masked elements replaced by the op's identity (+0.0, 1), then combined
// with initial, and compared across backends. A call that takes neither (argmin / argmax with either, mean with
// initial, min / max masked without initial, a mean keeping nothing) must throw tandem::Error.
#include <cmath>
#include <span>
#include <stdexcept>

#include "verify/cases.hpp"
#include "verify/rng.hpp"

namespace tandem_verify::conformance {
namespace {

using tandem::Op;

enum class Mask { none, some, nothing };
constexpr const char* kMaskNames[] = {"", " where (2 in 3 kept)", " where (none kept)"};

// An initial value that is an element of the compute type C and changes op's result on some data.
template <Op O, class C>
double initial_for() {
  constexpr tandem::Identity id = tandem::info(O).identity;
  if constexpr (id == tandem::Identity::zero) return 1;
  if constexpr (id == tandem::Identity::one) return std::is_same_v<C, bool> ? 1 : 2;
  const bool least = id == tandem::Identity::highest;
  if constexpr (std::is_same_v<C, bool>) return least ? 1 : 0;
  if constexpr (std::is_unsigned_v<C>) return 3;
  if constexpr (std::is_floating_point_v<C>) return least ? -0.5 : 0.5;
  return least ? -1 : 1;
}

template <Op O, class T>
bool takes(Mask mask, bool initial) {
  constexpr tandem::ResultKind kind = tandem::info(O).result;
  if (kind == tandem::ResultKind::index) return mask == Mask::none && !initial;
  if (kind == tandem::ResultKind::mean) return !initial;
  if (kind == tandem::ResultKind::value && mask != Mask::none) return initial;
  return true;
}

// One reduction's elements as the compute type, and which are kept.
template <class C>
struct Slice {
  Vector<C> values;
  Vector<bool> keep;  // (empty: all)
  bool kept(std::size_t i) const { return keep.size() == 0 || keep[i]; }
};

// What op O's result over the slice should have been, in words ("" when right).
template <Op O, class T>
std::string judge(const tandem::op_result_t<O, T>& got, const Slice<tandem::compute_t<T>>& s,
                  std::optional<double> init, bool repeated, bool det, bool exact) {
  using C = tandem::compute_t<T>;
  Vector<C> elements, filled;
  if (init) elements.push_back(C(*init));
  std::size_t kept = 0;
  const C identity = tandem::info(O).identity == tandem::Identity::one ? C(1) : C(0);
  for (std::size_t i = 0; i < s.values.size(); ++i) {
    if (s.kept(i)) elements.push_back(s.values[i]), ++kept;
    filled.push_back(s.kept(i) ? s.values[i] : identity);
  }
  ReduceReference<C> ref = reduce_reference<C>(elements.data(), elements.size(), 1);
  if (repeated && !init) ref = ref.one_sign();
  Judgement j = judge_op<O, T>(got, ref, exact);
  if constexpr (std::is_floating_point_v<C> && (is_additive(O) || is_product(O)))
    if (det) {  // the canonical order over the filled input, then initial
      C want;
      if constexpr (is_product(O)) {
        want = canonical_product<C>(std::span<const C>(filled.data(), filled.size()));
        if (init) want = C(want * C(*init));
      } else {
        for (C& v : filled) v = additive_term<O, C>(v);
        want = filled.size() == 0 ? C(0) : canonical_sum<C>(std::span<const C>(filled.data(), filled.size()));
        if (init) want = C(want + C(*init));
      }
      if constexpr (tandem::info(O).result == tandem::ResultKind::mean) {
        const double m = double(want) / double(kept);
        j = {std::isnan(m) ? std::isnan(got) : same_bits(got, m), 0, show(m) + " (the canonical sum / kept)"};
      } else {
        j = {std::isnan(want) ? std::isnan(got) : same_bits(got, want), 0, show(want) + " (the canonical order)"};
      }
    }
  return j.ok ? std::string() : "got " + show(got) + ", expected " + j.expected;
}

template <class T>
Vector<T> data_of(bool exact, std::size_t n, std::uint64_t seed) {
  SplitMix64 g{seed};
  Vector<T> x = random_vector<T>(n, g, exact ? Values::small_integers : Values::uniform);
  if constexpr (tandem::is_floating_v<T>)
    if (!exact && n > 2) x[n / 2] = T(std::numeric_limits<tandem::compute_t<T>>::quiet_NaN());
  return x;
}

Vector<bool> mask_of(Mask m, std::size_t n, std::uint64_t seed) {
  SplitMix64 g{seed};
  Vector<bool> keep(n);
  for (std::size_t i = 0; i < n; ++i) keep[i] = m == Mask::some && g.below(3) != 0;
  return keep;
}

struct Mode {
  const tandem::KernelInfo* kernel;
  bool det;
};

template <Op O, class T>
bool kernel_refuses(const Mode& m, bool per) {
  return !m.kernel->accepts(tandem::dtype_of<T>) || !m.kernel->accepts(O) || (m.det && !m.kernel->deterministic) ||
         (per && !m.kernel->per_row_col);
}

enum class Form { span, strided, zero_stride, per_row, per_col };
constexpr const char* kFormNames[] = {"span", "StridedView stride 3", "StridedView stride 0", "per row", "per column"};

template <class T>
void cases(const tandem::Engine& eng, Report& report) {
  using C = tandem::compute_t<T>;
  const bool quick = report.options.quick;
  const std::string backend = backend_name(eng), type = type_name<T>();
  const auto infos = eng.reduce_kernel_info();
  std::vector<Mode> modes;
  for (const tandem::KernelInfo& k : infos)
    for (bool det : {false, true}) modes.push_back({&k, det});
  const std::vector<std::size_t> sizes =
      quick ? std::vector<std::size_t>{0, 1, 33} : std::vector<std::size_t>{0, 1, 33, 4097};
  for (bool exact : {true, false}) {
    if (std::is_integral_v<C> && !exact) continue;
    for (std::size_t n : sizes)
      for (Form form : {Form::span, Form::strided, Form::zero_stride, Form::per_row, Form::per_col}) {
        const bool per = form == Form::per_row || form == Form::per_col, repeated = form == Form::zero_stride;
        if (repeated && n == 0) continue;
        // Vectors: n elements; matrices: 3 rows of n (per row) or n rows of 3 (per column), ld = cols + 2.
        const std::size_t rows = form == Form::per_row ? 3
                                 : per                 ? n
                                                       : 1,
                          cols = form == Form::per_row ? n
                                 : per                 ? 3
                                                       : n;
        const std::size_t count = form == Form::per_row ? rows : per ? cols : 1;
        const std::size_t len = form == Form::per_row ? cols : per ? rows : n;
        const Vector<T> x = data_of<T>(exact, rows * cols, 900 + n * 7 + std::size_t(form));
        Vector<T> arena(std::max<std::size_t>(3 * rows * cols, rows * (cols + 2)) + 1, poison<T>(false));
        for (std::size_t i = 0; i < rows * cols; ++i)
          arena[per ? (i / cols) * (cols + 2) + i % cols : form == Form::strided ? 3 * i : i] = x[i];
        for (bool in_buffer : {false, true}) {
          const tandem::Buffer<T> arena_buffer = in_buffer ? eng.upload<T>(arena) : tandem::Buffer<T>();
          const tandem::Buffer<T> x_buffer = in_buffer && repeated ? eng.upload<T>(x) : tandem::Buffer<T>();
          const std::string data = type + (exact ? " exact " : " random ") + kFormNames[int(form)] +
                                   (in_buffer ? " of a Buffer" : "") + " n=" + std::to_string(n) +
                                   (repeated ? " (one element repeated)" : "");
          for (Mask mask : {Mask::none, Mask::some, Mask::nothing}) {
            const Vector<bool> keep = mask_of(mask, rows * cols, n + 5);
            std::vector<Slice<C>> slices(count);
            for (std::size_t v = 0; v < count; ++v)
              for (std::size_t k = 0; k < len; ++k) {
                const std::size_t i = form == Form::per_row ? v * cols + k : per ? k * cols + v : k;
                slices[v].values.push_back(C(x[repeated ? n - 1 : i]));
                if (mask != Mask::none) slices[v].keep.push_back(keep[i]);
              }
            for (bool with_initial : {false, true})
              for_each_op([&]<Op O>() {
                const std::optional<double> init =
                    with_initial ? std::optional<double>(initial_for<O, C>()) : std::optional<double>();
                bool empty_slice = false;
                for (const Slice<C>& s : slices) {
                  std::size_t k = 0;
                  for (std::size_t i = 0; i < s.values.size(); ++i) k += s.kept(i);
                  empty_slice = empty_slice || k == 0;
                }
                const tandem::ResultKind kind = tandem::info(O).result;
                const bool empty_refused =
                    empty_slice &&
                    (kind == tandem::ResultKind::mean || (tandem::info(O).empty == tandem::EmptyRule::error && !init));
                for (const Mode& m : modes) {
                  if (mask == Mask::none && !with_initial) continue;  // (the plain reduction: reduce_cases.cpp)
                  const bool refused =
                      !takes<O, T>(mask, with_initial) || kernel_refuses<O, T>(m, per) || empty_refused;
                  const std::string what = backend + ": " + data + kMaskNames[int(mask)] +
                                           (init ? " initial " + show(*init) : std::string()) + " " +
                                           tandem::to_string(O) + " kernel " + m.kernel->name +
                                           (m.det ? " deterministic" : "");
                  tandem::ReduceOptions o{m.kernel->name, m.det};
                  if (mask != Mask::none) o.where = std::span<const bool>(keep.data(), rows * cols);
                  o.initial = init;
                  using R = tandem::op_result_t<O, T>;
                  const tandem::Per along = form == Form::per_row ? tandem::Per::row : tandem::Per::col;
                  auto call = [&] {
                    Vector<R> out(count);
                    if (in_buffer) {  // (per row / column: into a Buffer one longer, whose last element stays)
                      if (per) {
                        using B = tandem::op_buffer_result_t<O, T>;
                        const auto dst = eng.upload<B>(Vector<B>(count + 1, B(5)));
                        eng.reduce<O>(tandem::BufferMatrix<T>{&arena_buffer, 0, rows, cols, cols + 2}, along, dst, o);
                        const auto back = dst.to_vector();
                        if (!same_bits(B(back[count]), B(5)))
                          throw std::runtime_error("wrote past its results in the output Buffer");
                        for (std::size_t i = 0; i < count; ++i) out[i] = R(B(back[i]));
                      } else if (form == Form::span) {
                        out[0] = eng.reduce<O>(tandem::BufferView<T>{&arena_buffer, 0, n, 1}, o);
                      } else {
                        out[0] = eng.reduce<O>(repeated ? tandem::BufferView<T>{&x_buffer, n - 1, n, 0}
                                                        : tandem::BufferView<T>{&arena_buffer, 0, n, 3},
                                               o);
                      }
                      return out;
                    }
                    const T* first = arena.data();
                    if (per)
                      eng.reduce<O>(tandem::MatrixView<const T>{first, rows, cols, cols + 2}, along,
                                    std::span<R>(out.data(), count), o);
                    else if (form == Form::span)
                      out[0] = eng.reduce<O>(std::span<const T>(first, n), o);
                    else
                      out[0] = eng.reduce<O>(
                          tandem::StridedView<T>{repeated ? x.data() + n - 1 : first, n, std::size_t(repeated ? 0 : 3)},
                          o);
                    return out;
                  };
                  one_case(report, eng, what, refused, *m.kernel, call, [&](const Vector<R>& got) {
                    if (m.det)  // (host and Buffer forms under one key: the same bits)
                      report.deterministic_bits(backend,
                                                type + (exact ? " exact " : " random ") + kFormNames[int(form)] +
                                                    " n=" + std::to_string(n) + kMaskNames[int(mask)] +
                                                    (init ? " initial" : "") + " " + tandem::to_string(O),
                                                what, bytes_of(got.data(), count));
                    return first_wrong(
                        count, per ? slice_name(form == Form::per_row ? tandem::Per::row : tandem::Per::col) : nullptr,
                        [&](std::size_t v) { return judge<O, T>(got[v], slices[v], init, repeated, m.det, exact); });
                  });
                }
              });
          }
        }
      }
  }
}

}  // namespace

void run_masks(const tandem::Engine& eng, Report& report) {
  for_each_type([&]<class T>() { cases<T>(eng, report); });
}

}  // namespace tandem_verify::conformance
