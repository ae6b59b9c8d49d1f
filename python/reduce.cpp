// tandem.Engine's reductions (python/module.cpp binds them) with NumPy's conventions: sum, min, max,
// mean, argmin, argmax, sumsq of a NumPy array (host) or a CuPy / PyTorch array (device), over all axes
// or some (axis=, keepdims=), into a new array or out=, with NumPy's result types (dtype= for sum, mean,
// sumsq). The memory is read in place as one strided run or one matrix where it allows (python/layout.hpp),
// else copied with the reduced axes last.
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/canonical.hpp"
#include "common/dispatch.hpp"
#include "common/reduce_ops.hpp"
#include "python/engine.hpp"
#include "python/full_reduce.hpp"
#include "python/layout.hpp"

namespace tandem_python {

using tandem::Dtype;
using tandem::Op;
using tandem::Per;

namespace {

// The largest copy, in elements, that a per-axis reduction of a broadcast makes at once (reduce_in_blocks).
constexpr std::int64_t kBlockElements = std::int64_t(1) << 22;

// NumPy's result type of op for elements of type d: the sum of integers is int64 (uint64 for unsigned ones),
// their mean float64,
// an index int64, anything else the element type (computed wider inside, rounded once).
Dtype numpy_result(Op op, Dtype d) {
  if (tandem::is_arg(op)) return Dtype::i64;
  if (!is_float(d) && tandem::info(op).result == tandem::ResultKind::sum) return tandem::info(d).sum_result;
  if (!is_float(d) && tandem::info(op).result == tandem::ResultKind::mean) return Dtype::f64;
  return d;
}

// Whether dtype=want asks for another accumulation than tandem's for elements of type d (whose NumPy
// result type is `natural`): the input is converted first, as NumPy converts each element. A narrower
// want is tandem's result (float32 for 16-bit inputs, int64 for integers) rounded once.
bool convert_input(Dtype d, Dtype natural, Dtype want) {
  if (want == d || want == natural) return false;
  return is_float(d) != is_float(want) || want == Dtype::f64;
}

std::string axes_text(const std::vector<bool>& reduced) {
  std::vector<std::int64_t> axes;
  for (std::size_t d = 0; d < reduced.size(); ++d)
    if (reduced[d]) axes.push_back(std::int64_t(d));
  if (axes.size() == reduced.size()) return "";
  return axes.size() == 1 ? " along axis " + std::to_string(axes[0]) : " along axes " + shape_text(axes);
}

// NumPy's rule: a reduction with no identity (min, max, mean, argmin, argmax) of no elements is an error.
void check_nonempty(Op op, const Array& a, const std::vector<bool>& reduced) {
  if (tandem::info(op).empty != tandem::EmptyRule::error || reduced_size(a, reduced) > 0) return;
  throw tandem::value_error(std::string("tandem: ") + tandem::to_string(op) + " of an empty array (shape " +
                            shape_text(a.shape) + ")" + axes_text(reduced) +
                            " has no value; check for empty arrays first (the sum of no elements is 0)");
}

// Per-row / per-column reductions of a row-major matrix view into out (host span or Buffer).
template <class T, class Matrix, class Out>
void reduce_per(const tandem::Engine& eng, Op op, const Matrix& m, Per per, Out& out, const tandem::ReduceOptions& o) {
  tandem::visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
    if constexpr (tandem::is_arg(O))
      eng.reduce<O>(m, per, out.as_index(), o);
    else
      eng.reduce<O>(m, per, out.template as<tandem::op_result_t<O, T>>(), o);
  });
}

// A host output for reduce_per: a NumPy array of the result type; indices straight into its int64 elements
// (std::size_t and std::int64_t: the same 64 bits, the unsigned and signed type of one size).
struct HostOut {
  void* data;
  std::size_t count;
  template <class R>
  std::span<R> as() {
    return {static_cast<R*>(data), count};
  }
  std::span<std::size_t> as_index() {
    static_assert(sizeof(std::size_t) == sizeof(std::int64_t));
    return {static_cast<std::size_t*>(data), count};
  }
};

// A device output: a Buffer over the result array.
struct DeviceOut {
  const tandem::Engine& eng;
  void* data;
  std::size_t count;
  template <class R>
  tandem::Buffer<R> as() {
    return eng.wrap(static_cast<R*>(data), count);
  }
  tandem::Buffer<std::int64_t> as_index() { return eng.wrap(static_cast<std::int64_t*>(data), count); }
};

