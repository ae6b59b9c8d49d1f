// The engine front end: backend selection, the engine's construction (one device or several), and the
// exported entries, each handing its call to the engine's executor (engine/executor.hpp).
#include "tandem/engine.hpp"

#include <cstdlib>
#include <limits>

#include "common/backend.hpp"
#include "engine/executor.hpp"
#include "engine/multi_device.hpp"
#include "engine/registry.hpp"

namespace tandem {

// ---- backends ------------------------------------------------------------------------------------

const char* to_string(Backend b) noexcept {
  for (std::size_t i = 0; i < detail::backend_count; ++i)
    if (detail::backend_table()[i].id == b) return detail::backend_table()[i].name;
  return "?";
}

namespace {

// "cpu, cuda and auto"
std::string backend_names() {
  std::string s;
  for (std::size_t i = 0; i < detail::backend_count; ++i) s += std::string(detail::backend_table()[i].name) + ", ";
  return s.substr(0, s.size() - 2) + " and auto";
}

}  // namespace

Backend parse_backend(std::string_view name) {
  if (name.empty() || name == "auto") return auto_backend().backend;
  for (std::size_t i = 0; i < detail::backend_count; ++i)
    if (name == detail::backend_table()[i].name) return detail::backend_table()[i].id;
  throw value_error("'" + std::string(name) + "' is not a backend; valid values are " + backend_names());
}

AutoChoice auto_backend() {
  // The usable backend of highest priority; the reason names why each better one was passed over.
  const detail::BackendEntry* best = nullptr;
  for (std::size_t i = 0; i < detail::backend_count; ++i) {
    const auto& e = detail::backend_table()[i];
    if ((!best || e.auto_priority > best->auto_priority) && e.probe().usable) best = &e;
  }
  if (!best) throw Error("tandem: no backend is usable on this machine");
  std::string reason;
  for (std::size_t i = 0; i < detail::backend_count; ++i) {
    const auto& e = detail::backend_table()[i];
    if (e.auto_priority <= best->auto_priority) continue;
    const detail::Probe p = e.probe();
    reason += std::string(reason.empty() ? "" : "; ") +
              (p.compiled_in ? "no usable " + std::string(e.device) + ": " + p.reason
                             : "this build has no " + std::string(e.label) + " backend (" + p.reason + ")");
  }
  if (reason.empty()) reason = "a usable " + std::string(best->device) + " is present (" + best->probe().reason + ")";
  return {best->id, reason};
}

std::vector<BackendStatus> backend_status() {
  std::vector<BackendStatus> out;
  for (std::size_t i = 0; i < detail::backend_count; ++i) {
    const auto& e = detail::backend_table()[i];
    auto p = e.probe();
    out.push_back({e.id, p.compiled_in, p.usable, p.reason, p.devices, "built into libtandem"});
  }
  // Once the probes have loaded the modules: each backend that lives in one gives that module's state.
  for (const ModuleStatus& m : module_status())
    for (BackendStatus& s : out)
      if (m.name == to_string(s.backend)) s.module = m.reason;
  return out;
}

Backend backend_from_env() {
  const char* v = std::getenv("TANDEM_BACKEND");
  const std::string_view name = v ? v : "";
  if (name.empty() || name == "auto") return auto_backend().backend;  // (its own errors pass unchanged)
  try {
    return parse_backend(name);
  } catch (const Error&) {
    throw value_error("TANDEM_BACKEND='" + std::string(name) + "' is not a backend; allowed values are " +
                      backend_names() + " (or leave it unset for auto)");
  }
}

namespace {

// options.device, or TANDEM_DEVICE (a non-negative integer), or 0. Only backends with devices to pick
// from (a device count in the table: CUDA) read TANDEM_DEVICE; the others (the CPU) ignore it entirely.
EngineOptions resolve_device(Backend backend, EngineOptions options) {
  if (options.device >= 0) return options;
  if (options.device < -1)
    throw value_error("EngineOptions::device is " + std::to_string(options.device) +
                      "; use a GPU index (0, 1, ...) or -1 for TANDEM_DEVICE / device 0");
  if (!detail::backend_entry(backend).device_count) {
    options.device = 0;
    return options;
  }
  const char* v = std::getenv("TANDEM_DEVICE");
  if (v == nullptr || *v == 0) {
    options.device = 0;
    return options;
  }
  const std::string value = v;
  const bool digits = value.size() <= 6 && value.find_first_not_of("0123456789") == std::string::npos;
  if (!digits)
    throw value_error("TANDEM_DEVICE='" + value + "' is not a GPU index; set it to 0, 1, ... (a device number as " +
                      "nvidia-smi lists it) or leave it unset for device 0");
  options.device = std::stoi(value);
  return options;
}
}  // namespace

Engine::Engine() : Engine(backend_from_env(), EngineOptions{}) {}
Engine::Engine(Backend backend) : Engine(backend, EngineOptions{}) {}
Engine::Engine(Backend backend, const EngineOptions& options) {
  const std::vector<int> devices = detail::resolve_devices(backend, options);
  if (devices.size() > 1) {  // engine/multi_device.hpp
    exec_ = std::make_shared<detail::Group>(backend, devices);
  } else {
    EngineOptions one = options;
    if (devices.size() == 1) one.device = devices[0];
    one.devices.clear();
    exec_ = std::make_shared<detail::SingleDevice>(detail::backend_entry(backend).make(resolve_device(backend, one)));
  }
  impl_ = exec_->first();
}

Backend Engine::backend() const noexcept { return impl_->kind(); }
DeviceInfo Engine::device() const { return impl_->device(); }
std::vector<DeviceInfo> Engine::devices() const { return exec_->devices(); }
std::vector<KernelInfo> Engine::reduce_kernel_info() const { return impl_->kernel_tables().reduce; }
std::vector<KernelInfo> Engine::matmul_kernel_info() const { return impl_->kernel_tables().matmul; }
std::vector<std::string> Engine::reduce_kernels() const { return detail::kernel_names(reduce_kernel_info()); }
std::vector<std::string> Engine::matmul_kernels() const { return detail::kernel_names(matmul_kernel_info()); }

// ---- the exported entries: each hands its call to the executor (one device, or a Group) -----------------

void Engine::check_reduce(Op op, const detail::ReduceInput& in, const ReduceOptions& opts) const {
  detail::SingleDevice(impl_).check_reduce(op, in, opts);
}

void Engine::reduce_entry(Op op, const detail::ReduceInput& in, const ReduceOptions& opts, void* result) const {
  exec_->reduce(op, in, opts, result);
}

void Engine::reduce_into_entry(Op op, const detail::ReduceInput& in, const detail::OutSlot& out,
                               const ReduceOptions& opts) const {
  exec_->reduce_into(op, in, out, opts);
}

void Engine::reduce_per(Op op, Per per, const detail::MatrixInput& in, const detail::ReduceOutput& out,
                        const ReduceOptions& opts) const {
  exec_->reduce_per(op, per, in, out, opts);
}

void Engine::run_matmul(const detail::MatrixInput& a, const detail::MatrixInput& b, const detail::MatrixInput& c,
                        const MatmulOptions& opts) const {
  exec_->matmul(a, b, c, opts);
}

void Engine::synchronize() const { exec_->synchronize(); }

std::shared_ptr<detail::Allocation> Engine::wrap_memory(void* data, std::size_t count, std::size_t element_size) const {
  if (count > std::size_t(std::numeric_limits<std::ptrdiff_t>::max()) / element_size)
    throw value_error("wrap: " + std::to_string(count) + " elements do not fit in the address space");
  if (count > 0 && data == nullptr)
    throw value_error("wrap: data is null but count is " + std::to_string(count) + "; pass the memory to wrap");
  return exec_->wrap(data, count, element_size);
}

std::shared_ptr<detail::Allocation> Engine::allocate(std::size_t count, std::size_t element_size) const {
  if (count > std::size_t(std::numeric_limits<std::ptrdiff_t>::max()) / element_size)
    throw value_error("buffer: " + std::to_string(count) + " elements do not fit in the address space");
  return exec_->allocate(count, element_size);
}

}  // namespace tandem
