// tandem.Engine's reductions (python/module.cpp binds them): sum, min, max, mean, argmin, argmax of a
// NumPy array (host) or a CuPy / PyTorch array (device), over everything (axis=None) or per row / column.
#include <pybind11/stl.h>

#include "engine/dispatch.hpp"
#include "python/engine.hpp"

namespace tandem_python {

using tandem::Dtype;
using tandem::Error;
using tandem::Op;
using tandem::Per;

namespace {

// The result dtype of op on elements of dtype d (as Engine's typed calls return it).
Dtype result_dtype(Op op, Dtype d) {
  if (op == Op::mean) return Dtype::f64;
  if (tandem::is_arg(op)) return Dtype::i64;
  if (op == Op::sum) return tandem::info(d).compute == Dtype::i32 ? Dtype::i64 : tandem::info(d).compute;
  return tandem::info(d).compute;
}

py::object numpy_scalar(Dtype d, const void* value) {
  const py::object np = py::module_::import("numpy");
  switch (d) {
    case Dtype::f32:
      return np.attr("float32")(*static_cast<const float*>(value));
    case Dtype::f64:
      return np.attr("float64")(*static_cast<const double*>(value));
    case Dtype::i64:
      return np.attr("int64")(*static_cast<const std::int64_t*>(value));
    case Dtype::i32:
      return np.attr("int32")(*static_cast<const std::int32_t*>(value));
    default:
      throw Error("tandem: unexpected result type");
  }
}

// Calls the typed reduction `op` of eng on view v (a span, StridedView or BufferView of T), writing the
// result (of result_dtype) into `out` (8 bytes).
template <class T, class View>
void reduce_view(const tandem::Engine& eng, Op op, const View& v, const tandem::ReduceOptions& o, void* out) {
  switch (op) {
    case Op::sum:
      *static_cast<tandem::sum_result_t<T>*>(out) = eng.sum(v, o);
      return;
    case Op::min:
      *static_cast<tandem::compute_t<T>*>(out) = eng.min(v, o);
      return;
    case Op::max:
      *static_cast<tandem::compute_t<T>*>(out) = eng.max(v, o);
      return;
    case Op::mean:
      *static_cast<double*>(out) = eng.mean(v, o);
      return;
    case Op::argmin:
      *static_cast<std::int64_t*>(out) = std::int64_t(eng.argmin(v, o));
      return;
    case Op::argmax:
      *static_cast<std::int64_t*>(out) = std::int64_t(eng.argmax(v, o));
      return;
  }
}

// Per-row / per-column reductions of a row-major matrix view into out (host span or Buffer).
template <class T, class Matrix, class Out>
void reduce_per(const tandem::Engine& eng, Op op, const Matrix& m, Per per, Out& out, const tandem::ReduceOptions& o) {
  switch (op) {
    case Op::sum:
      return eng.sum(m, per, out.template as<tandem::sum_result_t<T>>(), o);
    case Op::min:
      return eng.min(m, per, out.template as<tandem::compute_t<T>>(), o);
    case Op::max:
      return eng.max(m, per, out.template as<tandem::compute_t<T>>(), o);
    case Op::mean:
      return eng.mean(m, per, out.template as<double>(), o);
    case Op::argmin:
      return eng.argmin(m, per, out.template as_index(), o);
    case Op::argmax:
      return eng.argmax(m, per, out.template as_index(), o);
  }
}

// A host output for reduce_per: a NumPy array of the result type (indices through a size_t staging).
struct HostOut {
  py::array array;
  std::vector<std::size_t> index;
  template <class R>
  std::span<R> as() {
    return {static_cast<R*>(array.mutable_data()), std::size_t(array.size())};
  }
  std::span<std::size_t> as_index() {
    index.resize(std::size_t(array.size()));
    return index;
  }
};

// A device output: a Buffer over the result array of the input's library.
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

// A 2-D array as a row-major matrix (rows, cols, ld) with the per flipped when it is stored by columns;
// false if neither dimension has unit stride.
bool as_matrix(const Array& a, Per& per, std::int64_t& rows, std::int64_t& cols, std::int64_t& ld) {
  const std::int64_t r = a.shape[0], c = a.shape[1];
  if (a.strides[1] == 1 || c <= 1) {
    rows = r, cols = c, ld = std::max<std::int64_t>(a.strides[0], c);
    return r <= 1 || a.strides[0] >= c;
  }
  if (a.strides[0] == 1 || r <= 1) {  // the transpose is row-major: its rows are our columns
    rows = c, cols = r, ld = std::max<std::int64_t>(a.strides[1], r);
    per = per == Per::row ? Per::col : Per::row;
    return c <= 1 || a.strides[1] >= r;
  }
  return false;
}

}  // namespace

py::object PyEngine::reduce(Op op, const py::object& x, const py::object& axis, const std::string& kernel,
                            bool deterministic) const {
  const tandem::ReduceOptions o{kernel, deterministic};
  Array a = array(x);
  if (a.device) return reduce_device(op, a, axis, o);
  if (axis.is_none()) {
    std::int64_t stride = 1;
    if (!a.one_run(stride)) a = contiguous_copy(a), stride = 1;
    const std::size_t n = std::size_t(a.size());
    unsigned char value[8] = {};
    tandem::detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
      const tandem::StridedView<T> v{static_cast<const T*>(a.data), n, std::size_t(std::max<std::int64_t>(stride, 1))};
      py::gil_scoped_release unlocked;
      reduce_view<T>(eng_, op, v, o, value);
    });
    return numpy_scalar(result_dtype(op, a.dtype), value);
  }
  Per per = axis_to_per(axis, a);
  std::int64_t rows = 0, cols = 0, ld = 0;
  if (!as_matrix(a, per, rows, cols, ld)) {
    a = contiguous_copy(a), per = axis_to_per(axis, a);
    as_matrix(a, per, rows, cols, ld);
  }
  HostOut out{new_host_array({per == Per::row ? rows : cols}, result_dtype(op, a.dtype)), {}};
  tandem::detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
    const tandem::MatrixView<const T> m{static_cast<const T*>(a.data), std::size_t(rows), std::size_t(cols),
                                        std::size_t(ld)};
    py::gil_scoped_release unlocked;
    reduce_per<T>(eng_, op, m, per, out, o);
  });
  if (tandem::is_arg(op))
    std::copy(out.index.begin(), out.index.end(), static_cast<std::int64_t*>(out.array.mutable_data()));
  return std::move(out.array);
}

