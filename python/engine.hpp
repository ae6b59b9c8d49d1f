// tandem.Engine for Python: a tandem::Engine and the conversions of python/arrays.hpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "python/arrays.hpp"

namespace tandem_python {

class PyEngine {
 public:
  // backend: "auto", "cpu" or "cuda" ("auto" honours TANDEM_BACKEND); device / devices as in
  // tandem::EngineOptions (None: TANDEM_DEVICE / TANDEM_DEVICES).
  PyEngine(const std::string& backend, std::optional<int> device, std::optional<std::vector<int>> devices);

  const tandem::Engine& engine() const { return eng_; }
  std::string backend() const { return tandem::to_string(eng_.backend()); }

  py::object reduce(tandem::Op op, const py::object& x, const py::object& axis, const std::string& kernel,
                    bool deterministic) const;
  py::object matmul(const py::object& a, const py::object& b, const py::object& out, bool trans_a, bool trans_b,
                    double alpha, double beta, const std::string& kernel, bool deterministic,
                    const std::string& precision) const;

 private:
  // x as an Array: a device array (CUDA engine only; read on the engine's stream) or a host array.
  Array array(const py::object& x, bool writable = false) const;
  void check_device(const Array& a) const;
  // The engine's CUDA stream as an integer (DLPack's convention).
  std::uintptr_t stream() const;
  static tandem::Per axis_to_per(const py::object& axis, const Array& a);
  py::object reduce_device(tandem::Op op, Array& a, const py::object& axis, const tandem::ReduceOptions& o) const;

  tandem::Engine eng_;
  bool several_devices_ = false;  // (asked once: DeviceInfo queries take a GPU's properties, ~0.5 ms)
};

}  // namespace tandem_python
