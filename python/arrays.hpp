// Arrays as the tandem Python module sees them: NumPy arrays (host memory, read in place where tandem's
// views can express their strides), and device arrays of CuPy, PyTorch and others through DLPack
// (`__dlpack__`, with its stream handshake) or `__cuda_array_interface__`.
#pragma once

#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tandem/tandem.hpp"

namespace tandem_python {

namespace py = pybind11;

// The array libraries tandem makes results with: NumPy for host arrays, CuPy and PyTorch for device
// arrays (others: read in place, results only through out=).
enum class Lib : std::uint8_t { numpy, cupy, torch, other };

// One array: element type, address of element 0, shape and strides in elements (non-negative), where it
// lives, and what keeps its memory alive while tandem reads it.
struct Array {
  tandem::Dtype dtype = tandem::Dtype::f32;
  void* data = nullptr;
  std::vector<std::int64_t> shape, strides;
  bool device = false;  // CUDA device memory (device_id)
  int device_id = -1;
  py::object keep;     // the NumPy array (possibly a copy), or the producer's object
  py::object library;  // for device arrays: the module that made it ("cupy", "torch"), else None
  Lib lib = Lib::numpy;
  DLManagedTensor* managed = nullptr;  // DLPack: returned to the producer by release()

  Array() = default;
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  Array(Array&& o) noexcept { *this = std::move(o); }
  Array& operator=(Array&& o) noexcept;
  ~Array() { release(); }
  void release() noexcept;