Per PyEngine::axis_to_per(const py::object& axis, const Array& a) {
  if (a.ndim() != 2)
    throw Error("tandem: axis= takes 2-D arrays (axis=1: one result per row, axis=0: per column); this one has " +
                std::to_string(a.ndim()) + " dimensions (use axis=None to reduce everything)");
  int ax = axis.cast<int>();
  if (ax < 0) ax += 2;
  if (ax != 0 && ax != 1) throw Error("tandem: axis must be None, 0 or 1 (or -1, -2)");
  return ax == 1 ? Per::row : Per::col;
}

py::object PyEngine::reduce_device(Op op, Array& a, const py::object& axis, const tandem::ReduceOptions& o) const {
  check_device(a);
  check_result_library(a.library);  // (before anything is enqueued)
  const Dtype rd = result_dtype(op, a.dtype);
  if (axis.is_none()) {
    std::int64_t stride = 1;
    if (!a.one_run(stride))
      throw Error("tandem: this device array's elements are not one strided run; make it contiguous first");
    // The reduction is enqueued first, into an 8-byte slot of the engine's; the result array is made
    // while it runs, then the value is copied into it on the engine's stream.
    const auto slot = eng_.buffer<std::int64_t>(1);
    tandem::detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
      const auto buf = eng_.wrap(static_cast<T*>(a.data), std::size_t(a.extent()));
      const auto view = buf.view(0, std::size_t(a.size()), std::size_t(std::max<std::int64_t>(stride, 1)));
      py::gil_scoped_release unlocked;
      DeviceOut out{eng_, slot.data(), 1};
      switch (op) {
        case Op::sum:
          eng_.sum_into(view, out.as<tandem::sum_result_t<T>>(), 0, o);
          break;
        case Op::min:
          eng_.min_into(view, out.as<tandem::compute_t<T>>(), 0, o);
          break;
        case Op::max:
          eng_.max_into(view, out.as<tandem::compute_t<T>>(), 0, o);
          break;
        case Op::mean:
          eng_.mean_into(view, out.as<double>(), 0, o);
          break;
        case Op::argmin:
          eng_.argmin_into(view, out.as_index(), 0, o);
          break;
        case Op::argmax:
          eng_.argmax_into(view, out.as_index(), 0, o);
          break;
      }
    });
    Array r = new_device_array(a.library, a.device_id, {}, rd, stream());
    {
      py::gil_scoped_release unlocked;
      copy_on_stream(r.data, slot.data(), tandem::size_of(rd), stream());
      eng_.synchronize();  // the result's library reads it on its own stream
    }
    return r.keep;
  }
  Per per = axis_to_per(axis, a);
  std::int64_t rows = 0, cols = 0, ld = 0;
  if (!as_matrix(a, per, rows, cols, ld))
    throw Error("tandem: per-row / per-column reductions need a device array with one unit stride");
  Array r = new_device_array(a.library, a.device_id, {per == Per::row ? rows : cols}, rd, stream());
  tandem::detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
    const auto buf = eng_.wrap(static_cast<T*>(a.data), std::size_t(a.extent()));
    DeviceOut out{eng_, r.data, std::size_t(per == Per::row ? rows : cols)};
    py::gil_scoped_release unlocked;
    reduce_per<T>(eng_, op, buf.matrix(std::size_t(rows), std::size_t(cols), std::size_t(ld)), per, out, o);
    eng_.synchronize();
  });
  return r.keep;
}

}  // namespace tandem_python
