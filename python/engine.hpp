// tandem.Engine for Python: a tandem::Engine and the conversions of python/arrays.hpp.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "python/arrays.hpp"

namespace tandem_python {

// An input array and where its work runs: host arrays on the engine itself; CuPy / PyTorch arrays on
// an engine over the library's current stream (nothing waits: results are ordered like the library's
// own); other device arrays on the engine's stream, waited for before returning (`wait`).
struct Input {
  Array a;
  const tandem::Engine* eng = nullptr;
  std::uintptr_t stream = 0;
  bool wait = false;
};

// The keyword arguments of a reduction (NumPy's, and tandem's kernel / deterministic).
struct ReduceArgs {
  py::object axis, dtype, out;
  py::object initial = py::none();  // NumPy's initial=: combined with each result, and the result of no elements
  py::object where = py::none();    // NumPy's where=: a boolean mask broadcast to the input (python/where.cpp)
  bool keepdims = false;
  std::string kernel = "auto";
  bool deterministic = false;
};

// The keyword arguments of matmul.
struct MatmulArgs {
  py::object out;
  bool trans_a = false, trans_b = false;
  double alpha = 1.0, beta = 0.0;
  std::string kernel = "auto";
  bool deterministic = false;
  std::string precision = "full";
};

// where= (python/where.cpp): whether one is given (None and True are none), the mask as a boolean array of
// the input's library broadcast to its shape (tandem.ValueError where it does not broadcast), and the input
// with the mask's False elements replaced by `fill` (a temporary made by its library). `what` names the call.
bool where_given(const py::object& where);
py::object where_mask(const py::object& where, const Input& in, const std::string& what);
py::object masked_input(const Input& in, const py::object& mask, const py::object& fill, const std::string& what);
// out= for a result of `shape` and type `result` by NumPy's rules (python/reduce.cpp): the shape, and the
// casting rules 'same_kind' for values and 'safe' for indices; tandem.ValueError / TypeError naming out=.
void check_out(tandem::Op op, const Array& out, const std::vector<std::int64_t>& shape, tandem::Dtype result);
// The computed result (an array or NumPy scalar of type `computed`, shaped `have`) as NumPy gives it:
// converted to `result`, shaped `shape`, written into out= when given; waits for a device array's work when
// in.wait (python/reduce.cpp).
py::object finish(py::object value, const std::vector<std::int64_t>& have, const Input& in, tandem::Dtype computed,
                  tandem::Dtype result, const std::vector<std::int64_t>& shape, const py::object& out);
// numpy, cupy or torch for arrays of library `lib` (tandem.TypeError for others, naming `what`).
py::module_ array_module(Lib lib, const std::string& what);

class PyEngine;
// Engine.topk and Engine.argsort (python/topk.cpp).
void bind_topk(py::class_<PyEngine>& e);

class PyEngine {
 public:
  // backend: "auto", "cpu" or "cuda" ("auto" honours TANDEM_BACKEND); device / devices as in
  // tandem::EngineOptions (None: TANDEM_DEVICE / TANDEM_DEVICES).
  PyEngine(const std::string& backend, std::optional<int> device, std::optional<std::vector<int>> devices);

  const tandem::Engine& engine() const { return eng_; }
  std::string backend() const { return tandem::to_string(eng_.backend()); }
  std::string repr() const;

  py::object reduce(tandem::Op op, const py::object& x, const ReduceArgs& r) const;
  // A reduction with where= (python/where.cpp; reduce() sends it there).
  py::object reduce_where(tandem::Op op, const py::object& x, const ReduceArgs& r) const;
  // var (root: std) with NumPy's ddof, in two passes (python/moments.cpp).
  py::object moment(bool root, const py::object& x, const ReduceArgs& r, double ddof) const;
  py::object matmul(const py::object& a, const py::object& b, const MatmulArgs& m) const;
  // Engine.matmul_grouped (python/matmul.cpp): one matmul per non-empty group, on views of a, b and out.
  py::object matmul_grouped(const py::object& a, const py::object& b, const py::object& group_sizes,
                            const MatmulArgs& m) const;

  // x as an Input: a host array on this engine; a device array (on one of this engine's GPUs) on an engine
  // of its GPU alone, over its library's current stream.
  Input input(const py::object& x) const;
  // An output array (out=) where `like`'s work runs: its shape and dtype, and `data` null when it cannot
  // be written in place (negative or unaligned strides; then a result is copied into it). Repeating
  // strides are an error.
  Array output(const py::object& x, const Input& like) const;

 private:
  // The engine of GPU `device` alone that runs on `stream` (0: a stream of its own), made on first use.
  const tandem::Engine& engine_on(int device, std::uintptr_t stream) const;
  // "0, 1": the GPUs this engine runs on.
  std::string gpu_list() const;
  py::object reduce_all(tandem::Op op, Input& in, tandem::Dtype result, const ReduceArgs& r,
                        const std::vector<bool>& reduced) const;
  py::object reduce_axes(tandem::Op op, Input& in, tandem::Dtype result, const ReduceArgs& r,
                         const std::vector<bool>& reduced) const;
  // reduce_axes of a broadcast whose copy with the reduced axes last would be large: in blocks of the
  // kept axes, each block's copy small (python/reduce.cpp).
  py::object reduce_in_blocks(tandem::Op op, Input& in, tandem::Dtype result, const ReduceArgs& r,
                              const std::vector<bool>& reduced) const;

  tandem::Engine eng_;
  int device_ = 0;         // the engine's (first) GPU
  std::vector<int> gpus_;  // every GPU it runs on (asked once: DeviceInfo queries take ~0.5 ms each)
  bool several_devices_ = false;
  mutable py::list keepers_;  // the libraries' stream objects of on_stream_ (destroyed after it)
  mutable std::map<std::pair<int, std::uintptr_t>, std::unique_ptr<tandem::Engine>> on_stream_;  // (under the GIL)
};

}  // namespace tandem_python
