// tandem.Engine.topk and argsort (Engine::topk / argsort, engine/topk.cpp): NumPy arrays (anything
// np.asarray takes), along one axis; the axis is moved last and the array made C-contiguous (a copy where it
// is not already), so that each line along it is a row. topk also takes CuPy and PyTorch GPU arrays (the
// Buffer topk on their GPU).
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

Rows rows_of(const py::object& x, std::int64_t axis, const char* what) {
  if (is_device_array(x))
    throw tandem::value_error(std::string("tandem.") + what +
                              " takes NumPy (host) arrays; copy a GPU array to the host first (cupy.asnumpy, "
                              "tensor.cpu())");
  py::module_ np = py::module_::import("numpy");
  py::array a = np.attr("asarray")(x);
  const auto nd = std::int64_t(a.ndim());
  if (nd == 0) throw tandem::value_error(std::string("tandem.") + what + ": a 0-d array has no axis to order along");
  if (axis < -nd || axis >= nd)
    raise_axis_error("tandem: axis " + std::to_string(axis) + " is out of bounds for an array of dimension " +
                     std::to_string(nd));
  Rows r;
  r.axis = axis < 0 ? axis + nd : axis;
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

// A CuPy / PyTorch array on the GPU: the axis moved last and made C-contiguous by its library (a copy where it is
// not already), the Buffer topk on the library's stream into new arrays of its library (nothing waits, as for
// its own operations), the axis moved back by the library.
py::tuple topk_device(const PyEngine& s, const py::object& x, std::int64_t k, std::int64_t axis, bool largest) {
  Input in = s.input(x);
  Array& a = in.a;
  const auto nd = std::int64_t(a.ndim());
  if (nd == 0) throw tandem::value_error("tandem.topk: a 0-d array has no axis to order along");
  if (axis < -nd || axis >= nd)
    raise_axis_error("tandem: axis " + std::to_string(axis) + " is out of bounds for an array of dimension " +
                     std::to_string(nd));
  const std::int64_t ax = axis < 0 ? axis + nd : axis, n = a.shape[std::size_t(ax)];
  if (k < 1 || k > n)
    throw tandem::value_error("tandem.topk: k = " + std::to_string(k) + " along an axis of " + std::to_string(n) +
                              " elements; pass 1 <= k <= " + std::to_string(n));
  std::vector<std::int64_t> perm;
  for (std::int64_t d = 0; d < nd; ++d)
    if (d != ax) perm.push_back(d);
  perm.push_back(ax);
  std::vector<std::int64_t> shape;  // (with the axis last)
  for (std::int64_t d : perm) shape.push_back(a.shape[std::size_t(d)]);
  bool packed = true;  // C-contiguous with the axis last, as it is
  std::int64_t expect = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    packed = packed && (shape[d] == 1 || a.strides[std::size_t(perm[d])] == expect);
    expect *= shape[d];
  }
  Array copy;
  if (!packed) copy = permuted_copy(a, perm, in.stream);
  const Array& rows = packed ? a : copy;
  std::int64_t lines = 1;
  for (std::size_t d = 0; d + 1 < shape.size(); ++d) lines *= shape[d];
  std::vector<std::int64_t> out_shape = shape;
  out_shape.back() = k;
  Array values = new_array_like(a, out_shape, a.dtype), indices = new_array_like(a, out_shape, tandem::Dtype::i64);
  if (lines > 0) {
    tandem::detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
      const auto sz = [](std::int64_t v) { return std::size_t(v); };
      const auto xb = in.eng->wrap(static_cast<T*>(rows.data), sz(lines * n));
      const auto vb = in.eng->wrap(static_cast<T*>(values.data), sz(lines * k));
      const auto ib = in.eng->wrap(static_cast<std::int64_t*>(indices.data), sz(lines * k));
      py::gil_scoped_release unlocked;
      in.eng->topk(xb.matrix(sz(lines), sz(n)), tandem::Per::row, sz(k), vb.matrix(sz(lines), sz(k)),
                   ib.matrix(sz(lines), sz(k)), tandem::TopkOptions{largest});
    });
    if (in.wait) in.eng->synchronize();
  }
  // The axis back where it was: a view made by the library (moveaxis / movedim).
  auto restore = [&](const Array& r) -> py::object {
    if (ax == nd - 1) return r.keep;
    return a.lib == Lib::torch ? r.keep.attr("movedim")(-1, ax) : a.library.attr("moveaxis")(r.keep, -1, ax);
  };
  return py::make_tuple(restore(values), restore(indices));
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
        "np.argsort(x, axis, kind='stable')). NumPy arrays only; computed on the host.");
}

}  // namespace tandem_python
