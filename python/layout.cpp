// Axes and matrix plans of the Python module's reductions (python/layout.hpp).
#include "python/layout.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "common/dispatch.hpp"

namespace tandem_python {

PyObject* axis_error_type = nullptr;

void raise_axis_error(const std::string& message) {
  PyErr_SetString(axis_error_type ? axis_error_type : PyExc_ValueError, message.c_str());
  throw py::error_already_set();
}

namespace {
// An axis as an integer: Python's int, NumPy's integer scalars and 0-d integer arrays (their __index__);
// not a bool (as NumPy), not an array of more dimensions (whose __index__ raises: NumPy's TypeError too).
// An integer beyond int64 is out of every array's bounds.
std::int64_t axis_index(const py::handle& h, int ndim) {
  auto not_an_axis = [&] {
    return tandem::type_error("tandem: axis must be None, an int or a tuple of ints, not " +
                              std::string(py::str(py::type::of(h).attr("__name__"))) +
                              " (axis=1: one result per row of a matrix, axis=0: one per column)");
  };
  if (!PyIndex_Check(h.ptr()) || PyBool_Check(h.ptr()) ||
      std::string_view(Py_TYPE(h.ptr())->tp_name).starts_with("numpy.bool"))
    throw not_an_axis();
  PyObject* index = PyNumber_Index(h.ptr());
  if (index == nullptr) {  // (an array of several elements, or of floats)
    PyErr_Clear();
    throw not_an_axis();
  }
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(index, &overflow);
  Py_DECREF(index);
  if (overflow != 0) {
    raise_axis_error("tandem: axis " + std::string(py::str(h)) + " is out of bounds for an array of dimension " +
                     std::to_string(ndim));  // (raises)
  }
  return value;
}
}  // namespace

std::vector<bool> reduced_axes(const py::object& axis, int ndim, bool tuples) {
  std::vector<bool> reduced(std::size_t(ndim), axis.is_none());
  if (axis.is_none()) return reduced;
  auto one = [&](const py::handle& h) {
    const std::int64_t given = axis_index(h, ndim);
    const std::int64_t ax = given < 0 ? given + ndim : given;
    if (ax < 0 || ax >= ndim)
      raise_axis_error("tandem: axis " + std::to_string(given) + " is out of bounds for an array of dimension " +
                       std::to_string(ndim));
    if (reduced[std::size_t(ax)])
      throw tandem::value_error("tandem: axis " + std::to_string(given) + " is named twice");
    reduced[std::size_t(ax)] = true;
  };
  // (NumPy's rule for a 0-d array: axis=0 and axis=-1, not in a tuple, are the whole of it.)
  if (ndim == 0 && !py::isinstance<py::tuple>(axis)) {
    const std::int64_t given = axis_index(axis, ndim);
    if (given == 0 || given == -1) return reduced;
  }
  if (py::isinstance<py::tuple>(axis)) {
    if (!tuples) throw tandem::type_error("tandem: argmin and argmax take one axis (an int) or None, not a tuple");
    for (const py::handle h : axis) one(h);
  } else {
    one(axis);
  }
  return reduced;
}

namespace {

// The matrix of r x c elements with strides (s0, s1) as a row-major one (transposed when its columns
// have unit stride, per flipped). A row stride of 0 (a broadcast: every row the first) is ld 0, which the
// per-row / per-column reductions read in place.
bool row_major(std::int64_t r, std::int64_t c, std::int64_t s0, std::int64_t s1, MatrixPlan& p) {
  if (s1 == 1 || c <= 1) {
    p.rows = r, p.cols = c, p.ld = s0 == 0 && r > 1 ? 0 : std::max<std::int64_t>(s0, c);
    return r <= 1 || s0 >= c || p.ld == 0;
  }
  if (s0 == 1 || r <= 1) {  // the transpose is row-major: its rows are our columns
    p.rows = c, p.cols = r, p.ld = s1 == 0 && c > 1 ? 0 : std::max<std::int64_t>(s1, r);
    p.per = p.per == tandem::Per::row ? tandem::Per::col : tandem::Per::row;
    return c <= 1 || s1 >= r || p.ld == 0;
  }
  return false;
}

}  // namespace

bool plan_matrix(const Array& a, const std::vector<bool>& reduced, MatrixPlan& plan) {
  // The dimensions of length > 1 (the others do not move in memory) as kept outer, reduced, kept inner.
  std::vector<std::size_t> outer, red, inner;
  for (std::size_t d = 0; d < a.shape.size(); ++d) {
    if (a.shape[d] == 1) continue;
    if (reduced[d]) {
      if (!inner.empty()) return false;  // (reduced axes on both sides of a kept one)
      red.push_back(d);
    } else {
      (red.empty() ? outer : inner).push_back(d);
    }
  }
  Run o, k, i;
  if (!collapse(a, outer, o) || !collapse(a, red, k) || !collapse(a, inner, i)) return false;
  if (o.n > 1 && i.n > 1) return false;
  if (i.n == 1) {
    plan.per = tandem::Per::row;
    return row_major(o.n, k.n, o.stride, k.stride, plan);
  }
  plan.per = tandem::Per::col;
  return row_major(k.n, i.n, k.stride, i.stride, plan);
}

std::vector<std::int64_t> reduced_last(const std::vector<bool>& reduced) {
  std::vector<std::int64_t> perm;
  for (bool last : {false, true})
    for (std::size_t d = 0; d < reduced.size(); ++d)
      if (reduced[d] == last) perm.push_back(std::int64_t(d));
  return perm;
}

std::vector<std::int64_t> result_shape(const Array& a, const std::vector<bool>& reduced, bool keepdims) {
  std::vector<std::int64_t> shape;
  for (std::size_t d = 0; d < a.shape.size(); ++d)
    if (!reduced[d] || keepdims) shape.push_back(reduced[d] ? 1 : a.shape[d]);
  return shape;
}

std::int64_t kept_size(const Array& a, const std::vector<bool>& reduced) {
  std::int64_t n = 1;
  for (std::size_t d = 0; d < a.shape.size(); ++d) n *= reduced[d] ? 1 : a.shape[d];
  return n;
}

std::int64_t reduced_size(const Array& a, const std::vector<bool>& reduced) {
  std::int64_t n = 1;
  for (std::size_t d = 0; d < a.shape.size(); ++d) n *= reduced[d] ? a.shape[d] : 1;
  return n;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

void copy_elements(const Array& a, std::int64_t begin, std::int64_t count, void* dst) {
  const std::size_t nd = a.shape.size();
  if (count <= 0) return;
  if (nd == 0) return void(std::memcpy(dst, a.data, a.itemsize()));
  std::vector<std::int64_t> at(nd);  // the multi-index of element `begin`
  for (std::size_t d = nd; d-- > 0;) at[d] = begin % a.shape[d], begin /= a.shape[d];
  tandem::detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
    T* out = static_cast<T*>(dst);
    const T* base = static_cast<const T*>(a.data);
    const std::int64_t last = a.shape[nd - 1], step = a.strides[nd - 1];
    while (count > 0) {  // a run along the last dimension, then the multi-index carried
      std::int64_t offset = 0;
      for (std::size_t d = 0; d < nd; ++d) offset += at[d] * a.strides[d];
      const std::int64_t run = std::min(count, last - at[nd - 1]);
      for (std::int64_t i = 0; i < run; ++i) out[i] = base[offset + i * step];
      out += run, count -= run, at[nd - 1] += run;
      for (std::size_t d = nd - 1; d > 0 && at[d] == a.shape[d]; --d) at[d] = 0, ++at[d - 1];
    }
  });
}