// The result of a reduction of no elements whose every value is `fill` (a NumPy scalar of type result).
py::object filled(const Input& in, Dtype result, const ReduceArgs& r, const std::vector<bool>& reduced,
                  const py::object& fill) {
  const Array& a = in.a;
  const bool all = std::find(reduced.begin(), reduced.end(), false) == reduced.end();
  const auto shape = result_shape(a, reduced, r.keepdims);
  if (all && !a.device && (!r.keepdims || a.ndim() == 0) && r.out.is_none()) return fill;
  const std::vector<std::int64_t> have = all ? std::vector<std::int64_t>{} : std::vector{kept_size(a, reduced)};
  Array value = new_array_like(a, have, result);
  library_copy(value.keep, fill.attr("item")(), a.lib);  // (a Python number: PyTorch fills with it)
  return finish(value.keep, have, in, result, result, shape, r.out);
}

// NumPy's mean of no elements: NaN, with its RuntimeWarning (the C++ API raises instead: tandem::Error).
py::object empty_mean(const Input& in, Dtype result, const ReduceArgs& r, const std::vector<bool>& reduced) {
  if (PyErr_WarnEx(PyExc_RuntimeWarning, "Mean of empty slice.", 1) != 0) throw py::error_already_set();
  return filled(in, result, r, reduced, numpy_scalar(result, std::numeric_limits<double>::quiet_NaN()));
}

// initial= as a NumPy scalar of type d, converted as NumPy converts its own initial= (numpy.asarray with the
// dtype: 2.5 into an integer result is 2; a Python int out of the type's range wraps with NumPy 1's
// DeprecationWarning, and raises NumPy 2's OverflowError). A real number: a Python or NumPy bool, int or float.
py::object initial_value(Op op, const py::object& initial, Dtype d) {
  const py::module_ numpy = py::module_::import("numpy");
  py::object a;
  try {
    a = numpy.attr("asarray")(initial);
  } catch (const py::error_already_set&) {
  }
  const std::string kind = a ? std::string(py::str(a.attr("dtype").attr("kind"))) : "";
  const bool bf16 = a && std::string(py::str(a.attr("dtype").attr("name"))) == "bfloat16";
  if (!a || py::len(a.attr("shape")) != 0 || !(kind == "b" || kind == "i" || kind == "u" || kind == "f" || bf16))
    throw tandem::type_error(std::string("tandem: ") + tandem::to_string(op) +
                             "(initial=) takes a real number (a Python or NumPy bool, int or float), not " +
                             std::string(py::str(py::type::of(initial).attr("__name__"))));
  return numpy.attr("asarray")(initial, py::arg("dtype") = numpy_dtype(d))[py::tuple()];
}

// The result with initial= combined into it, as NumPy's initial is its reduction's first element: one more
// operation of op's kind in the result's type (add for sums, multiply for products, minimum / maximum), by
// the result's library. `value` is a NumPy scalar (returned anew) or an array (the result or out=, changed
// in place).
py::object with_initial(Op op, const py::object& value, const py::object& initial, const Input& in) {
  static constexpr const char* kUfunc[] = {"add", "minimum", "maximum", "multiply"};  // by the op's Identity
  const char* ufunc = kUfunc[int(tandem::info(op).identity)];
  const Dtype d = dtype_from_object(value.attr("dtype"));
  const py::object v = initial_value(op, initial, d);
  if (in.a.lib == Lib::torch) {
    const py::module_ torch = py::module_::import("torch");
    const py::object t = torch.attr("tensor")(v.attr("item")(), py::arg("dtype") = value.attr("dtype"),
                                              py::arg("device") = value.attr("device"));
    torch.attr(ufunc)(value, t, py::arg("out") = value);  // (torch.add, minimum, maximum, multiply)
    return value;
  }
  if (in.a.lib == Lib::other)
    throw tandem::type_error(
        "tandem: initial= is combined with the result by its library, which tandem does for "
        "NumPy, CuPy and PyTorch arrays only; combine it yourself for this one");
  const py::module_ lib = py::module_::import(in.a.lib == Lib::cupy ? "cupy" : "numpy");
  if (in.a.lib == Lib::numpy && !py::isinstance<py::array>(value)) return lib.attr(ufunc)(value, v);  // (a scalar)
  lib.attr(ufunc)(value, v, py::arg("out") = value);
  return value;
}

}  // namespace

