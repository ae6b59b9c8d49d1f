// Arrays for the tandem Python module (python/arrays.hpp).
#include "python/arrays.hpp"

#include <algorithm>
#include <utility>

#include "common/modules.hpp"

namespace tandem_python {

using tandem::Dtype;
using tandem::Error;

Array& Array::operator=(Array&& o) noexcept {
  if (this == &o) return *this;
  release();
  dtype = o.dtype, data = o.data, shape = std::move(o.shape), strides = std::move(o.strides);
  device = o.device, device_id = o.device_id, keep = std::move(o.keep), library = std::move(o.library);
  managed = std::exchange(o.managed, nullptr);
  return *this;
}

void Array::release() noexcept {
  if (managed && managed->deleter) managed->deleter(managed);
  managed = nullptr;
}

std::int64_t Array::size() const {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return n;
}

bool Array::one_run(std::int64_t& stride) const {
  if (shape.empty()) return stride = 1, true;
  if (shape.size() == 1) return stride = strides[0], shape[0] <= 1 || strides[0] > 0;  // (not a broadcast)
  std::int64_t expect = 1;  // C-contiguous (dimensions of length 1 may have any stride)
  for (int d = ndim() - 1; d >= 0; --d) {
    if (shape[std::size_t(d)] != 1 && strides[std::size_t(d)] != expect) return false;
    expect *= shape[std::size_t(d)];
  }
  return stride = 1, true;
}

std::int64_t Array::extent() const {
  if (size() == 0) return 0;
  std::int64_t e = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) e += (shape[d] - 1) * strides[d];
  return e;
}

std::string dtype_names(bool matmul_only) {
  std::string names;
  for (const tandem::DtypeInfo& t : tandem::dtypes)
    if (t.matmul || !matmul_only) names += (names.empty() ? "" : ", ") + std::string(t.array_name);
  return names;
}

Dtype dtype_of(const py::dtype& d) {
  // (Python attributes, not pybind11's struct accessors: NumPy 2 changed the descriptor's layout.)
  const std::string name = py::str(d.attr("name"));
  for (const tandem::DtypeInfo& t : tandem::dtypes)
    if (name == t.array_name) {
      if (!d.attr("isnative").cast<bool>())
        throw Error("tandem: this array's bytes are not in this machine's order (dtype " + std::string(py::repr(d)) +
                    "); convert it first (x.astype(x.dtype.newbyteorder('=')))");
      return t.id;
    }
  throw Error("tandem takes " + dtype_names() + " arrays (bfloat16: ml_dtypes), not " +
              std::string(py::str(static_cast<const py::handle&>(d))) +
              "; convert it first (x.astype(numpy.float32), ...)");
}

py::dtype numpy_dtype(Dtype d) {
  if (d == Dtype::bf16) return py::dtype::from_args(py::module_::import("ml_dtypes").attr("bfloat16"));
  return py::dtype(tandem::info(d).array_name);
}

py::array new_host_array(const std::vector<std::int64_t>& shape, Dtype dtype) {
  py::tuple dims(shape.size());
  for (std::size_t i = 0; i < shape.size(); ++i) dims[i] = py::int_(shape[i]);
  return py::module_::import("numpy").attr("empty")(dims, py::arg("dtype") = numpy_dtype(dtype));
}

namespace {

// The element strides of a C-ordered array of `shape`.
std::vector<std::int64_t> c_order_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (int d = int(shape.size()) - 2; d >= 0; --d)
    strides[std::size_t(d)] = strides[std::size_t(d) + 1] * shape[std::size_t(d) + 1];
  return strides;
}

// Fills shape and element strides from byte strides; false if a stride is negative or not whole elements.
// (A stride of 0, a broadcast dimension, is kept: a matmul batch reads one operand for every entry in place;
// the other forms ask Array::one_run / as_matrix, which refuse it, and copy.)
bool set_strides(Array& a, const std::vector<py::ssize_t>& shape, const std::vector<py::ssize_t>& byte_strides) {
  const auto e = py::ssize_t(a.itemsize());
  a.shape.assign(shape.begin(), shape.end());
  a.strides.clear();
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] > 1 && (byte_strides[d] < 0 || byte_strides[d] % e != 0)) return false;
    a.strides.push_back(shape[d] > 1 ? byte_strides[d] / e : 0);
  }
  return true;
}

Array from_numpy(py::array arr) {
  Array a;
  a.dtype = dtype_of(arr.dtype());
  const std::vector<py::ssize_t> shape(arr.shape(), arr.shape() + arr.ndim()),
      strides(arr.strides(), arr.strides() + arr.ndim());
  a.data = const_cast<void*>(arr.data());
  if (!set_strides(a, shape, strides)) return Array{};  // (data stays null: the caller copies)
  a.keep = std::move(arr);
  return a;
}

}  // namespace

