#include "python/args.hpp"

#include <cstddef>
#include <string_view>

#include "tandem/error.hpp"

namespace tandem_python {

namespace {

std::string type_name(const py::handle& v) { return py::str(py::type::of(v).attr("__name__")); }

// What to do instead, for NumPy's keywords that tandem does not take.
std::string numpy_hint(const std::string& method, const std::string& name) {
  if (name == "where" && (method == "argmin" || method == "argmax"))
    return "; argmin and argmax take no where= (nor do NumPy's)";
  if (name == "initial") return "; initial= is taken by the reductions whose result is a sum or an element, as NumPy's";
  if (name == "ddof" || name == "correction") return "; ddof= and correction= are var's and std's";
  return "";
}

}  // namespace

std::string Signature::line() const {
  const auto param = [](const Param& p) {
    return std::string(", ") + p.name + ": " + p.type + (p.default_text ? std::string(" = ") + p.default_text : "");
  };
  std::string s = method + "(self: tandem.Engine";
  for (const Param& p : positional) s += param(p);
  if (!keyword_only.empty()) s += ", *";
  for (const Param& p : keyword_only) s += param(p);
  return s + ") -> object";
}

std::vector<py::object> Signature::bind(const py::args& args, const py::kwargs& kwargs) const {
  const std::string who = "tandem: " + method + "()";
  std::vector<py::object> values(positional.size() + keyword_only.size());
  if (args.size() > positional.size()) {
    std::size_t required = 0;
    for (const Param& p : positional) required += p.default_text == nullptr;
    throw tandem::type_error(
        who + " takes from " + std::to_string(required) + " to " + std::to_string(positional.size()) +
        " positional arguments but " + std::to_string(args.size()) + " were given" +
        (keyword_only.empty() ? "" : std::string(" (") + keyword_only[0].name + "= and the rest are keyword-only)"));
  }
  for (std::size_t i = 0; i < args.size(); ++i) values[i] = py::reinterpret_borrow<py::object>(args[i]);
  for (const auto& item : kwargs) {
    const std::string name = py::str(item.first);
    std::size_t i = 0;
    for (const Param& p : positional) {
      if (name == p.name) break;
      ++i;
    }
    if (i == positional.size())
      for (const Param& p : keyword_only) {
        if (name == p.name) break;
        ++i;
      }
    if (i == values.size()) {
      std::string names;
      for (const auto* list : {&positional, &keyword_only})
        for (const Param& p : *list) names += std::string(names.empty() ? "" : ", ") + p.name + "=";
      throw tandem::type_error(who + " got an unexpected keyword argument '" + name + "' (it takes " + names + ")" +
                               numpy_hint(method, name));
    }
    if (values[i]) throw tandem::type_error(who + " got multiple values for argument '" + name + "'");
    values[i] = py::reinterpret_borrow<py::object>(item.second);
  }
  for (std::size_t i = 0; i < positional.size(); ++i)
    if (!values[i] && positional[i].default_text == nullptr)
      throw tandem::type_error(who + " missing required argument '" + positional[i].name + "'");
  return values;
}

std::size_t Signature::index(const char* name) const {
  std::size_t i = 0;
  for (const auto* list : {&positional, &keyword_only})
    for (const Param& p : *list) {
      if (std::string_view(name) == p.name) return i;
      ++i;
    }
  return i;
}

bool flag_arg(const py::object& v, const char* name, bool fallback) {
  if (!v) return fallback;
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>();
  if (type_name(v) == "bool" || type_name(v) == "bool_") return py::bool_(v).cast<bool>();  // numpy.bool
  throw tandem::type_error(std::string("tandem: ") + name + "= must be True or False, not " + type_name(v));
}

std::string name_arg(const py::object& v, const char* name, const char* fallback, const char* what) {
  if (!v) return fallback;
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  throw tandem::type_error(std::string("tandem: ") + name + "= must be a str (" + what + "), not " + type_name(v));
}

double real_arg(const py::object& v, const char* name, double fallback) {
  if (!v) return fallback;
  const bool array = py::hasattr(v, "shape") && py::len(v.attr("shape")) != 0;
  if (array || py::isinstance<py::str>(v) || py::isinstance<py::bytes>(v) || !py::hasattr(v, "__float__"))
    throw tandem::type_error(std::string("tandem: ") + name + "= must be a real number, not " + type_name(v));
  return py::float_(v).cast<double>();
}

}  // namespace tandem_python