// out= for a result of `shape` and type `result`: NumPy's shape rule and its casting rules, 'same_kind' for
// values and 'safe' for indices (an index array holds integers).
void check_out(Op op, const Array& out, const std::vector<std::int64_t>& shape, Dtype result) {
  if (out.shape != shape)
    throw tandem::value_error("tandem: out= has shape " + shape_text(out.shape) + " but the result has shape " +
                              shape_text(shape) + " (keepdims=True keeps the reduced axes as 1)");
  if (tandem::is_arg(op) && !tandem::info(out.dtype).integer)  // (NumPy: out='s type must cast to int64 'safe')
    throw tandem::type_error(std::string("tandem: out= holds ") + tandem::info(out.dtype).array_name + " but " +
                             tandem::to_string(op) +
                             " gives int64 indices (NumPy's casting rule 'safe'); pass out= "
                             "of an integer type");
  if (tandem::info(out.dtype).boolean && !tandem::info(result).boolean)  // (NumPy's 'same_kind': nothing into bool)
    throw tandem::type_error(std::string("tandem: out= holds bool but the result is ") +
                             tandem::info(result).array_name + " (NumPy's casting rule 'same_kind'); pass out= of " +
                             "that type");
  if (is_float(result) && !is_float(out.dtype))
    throw tandem::type_error(std::string("tandem: out= holds ") + tandem::info(out.dtype).array_name +
                             " but the result is " + tandem::info(result).array_name +
                             " (NumPy's casting rule 'same_kind' converts no float into an integer); pass out= of a "
                             "float type");
}

// The computed result (an array of tandem's result type, shaped `have`) as NumPy gives it: converted to `result`,
// shaped, written into out= when given. Waits for a device array's work when in.wait.
py::object finish(py::object value, const std::vector<std::int64_t>& have, const Input& in, Dtype computed,
                  Dtype result, const std::vector<std::int64_t>& shape, const py::object& out) {
  const CupyDevice on(in.a);  // (a CuPy result is cast and copied on its own GPU)
  if (computed != result) value = library_cast(value, in.a.lib, result);
  if (shape != have) value = value.attr("reshape")(to_tuple(shape));  // (a library call: only when needed)
  if (!out.is_none()) library_copy(out, value, in.a.lib), value = out;
  if (in.wait) in.eng->synchronize();
  return value;
}

py::object PyEngine::reduce(Op op, const py::object& x, const ReduceArgs& r) const {
  if (where_given(r.where)) return reduce_where(op, x, r);
  Input in = input(x);
  const std::vector<bool> reduced = reduced_axes(r.axis, in.a.ndim(), !tandem::is_arg(op));
  Dtype result = numpy_result(op, in.a.dtype);
  if (!r.dtype.is_none()) {
    Dtype want;
    try {
      want = dtype_from_object(r.dtype);
    } catch (const tandem::Error&) {  // (the message of a bad array would name the wrong argument)
      std::string asked = py::str(r.dtype);
      try {  // NumPy's name of the type, where NumPy knows it
        asked = py::str(py::module_::import("numpy").attr("dtype")(r.dtype).attr("name"));
      } catch (const py::error_already_set&) {
      }
      throw tandem::type_error("tandem: " + std::string(tandem::to_string(op)) + "(dtype=" + asked +
                               "): tandem computes results as " + dtype_names() +
                               "; pass one of them, or dtype=None for NumPy's result type");
    }
    if (tandem::info(want).boolean)  // (NumPy accumulates logically there: an or of nonzero elements)
      throw tandem::type_error("tandem: " + std::string(tandem::to_string(op)) +
                               "(dtype=bool) is NumPy's logical accumulation, which tandem does not compute; for "
                               "whether any element is nonzero use eng.max(x != 0), for whether all are eng.min(x "
                               "!= 0)");
    if (convert_input(in.a.dtype, result, want)) in.a = converted(in.a, want, in.stream);
    result = want;
  }
  if (!r.out.is_none()) check_out(op, output(r.out, in), result_shape(in.a, reduced, r.keepdims), result);
  const bool empty = reduced_size(in.a, reduced) == 0;
  if (!r.initial.is_none() && empty) return filled(in, result, r, reduced, initial_value(op, r.initial, result));
  if (tandem::info(op).result == tandem::ResultKind::mean && is_float(result) && empty)
    return empty_mean(in, result, r, reduced);
  check_nonempty(op, in.a, reduced);
  const py::object value = std::find(reduced.begin(), reduced.end(), false) == reduced.end()
                               ? reduce_all(op, in, result, r, reduced)
                               : reduce_axes(op, in, result, r, reduced);
  return r.initial.is_none() ? value : with_initial(op, value, r.initial, in);
}

