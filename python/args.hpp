// The arguments of the reductions and matmul, bound as Python binds them and refused in Python's words.
// pybind11 answers a call it cannot match with "incompatible function arguments", its C++ signature and the
// array's repr (an unknown keyword such as NumPy's where=, keepdims='yes'); these methods take *args and
// **kwargs instead, bind them to their Signature here, and raise tandem.TypeError naming the argument.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

namespace tandem_python {

namespace py = pybind11;

// One parameter: its name, its type as the signature line shows it, its default as Python writes it
// (nullptr: required).
struct Param {
  const char* name;
  const char* type = "object";
  const char* default_text = nullptr;
};

// A method's parameters: positional-or-keyword ones, then keyword-only ones.
struct Signature {
  std::string method;  // "sum", "matmul"
  std::vector<Param> positional, keyword_only;

  // The line pybind11 would put first in the docstring, as Python writes it:
  // "sum(self: tandem.Engine, x: object, axis: object = None, ..., *, kernel: str = 'auto', ...) -> object".
  std::string line() const;
  // The values of the parameters in order (positional, then keyword-only); a parameter not given is a null
  // py::object (its default is the caller's). Throws tandem.TypeError for more positional arguments than
  // there are, an unknown keyword, an argument given twice or a required one missing.
  std::vector<py::object> bind(const py::args& args, const py::kwargs& kwargs) const;
  // The index of parameter `name` in bind's values; the values' size where the method has no such parameter.
  std::size_t index(const char* name) const;
};

// A flag (keepdims=, deterministic=, trans_a=): True or False (a NumPy bool too); `fallback` when not given.
bool flag_arg(const py::object& v, const char* name, bool fallback);
// A name (kernel=, precision=): a str; `fallback` when not given.
std::string name_arg(const py::object& v, const char* name, const char* fallback, const char* what);
// A real number (alpha=, beta=): a Python or NumPy int or float; `fallback` when not given.
double real_arg(const py::object& v, const char* name, double fallback);
// An argument that may be None (axis=, dtype=, out=): None when not given.
inline py::object object_arg(const py::object& v) { return v ? v : py::none(); }

}  // namespace tandem_python
