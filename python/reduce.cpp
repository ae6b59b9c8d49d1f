// tandem.Engine's reductions (python/module.cpp binds them): sum, min, max, mean, argmin, argmax of a
// NumPy array (host) or a CuPy / PyTorch array (device), over everything (axis=None) or per row / column.
#include <pybind11/stl.h>

#include "common/dispatch.hpp"
#include "python/engine.hpp"

namespace tandem_python {

using tandem::Dtype;
using tandem::Error;
using tandem::Op;
using tandem::Per;

namespace {

// A NumPy scalar of dtype d holding *value (a result: never a 16-bit type).
py::object numpy_scalar(Dtype d, const void* value) {
  return tandem::detail::visit(d, [&]<class T>(std::type_identity<T>) -> py::object {
    if constexpr (tandem::is_storage_type_v<T>) {
      throw Error("tandem: unexpected result type");
    } else {
      T v;
      std::memcpy(&v, value, sizeof v);
      return numpy_dtype(d).attr("type")(v);
    }
  });
}

// Per-row / per-column reductions of a row-major matrix view into out (host span or Buffer).
template <class T, class Matrix, class Out>
void reduce_per(const tandem::Engine& eng, Op op, const Matrix& m, Per per, Out& out, const tandem::ReduceOptions& o) {
  tandem::visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
    if constexpr (tandem::info(O).result == tandem::ResultKind::index)
      eng.reduce<O>(m, per, out.as_index(), o);
    else
      eng.reduce<O>(m, per, out.template as<tandem::op_result_t<O, T>>(), o);
  });
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
      tandem::visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
        const tandem::op_buffer_result_t<O, T> r(eng_.reduce<O>(v, o));  // (an index as int64)
        std::memcpy(value, &r, sizeof r);
      });
    });
    return numpy_scalar(tandem::result_dtype(op, a.dtype), value);
  }
  Per per = axis_to_per(axis, a);
  std::int64_t rows = 0, cols = 0, ld = 0;
  if (!as_matrix(a, per, rows, cols, ld)) {
    a = contiguous_copy(a), per = axis_to_per(axis, a);
    as_matrix(a, per, rows, cols, ld);
  }
  HostOut out{new_host_array({per == Per::row ? rows : cols}, tandem::result_dtype(op, a.dtype)), {}};
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
  const Dtype rd = tandem::result_dtype(op, a.dtype);
  if (axis.is_none()) {
    std::int64_t stride = 1;
    if (!a.one_run(stride)) a = contiguous_device_copy(a, stream()), stride = 1;
    // The reduction is enqueued first, into an 8-byte slot of the engine's; the result array is made
    // while it runs, then the value is copied into it on the engine's stream.
    const auto slot = eng_.buffer<std::int64_t>(1);
    tandem::detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
      const auto buf = eng_.wrap(static_cast<T*>(a.data), std::size_t(a.extent()));
      const auto view = buf.view(0, std::size_t(a.size()), std::size_t(std::max<std::int64_t>(stride, 1)));
      py::gil_scoped_release unlocked;
      tandem::visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
        using R = tandem::op_buffer_result_t<O, T>;
        eng_.reduce_into<O>(view, eng_.wrap(reinterpret_cast<R*>(slot.data()), 1), 0, o);
      });
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
  if (!as_matrix(a, per, rows, cols, ld)) {
    a = contiguous_device_copy(a, stream()), per = axis_to_per(axis, a);
    as_matrix(a, per, rows, cols, ld);
  }
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