py::object PyEngine::reduce_all(Op op, Input& in, Dtype result, const ReduceArgs& r,
                                const std::vector<bool>& reduced) const {
  Array& a = in.a;
  const tandem::ReduceOptions o{r.kernel, r.deterministic};
  const Dtype computed = tandem::result_dtype(op, a.dtype);
  std::int64_t stride = 1;
  if (!a.device) {  // a NumPy scalar of the result type (an array with keepdims / out=)
    double real = 0;
    std::int64_t integer = 0;
    if (a.one_run(stride))
      host_reduce(op, a, stride, o, eng_, real, integer);
    else if (a.size() > 0 && repeats_in_place(op, a.dtype, r.deterministic))
      reduce_distinct(op, a, o, eng_, real, integer);
    else if (a.size() > 0 && repeats_elements(a) && canonical_in_pieces(op, a.dtype, r.deterministic))
      reduce_in_pieces(op, a, o, eng_, real);
    else
      host_reduce(op, contiguous_copy(a), 1, o, eng_, real, integer);
    py::object value = is_float(computed) ? numpy_scalar(result, real) : numpy_scalar(result, integer);
    if ((!r.keepdims || a.ndim() == 0) && r.out.is_none()) return value;  // (NumPy: a 0-d input gives a scalar)
    Array arr = new_array_like(a, {}, result);
    library_copy(arr.keep, value, Lib::numpy);
    return finish(arr.keep, {}, in, result, result, result_shape(a, reduced, r.keepdims), r.out);
  }
  // A device array: a 0-d array of the input's library, written on the stream the library uses now.
  if (!a.one_run(stride) && a.size() > 0 && repeats_elements(a) && device_distinct_allowed(op, a, r.deterministic)) {
    Dtype scaled = computed;
    py::object value = device_distinct(op, in, o, scaled);
    return finish(value, {}, in, scaled, result, result_shape(a, reduced, r.keepdims), r.out);
  }
  if (!a.one_run(stride) && a.size() > 0 && repeats_elements(a) && canonical_in_pieces(op, a.dtype, r.deterministic) &&
      (a.lib == Lib::cupy || a.lib == Lib::torch)) {
    Dtype summed = computed;
    py::object value = device_in_pieces(op, in, result, o, summed);
    return finish(value, {}, in, summed, result, result_shape(a, reduced, r.keepdims), r.out);
  }
  if (!a.one_run(stride)) a = contiguous_device_copy(a, in.stream), stride = 1;
  Array value = new_array_like(a, {}, computed);
  device_reduce(op, a, stride, value, o, *in.eng);
  return finish(value.keep, {}, in, computed, result, result_shape(a, reduced, r.keepdims), r.out);
}