py::tuple first_of_repeats(const Array& a) {
  py::tuple index(a.shape.size());
  for (std::size_t d = 0; d < a.shape.size(); ++d)
    index[d] = a.shape[d] > 1 && a.strides[d] == 0 ? py::slice(0, 1, 1) : py::slice(py::none(), py::none(), py::none());
  return index;
}

std::vector<bool> zero_strides(const py::object& y, Lib lib) {
  const py::tuple strides = lib == Lib::torch ? y.attr("stride")() : y.attr("strides");
  std::vector<bool> zero(strides.size());
  for (std::size_t d = 0; d < zero.size(); ++d) zero[d] = py::cast<std::int64_t>(strides[d]) == 0;
  return zero;
}

py::object broadcast_view(const py::object& y, Lib lib, const std::vector<std::int64_t>& shape) {
  py::tuple t(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) t[d] = py::int_(shape[d]);
  if (lib == Lib::torch) return y.attr("expand")(t);
  return py::module_::import(lib == Lib::cupy ? "cupy" : "numpy").attr("broadcast_to")(y, t);
}

py::object cast_keeping_repeats(const Array& a, tandem::Dtype d) {
  if (!repeats_elements(a) || a.lib == Lib::other) return library_cast(a.keep, a.lib, d);
  return broadcast_view(library_cast(a.keep[first_of_repeats(a)], a.lib, d), a.lib, a.shape);
}

}  // namespace tandem_python
