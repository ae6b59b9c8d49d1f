// The Python module `tandem` (issue #13): tandem.Engine with reductions and matmul on NumPy arrays
// (host) and CuPy / PyTorch arrays (device, in place), tandem.Error, tandem.info(). Reductions are in
// python/reduce.cpp, array conversions in python/arrays.cpp; the docstrings are the reference (the
// stubs in python/tandem/__init__.pyi repeat the signatures).
#include <pybind11/stl.h>

#include "common/backend.hpp"
#include "common/dispatch.hpp"
#include "python/engine.hpp"
#include "tandem/version.hpp"

namespace tandem_python {

using tandem::Dtype;
using tandem::Error;

PyEngine::PyEngine(const std::string& backend, std::optional<int> device, std::optional<std::vector<int>> devices)
    : eng_([&] {
        tandem::EngineOptions o;
        if (device) o.device = *device;
        if (devices) o.devices = *devices;
        return tandem::Engine(backend == "auto" ? tandem::backend_from_env() : tandem::parse_backend(backend), o);
      }()),
      several_devices_(eng_.devices().size() > 1) {}

Array PyEngine::array(const py::object& x, bool writable) const {
  if (!is_device_array(x)) return host_array(x, writable);
  if (eng_.backend() != tandem::Backend::cuda)
    throw Error("tandem: this is a GPU array but the engine runs on the " + backend() +
                "; use tandem.Engine('cuda'), or copy the array to the host first (e.g. cupy.asnumpy, tensor.cpu())");
  return device_array(x, stream());
}

std::uintptr_t PyEngine::stream() const { return reinterpret_cast<std::uintptr_t>(eng_.impl().native_stream()); }

void PyEngine::check_device(const Array& a) const {
  if (several_devices_)
    throw Error("tandem: an engine over several GPUs takes host arrays; pass device arrays to an engine of one GPU");
  (void)a;  // (Engine::wrap checks that the memory is this engine's GPU's and says which GPU it is on)
}

namespace {

tandem::Precision parse_precision(const std::string& p) {
  if (p == "full") return tandem::Precision::full;
  if (p == "tf32") return tandem::Precision::tf32;
  if (p == "bf16") return tandem::Precision::bf16;
  throw Error("tandem: precision must be 'full', 'tf32' or 'bf16' (got '" + p + "')");
}

// One operand as count x rows x cols with row stride ld and batch stride (elements), or false when its
// last dimension is not unit-stride.
struct Operand {
  std::int64_t count = 1, rows = 0, cols = 0, ld = 0, stride = 0;
};
bool as_operand(const Array& a, Operand& op, const char* name) {
  if (a.ndim() != 2 && a.ndim() != 3)
    throw Error(std::string("tandem.matmul: ") + name + " must be 2-D (a matrix) or 3-D (a batch), not " +
                std::to_string(a.ndim()) + "-D");
  const int r = a.ndim() - 2;
  op.count = a.ndim() == 3 ? a.shape[0] : 1;
  op.stride = a.ndim() == 3 && op.count > 1 ? a.strides[0] : 0;
  op.rows = a.shape[std::size_t(r)], op.cols = a.shape[std::size_t(r) + 1];
  op.ld = op.rows > 1 ? a.strides[std::size_t(r)] : op.cols;
  return (op.cols <= 1 || a.strides[std::size_t(r) + 1] == 1) && op.ld >= op.cols;
}

}  // namespace

py::object PyEngine::matmul(const py::object& ao, const py::object& bo, const py::object& outo, bool trans_a,
                            bool trans_b, double alpha, double beta, const std::string& kernel, bool deterministic,
                            const std::string& precision) const {
  Array a = array(ao), b = array(bo);
  if (a.dtype != b.dtype) throw Error("tandem.matmul: a and b must have the same dtype");
  if (!tandem::info(a.dtype).matmul)
    throw Error("tandem.matmul takes " + dtype_names(true) + ", not " + tandem::info(a.dtype).array_name);
  if (a.device != b.device) throw Error("tandem.matmul: a and b must both be host arrays or both device arrays");
  Operand A, B, C;
  // An operand stored by columns is read in place as its transpose (trans flipped); others are copied.
  auto operand = [this](Array& x, Operand& op, bool& trans, const char* name) {
    if (as_operand(x, op, name)) return;
    if (x.ndim() == 2 && x.strides[0] == 1) {
      std::swap(x.shape[0], x.shape[1]), std::swap(x.strides[0], x.strides[1]);
      trans = !trans;
      if (as_operand(x, op, name)) return;
      std::swap(x.shape[0], x.shape[1]), std::swap(x.strides[0], x.strides[1]);
      trans = !trans;
    }
    x = x.device ? contiguous_device_copy(x, stream()) : contiguous_copy(x);
    as_operand(x, op, name);
  };
  operand(a, A, trans_a, "a");
  operand(b, B, trans_b, "b");
  const std::int64_t m = trans_a ? A.cols : A.rows, n = trans_b ? B.rows : B.cols;
  const std::int64_t count = std::max(A.count, B.count);
  const bool batch = a.ndim() == 3 || b.ndim() == 3;
  const Dtype cd = tandem::info(a.dtype).compute;
  Array c;
  if (outo.is_none()) {
    if (beta != 0) throw Error("tandem.matmul: beta != 0 reads C; pass it as out=");
    std::vector<std::int64_t> shape = batch ? std::vector<std::int64_t>{count, m, n} : std::vector<std::int64_t>{m, n};
    c = a.device ? new_device_array(a.library, a.device_id, shape, cd, stream())
                 : array(new_host_array(shape, cd), true);
  } else {
    c = array(outo, true);
  }
  const py::object out = outo.is_none() ? c.keep : outo;
  if (c.dtype != cd) throw Error(std::string("tandem.matmul: out must hold ") + tandem::to_string(cd));
  if (c.device != a.device) throw Error("tandem.matmul: out must live where a and b do (host or device)");
  if (!as_operand(c, C, "out")) throw Error("tandem.matmul: out needs rows of unit stride (a C-ordered array)");
  tandem::MatmulOptions o{kernel, deterministic, trans_a, trans_b, alpha, beta, parse_precision(precision)};
  tandem::detail::visit(
      a.dtype,
      [&]<class T>(std::type_identity<T>) {
        using CT = tandem::compute_t<T>;
        auto sz = [](std::int64_t v) { return std::size_t(v); };
        py::gil_scoped_release unlocked;
        if (!a.device) {
          if (!batch)
            return eng_.matmul<T>({static_cast<const T*>(a.data), sz(A.rows), sz(A.cols), sz(A.ld)},
                                  {static_cast<const T*>(b.data), sz(B.rows), sz(B.cols), sz(B.ld)},
                                  {static_cast<CT*>(c.data), sz(C.rows), sz(C.cols), sz(C.ld)}, o);
          return eng_.matmul(tandem::BatchView<const T>{static_cast<const T*>(a.data), sz(A.rows), sz(A.cols), sz(A.ld),
                                                        sz(A.count), sz(A.stride)},
                             tandem::BatchView<const T>{static_cast<const T*>(b.data), sz(B.rows), sz(B.cols), sz(B.ld),
                                                        sz(B.count), sz(B.stride)},
                             tandem::BatchView<CT>{static_cast<CT*>(c.data), sz(C.rows), sz(C.cols), sz(C.ld),
                                                   sz(C.count), sz(C.stride)},
                             o);
        }
        const auto ab = eng_.wrap(static_cast<T*>(a.data), sz(a.extent()));
        const auto bb = eng_.wrap(static_cast<T*>(b.data), sz(b.extent()));
        const auto cb = eng_.wrap(static_cast<CT*>(c.data), sz(c.extent()));
        eng_.matmul(ab.batch(sz(A.rows), sz(A.cols), sz(A.count), sz(A.stride), sz(A.ld)),
                    bb.batch(sz(B.rows), sz(B.cols), sz(B.count), sz(B.stride), sz(B.ld)),
                    cb.batch(sz(C.rows), sz(C.cols), sz(C.count), sz(C.stride), sz(C.ld)), o);
        eng_.synchronize();  // out's library reads it on its own stream
      },
      tandem::detail::matmul_types{});
  return out;
}

namespace {

py::dict device_dict(const tandem::DeviceInfo& d) {
  py::dict r;
  r["name"] = d.name, r["compute_units"] = d.compute_units, r["memory_bytes"] = d.memory_bytes;
  r["peak_bandwidth_gbs"] = d.peak_bandwidth_gbs, r["details"] = d.details;
  return r;
}

py::dict kernel_dict(const tandem::KernelInfo& k) {
  py::dict d;
  d["name"] = k.name;
  py::list dtypes, ops;
  for (Dtype t : k.dtypes) dtypes.append(tandem::to_string(t));
  for (tandem::Op op : k.ops) ops.append(tandem::to_string(op));
  d["dtypes"] = dtypes, d["ops"] = ops, d["precision"] = tandem::to_string(k.precision);
  d["deterministic"] = k.deterministic, d["determinism"] = tandem::to_string(k.determinism);
  d["auto_pick"] = k.auto_pick, d["baseline"] = k.baseline;
  d["per_row_col"] = k.per_row_col, d["requirement"] = k.requirement;
  return d;
}

std::string info_text() {
  std::string s = "tandem " + std::to_string(TANDEM_VERSION_MAJOR) + "." + std::to_string(TANDEM_VERSION_MINOR) + "." +
                  std::to_string(TANDEM_VERSION_PATCH) + "\nbackends:\n";
  for (const auto& b : tandem::backend_status())
    s += std::string("  ") + tandem::to_string(b.backend) + ": " +
         (!b.compiled_in ? "not compiled in"
          : b.usable     ? "usable"
                         : "not usable") +
         " (" + b.reason + ")" + (b.usable ? ", " + std::to_string(b.devices) + " device(s)" : "") + "\n";
  try {
    const auto choice = tandem::auto_backend();
    s += std::string("auto picks: ") + tandem::to_string(choice.backend) + ", because " + choice.reason + "\n";
  } catch (const Error& e) {
    s += std::string("auto picks nothing: ") + e.what() + "\n";
  }
  const auto modules = tandem::module_status();
  if (!modules.empty()) s += "modules (loaded at run time, from libtandem's folder or TANDEM_MODULE_PATH):\n";
  for (const auto& m : modules) s += "  " + m.name + ": " + m.reason + "\n";
  return s;
}

// The docstring of a reduction.
std::string reduce_doc(const tandem::OpInfo& o) {
  std::string what = o.description;
  what[0] = char(std::toupper(static_cast<unsigned char>(what[0])));
  return std::string(o.name) + "(x, axis=None, kernel='auto', deterministic=False)\n\n" + what +
         " of x. axis=None: all elements (any shape, in C order; NumPy views are read in place when their "
         "elements form one strided run, which covers 1-D views and contiguous arrays; other layouts are "
         "copied first). axis=1: one result per row of a 2-D array, axis=0: one per column (read in place "
         "when rows or columns have unit stride, else copied). Host inputs give NumPy scalars / arrays; CuPy "
         "and PyTorch GPU arrays (CUDA engine) are read in place and give an array of the same library. NaN "
         "propagates; " +
         (o.empty == tandem::EmptyRule::zero ? std::string("an empty input gives 0")
                                             : std::string("an empty input raises tandem.Error")) +
         ". float16 / "
         "bfloat16 inputs give float32 results.";
}

}  // namespace

}  // namespace tandem_python