  std::int64_t size() const;
  std::size_t itemsize() const { return tandem::size_of(dtype); }
  int ndim() const { return int(shape.size()); }
  // The elements in C order as one run `stride` apart, if they are (collapse() of every dimension: any
  // 1-D array, contiguous N-D, a broadcast of one element: stride 0).
  bool one_run(std::int64_t& stride) const;
  // Elements from the first to the last one the array touches.
  std::int64_t extent() const;
};

// Dimensions `dims` of a (in C order) as one strided run of n elements, if they are: each outer stride is
// the next one's stride times its length (dimensions of length 1 do not move in memory and are skipped).
struct Run {
  std::int64_t n = 1, stride = 0;
};
template <class Dims>
bool collapse(const Array& a, const Dims& dims, Run& r) {
  r = {};
  for (const auto dim : dims) {
    const auto d = std::size_t(dim);
    if (a.shape[d] == 1) continue;
    if (r.n == 1)
      r = {a.shape[d], a.strides[d]};
    else if (r.stride == a.strides[d] * a.shape[d])
      r = {r.n * a.shape[d], a.strides[d]};
    else
      return false;
  }
  return true;
}

// The element types' array names (NumPy's) from the table, ", "-separated; matmul_only: those matmul takes.
std::string dtype_names(bool matmul_only = false);
// The tandem dtype of a NumPy dtype, or throws tandem::Error naming the ones tandem takes (and, for bytes
// not in this machine's order, how to convert them).
tandem::Dtype dtype_of(const py::dtype& d);
// Whether d is a floating type (the element types that are not integers or bool).
inline bool is_float(tandem::Dtype d) { return !tandem::info(d).integer; }
// A new C-ordered NumPy array (numpy.empty: pybind11's own constructor reads the dtype's C struct, whose
// layout NumPy 2 changed).
py::array new_host_array(const std::vector<std::int64_t>& shape, tandem::Dtype dtype);
// NumPy's descriptor of element type d (bfloat16: ml_dtypes', imported when first asked for).
py::object numpy_dtype(tandem::Dtype d);
// A NumPy scalar of dtype d holding `value` (converted).
py::object numpy_scalar(tandem::Dtype d, double value);
py::object numpy_scalar(tandem::Dtype d, std::int64_t value);
// The tandem dtype a `dtype=` argument names (a NumPy / CuPy / PyTorch dtype, a type or a name).
tandem::Dtype dtype_from_object(const py::object& d);
// A tuple of ints.
py::tuple to_tuple(const std::vector<std::int64_t>& v);

// A host array (anything np.asarray takes) to read. Negative strides or strides that are not whole
// elements are copied (np.ascontiguousarray), bytes in the other order converted.
Array host_array(const py::object& x);
// Whether an array (an output) repeats elements: a stride of 0 in a dimension longer than 1.
bool repeats_elements(const Array& a);
// out= on the host: a writable NumPy array of tandem's element types (tandem.ValueError if read-only),
// its shape and dtype; `data` null when tandem cannot write it in place (negative or unaligned strides:
// results are then copied into it by NumPy). Repeating strides (0) are a tandem.ValueError. keep is x.
Array host_output(const py::object& x);
// A C-contiguous copy of a host array (for layouts a tandem view cannot express).
Array contiguous_copy(const Array& a);
// A host array's distinct elements: the array without its dimensions of stride 0 and length > 1 (a NumPy
// view of a broadcast's elements, read in place; a copy where tandem cannot read the view).
Array distinct_elements(const Array& a);
// The index that takes element 0 of a's repeated dimensions (stride 0, length > 1) and all of the others:
// a[index] is its library's view of the distinct elements.
py::tuple distinct_index(const Array& a);

// While alive, a CuPy array's GPU is CuPy's current device (CuPy runs its operations and makes its arrays on
// its current device, on that device's current stream); nothing for arrays of other libraries.
struct CupyDevice {
  py::object guard;
  explicit CupyDevice(const Array& a);
  ~CupyDevice();
  CupyDevice(const CupyDevice&) = delete;
  CupyDevice& operator=(const CupyDevice&) = delete;
};

// Whether x is a CUDA device array (DLPack device kDLCUDA, or __cuda_array_interface__).
bool is_device_array(const py::object& x);
// A device array, read in place. `stream` is the consumer stream (the engine's cudaStream_t as an
// integer) for DLPack's handshake: the producer orders its pending work before it. For
// __cuda_array_interface__ with a stream, and PyTorch tensors, the same ordering is made with an event.
// device >= 0: x is a PyTorch or CuPy array on that GPU and `stream` the library's current stream there
// (device_stream's answers: nothing to order).
Array device_array(const py::object& x, std::uintptr_t stream, int device = -1);
// A C-ordered copy of device array `a` made by its library (CuPy, PyTorch; others: tandem::Error), read
// as device_array(copy, stream): for layouts a tandem view cannot express (negative, unaligned, 0 strides).
Array contiguous_device_copy(const Array& a, std::uintptr_t stream);
// The stream the library of device array `a` (CuPy, PyTorch) enqueues on now, on a's GPU: its current
// stream (0, the legacy default stream, as cudaStreamLegacy). 0 for other libraries.
std::uintptr_t library_stream(const Array& a);
// A new C-ordered array of the library of `like` (NumPy for host arrays) on like's device; device
// arrays are made on the library's current stream (the one library_stream names).
Array new_array_like(const Array& like, const std::vector<std::int64_t>& shape, tandem::Dtype dtype);
// x (an array of library `lib`) converted to dtype d by its library (astype / to).
py::object library_cast(const py::object& x, Lib lib, tandem::Dtype d);
// Copies src into dst (arrays of library `lib`, same shape) by the library, converting the type.
void library_copy(const py::object& dst, const py::object& src, Lib lib);
// A C-ordered copy of `a` with its dimensions in the order `perm` (a transpose), made by its library.
Array permuted_copy(const Array& a, const std::vector<std::int64_t>& perm, std::uintptr_t stream);
// `a` repeated to `shape` (NumPy's broadcasting) as a C-ordered copy made by its library.
Array broadcast_copy(const Array& a, const std::vector<std::int64_t>& shape, std::uintptr_t stream);
// Whether x is CUDA memory; for CuPy and PyTorch arrays also the library's current stream on x's GPU
// (0, the legacy default stream, as cudaStreamLegacy), the GPU, and the library's stream object (None for
// PyTorch) to keep that stream alive; stream 0 for other device arrays (their GPU where they export it by
// DLPack, else -1).
bool device_stream(const py::object& x, std::uintptr_t& stream, int& device, py::object& keeper);
// The GPU of a __cuda_array_interface__ array's memory (-1 where not known); needs the CUDA module.
int pointer_device(const py::object& x);
// The array `a` converted to dtype d by its library, read again as an Array.
Array converted(const Array& a, tandem::Dtype d, std::uintptr_t stream);

// Orders the work enqueued so far on stream `producer` (of GPU producer_device; -1: the current one)
// before what is enqueued next on `consumer` (CUDA streams as integers, 1 and 2 the legacy and
// per-thread default streams), without waiting on the host.
void order_after(std::uintptr_t producer, int producer_device, std::uintptr_t consumer);
// Throws tandem::Error unless `library` (library_of an array) is one whose arrays tandem can make
// (CuPy, PyTorch).
void check_result_library(const py::object& library);
}  // namespace tandem_python
