// The Python module `tandem`: tandem.Engine with reductions and matmul on NumPy arrays (host) and CuPy /
// PyTorch arrays (device, in place), tandem.Error, tandem.info(). Reductions are in python/reduce.cpp,
// array conversions in python/arrays.cpp; the docstrings are the reference (the stubs in python/tandem.pyi
// repeat the signatures).
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "common/backend.hpp"
#include "common/dispatch.hpp"
#include "python/args.hpp"
#include "python/engine.hpp"
#include "python/layout.hpp"
#include "tandem/version.hpp"

namespace tandem_python {

using tandem::Dtype;
using tandem::Error;

namespace {

// A backend= argument: 'auto' (TANDEM_BACKEND if set, else what auto picks), or a backend's name. `who`
// names the call in the error.
tandem::Backend backend_arg(const std::string& backend, const char* who) {
  if (backend == "auto") return tandem::backend_from_env();
  try {
    return tandem::parse_backend(backend);
  } catch (const Error&) {
    std::string names = "'auto'";
    for (const tandem::BackendInfo& b : tandem::backends) names += std::string(", '") + b.name + "'";
    throw tandem::value_error(std::string(who) + ": backend must be one of " + names + ", not '" + backend + "'");
  }
}

}  // namespace

PyEngine::PyEngine(const std::string& backend, std::optional<int> device, std::optional<std::vector<int>> devices)
    : eng_([&] {
        tandem::EngineOptions o;
        if (device) o.device = *device;
        if (devices) o.devices = *devices;
        return tandem::Engine(backend_arg(backend, "tandem.Engine"), o);
      }()),
      device_(eng_.impl().device_index()) {
  for (const tandem::DeviceInfo& d : eng_.devices()) gpus_.push_back(d.index);
  several_devices_ = gpus_.size() > 1;
}

std::string PyEngine::repr() const {
  if (eng_.backend() != tandem::Backend::cuda) return "tandem.Engine('" + backend() + "')";
  if (several_devices_) {
    return "tandem.Engine('cuda', devices=[" + gpu_list() + "])";
  }
  return "tandem.Engine('cuda', device=" + std::to_string(device_) + ")";
}

const tandem::Engine& PyEngine::engine_on(int device, std::uintptr_t stream) const {
  const auto key = std::make_pair(device, stream);
  auto it = on_stream_.find(key);
  if (it != on_stream_.end()) return *it->second;
  tandem::EngineOptions o;
  o.device = device, o.stream = reinterpret_cast<void*>(stream);
  return *on_stream_.emplace(key, std::make_unique<tandem::Engine>(tandem::Backend::cuda, o)).first->second;
}

std::string PyEngine::gpu_list() const {
  std::string s;
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    if (i > 0) s += ", ";  // (appended in two steps: GCC 12 warns, wrongly, about a "" + std::string)
    s += std::to_string(gpus_[i]);
  }
  return s;
}

