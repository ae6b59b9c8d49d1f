// tandem.Engine.topk and argsort (Engine::topk / argsort, engine/topk.cpp): NumPy arrays (anything
// np.asarray takes), along one axis; the axis is moved last and the array made C-contiguous (a copy where it
// is not already), so that each line along it is a row. Both also take CuPy and PyTorch GPU arrays (the Buffer topk
// and argsort on their GPU).
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/dispatch.hpp"
#include "python/arrays.hpp"
#include "python/engine.hpp"
#include "python/layout.hpp"

namespace tandem_python {

namespace {

// x along `axis` as rows: the C-contiguous array with the axis last, its shape, and the axis (>= 0).
struct Rows {
  py::array a;
  std::vector<std::int64_t> shape;  // with the axis last
  std::int64_t axis, rows, n;
  tandem::Dtype dtype;
};

// `axis` of an nd-dimensional array to order `what` along, as 0 .. nd - 1 (tandem.ValueError for a 0-d array,
// tandem.AxisError out of range).
std::int64_t order_axis(std::int64_t axis, std::int64_t nd, const char* what) {
  if (nd == 0) throw tandem::value_error(std::string("tandem.") + what + ": a 0-d array has no axis to order along");
  if (axis < -nd || axis >= nd)
    raise_axis_error("tandem: axis " + std::to_string(axis) + " is out of bounds for an array of dimension " +
                     std::to_string(nd));
  return axis < 0 ? axis + nd : axis;
}

Rows rows_of(const py::object& x, std::int64_t axis, const char* what) {
  py::module_ np = py::module_::import("numpy");
  py::array a = np.attr("asarray")(x);
  Rows r;
  r.axis = order_axis(axis, std::int64_t(a.ndim()), what);
  r.a = np.attr("ascontiguousarray")(np.attr("moveaxis")(a, r.axis, -1));
  r.dtype = dtype_of(r.a.dtype());
  for (py::ssize_t d = 0; d < r.a.ndim(); ++d) r.shape.push_back(r.a.shape(d));
  r.n = r.shape.back(), r.rows = 1;
  for (std::size_t d = 0; d + 1 < r.shape.size(); ++d) r.rows *= r.shape[d];
  return r;
}

// out (rows x last) back to the input's layout: the leading shape, then the axis moved back.
py::object restored(const py::array& out, const Rows& r, std::int64_t last) {
  std::vector<std::int64_t> shape(r.shape.begin(), r.shape.end() - 1);
  shape.push_back(last);
  return py::module_::import("numpy").attr("moveaxis")(out.attr("reshape")(to_tuple(shape)), -1, r.axis);
}

// A CuPy / PyTorch array on the GPU with the axis moved last and C-contiguous (a copy by its library where it is not
// already): lines x n, each line a row.
struct DeviceRows {
  Input in;
  Array copy;   // (the library's copy, where one was made)
  bool packed;  // the array itself is the rows
  std::int64_t nd, ax, n, lines;
  std::vector<std::int64_t> shape;  // with the axis last
  const Array& rows() const { return packed ? in.a : copy; }
};

DeviceRows device_rows(const PyEngine& s, const py::object& x, std::int64_t axis, const char* what) {
  DeviceRows d{s.input(x)};
  const Array& a = d.in.a;
  d.nd = std::int64_t(a.ndim());
  d.ax = order_axis(axis, d.nd, what), d.n = a.shape[std::size_t(d.ax)];
  std::vector<std::int64_t> perm;
  for (std::int64_t dim = 0; dim < d.nd; ++dim)
    if (dim != d.ax) perm.push_back(dim);
  perm.push_back(d.ax);
  for (std::int64_t dim : perm) d.shape.push_back(a.shape[std::size_t(dim)]);
  d.packed = true;  // C-contiguous with the axis last, as it is
  std::int64_t expect = 1;
  for (std::size_t dim = d.shape.size(); dim-- > 0;) {
    d.packed = d.packed && (d.shape[dim] == 1 || a.strides[std::size_t(perm[dim])] == expect);
    expect *= d.shape[dim];
  }
  if (!d.packed) d.copy = permuted_copy(a, perm, d.in.stream);
  d.lines = 1;
  for (std::size_t dim = 0; dim + 1 < d.shape.size(); ++dim) d.lines *= d.shape[dim];
  return d;
}

// Results r (lines x last, an array of the input's library) with the axis moved back where it was: a view made by
// the library (moveaxis / movedim).
py::object restored(const DeviceRows& d, const Array& r) {
  if (d.ax == d.nd - 1) return r.keep;
  return d.in.a.lib == Lib::torch ? r.keep.attr("movedim")(-1, d.ax)
                                  : d.in.a.library.attr("moveaxis")(r.keep, -1, d.ax);
}

// GPU arrays: the Buffer topk on the library's stream into new arrays of its library (for k <= 1024 nothing waits, as
// for its own operations).
py::tuple topk_device(const PyEngine& s, const py::object& x, std::int64_t k, std::int64_t axis, bool largest) {
  const DeviceRows d = device_rows(s, x, axis, "topk");
  if (k < 1 || k > d.n)
    throw tandem::value_error("tandem.topk: k = " + std::to_string(k) + " along an axis of " + std::to_string(d.n) +
                              " elements; pass 1 <= k <= " + std::to_string(d.n));
  std::vector<std::int64_t> out_shape = d.shape;
  out_shape.back() = k;
  const Array values = new_array_like(d.in.a, out_shape, d.in.a.dtype),
              indices = new_array_like(d.in.a, out_shape, tandem::Dtype::i64);
  if (d.lines > 0) {
    tandem::detail::visit(d.in.a.dtype, [&]<class T>(std::type_identity<T>) {
      const auto sz = [](std::int64_t v) { return std::size_t(v); };
      const auto xb = d.in.eng->wrap(static_cast<T*>(d.rows().data), sz(d.lines * d.n));
      const auto vb = d.in.eng->wrap(static_cast<T*>(values.data), sz(d.lines * k));
      const auto ib = d.in.eng->wrap(static_cast<std::int64_t*>(indices.data), sz(d.lines * k));
      py::gil_scoped_release unlocked;
      d.in.eng->topk(xb.matrix(sz(d.lines), sz(d.n)), tandem::Per::row, sz(k), vb.matrix(sz(d.lines), sz(k)),
                     ib.matrix(sz(d.lines), sz(k)), tandem::TopkOptions{largest});
    });
    if (d.in.wait) d.in.eng->synchronize();
  }
  return py::make_tuple(restored(d, values), restored(d, indices));
}

// GPU arrays: the Buffer argsort (each line sorted on the GPU) likewise.
py::object argsort_device(const PyEngine& s, const py::object& x, std::int64_t axis) {
  const DeviceRows d = device_rows(s, x, axis, "argsort");
  const Array out = new_array_like(d.in.a, d.shape, tandem::Dtype::i64);
  if (d.lines > 0 && d.n > 0) {
    tandem::detail::visit(d.in.a.dtype, [&]<class T>(std::type_identity<T>) {
      const auto sz = [](std::int64_t v) { return std::size_t(v); };
      const auto xb = d.in.eng->wrap(static_cast<T*>(d.rows().data), sz(d.lines * d.n));
      const auto ob = d.in.eng->wrap(static_cast<std::int64_t*>(out.data), sz(d.lines * d.n));
      py::gil_scoped_release unlocked;
      d.in.eng->argsort(xb.matrix(sz(d.lines), sz(d.n)), tandem::Per::row, ob.matrix(sz(d.lines), sz(d.n)));
    });
    if (d.in.wait) d.in.eng->synchronize();
  }
  return restored(d, out);
}

py::tuple topk(const PyEngine& s, const py::object& x, std::int64_t k, std::int64_t axis, bool largest) {
  if (is_device_array(x)) return topk_device(s, x, k, axis, largest);
  const Rows r = rows_of(x, axis, "topk");
  if (k < 1 || k > r.n)
    throw tandem::value_error("tandem.topk: k = " + std::to_string(k) + " along an axis of " + std::to_string(r.n) +
                              " elements; pass 1 <= k <= " + std::to_string(r.n));
  py::array values = new_host_array({r.rows, k}, r.dtype), indices = new_host_array({r.rows, k}, tandem::Dtype::i64);
  tandem::detail::visit(r.dtype, [&]<class T>(std::type_identity<T>) {
    const auto* in = static_cast<const T*>(r.a.data());
    auto* v = static_cast<T*>(values.mutable_data());
    auto* i = static_cast<std::int64_t*>(indices.mutable_data());
    const auto rows = std::size_t(r.rows), n = std::size_t(r.n), kk = std::size_t(k);
    py::gil_scoped_release unlocked;
    s.engine().topk(tandem::MatrixView<const T>{in, rows, n, n}, tandem::Per::row, kk,
                    tandem::MatrixView<T>{v, rows, kk, kk}, tandem::MatrixView<std::int64_t>{i, rows, kk, kk},
                    tandem::TopkOptions{largest});
  });
  return py::make_tuple(restored(values, r, k), restored(indices, r, k));
}

py::object argsort(const PyEngine& s, const py::object& x, std::int64_t axis) {
  if (is_device_array(x)) return argsort_device(s, x, axis);
  const Rows r = rows_of(x, axis, "argsort");
  py::array out = new_host_array({r.rows, r.n}, tandem::Dtype::i64);
  tandem::detail::visit(r.dtype, [&]<class T>(std::type_identity<T>) {
    const auto* in = static_cast<const T*>(r.a.data());
    auto* o = static_cast<std::int64_t*>(out.mutable_data());
    const auto rows = std::size_t(r.rows), n = std::size_t(r.n);
    py::gil_scoped_release unlocked;
    s.engine().argsort(tandem::MatrixView<const T>{in, rows, n, n}, tandem::Per::row,
                       tandem::MatrixView<std::int64_t>{o, rows, n, n});
  });
  return restored(out, r, r.n);
}

}  // namespace

void bind_topk(py::class_<PyEngine>& e) {
  e.def("topk", &topk, py::arg("x"), py::arg("k"), py::arg("axis") = -1, py::arg("largest") = true,
        "The k largest (largest=True) or smallest elements along an axis and their indices, as (values, "
        "indices) arrays with the axis of length k: most extreme first, equal values by index, NaN first "
        "(as argmax / argmin take the first NaN). NumPy arrays are computed on the host; CuPy and PyTorch GPU "
        "arrays on their GPU, on the library's current stream, into arrays of the library.");
  e.def("argsort", &argsort, py::arg("x"), py::arg("axis") = -1,
        "The indices that sort x along an axis: ascending, equal values by index, NaN last (NumPy's "
        "np.argsort(x, axis, kind='stable')), as an int64 array of x's shape. NumPy arrays are computed on the host; "
        "CuPy and PyTorch GPU arrays on their GPU, on the library's current stream, into an array of the library.");
}

}  // namespace tandem_python
