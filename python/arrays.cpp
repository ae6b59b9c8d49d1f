// Arrays for the tandem Python module (python/arrays.hpp).
#include "python/arrays.hpp"

#include <algorithm>
#include <optional>
#include <ranges>
#include <span>
#include <tuple>
#include <utility>

#include "common/modules.hpp"
#include "python/layout.hpp"

namespace tandem_python {

using tandem::Dtype;
using tandem::Error;

Array& Array::operator=(Array&& o) noexcept {
  if (this == &o) return *this;
  release();
  dtype = o.dtype, data = o.data, shape = std::move(o.shape), strides = std::move(o.strides);
  device = o.device, device_id = o.device_id, keep = std::move(o.keep), library = std::move(o.library), lib = o.lib;
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
  Run r;
  if (!collapse(*this, std::views::iota(std::size_t(0), shape.size()), r)) return false;
  stride = r.n > 1 ? r.stride : 1;
  return true;
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

namespace {

constexpr std::size_t kDtypes = std::size(tandem::dtypes);

// Python objects looked up once (kept for the life of the process: never destroyed after the
// interpreter has gone).
struct Cache {
  py::module_ numpy = py::module_::import("numpy");
  py::object empty = numpy.attr("empty"), ascontiguousarray = numpy.attr("ascontiguousarray");
  py::object copyto = numpy.attr("copyto");
  py::object np_dtype[kDtypes];     // numpy.dtype of each element type (bfloat16: None until asked for)
  py::object scalar_type[kDtypes];  // numpy.float32, ...
  Cache() {
    for (const tandem::DtypeInfo& t : tandem::dtypes)
      if (t.id != Dtype::bf16) {
        np_dtype[std::size_t(t.id)] = numpy.attr("dtype")(t.array_name);
        scalar_type[std::size_t(t.id)] = np_dtype[std::size_t(t.id)].attr("type");
      }
  }
  const py::object& dtype(Dtype d) {
    py::object& o = np_dtype[std::size_t(d)];
    if (!o) {  // bfloat16 comes from ml_dtypes, imported when first used
      py::module_ ml;
      try {
        ml = py::module_::import("ml_dtypes");
      } catch (const py::error_already_set& e) {
        if (!e.matches(PyExc_ImportError)) throw;
        throw tandem::type_error(
            "tandem: bfloat16 NumPy arrays need the ml_dtypes package, which is not installed (pip install "
            "ml_dtypes); or use float32 or float16");
      }
      o = py::dtype::from_args(ml.attr("bfloat16"));
      scalar_type[std::size_t(d)] = o.attr("type");
    }
    return o;
  }
};
Cache& cache() {
  static Cache* c = new Cache();
  return *c;
}

}  // namespace

namespace {
// The element type whose NumPy descriptor object d is (NumPy's own, native byte order), if it is one.
std::optional<Dtype> cached_dtype(const py::dtype& d) {
  Cache& c = cache();
  for (const tandem::DtypeInfo& t : tandem::dtypes)
    if (c.np_dtype[std::size_t(t.id)] && d.ptr() == c.np_dtype[std::size_t(t.id)].ptr()) return t.id;
  return std::nullopt;
}
}  // namespace

Dtype dtype_of(const py::dtype& d) {
  if (const auto t = cached_dtype(d)) return *t;  // the common case, without attribute lookups
  // (Python attributes, not pybind11's struct accessors: NumPy 2 changed the descriptor's layout.)
  const std::string name = py::str(d.attr("name"));
  for (const tandem::DtypeInfo& t : tandem::dtypes)
    if (name == t.array_name) {
      if (!d.attr("isnative").cast<bool>())
        throw tandem::type_error("tandem: this array's bytes are not in this machine's order (dtype " +
                                 std::string(py::repr(d)) +
                                 "); convert it first (x.astype(x.dtype.newbyteorder('=')))");
      return t.id;
    }
  throw tandem::type_error("tandem takes " + dtype_names() + " arrays (bfloat16: ml_dtypes), not " +
                           std::string(py::str(static_cast<const py::handle&>(d))) +
                           "; convert it first (x.astype(numpy.float32), ...)");
}

Dtype dtype_from_object(const py::object& d) {
  if (py::isinstance<py::str>(d)) {
    const std::string name = d.cast<std::string>();
    for (const tandem::DtypeInfo& t : tandem::dtypes)
      if (name == t.array_name) return t.id;
  }
  const std::string module = py::str(py::type::of(d).attr("__module__"));
  if (module.rfind("torch", 0) == 0) {    // torch.float32, ...: named as NumPy names them
    const std::string name = py::str(d);  // "torch.float32"
    for (const tandem::DtypeInfo& t : tandem::dtypes)
      if (name == std::string("torch.") + t.array_name) return t.id;
    throw tandem::type_error("tandem: dtype=" + name + " is not an element type tandem takes (" + dtype_names() + ")");
  }
  py::object nd;
  try {
    nd = cache().numpy.attr("dtype")(d);
  } catch (const py::error_already_set&) {
    throw tandem::type_error("tandem: dtype=" + std::string(py::repr(d)) +
                             " is not a data type; pass e.g. numpy.float64");
  }
  return dtype_of(py::reinterpret_borrow<py::dtype>(nd));
}

py::tuple to_tuple(const std::vector<std::int64_t>& v) {
  py::tuple t(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) t[i] = py::int_(v[i]);
  return t;
}

py::object numpy_dtype(Dtype d) { return cache().dtype(d); }

py::array new_host_array(const std::vector<std::int64_t>& shape, Dtype dtype) {
  Cache& c = cache();
  return c.empty(to_tuple(shape), c.dtype(dtype));
}

namespace {
template <class V>
py::object scalar_of(Dtype d, V value) {
  Cache& c = cache();
  c.dtype(d);  // (bfloat16's type is looked up on first use)
  return c.scalar_type[std::size_t(d)](value);
}
}  // namespace

py::object numpy_scalar(Dtype d, double value) {
  if (tandem::info(d).integer)  // (a mean into an integer dtype=: NumPy's cast, out of range as NumPy's)
    return scalar_of(Dtype::f64, value).attr("astype")(scalar_of(d, std::int64_t(0)).attr("dtype"));
  return scalar_of(d, value);
}
py::object numpy_scalar(Dtype d, std::int64_t value) {
  const tandem::DtypeInfo& t = tandem::info(d);
  if (t.integer && t.size < 8) {  // the value modulo 2^bits, as NumPy's casts wrap it (dtype=int32 of an int64 sum)
    const int bits = 8 * int(t.size);
    const std::uint64_t low = std::uint64_t(value) & ((std::uint64_t(1) << bits) - 1);
    const bool negative = !t.is_unsigned && (low >> (bits - 1)) != 0;
    value = negative ? std::int64_t(low) - (std::int64_t(1) << bits) : std::int64_t(low);
  }
  if (t.is_unsigned) return scalar_of(d, std::uint64_t(value));  // (the same bits, as unsigned)
  return scalar_of(d, value);
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
// (A stride of 0, a broadcast dimension, is kept: a matmul batch reads one operand for every entry in place,
// and the reductions read a broadcast in place: python/reduce.cpp.)
template <class Dims>
bool set_strides(Array& a, const Dims& shape, const Dims& byte_strides) {
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
  const std::span<const py::ssize_t> shape(arr.shape(), std::size_t(arr.ndim())),
      strides(arr.strides(), std::size_t(arr.ndim()));
  a.data = const_cast<void*>(arr.data());
  if (!set_strides(a, shape, strides)) return Array{};  // (data stays null: the caller copies)
  a.keep = std::move(arr);
  return a;
}

}  // namespace

namespace {
// Subclasses of numpy.ndarray whose data alone would give a wrong answer: a masked array's masked elements
// would be counted, a numpy.matrix's reductions are matrices. (numpy.memmap and others are read as arrays.)
void refuse_subclass(const py::object& x) {
  Cache& c = cache();
  if (py::isinstance(x, c.numpy.attr("ma").attr("MaskedArray")))
    throw tandem::type_error(
        "tandem: a masked array (numpy.ma) would be reduced with its masked elements counted; pass its data with "
        "its mask as NumPy's where=, eng.sum(x.data, where=~numpy.ma.getmaskarray(x)), or x.compressed() (every "
        "unmasked element)");
  if (py::isinstance(x, c.numpy.attr("matrix")))
    throw tandem::type_error(
        "tandem: numpy.matrix is not taken (its reductions are matrices, tandem's NumPy arrays); pass "
        "numpy.asarray(x)");
}
}  // namespace

Array host_array(const py::object& x) {
  refuse_subclass(x);
  py::array arr;
  if (py::isinstance<py::array>(x)) {
    arr = py::reinterpret_borrow<py::array>(x);
  } else {
    try {  // numpy.asarray, whose failure stays the cause of tandem's error
      arr = py::array(cache().numpy.attr("asarray")(x));
    } catch (py::error_already_set& e) {
      const std::string message =
          "tandem: expected an array (NumPy, or anything numpy.asarray takes); "
          "numpy.asarray(x) raised " +
          std::string(py::str(e.type().attr("__name__")));
      const py::object error = py::module_::import("tandem").attr("TypeError");
      e.restore();
      py::raise_from(error.ptr(), message.c_str());
      throw py::error_already_set();
    }
  }
  // Bytes in the other order ('>f4' on this machine) are converted.
  if (!cached_dtype(arr.dtype()) && !arr.dtype().attr("isnative").cast<bool>())
    arr = py::array(arr.attr("astype")(arr.dtype().attr("newbyteorder")("=")));
  Array a = from_numpy(arr);
  if (a.data || arr.size() == 0) {
    if (!a.data) a = from_numpy(py::array(cache().ascontiguousarray(arr)));
    return a;
  }
  return from_numpy(cache().ascontiguousarray(arr));
}

bool repeats_elements(const Array& a) {
  for (std::size_t d = 0; d < a.shape.size(); ++d)
    if (a.shape[d] > 1 && a.strides[d] == 0) return a.size() > 0;
  return false;
}

Array host_output(const py::object& x) {
  if (!py::isinstance<py::array>(x))
    throw tandem::type_error("tandem: out= must be an array (NumPy for host inputs), not " +
                             std::string(py::str(py::type::of(x).attr("__name__"))));
  const auto arr = py::reinterpret_borrow<py::array>(x);
  if (!arr.writeable()) throw tandem::value_error("tandem: out= is read-only");
  Array a = from_numpy(arr);
  if (repeats_elements(a))  // (several results would land on one element)
    throw tandem::value_error("tandem: out= repeats elements (a stride of 0); pass an array of its own memory");
  if (!a.data) {  // described, not written in place
    a = Array{};
    a.dtype = dtype_of(arr.dtype());
    a.shape.assign(arr.shape(), arr.shape() + arr.ndim());
    a.strides.assign(std::size_t(arr.ndim()), 0);
  }
  a.keep = x;
  return a;
}

Array contiguous_copy(const Array& a) { return from_numpy(cache().ascontiguousarray(a.keep)); }

py::tuple distinct_index(const Array& a) {
  py::tuple index(std::size_t(a.ndim()));
  for (std::size_t d = 0; d < a.shape.size(); ++d)
    index[d] = a.shape[d] > 1 && a.strides[d] == 0 ? py::object(py::int_(0))
                                                   : py::object(py::slice(py::none(), py::none(), py::none()));
  return index;
}

Array distinct_elements(const Array& a) {
  const py::array view(a.keep[distinct_index(a)]);  // (a NumPy view: no copy)
  Array v = from_numpy(view);
  return v.data ? std::move(v) : from_numpy(cache().ascontiguousarray(view));
}

bool is_device_array(const py::object& x) {
  if (py::isinstance<py::array>(x)) return false;  // (NumPy: the common case, without attribute lookups)
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
  // DLPack's codes for the table's kinds: bool, signed and unsigned integers, bfloat16, other floats.
  constexpr int kBool = 6;  // (kDLBool, DLPack 0.8; PyTorch's and CuPy's bool arrays)
  for (const tandem::DtypeInfo& d : tandem::dtypes) {
    const int code = d.boolean             ? kBool
                     : d.is_unsigned       ? kDLUInt
                     : d.integer           ? kDLInt
                     : d.id == Dtype::bf16 ? kDLBfloat
                                           : kDLFloat;
    if (t.lanes == 1 && t.code == code && t.bits == 8 * d.size) return d.id;
  }
  throw tandem::type_error("tandem takes " + dtype_names() + " device arrays; convert this one (DLPack type code " +
                           std::to_string(int(t.code)) + ", " + std::to_string(int(t.bits)) + " bits) first");
}

// What tandem calls in the device array libraries, looked up once per library.
struct LibCalls {
  py::object module;
  py::object dtype[kDtypes];  // the library's dtype objects (torch.float32; NumPy's for CuPy)
  py::object raw_stream;      // torch._C._cuda_getCurrentRawStream (None: use torch.cuda.current_stream)
  explicit LibCalls(py::object m, Lib lib) : module(std::move(m)) {
    for (const tandem::DtypeInfo& t : tandem::dtypes) {
      if (lib == Lib::torch)  // (None where this PyTorch lacks the type: torch.uint32 came in 2.3)
        dtype[std::size_t(t.id)] = py::getattr(module, t.array_name, py::none());
      else if (t.id != Dtype::bf16)
        dtype[std::size_t(t.id)] = cache().dtype(t.id);
    }
    if (lib == Lib::torch) raw_stream = py::getattr(module.attr("_C"), "_cuda_getCurrentRawStream", py::none());
  }
};
LibCalls& calls(const Array& a) {
  static LibCalls* torch = nullptr;
  static LibCalls* cupy = nullptr;
  LibCalls*& c = a.lib == Lib::torch ? torch : cupy;
  if (!c) c = new LibCalls(a.library, a.lib);  // (kept for the life of the process)
  return *c;
}

// The library of x's type (cupy, torch, ...): its module (None when it cannot be imported by name) and
// which of the known ones it is; remembered per type.
std::pair<Lib, py::object> library_of(const py::object& x) {
  static auto* known = new std::vector<std::tuple<PyTypeObject*, Lib, py::object>>();
  PyTypeObject* type = Py_TYPE(x.ptr());
  for (const auto& [t, lib, module] : *known)
    if (t == type) return {lib, module};
  const std::string name = py::str(py::type::of(x).attr("__module__"));
  const py::dict modules = py::module_::import("sys").attr("modules");
  const py::str top(name.substr(0, name.find('.')));
  py::object module = modules.contains(top) ? py::object(modules[top]) : py::object(py::none());
  const std::string top_name = top;
  const Lib lib = top_name == "torch" ? Lib::torch : top_name == "cupy" ? Lib::cupy : Lib::other;
  known->emplace_back(type, lib, module);
  return {lib, module};
}

std::string name_of(const py::object& library) {
  return library.is_none() ? std::string("an unknown library") : std::string(py::str(library.attr("__name__")));
}

}  // namespace

CupyDevice::CupyDevice(const Array& a) {
  if (a.lib != Lib::cupy || a.library.attr("cuda").attr("runtime").attr("getDevice")().cast<int>() == a.device_id)
    return;
  guard = a.library.attr("cuda").attr("Device")(a.device_id);
  guard.attr("__enter__")();
}

CupyDevice::~CupyDevice() {
  if (guard) guard.attr("__exit__")(py::none(), py::none(), py::none());
}

void check_result_library(const py::object& library) {
  const std::string name = name_of(library);
  if (name != "torch" && name != "cupy")
    throw tandem::type_error("tandem: results of device arrays are made with CuPy or PyTorch; this array comes from " +
                             name + " (pass out= or use a CuPy / PyTorch array)");
}

std::uintptr_t library_stream(const Array& a) {
  std::uintptr_t s = 0;
  if (a.lib == Lib::torch) {
    LibCalls& c = calls(a);
    s = !c.raw_stream.is_none()
            ? c.raw_stream(a.device_id).cast<std::uintptr_t>()
            : a.library.attr("cuda").attr("current_stream")(a.device_id).attr("cuda_stream").cast<std::uintptr_t>();
  } else if (a.lib == Lib::cupy) {
    s = a.library.attr("cuda").attr("get_current_stream")(a.device_id).attr("ptr").cast<std::uintptr_t>();
  } else {
    return 0;
  }
  return s == 0 ? 1 : s;  // (0, the legacy default stream, is cudaStreamLegacy)
}

// Stream operations on device arrays: the CUDA module's (the module links no CUDA library itself, so
// that it imports where CUDA is absent; a device array implies a CUDA engine, whose module is loaded).
void order_after(std::uintptr_t producer, int producer_device, std::uintptr_t consumer) {
  if (producer != consumer) tandem::detail::cuda_module().order_after(producer, producer_device, consumer);
}

Array device_array(const py::object& x, std::uintptr_t stream, int device) {
  Array a;
  a.device = true;
  std::tie(a.lib, a.library) = library_of(x);
  a.keep = x;
  if (a.lib == Lib::torch) {  // (its attributes directly: a DLPack export costs a few microseconds a call)
    const LibCalls& c = calls(a);
    const py::object dtype = x.attr("dtype");
    bool known = false;
    for (const tandem::DtypeInfo& t : tandem::dtypes)
      if (c.dtype[std::size_t(t.id)].ptr() == dtype.ptr()) a.dtype = t.id, known = true;
    if (!known)
      throw tandem::type_error("tandem takes " + dtype_names() + " tensors, not " + std::string(py::str(dtype)) +
                               "; convert it first (x.float(), ...)");
    a.data = reinterpret_cast<void*>(x.attr("data_ptr")().cast<std::uintptr_t>());
    a.device_id = device >= 0 ? device : x.attr("get_device")().cast<int>();
    for (const py::handle n : x.attr("shape")) a.shape.push_back(n.cast<std::int64_t>());
    for (const py::handle n : py::tuple(x.attr("stride")())) a.strides.push_back(n.cast<std::int64_t>());
    if (device < 0) order_after(library_stream(a), a.device_id, stream);  // (device given: stream is the library's)
    return a;
  }
  if (py::hasattr(x, "__dlpack__")) {
    // The handshake: the producer makes its pending work visible to our stream before we read.
    py::capsule cap(x.attr("__dlpack__")(py::arg("stream") = py::int_(stream)));
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
  if (a.lib == Lib::torch) return device_array(a.keep.attr("contiguous")(), stream);
  if (a.lib == Lib::cupy) {
    CupyDevice on(a);
    return device_array(a.library.attr("ascontiguousarray")(a.keep), stream);
  }
  throw tandem::value_error(
      "tandem: this device array's layout (negative, unaligned or repeating strides) cannot be read in place, "
      "and tandem makes copies of CuPy and PyTorch arrays only; make it contiguous first");
}

Array new_array_like(const Array& like, const std::vector<std::int64_t>& shape, Dtype dtype) {
  if (!like.device) {
    Array a = from_numpy(new_host_array(shape, dtype));
    return a;
  }
  check_result_library(like.library);
  Array a;
  a.dtype = dtype, a.device = true, a.device_id = like.device_id, a.library = like.library, a.lib = like.lib;
  a.shape = shape, a.strides = c_order_strides(shape);
  LibCalls& c = calls(like);
  if (like.lib == Lib::torch) {
    a.keep = like.keep.attr("new_empty")(to_tuple(shape), py::arg("dtype") = c.dtype[std::size_t(dtype)]);
    a.data = reinterpret_cast<void*>(a.keep.attr("data_ptr")().cast<std::uintptr_t>());
  } else {
    if (!c.dtype[std::size_t(dtype)]) throw tandem::type_error("tandem: CuPy has no bfloat16 arrays");
    CupyDevice on(like);
    a.keep = c.module.attr("empty")(to_tuple(shape), c.dtype[std::size_t(dtype)]);
    a.data = reinterpret_cast<void*>(a.keep.attr("data").attr("ptr").cast<std::uintptr_t>());
  }
  return a;
}

py::object library_cast(const py::object& x, Lib lib, Dtype d) {
  if (lib == Lib::torch) return x.attr("to")(py::module_::import("torch").attr(tandem::info(d).array_name));
  return x.attr("astype")(cache().dtype(d));
}

void library_copy(const py::object& dst, const py::object& src, Lib lib) {
  if (lib == Lib::torch) {
    if (py::isinstance<py::int_>(src) || py::isinstance<py::float_>(src))
      dst.attr("fill_")(src);
    else
      dst.attr("copy_")(src);
  } else {
    const py::object copyto = lib == Lib::cupy ? py::module_::import("cupy").attr("copyto") : cache().copyto;
    copyto(dst, src, py::arg("casting") = "unsafe");
  }
}

Array permuted_copy(const Array& a, const std::vector<std::int64_t>& perm, std::uintptr_t stream) {
  if (!a.device) return from_numpy(cache().ascontiguousarray(a.keep.attr("transpose")(to_tuple(perm))));
  if (a.lib == Lib::torch) return device_array(a.keep.attr("permute")(to_tuple(perm)).attr("contiguous")(), stream);
  if (a.lib == Lib::cupy) {
    CupyDevice on(a);
    return device_array(a.library.attr("ascontiguousarray")(a.keep.attr("transpose")(to_tuple(perm))), stream);
  }
  throw tandem::value_error(
      "tandem: reducing this device array needs a copy with its axes reordered, which tandem makes of CuPy and "
      "PyTorch arrays only; reorder it first");
}

Array broadcast_copy(const Array& a, const std::vector<std::int64_t>& shape, std::uintptr_t stream) {
  if (!a.device)
    return from_numpy(cache().ascontiguousarray(cache().numpy.attr("broadcast_to")(a.keep, to_tuple(shape))));
  if (a.lib == Lib::torch) return device_array(a.keep.attr("expand")(to_tuple(shape)).attr("contiguous")(), stream);
  if (a.lib == Lib::cupy) {
    CupyDevice on(a);
    return device_array(a.library.attr("ascontiguousarray")(a.library.attr("broadcast_to")(a.keep, to_tuple(shape))),
                        stream);
  }
  throw tandem::value_error(
      "tandem: broadcasting this device array takes a copy, which tandem makes of CuPy and "
      "PyTorch arrays only; give the operands the same batch shape");
}

bool device_stream(const py::object& x, std::uintptr_t& stream, int& device, py::object& keeper) {
  stream = 0, device = -1;
  if (py::isinstance<py::array>(x)) return false;
  const auto [lib, library] = library_of(x);
  if (lib == Lib::torch) {
    device = x.attr("get_device")().cast<int>();
    if (device < 0) return false;  // a CPU tensor
    Array probe;
    probe.lib = lib, probe.library = library, probe.device_id = device;
    stream = library_stream(probe);
    return true;
  }
  if (lib == Lib::cupy) {
    device = x.attr("device").attr("id").cast<int>();
    keeper = library.attr("cuda").attr("get_current_stream")(device);
    stream = keeper.attr("ptr").cast<std::uintptr_t>();
    if (stream == 0) stream = 1;
    return true;
  }
  if (!is_device_array(x)) return false;
  if (py::hasattr(x, "__dlpack_device__")) device = py::tuple(x.attr("__dlpack_device__")())[1].cast<int>();
  return true;  // (else its GPU is known once it is read: device_array)
}

int pointer_device(const py::object& x) {
  if (!py::hasattr(x, "__cuda_array_interface__")) return -1;
  const py::dict cai = x.attr("__cuda_array_interface__");
  return tandem::detail::cuda_module().device_of(
      reinterpret_cast<void*>(py::tuple(cai["data"])[0].cast<std::uintptr_t>()));
}

Array converted(const Array& a, Dtype d, std::uintptr_t stream) {
  if (!a.device) return host_array(cast_keeping_repeats(a, d));  // (a broadcast stays one)
  if (a.lib != Lib::torch && a.lib != Lib::cupy)
    throw tandem::type_error("tandem: dtype= converts the input, which tandem does for CuPy and PyTorch arrays only");
  std::optional<CupyDevice> on;
  if (a.lib == Lib::cupy) on.emplace(a);
  py::object x = cast_keeping_repeats(a, d);
  on.reset();
  return device_array(x, stream);
}

}  // namespace tandem_python