PYBIND11_MODULE(tandem, m) {
  namespace py = pybind11;
  using tandem::Op;
  using tandem_python::PyEngine;
  m.doc() = "tandem: reductions and matrix products on the CPU or a CUDA GPU, the same bits in deterministic mode.";
  static py::exception<tandem::Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {  // every C++ error becomes tandem.Error
    try {
      if (p) std::rethrow_exception(p);
    } catch (const py::error_already_set&) {
      throw;
    } catch (const py::builtin_exception&) {
      throw;
    } catch (const std::exception& e) {
      error(e.what());
    }
  });
  {  // The tables (include/tandem/ops.hpp, dtype.hpp) as tuples of names, in table order.
    py::list ops, dtypes;
    for (const tandem::OpInfo& o : tandem::ops) ops.append(o.name);
    for (const tandem::DtypeInfo& d : tandem::dtypes) dtypes.append(d.array_name);
    m.attr("ops") = py::tuple(ops);        // one Engine method each: eng.sum, eng.min, ...
    m.attr("dtypes") = py::tuple(dtypes);  // NumPy's names of the element types tandem takes
  }
  m.def("info", &tandem_python::info_text,
        "What `tandem info` prints: the backends, whether each is usable and "
        "why, and what 'auto' picks.");
  py::class_<PyEngine> e(m, "Engine",
                         "An engine on one backend: tandem.Engine(backend='auto', device=None, devices=None).");
  e.def(py::init<const std::string&, std::optional<int>, std::optional<std::vector<int>>>(),
        py::arg("backend") = "auto", py::arg("device") = py::none(), py::arg("devices") = py::none(),
        "backend: 'auto' (TANDEM_BACKEND if set, else the GPU when one is usable), 'cpu' or 'cuda'. device: the GPU "
        "(None: TANDEM_DEVICE, else 0). devices: several GPUs in one engine (None: TANDEM_DEVICES); such an engine "
        "takes host arrays.");
  e.def_property_readonly("backend", &PyEngine::backend, "'cpu' or 'cuda'.");
  e.def(
      "device_info", [](const PyEngine& s) { return tandem_python::device_dict(s.engine().device()); },
      "The device: name, compute_units, memory_bytes, peak_bandwidth_gbs, details.");
  e.def(
      "devices",
      [](const PyEngine& s) {
        py::list r;
        for (const auto& d : s.engine().devices()) r.append(tandem_python::device_dict(d));
        return r;
      },
      "Every device the engine runs on, as device_info() dicts, in the order of devices= (one for a single "
      "device).");
  e.def(
      "reduce_kernels", [](const PyEngine& s) { return s.engine().reduce_kernels(); },
      "Reduce kernel names, 'auto' first.");
  e.def(
      "matmul_kernels", [](const PyEngine& s) { return s.engine().matmul_kernels(); },
      "Matmul kernel names, 'auto' first.");
  e.def(
      "kernel_info",
      [](const PyEngine& s) {
        py::dict r;
        py::list red, mat;
        for (const auto& k : s.engine().reduce_kernel_info()) red.append(tandem_python::kernel_dict(k));
        for (const auto& k : s.engine().matmul_kernel_info()) mat.append(tandem_python::kernel_dict(k));
        r["reduce"] = red, r["matmul"] = mat;
        return r;
      },
      "What each kernel takes and promises: {'reduce': [...], 'matmul': [...]}, dicts of name, dtypes, ops, "
      "precision, deterministic, determinism, auto_pick, baseline, per_row_col, requirement.");
  for (const tandem::OpInfo& o : tandem::ops) {  // one method per op of the table (include/tandem/ops.hpp)
    const Op op = o.id;
    e.def(
        o.name,
        [op](const PyEngine& s, const py::object& x, const py::object& axis, const std::string& kernel,
             bool deterministic) { return s.reduce(op, x, axis, kernel, deterministic); },
        py::arg("x"), py::arg("axis") = py::none(), py::arg("kernel") = "auto", py::arg("deterministic") = false,
        tandem_python::reduce_doc(o).c_str());
  }
  e.def("matmul", &PyEngine::matmul, py::arg("a"), py::arg("b"), py::arg("out") = py::none(),
        py::arg("trans_a") = false, py::arg("trans_b") = false, py::arg("alpha") = 1.0, py::arg("beta") = 0.0,
        py::arg("kernel") = "auto", py::arg("deterministic") = false, py::arg("precision") = "full",
        "matmul(a, b, out=None, trans_a=False, trans_b=False, alpha=1.0, beta=0.0, kernel='auto', "
        "deterministic=False, precision='full')\n\nout = alpha * op(a) @ op(b) + beta * out, op(x) = x or (trans_x) "
        "x.T, for 2-D arrays or 3-D batches (a batch of 1 is used for every entry). float32, float64, float16 and "
        "bfloat16 inputs; out holds float32 for the 16-bit ones. out=None makes a new array (beta must then be 0). "
        "Rows must have unit stride in place (other host layouts are copied first); out is written in place. Host "
        "arrays or device arrays (CUDA engine), not mixed. precision: the lowest precision 'auto' may pick "
        "('full', 'tf32', 'bf16').");
}