Input PyEngine::input(const py::object& x) const {
  Input in;
  in.eng = &eng_;
  int device = -1;
  py::object keeper;
  if (!device_stream(x, in.stream, device, keeper)) {
    in.a = host_array(x);
    return in;
  }
  if (eng_.backend() != tandem::Backend::cuda)
    throw tandem::value_error("tandem: this is a GPU array but the engine runs on the " + backend() +
                              "; use tandem.Engine('cuda'), or copy the array to the host first (e.g. cupy.asnumpy, "
                              "tensor.cpu())");
  if (device < 0) device = pointer_device(x);  // (another library's array: by DLPack, or its memory's GPU)
  if (device < 0) device = device_;
  if (std::find(gpus_.begin(), gpus_.end(), device) == gpus_.end())
    throw tandem::value_error("tandem: this array is on GPU " + std::to_string(device) + " but the engine runs on " +
                              (several_devices_ ? "GPUs " + gpu_list() : "GPU " + std::to_string(device_)) +
                              "; use tandem.Engine('cuda', device=" + std::to_string(device) +
                              "), or move the array to the engine's GPU first");
  // The work runs where the array is: on an engine of one GPU, the array's (an engine over several GPUs
  // splits host arrays and its own Buffers only: an array on one GPU is read there, not copied to others).
  if (in.stream == 0) {  // another library's array: on the engine's stream (its GPU's), waited for
    if (several_devices_) in.eng = &engine_on(device, 0);
    in.stream = reinterpret_cast<std::uintptr_t>(in.eng->impl().native_stream());
    in.wait = true;
  } else {
    if (keeper && !on_stream_.contains({device, in.stream}))
      keepers_.append(keeper);  // (the stream outlives its engine)
    in.eng = &engine_on(device, in.stream);
  }
  in.a = device_array(x, in.stream, in.wait ? -1 : device);
  if (in.a.device_id != device)  // (an array whose GPU was not known before it was read)
    throw tandem::value_error("tandem: this array is on GPU " + std::to_string(in.a.device_id) +
                              " but was to be read on GPU " + std::to_string(device) +
                              "; move it to the engine's GPU first");
  return in;
}

Array PyEngine::output(const py::object& x, const Input& like) const {
  int device = -1;
  std::uintptr_t stream = 0;
  py::object keeper;
  const bool device_out = device_stream(x, stream, device, keeper);
  if (device_out != like.a.device)
    throw tandem::value_error(like.a.device ? "tandem: out= is a host array but the inputs are GPU arrays"
                                            : "tandem: out= is a GPU array but the inputs are host arrays");
  if (!device_out) return host_output(x);
  Array o = device_array(x, like.stream);
  if (o.device_id != like.a.device_id)
    throw tandem::value_error("tandem: out= is on GPU " + std::to_string(o.device_id) + ", the inputs on GPU " +
                              std::to_string(like.a.device_id));
  if (repeats_elements(o))
    throw tandem::value_error("tandem: out= repeats elements (a stride of 0); pass an array of its own memory");
  if (o.keep.ptr() != x.ptr()) {  // (a copy of it was read: not in place)
    o.release();
    o.data = nullptr, o.keep = x;
  }
  return o;
}