py::object PyEngine::reduce_axes(Op op, Input& in, Dtype result, const ReduceArgs& r,
                                 const std::vector<bool>& reduced) const {
  Array& a = in.a;
  const tandem::ReduceOptions o{r.kernel, r.deterministic};
  const Dtype computed = tandem::result_dtype(op, a.dtype);
  const auto shape = result_shape(a, reduced, r.keepdims);
  const std::int64_t count = kept_size(a, reduced);
  if (count > 0 && reduced_size(a, reduced) > 0) {
    // A kept axis of stride 0 (a broadcast) repeats the same results along it: computed once (the axis
    // taken as length 1) and repeated into the result, so that no broadcast is copied.
    const std::vector<std::int64_t> full = a.shape;
    bool repeats = false;
    py::tuple first(full.size());  // x[:, 0:1, :]: those axes as length 1 (the library's own view)
    for (std::size_t d = 0; d < full.size(); ++d) {
      const bool one = !reduced[d] && full[d] > 1 && a.strides[d] == 0 && a.lib != Lib::other;
      if (one) a.shape[d] = 1, repeats = true;
      first[d] = py::reinterpret_steal<py::object>(one ? PySlice_New(py::int_(0).ptr(), py::int_(1).ptr(), nullptr)
                                                       : PySlice_New(nullptr, nullptr, nullptr));
    }
    if (repeats) {
      ReduceArgs once = r;
      once.keepdims = true, once.out = py::none();
      const py::object whole = a.keep;
      a.keep = whole[first];  // (what a copy, where one is needed, is made of)
      const py::object part = reduce_axes(op, in, result, once, reduced);
      a.shape = full, a.keep = whole;
      const auto have = result_shape(a, reduced, true);
      Array value = new_array_like(a, have, result);
      library_copy(value.keep, part, a.lib);  // (NumPy's broadcasting; CuPy's and PyTorch's copies too)
      return finish(value.keep, have, in, result, result, shape, r.out);
    }
    // A reduced axis of stride 0 that the matrix plan cannot read in place (np.broadcast_to(m, (n, 3, 5)),
    // axis=(0, 1)): taken as length 1 where the result over its repeats follows from one (repeats_per_axis),
    // and repeated (repeat_result: a sum times the repeats, a product to their power), so that no broadcast is
    // copied.
    bool reduced_repeats = false;  // (the plan is made only where a reduced axis repeats)
    for (std::size_t d = 0; d < full.size(); ++d) reduced_repeats |= reduced[d] && full[d] > 1 && a.strides[d] == 0;
    MatrixPlan plan;
    std::int64_t dropped = 1;
    if (reduced_repeats && a.lib != Lib::other && repeats_per_axis(op, a.dtype, r.deterministic) &&
        !plan_matrix(a, reduced, plan))
      for (std::size_t d = 0; d < full.size(); ++d) {
        const bool one = reduced[d] && full[d] > 1 && a.strides[d] == 0;
        if (one) a.shape[d] = 1, dropped *= full[d];
        first[d] = py::reinterpret_steal<py::object>(one ? PySlice_New(py::int_(0).ptr(), py::int_(1).ptr(), nullptr)
                                                         : PySlice_New(nullptr, nullptr, nullptr));
      }
    if (dropped > 1) {
      ReduceArgs once = r;
      once.keepdims = true, once.out = py::none();
      const py::object whole = a.keep;
      a.keep = whole[first];
      // (a float sum or product in its computed type, float32 for 16-bit inputs: rounded to the result once)
      const bool scaled = is_float(computed) && (op == Op::sum || op == Op::sumsq || op == Op::prod);
      Dtype type = scaled ? computed : result;
      py::object part = reduce_axes(op, in, type, once, reduced);
      a.shape = full, a.keep = whole;
      part = repeat_result(op, part, a.lib, type, dropped);
      return finish(part, result_shape(a, reduced, true), in, type, result, shape, r.out);
    }
  }
  // The results go straight into out= where it holds them as they are computed (the type, C order);
  // otherwise into a new array, converted and copied into out= after.
  Array value;
  bool into_out = false;
  if (!r.out.is_none() && computed == result) {
    Array o = output(r.out, in);
    std::int64_t stride = 0;
    into_out = o.data && o.dtype == computed && o.size() == count && o.one_run(stride) && (stride == 1 || count <= 1);
    if (into_out && a.data) {  // (not over the input: NumPy allows that, the engine does not)
      const auto first = reinterpret_cast<std::uintptr_t>(a.data),
                 last = first + std::uintptr_t(a.extent() * a.itemsize());
      const auto begin = reinterpret_cast<std::uintptr_t>(o.data), end = begin + std::uintptr_t(count * o.itemsize());
      if (begin < last && first < end) into_out = false;
    }
    if (into_out) value = std::move(o);
  }
  if (!into_out) value = new_array_like(a, {count}, computed);
  auto done = [&] {
    if (!into_out) return finish(value.keep, {count}, in, computed, result, shape, r.out);
    if (in.wait) in.eng->synchronize();
    return r.out;
  };
  if (count > 0 && reduced_size(a, reduced) == 0) {  // of no elements: 0 or 1, the op's EmptyRule (the others raised)
    library_copy(value.keep, py::int_(tandem::info(op).empty == tandem::EmptyRule::one ? 1 : 0), a.lib);
    return done();
  }
  if (count == 0) return done();
  MatrixPlan p;
  const bool planned = plan_matrix(a, reduced, p);
  if (!planned && a.lib != Lib::other && repeats_elements(a) && count * reduced_size(a, reduced) > kBlockElements)
    return reduce_in_blocks(op, in, result, r, reduced);  // (a broadcast: never copied whole)
  if (!planned) {                                         // a copy with the reduced axes last: one row per result
    std::vector<bool> last(reduced.size(), false);
    std::fill(last.end() - std::count(reduced.begin(), reduced.end(), true), last.end(), true);
    a = permuted_copy(a, reduced_last(reduced), in.stream);
    plan_matrix(a, last, p);
  }
  const auto rows = std::size_t(p.rows), cols = std::size_t(p.cols), ld = std::size_t(p.ld);
  tandem::detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
    if (!a.device) {
      HostOut out{value.data, std::size_t(count)};
      const tandem::MatrixView<const T> m{static_cast<const T*>(a.data), rows, cols, ld};
      py::gil_scoped_release unlocked;
      reduce_per<T>(eng_, op, m, p.per, out, o);
      return;
    }
    const auto buf = in.eng->wrap(static_cast<T*>(a.data), std::size_t(a.extent()));
    DeviceOut out{*in.eng, value.data, std::size_t(count)};
    py::gil_scoped_release unlocked;
    // (Made directly: Buffer::matrix takes ld 0 for cols, where a broadcast's ld 0 repeats the first row.)
    reduce_per<T>(*in.eng, op, tandem::BufferMatrix<T>{&buf, 0, rows, cols, ld}, p.per, out, o);
  });
  return done();
}