Array host_array(const py::object& x, bool writable) {
  py::array arr = py::array::ensure(x);
  if (!arr) throw Error("tandem: expected an array (NumPy, or anything numpy.asarray takes)");
  if (writable && !arr.writeable()) throw Error("tandem: the output array is read-only");
  // Bytes in the other order ('>f4' on this machine): an input is converted, an output refused (dtype_of).
  if (!writable && !arr.dtype().attr("isnative").cast<bool>())
    arr = py::array(arr.attr("astype")(arr.dtype().attr("newbyteorder")("=")));
  Array a = from_numpy(arr);
  if (writable) {
    bool aliased = false;  // a broadcast output: several results would land on one element
    for (std::size_t d = 0; d < a.shape.size(); ++d) aliased |= a.shape[d] > 1 && a.strides[d] == 0;
    if (!a.data && arr.size() > 0)
      throw Error("tandem: the output array has negative or unaligned strides; pass a C-ordered array as out");
    if (aliased)
      throw Error("tandem: the output array repeats elements (a stride of 0); pass a C-ordered array as out");
  }
  if (a.data || arr.size() == 0) {
    if (!a.data) a = from_numpy(py::array(py::module_::import("numpy").attr("ascontiguousarray")(arr)));
    return a;
  }
  return from_numpy(py::module_::import("numpy").attr("ascontiguousarray")(arr));
}

Array contiguous_copy(const Array& a) {
  return from_numpy(py::module_::import("numpy").attr("ascontiguousarray")(a.keep));
}

bool is_device_array(const py::object& x) {
  if (py::hasattr(x, "__dlpack_device__")) {
    const py::tuple dev = x.attr("__dlpack_device__")();
    const int type = dev[0].cast<int>();
    if (type == kDLCUDA || type == kDLCUDAManaged) return true;
    if (type == kDLCPU) return false;
  }
  return py::hasattr(x, "__cuda_array_interface__");
}

namespace {

Dtype dtype_of_dl(const DLDataType& t) {
  // DLPack's codes for the table's kinds: integers, bfloat16, other floats.
  for (const tandem::DtypeInfo& d : tandem::dtypes) {
    const int code = d.integer ? kDLInt : d.id == Dtype::bf16 ? kDLBfloat : kDLFloat;
    if (t.lanes == 1 && t.code == code && t.bits == 8 * d.size) return d.id;
  }
  throw Error("tandem takes " + dtype_names() + " device arrays; convert this one (DLPack type code " +
              std::to_string(int(t.code)) + ", " + std::to_string(int(t.bits)) + " bits) first");
}

// The top-level module of x's type (cupy, torch, ...), or None when it cannot be imported by name.
py::object library_of(const py::object& x) {
  const std::string module = py::str(py::type::of(x).attr("__module__"));
  const py::dict modules = py::module_::import("sys").attr("modules");
  const py::str top(module.substr(0, module.find('.')));
  return modules.contains(top) ? py::object(modules[top]) : py::object(py::none());
}

std::string name_of(const py::object& library) {
  return library.is_none() ? std::string("an unknown library") : std::string(py::str(library.attr("__name__")));
}

}  // namespace

void check_result_library(const py::object& library) {
  const std::string name = name_of(library);
  if (name != "torch" && name != "cupy")
    throw Error("tandem: results of device arrays are made with CuPy or PyTorch; this array comes from " + name +
                " (pass out= or use a CuPy / PyTorch array)");
}

// Stream operations on device arrays: the CUDA module's (the module links no CUDA library itself, so
// that it imports where CUDA is absent; a device array implies a CUDA engine, whose module is loaded).
void order_after(std::uintptr_t producer, int producer_device, std::uintptr_t consumer) {
  if (producer != consumer) tandem::detail::cuda_module().order_after(producer, producer_device, consumer);
}

void copy_on_stream(void* dst, const void* src, std::size_t bytes, std::uintptr_t stream) {
  tandem::detail::cuda_module().copy_on_stream(dst, src, bytes, stream);
}