namespace {

py::dict device_dict(const tandem::DeviceInfo& d) {
  py::dict r;
  r["name"] = d.name, r["compute_units"] = d.compute_units, r["memory_bytes"] = d.memory_bytes;
  r["peak_bandwidth_gbs"] = d.peak_bandwidth_gbs, r["details"] = d.details, r["index"] = d.index;
  return r;
}

py::dict kernel_dict(const tandem::KernelInfo& k) {
  py::dict d;
  d["name"] = k.name;
  py::list dtypes, ops;
  for (Dtype t : k.dtypes) dtypes.append(tandem::info(t).array_name);  // (NumPy's names)
  for (tandem::Op op : k.ops) ops.append(tandem::to_string(op));
  py::dict precisions;  // {'float32': 'tf32', 'bfloat16': 'full', ...}: each element type's
  for (Dtype t : k.dtypes) precisions[tandem::info(t).array_name] = tandem::to_string(k.precision_of(t));
  d["dtypes"] = dtypes, d["ops"] = ops, d["precision"] = tandem::to_string(k.precision);
  d["precisions"] = precisions;
  d["deterministic"] = k.deterministic, d["determinism"] = tandem::to_string(k.determinism);
  d["auto_pick"] = k.auto_pick, d["baseline"] = k.baseline;
  d["per_row_col"] = k.per_row_col, d["requirement"] = k.requirement, d["runs_here"] = k.runs_here;
  d["native_16bit"] = k.native_16bit;
  return d;
}

// {'reduce': [...], 'matmul': [...]}: Engine.kernel_info() and tandem.kernel_info(backend).
py::dict kernel_tables_dict(const std::vector<tandem::KernelInfo>& reduce,
                            const std::vector<tandem::KernelInfo>& matmul) {
  py::dict r;
  py::list red, mat;
  for (const auto& k : reduce) red.append(kernel_dict(k));
  for (const auto& k : matmul) mat.append(kernel_dict(k));
  r["reduce"] = red, r["matmul"] = mat;
  return r;
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

// Whether an op's method takes dtype= (NumPy's accumulating reductions: sums and means).
bool takes_dtype(const tandem::OpInfo& o) {
  return o.result == tandem::ResultKind::sum || o.result == tandem::ResultKind::mean;
}

// Whether an op's method takes initial= (NumPy's: the reductions whose result is a sum or an element, which
// combine it with their result; not mean, argmin, argmax).
bool takes_initial(const tandem::OpInfo& o) {
  return o.result == tandem::ResultKind::sum || o.result == tandem::ResultKind::value;
}

// The docstring of a reduction.
std::string reduce_doc(const tandem::OpInfo& o) {
  std::string what = o.description;
  what[0] = char(std::toupper(static_cast<unsigned char>(what[0])));
  const bool dtype = takes_dtype(o);
  return what + " of x, with NumPy's conventions. axis: None (every element), an int (negative counts from the end)" +
         (tandem::is_arg(o.id) ? "" : " or a tuple of ints") +
         "; keepdims keeps the reduced axes as 1; out: an array of the result's shape to write into. Result types "
         "as NumPy's: " +
         (tandem::is_arg(o.id) ? std::string("int64 indices (into the flattened array for axis=None)")
          : o.result == tandem::ResultKind::sum
              ? std::string("the element type for floats, int64 for signed integers and "
                            "bool, uint64 for unsigned ones")
          : o.result == tandem::ResultKind::mean ? std::string("the element type for floats, float64 for integers")
                                                 : std::string("the element type")) +
         " (16-bit floats are computed in float32 and rounded once)" +
         (dtype ? "; dtype= chooses the result type (the input is converted first where that accumulates wider)" : "") +
         (takes_initial(o) ? "; initial= (NumPy's) is combined with each result by one more operation of the result's "
                             "type, and is the result of no elements"
                           : "") +
         (tandem::is_arg(o.id) ? ""
          : o.result == tandem::ResultKind::value
              ? "; where= (NumPy's, with initial=) takes the elements where a boolean mask broadcast to x is True"
              : "; where= (NumPy's) takes the elements where a boolean mask broadcast to x is True") +
         ". Host arrays give NumPy scalars / arrays; CuPy and PyTorch GPU arrays (CUDA engine) are read in place, "
         "the work is enqueued on the library's current stream (nothing waits) and the result is an array of the "
         "same library (0-d for a full reduction). NaN propagates; " +
         (o.empty == tandem::EmptyRule::zero     ? std::string("an empty input gives 0.")
          : o.empty == tandem::EmptyRule::one    ? std::string("an empty input gives 1.")
          : o.result == tandem::ResultKind::mean ? std::string("an empty input gives NaN with a RuntimeWarning.")
                                                 : std::string("an empty input raises tandem.ValueError.")) +
         " kernel / deterministic: tandem's kernel choice and canonical-order mode.";
}

// The parameters of an op's method: NumPy's (dtype= for the accumulating ones, initial= for those that take
// it), then tandem's keyword-only kernel= and deterministic=.
Signature reduce_signature(const tandem::OpInfo& o) {
  Signature s{
      o.name, {{"x"}, {"axis", "object", "None"}}, {{"kernel", "str", "'auto'"}, {"deterministic", "bool", "False"}}};
  if (takes_dtype(o)) s.positional.push_back({"dtype", "object", "None"});
  s.positional.insert(s.positional.end(), {{"out", "object", "None"}, {"keepdims", "bool", "False"}});
  if (takes_initial(o)) s.positional.push_back({"initial", "object", "None"});
  if (!tandem::is_arg(o.id)) s.keyword_only.insert(s.keyword_only.begin(), {"where", "object", "True"});
  return s;
}

// var and std: NumPy's parameters (ddof=, and the Array API's correction= for the same), then tandem's.
Signature moment_signature(const char* name) {
  return {name,
          {{"x"},
           {"axis", "object", "None"},
           {"dtype", "object", "None"},
           {"out", "object", "None"},
           {"ddof", "float", "0"},
           {"keepdims", "bool", "False"}},
          {{"where", "object", "True"},
           {"correction", "float", "None"},
           {"kernel", "str", "'auto'"},
           {"deterministic", "bool", "False"}}};
}

const Signature& matmul_signature() {
  static const Signature s{"matmul",
                           {{"a"},
                            {"b"},
                            {"out", "object", "None"},
                            {"trans_a", "bool", "False"},
                            {"trans_b", "bool", "False"},
                            {"alpha", "float", "1.0"},
                            {"beta", "float", "0.0"},
                            {"kernel", "str", "'auto'"},
                            {"deterministic", "bool", "False"},
                            {"precision", "str", "'full'"}},
                           {}};
  return s;
}

// matmul's, with group_sizes after a and b.
const Signature& matmul_grouped_signature() {
  static const Signature s = [] {
    Signature g = matmul_signature();
    g.method = "matmul_grouped";
    g.positional.insert(g.positional.begin() + 2, Param{"group_sizes"});
    return g;
  }();
  return s;
}

// matmul's keyword arguments, from v[first] (out) on.
MatmulArgs matmul_args(const std::vector<py::object>& v, std::size_t first) {
  MatmulArgs m{object_arg(v[first])};
  m.trans_a = flag_arg(v[first + 1], "trans_a", false), m.trans_b = flag_arg(v[first + 2], "trans_b", false);
  m.alpha = real_arg(v[first + 3], "alpha", 1.0), m.beta = real_arg(v[first + 4], "beta", 0.0);
  m.kernel = name_arg(v[first + 5], "kernel", "auto", "a name of Engine.matmul_kernels()");
  m.deterministic = flag_arg(v[first + 6], "deterministic", false);
  m.precision = name_arg(v[first + 7], "precision", "full", "'full', 'tf32' or 'bf16'");
  return m;
}

// The Python module's words for the terms of tandem::Error's messages: keywords for the C++ API's options,
// tandem.Engine('cpu') for Backend::cpu, NumPy's names of the element types.
class PythonWords final : public tandem::Words {
 public:
  std::string arg(tandem::Arg a) const override {
    using tandem::Arg;
    switch (a) {
      case Arg::device:
        return "device=";
      case Arg::devices:
        return "devices=";
      case Arg::stream:
        return "the stream";
      case Arg::kernel:
        return "kernel=";
      case Arg::deterministic:
        return "deterministic=";
      case Arg::precision:
        return "precision=";
      case Arg::alpha:
        return "alpha=";
      case Arg::beta:
        return "beta=";
      case Arg::input:
        return "the array";
      case Arg::output:
        return "out";
      case Arg::a:
        return "a";
      case Arg::b:
        return "b";
      case Arg::c:
        return "out";
      case Arg::kernel_info:
        return "Engine.kernel_info()";
      case Arg::where:
        return "where=";
      case Arg::initial:
        return "initial=";
      default:
        return tandem::cpp_words().arg(a);  // (the rest: the same words)
    }
  }
  std::string setting(tandem::Arg a, const std::string& value) const override {
    using tandem::Arg;
    switch (a) {
      case Arg::backend:
        return "tandem.Engine('" + value + "')";
      case Arg::kernel:
        return "kernel='" + value + "'";
      case Arg::deterministic:
        return value == "true" ? "deterministic=True" : "deterministic=False";
      case Arg::kernel_info:
        return "Engine.kernel_info()'s " + value;
      default:
        return arg(a) + value;
    }
  }
  std::string dtype(tandem::Dtype d) const override { return tandem::info(d).array_name; }
};

}  // namespace

}  // namespace tandem_python