// Blocks along the first kept axis longer than 1: as many of its indices per block as keep the block's
// copy within kBlockElements (at least one; a block of one index splits along the next kept axis), each
// reduced by reduce_axes into its part of the result. One result alone is the full reduction, which reads a
// broadcast a piece at a time. Each result is computed from its own elements as reduce_axes computes it
// from a copy, so the bits are the same (deterministic mode's too).
py::object PyEngine::reduce_in_blocks(Op op, Input& in, Dtype result, const ReduceArgs& r,
                                      const std::vector<bool>& reduced) const {
  Array& a = in.a;
  const auto shape = result_shape(a, reduced, r.keepdims), have = result_shape(a, reduced, true);
  ReduceArgs once = r;
  once.keepdims = true, once.out = py::none();
  std::size_t d = 0;
  while (d < a.shape.size() && (reduced[d] || a.shape[d] == 1)) ++d;
  if (d == a.shape.size())
    return finish(reduce_all(op, in, result, once, reduced), have, in, result, result, shape, r.out);
  const std::int64_t inner = kept_size(a, reduced) / a.shape[d], length = reduced_size(a, reduced);
  const std::int64_t per = std::max<std::int64_t>(1, kBlockElements / std::max<std::int64_t>(1, inner * length));
  Array value = new_array_like(a, have, result);
  for (std::int64_t i = 0; i < a.shape[d]; i += per) {
    const std::int64_t n = std::min(per, a.shape[d] - i);
    py::tuple slices(a.shape.size());  // x[:, i:i + n, :]: the block (the library's own view)
    for (std::size_t k = 0; k < a.shape.size(); ++k)
      slices[k] =
          py::reinterpret_steal<py::object>(k == d ? PySlice_New(py::int_(i).ptr(), py::int_(i + n).ptr(), nullptr)
                                                   : PySlice_New(nullptr, nullptr, nullptr));
    Input block{Array(), in.eng, in.stream, in.wait};
    Array& b = block.a;
    b.dtype = a.dtype, b.shape = a.shape, b.strides = a.strides, b.device = a.device, b.device_id = a.device_id;
    b.data = static_cast<char*>(a.data) + i * a.strides[d] * std::int64_t(a.itemsize());
    b.shape[d] = n, b.keep = a.keep[slices], b.library = a.library, b.lib = a.lib;
    const py::object part = reduce_axes(op, block, result, once, reduced);
    library_copy(value.keep[slices], part, a.lib);
  }
  return finish(value.keep, have, in, result, result, shape, r.out);
}

}  // namespace tandem_python