Array device_array(const py::object& x, std::uintptr_t stream) {
  Array a;
  a.device = true;
  a.library = library_of(x);
  a.keep = x;
  if (py::hasattr(x, "__dlpack__")) {
    // The handshake: the producer makes its pending work visible to our stream before we read. PyTorch's
    // __dlpack__(stream=) does it in Python (about 20 us a call, measured on the H100 machine): for its
    // tensors the same ordering is made here, through its public current_stream() and to_dlpack().
    const bool torch = name_of(a.library) == "torch";
    py::capsule cap = torch ? py::capsule(a.library.attr("utils").attr("dlpack").attr("to_dlpack")(x))
                            : py::capsule(x.attr("__dlpack__")(py::arg("stream") = py::int_(stream)));
    if (torch) {
      const py::object device = x.attr("device");
      order_after(a.library.attr("cuda").attr("current_stream")(device).attr("cuda_stream").cast<std::uintptr_t>(),
                  device.attr("index").cast<int>(), stream);
    }
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
    if (!managed) throw py::error_already_set();
    PyCapsule_SetName(cap.ptr(), "used_dltensor");  // ours now: released by Array::release
    a.managed = managed;
    const DLTensor& t = managed->dl_tensor;
    a.dtype = dtype_of_dl(t.dtype);
    a.device_id = t.device.device_id;
    a.data = static_cast<char*>(t.data) + t.byte_offset;
    a.shape.assign(t.shape, t.shape + t.ndim);
    a.strides = t.strides ? std::vector<std::int64_t>(t.strides, t.strides + t.ndim) : c_order_strides(a.shape);
    // Negative strides, and strides no real array has (CuPy before its fix of issue 10172 exports a
    // negative stride as a huge positive one, its byte stride divided as unsigned): copied by the library.
    constexpr std::int64_t kFar = std::int64_t(1) << 58;  // elements: past any device's memory
    for (std::size_t d = 0; d < a.shape.size(); ++d)
      if (a.shape[d] > 1 && (a.strides[d] < 0 || a.strides[d] > kFar / a.shape[d]))
        return contiguous_device_copy(a, stream);
    return a;
  }
  const py::dict cai = x.attr("__cuda_array_interface__");
  const py::tuple data = cai["data"];
  a.data = reinterpret_cast<void*>(data[0].cast<std::uintptr_t>());
  a.dtype = dtype_of(py::dtype(std::string(py::str(cai["typestr"]))));
  std::vector<py::ssize_t> shape, strides;
  for (auto s : py::tuple(cai["shape"])) shape.push_back(s.cast<py::ssize_t>());
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    for (auto s : py::tuple(cai["strides"])) strides.push_back(s.cast<py::ssize_t>());
  } else {
    for (std::int64_t e : c_order_strides({shape.begin(), shape.end()}))
      strides.push_back(py::ssize_t(e * a.itemsize()));
  }
  const bool in_place = set_strides(a, shape, strides);
  if (const int device = tandem::detail::cuda_module().device_of(a.data); device >= 0) a.device_id = device;
  if (cai.contains("stream") && !cai["stream"].is_none())  // the producer's stream: order its work first
    order_after(cai["stream"].cast<std::uintptr_t>(), a.device_id, stream);
  return in_place ? std::move(a) : contiguous_device_copy(a, stream);
}

Array contiguous_device_copy(const Array& a, std::uintptr_t stream) {
  // The copy is made by the array's library on its current stream (of the array's GPU); reading it as a
  // device array orders that work before tandem's stream, as for any other array.
  const std::string name = name_of(a.library);
  if (name == "torch") return device_array(a.keep.attr("contiguous")(), stream);
  if (name == "cupy") {
    py::object guard = a.library.attr("cuda").attr("Device")(a.device_id);
    guard.attr("__enter__")();
    py::object copy = a.library.attr("ascontiguousarray")(a.keep);
    guard.attr("__exit__")(py::none(), py::none(), py::none());
    return device_array(copy, stream);
  }
  throw Error(
      "tandem: this device array's layout (negative, unaligned or repeating strides) cannot be read in place, "
      "and tandem makes copies of CuPy and PyTorch arrays only; make it contiguous first");
}

Array new_device_array(const py::object& library, int device_id, const std::vector<std::int64_t>& shape, Dtype dtype,
                       std::uintptr_t consumer) {
  check_result_library(library);
  const std::string name = name_of(library);
  py::tuple dims(shape.size());
  for (std::size_t i = 0; i < shape.size(); ++i) dims[i] = py::int_(shape[i]);
  Array a;
  a.dtype = dtype, a.device = true, a.device_id = device_id, a.library = library;
  a.shape = shape, a.strides = c_order_strides(shape);
  // The new array's address straight from its library (no DLPack export). Its memory may have been freed
  // on the library's current stream with work there still reading it: that work is ordered first.
  std::uintptr_t producer = 0;
  if (name == "torch") {
    const std::string device = "cuda:" + std::to_string(device_id);
    a.keep = library.attr("empty")(dims, py::arg("dtype") = library.attr(tandem::info(dtype).array_name),
                                   py::arg("device") = device);
    a.data = reinterpret_cast<void*>(a.keep.attr("data_ptr")().cast<std::uintptr_t>());
    producer = library.attr("cuda").attr("current_stream")(device).attr("cuda_stream").cast<std::uintptr_t>();
  } else {
    py::object guard = library.attr("cuda").attr("Device")(device_id);
    guard.attr("__enter__")();
    a.keep = library.attr("empty")(dims, py::arg("dtype") = numpy_dtype(dtype));
    producer = library.attr("cuda").attr("get_current_stream")().attr("ptr").cast<std::uintptr_t>();
    guard.attr("__exit__")(py::none(), py::none(), py::none());
    a.data = reinterpret_cast<void*>(a.keep.attr("data").attr("ptr").cast<std::uintptr_t>());
  }
  order_after(producer, device_id, consumer);
  return a;
}

}  // namespace tandem_python