PYBIND11_MODULE(tandem, m) {
  namespace py = pybind11;
  using tandem::Op;
  using tandem_python::PyEngine;
  m.doc() = "tandem: reductions and matrix products on the CPU or a CUDA GPU, the same bits in deterministic mode.";
  // tandem.Error for every error of tandem's; its subclasses tandem.ValueError and tandem.TypeError are
  // also Python's ValueError / TypeError (a shape or value problem, an element type problem).
  static py::exception<tandem::Error> error(m, "Error", PyExc_RuntimeError);
  error.doc() = "Every error tandem reports: what went wrong and what to do.";
  auto subclass = [&](const char* name, PyObject* builtin, const char* doc) {
    py::object type = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
        (std::string("tandem.") + name).c_str(), doc, py::make_tuple(error, py::handle(builtin)).ptr(), nullptr));
    m.attr(name) = type;
    return type.release().ptr();  // (kept for the life of the process)
  };
  static PyObject* value_error =
      subclass("ValueError", PyExc_ValueError, "A value or shape tandem does not accept (also a ValueError).");
  static PyObject* type_error = subclass("TypeError", PyExc_TypeError,
                                         "An element type or argument type tandem does not accept (also a TypeError).");
  // tandem.AxisError: an axis out of range, a tandem.ValueError that is also NumPy's AxisError (which is a
  // ValueError and an IndexError), so that code catching NumPy's catches tandem's. (NumPy's class comes first:
  // its __init__ and __str__ take the message.)
  static PyObject* axis_error = [&] {
    py::object numpy_axis_error = py::reinterpret_borrow<py::object>(PyExc_IndexError);
    try {
      py::module_ np = py::module_::import("numpy");
      numpy_axis_error = py::hasattr(np, "exceptions") && py::hasattr(np.attr("exceptions"), "AxisError")
                             ? np.attr("exceptions").attr("AxisError")
                             : np.attr("AxisError");
    } catch (const py::error_already_set&) {  // (no NumPy: an IndexError, as NumPy's AxisError also is)
    }
    py::object type = py::reinterpret_steal<py::object>(
        PyErr_NewExceptionWithDoc("tandem.AxisError", "An axis out of range (also NumPy's AxisError and a ValueError).",
                                  py::make_tuple(numpy_axis_error, py::handle(value_error)).ptr(), nullptr));
    if (!type) throw py::error_already_set();
    m.attr("AxisError") = type;
    return type.release().ptr();
  }();
  tandem_python::axis_error_type = axis_error;
  py::register_exception_translator([](std::exception_ptr p) {  // every C++ error becomes tandem.Error
    try {
      if (p) std::rethrow_exception(p);
    } catch (const py::error_already_set&) {
      throw;
    } catch (const py::builtin_exception&) {
      throw;
    } catch (const tandem::Error& e) {
      static const tandem_python::PythonWords words;
      const std::string what = e.message(words);
      PyErr_SetString(e.kind() == tandem::ErrorKind::value  ? value_error
                      : e.kind() == tandem::ErrorKind::type ? type_error
                                                            : error.ptr(),
                      what.c_str());
    } catch (const std::exception& e) {
      error(e.what());
    }
  });
  m.attr("__version__") = TANDEM_VERSION_STRING;
  {  // The tables (include/tandem/ops.hpp, dtype.hpp) as tuples of names, in table order.
    py::list ops, dtypes;
    for (const tandem::OpInfo& o : tandem::ops) ops.append(o.name);
    for (const tandem::DtypeInfo& d : tandem::dtypes) dtypes.append(d.array_name);
    m.attr("ops") = py::tuple(ops);        // one Engine method each: eng.sum, eng.min, ...
    m.attr("dtypes") = py::tuple(dtypes);  // NumPy's names of the element types tandem takes
    // Each op's row: what it returns ('sum', 'value', 'mean', 'index'), what an empty input gives ('zero',
    // 'one', 'nan' with a RuntimeWarning, 'error'), and whether its method takes dtype= (NumPy's accumulating
    // reductions) and initial=.
    py::dict op_info;
    for (const tandem::OpInfo& o : tandem::ops) {
      static constexpr const char* results[] = {"sum", "value", "mean", "index"};
      py::dict row;
      row["result"] = results[int(o.result)];
      // (A mean of nothing: NumPy's NaN with a RuntimeWarning, where the C++ API raises.)
      row["empty"] = o.empty == tandem::EmptyRule::zero     ? "zero"
                     : o.empty == tandem::EmptyRule::one    ? "one"
                     : o.result == tandem::ResultKind::mean ? "nan"
                                                            : "error";
      row["dtype"] = tandem_python::takes_dtype(o);
      row["initial"] = tandem_python::takes_initial(o);
      op_info[o.name] = row;
    }
    m.attr("op_info") = op_info;
  }
  m.def("info", &tandem_python::info_text,
        "What `tandem info` prints: the backends, whether each is usable and "
        "why, and what 'auto' picks.");
  m.def(
      "backend_status",
      [] {
        py::list out;
        for (const tandem::BackendStatus& s : tandem::backend_status()) {
          py::dict d;
          d["name"] = tandem::to_string(s.backend), d["label"] = tandem::info(s.backend).label;
          d["compiled_in"] = s.compiled_in, d["usable"] = s.usable, d["reason"] = s.reason;
          d["devices"] = s.devices, d["module"] = s.module;
          out.append(d);
        }
        return out;
      },
      "backend_status()\n\nEvery backend of this build, in the table's order: a dict of name (what tandem.Engine "
      "takes), label, compiled_in, usable, reason (why not usable, or what was found), devices and module (where "
      "its code lives), as tandem::backend_status() gives them.");
  const std::string backend_names = [] {  // "'cpu', 'cuda' or 'auto'"
    std::string s;
    for (const tandem::BackendInfo& b : tandem::backends) s += std::string("'") + b.name + "', ";
    return s.substr(0, s.size() - 2) + " or 'auto'";
  }();
  m.def(
      "kernel_info",
      [](const std::string& backend) {
        const tandem::Backend b = tandem_python::backend_arg(backend, "tandem.kernel_info");
        return tandem_python::kernel_tables_dict(tandem::reduce_kernel_info(b), tandem::matmul_kernel_info(b));
      },
      py::arg("backend"),
      (new std::string("kernel_info(backend)\n\nWhat Engine(backend).kernel_info() gives, read without an engine "
                       "and without the backend's device: {'reduce': [...], 'matmul': [...]}, 'auto' first. backend: " +
                       backend_names +
                       ". The CUDA tables come from tandem's CUDA module, which needs the CUDA libraries but no GPU; "
                       "raises tandem.Error where the backend is not compiled in or its module cannot be loaded."))
          ->c_str());  // (kept: pybind11 keeps the pointer)
  py::class_<PyEngine> e(m, "Engine",
                         "An engine on one backend: tandem.Engine(backend='auto', device=None, devices=None).");
  e.def(py::init<const std::string&, std::optional<int>, std::optional<std::vector<int>>>(),
        py::arg("backend") = "auto", py::arg("device") = py::none(), py::arg("devices") = py::none(),
        (new std::string("backend: " + backend_names +
                         " ('auto': TANDEM_BACKEND if set, else the GPU when one is usable). device: the GPU (None: "
                         "TANDEM_DEVICE, else 0). devices: several GPUs in one engine (None: TANDEM_DEVICES); such "
                         "an engine takes host arrays."))
            ->c_str());  // (kept)
  e.def_property_readonly("backend", &PyEngine::backend, "The backend's name (tandem.backend_status()'s name).");
  e.def(
      "device_info", [](const PyEngine& s) { return tandem_python::device_dict(s.engine().device()); },
      "The device: name, compute_units, memory_bytes, peak_bandwidth_gbs, details, index (the CUDA device number).");
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
        return tandem_python::kernel_tables_dict(s.engine().reduce_kernel_info(), s.engine().matmul_kernel_info());
      },
      "What each kernel takes and promises: {'reduce': [...], 'matmul': [...]}, dicts of name, dtypes, ops, "
      "precision, precisions (per element type), deterministic, determinism, auto_pick, baseline, per_row_col, "
      "requirement, runs_here, native_16bit ('auto' first). "
      "tandem.kernel_info(backend) gives the same without an engine.");
  e.def("__repr__", &PyEngine::repr);
  tandem_python::bind_topk(e);
  using tandem_python::ReduceArgs;
  // The methods bind their arguments themselves (python/args.hpp), so pybind11 writes no signature line:
  // each docstring begins with the Signature's.
  py::options options;
  options.disable_function_signatures();
  for (const tandem::OpInfo& o : tandem::ops) {  // one method per op of the table (include/tandem/ops.hpp)
    const Op op = o.id;
    const tandem_python::Signature sig = tandem_python::reduce_signature(o);
    const char* doc = (new std::string(sig.line() + "\n\n" + tandem_python::reduce_doc(o)))->c_str();  // (kept)
    e.def(
        o.name,
        [op, sig](const PyEngine& s, const py::args& args, const py::kwargs& kwargs) {
          const std::vector<py::object> v = sig.bind(args, kwargs);
          const auto arg = [&](const char* name) {  // (null: not taken or not given)
            const std::size_t i = sig.index(name);
            return i < v.size() ? v[i] : py::object();
          };
          ReduceArgs r{tandem_python::object_arg(arg("axis")), tandem_python::object_arg(arg("dtype")),
                       tandem_python::object_arg(arg("out"))};
          r.keepdims = tandem_python::flag_arg(arg("keepdims"), "keepdims", false);
          r.initial = tandem_python::object_arg(arg("initial"));
          if (arg("where") && arg("where").is_none())
            throw tandem::type_error(std::string("tandem: ") + sig.method +
                                     "(where=None): where= must hold booleans; leave it out for every element");
          r.where = tandem_python::object_arg(arg("where"));
          r.kernel = tandem_python::name_arg(arg("kernel"), "kernel", "auto", "a name of Engine.reduce_kernels()");
          r.deterministic = tandem_python::flag_arg(arg("deterministic"), "deterministic", false);
          return s.reduce(op, v[0], r);
        },
        doc);
  }
  for (const bool root : {false, true}) {  // var and std (python/moments.cpp)
    const char* name = root ? "std" : "var";
    const tandem_python::Signature sig = tandem_python::moment_signature(name);
    const std::string doc =
        sig.line() + "\n\n" + (root ? "The standard deviation, sqrt(var)" : "The variance") +
        " of x, with NumPy's conventions: sum((x - mean)**2) / (n - ddof), computed as NumPy computes it: the "
        "mean over the reduced axes, the deviations x - mean by the array's library (a temporary of x's size), "
        "their sum of squares" +
        (root ? ", divided by n - ddof, and its square root" : ", divided by n - ddof") +
        ". axis: None, an int or a tuple of ints; keepdims keeps the reduced axes as 1; out: an array of the "
        "result's shape. ddof (or the Array API's correction): n - ddof <= 0 warns (RuntimeWarning) and gives "
        "inf or NaN, as NumPy. Result types as NumPy's: the element type for floats (16-bit floats computed in "
        "float32 and rounded once), float64 for integers and bool; dtype= (a float type) chooses it. An empty "
        "input gives NaN with a RuntimeWarning. where= (NumPy's): only the elements where a boolean mask "
        "broadcast to x is True, n their count. Host arrays, or CuPy / PyTorch GPU arrays (CUDA engine; "
        "enqueued on the library's current stream). deterministic=True: the mean and the sum of squares in "
        "the canonical order, so the bits are the same on every backend and run.";
    e.def(
        name,
        [root, sig](const PyEngine& s, const py::args& args, const py::kwargs& kwargs) {
          using namespace tandem_python;
          const std::vector<py::object> v = sig.bind(args, kwargs);
          ReduceArgs r{object_arg(v[1]), object_arg(v[2]), object_arg(v[3])};
          r.keepdims = flag_arg(v[5], "keepdims", false);
          if (v[6] && v[6].is_none())
            throw tandem::type_error(std::string("tandem: ") + sig.method +
                                     "(where=None): where= must hold booleans; leave it out for every element");
          r.where = object_arg(v[6]);
          r.kernel = name_arg(v[8], "kernel", "auto", "a name of Engine.reduce_kernels()");
          r.deterministic = flag_arg(v[9], "deterministic", false);
          const bool by_correction = v[7] && !v[7].is_none();
          if (v[4] && by_correction && real_arg(v[4], "ddof", 0.0) != 0)  // (NumPy 2: a ddof other than 0)
            throw tandem::value_error(
                std::string("tandem: ") + sig.method +
                "(): ddof and correction can't be provided simultaneously (they are the same number: pass one)");
          const double ddof = real_arg(by_correction ? v[7] : v[4], by_correction ? "correction" : "ddof", 0.0);
          return s.moment(root, v[0], r, ddof);
        },
        (new std::string(doc))->c_str());  // (kept: pybind11 keeps the pointer)
  }
  e.def(
      "matmul",
      [](const PyEngine& s, const py::args& args, const py::kwargs& kwargs) {
        using namespace tandem_python;
        const std::vector<py::object> v = matmul_signature().bind(args, kwargs);
        return s.matmul(v[0], v[1], matmul_args(v, 2));
      },
      (new std::string(
           tandem_python::matmul_signature().line() +  // (kept: pybind11 keeps the pointer)
           "\n\nout = alpha * op(a) @ op(b) + beta * out with op(x) = x, or x transposed (its last two axes) "
           "when trans_x, following np.matmul: 2-D operands; a 1-D a is one row and a 1-D b one column, "
           "that dimension leaving the result; leading (batch) dimensions broadcast as NumPy's; empty "
           "operands give an empty result (k = 0: zeros). float32, float64, float16 and bfloat16 "
           "inputs; a and b of two types are promoted as NumPy's: two of float32, float16 and bfloat16 are one "
           "mixed product into float32 (the float product of the converted operands; the module converts neither), "
           "float64 with anything is float64 (the other operand converted first); two 16-bit operands of one "
           "type give float32. "
           "out=None makes a new array of the inputs' library (beta must then be 0); out in C or "
           "Fortran order is written in place. Operands are read in place where their rows or columns "
           "have unit stride, else copied. Host arrays, or GPU arrays (CUDA engine; enqueued on the "
           "library's current stream, nothing waits), not mixed. precision: the lowest precision 'auto' "
           "may pick ('full', 'tf32', 'bf16')."))
          ->c_str());
  e.def(
      "matmul_grouped",
      [](const PyEngine& s, const py::args& args, const py::kwargs& kwargs) {
        using namespace tandem_python;
        const std::vector<py::object> v = matmul_grouped_signature().bind(args, kwargs);
        return s.matmul_grouped(v[0], v[1], v[2], matmul_args(v, 3));
      },
      (new std::string(
           tandem_python::matmul_grouped_signature().line() +  // (kept: pybind11 keeps the pointer)
           "\n\nGrouped (expert) products: op(a)'s rows split into consecutive groups of group_sizes[g] rows "
           "(adding up to op(a)'s rows; a group may be empty), group g multiplied by b[g] (b 3-D, one matrix "
           "per group; 2-D: one for every group): out[rows of group g] = alpha * op(a)[rows of group g] @ "
           "op(b[g]) + beta * out[rows of group g]. Each group is exactly what matmul gives for it alone; "
           "types, options, out= and libraries as matmul (a 2-D, out 2-D)."))
          ->c_str());
}
