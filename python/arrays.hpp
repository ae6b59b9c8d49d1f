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

// One array: element type, address of element 0, shape and strides in elements (non-negative), where it
// lives, and what keeps its memory alive while tandem reads it.
struct Array {
  tandem::Dtype dtype = tandem::Dtype::f32;
  void* data = nullptr;
  std::vector<std::int64_t> shape, strides;
  bool device = false;  // CUDA device memory (device_id)
  int device_id = -1;
  py::object keep;                     // the NumPy array (possibly a copy), or the producer's object
  py::object library;                  // for device arrays: the module that made it ("cupy", "torch"), else None
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
  // The elements in C order as one run `stride` apart, if they are (any 1-D array; contiguous N-D).
  bool one_run(std::int64_t& stride) const;
  // Elements from the first to the last one the array touches.
  std::int64_t extent() const;
};

// The element types' array names (NumPy's) from the table, ", "-separated; matmul_only: those matmul takes.
std::string dtype_names(bool matmul_only = false);
// The tandem dtype of a NumPy dtype, or throws tandem::Error naming the ones tandem takes (and, for bytes
// not in this machine's order, how to convert them).
tandem::Dtype dtype_of(const py::dtype& d);
// The NumPy dtype of a tandem dtype ("bfloat16" needs ml_dtypes; float16 is NumPy's own).
py::dtype numpy_dtype(tandem::Dtype d);
// A new C-ordered NumPy array (numpy.empty: pybind11's own constructor reads the dtype's C struct, whose
// layout NumPy 2 changed).
py::array new_host_array(const std::vector<std::int64_t>& shape, tandem::Dtype dtype);

// A host array (anything np.asarray takes). Negative strides or strides that are not whole elements
// are copied (np.ascontiguousarray), bytes in the other order converted; `writable` arrays (outputs) are
// never copied: such layouts, repeated elements (stride 0) and the other byte order are errors instead.
Array host_array(const py::object& x, bool writable = false);
// A C-contiguous copy of a host array (for layouts a tandem view cannot express).
Array contiguous_copy(const Array& a);

// Whether x is a CUDA device array (DLPack device kDLCUDA, or __cuda_array_interface__).
bool is_device_array(const py::object& x);
// A device array, read in place. `stream` is the consumer stream (the engine's cudaStream_t as an
// integer) for DLPack's handshake: the producer orders its pending work before it. For
// __cuda_array_interface__ with a stream, and PyTorch tensors, the same ordering is made with an event.
Array device_array(const py::object& x, std::uintptr_t stream);
// A C-ordered copy of device array `a` made by its library (CuPy, PyTorch; others: tandem::Error), read
// as device_array(copy, stream): for layouts a tandem view cannot express (negative, unaligned, 0 strides).
Array contiguous_device_copy(const Array& a, std::uintptr_t stream);
// Orders the work enqueued so far on stream `producer` (of GPU producer_device; -1: the current one)
// before what is enqueued next on `consumer` (CUDA streams as integers, 1 and 2 the legacy and
// per-thread default streams), without waiting on the host.
void order_after(std::uintptr_t producer, int producer_device, std::uintptr_t consumer);
// Throws tandem::Error unless `library` (library_of an array) is one whose arrays tandem can make
// (CuPy, PyTorch).
void check_result_library(const py::object& library);
// Enqueues a device-to-device copy of `bytes` on `stream`.
void copy_on_stream(void* dst, const void* src, std::size_t bytes, std::uintptr_t stream);
// A new C-ordered array of `library` (cupy or torch) on device `device_id`: shape, dtype (the object is
// .keep), safe to write on stream `consumer` (the library's current stream is ordered before it).
Array new_device_array(const py::object& library, int device_id, const std::vector<std::int64_t>& shape,
                       tandem::Dtype dtype, std::uintptr_t consumer);

}  // namespace tandem_python
