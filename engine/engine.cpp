// The engine front end: backend selection, the engine's construction (one device or several), and the
// exported entries, each handing its call to the engine's executor (engine/executor.hpp).
#include "tandem/engine.hpp"

#include <cstdlib>
#include <limits>

#include "common/backend.hpp"
#include "engine/executor.hpp"
#include "engine/extent.hpp"
#include "engine/multi_device.hpp"
#include "engine/registry.hpp"
#include "engine/results.hpp"
#include "engine/validate.hpp"

namespace tandem {

// ---- backends ------------------------------------------------------------------------------------

const char* to_string(Backend b) noexcept { return std::size_t(b) < std::size(backends) ? info(b).name : "?"; }

namespace {

// Every backend's name, then "and auto": "cpu, cuda and auto".
std::string backend_names() {
  std::string s;
  for (const BackendInfo& b : backends) s += std::string(b.name) + ", ";
  return s.substr(0, s.size() - 2) + " and auto";
}

}  // namespace

Backend parse_backend(std::string_view name) {
  if (name.empty() || name == "auto") return auto_backend().backend;
  for (const BackendInfo& b : backends)
    if (name == b.name) return b.id;
  throw value_error(Arg::backend,
                    Message("'", std::string(name), "' is not a backend; valid values are ", backend_names()));
}

AutoChoice auto_backend() {
  // The usable backend of highest priority; the reason names why each better one was passed over.
  const BackendInfo* best = nullptr;
  for (const BackendInfo& b : backends)
    if ((!best || b.auto_priority > best->auto_priority) && detail::backend_entry(b.id).probe().usable) best = &b;
  if (!best) throw Error("tandem: no backend is usable on this machine");
  std::string reason;
  for (const BackendInfo& b : backends) {
    if (b.auto_priority <= best->auto_priority) continue;
    const detail::Probe p = detail::backend_entry(b.id).probe();
    reason += std::string(reason.empty() ? "" : "; ") +
              (p.compiled_in ? "no usable " + std::string(b.device) + ": " + p.reason
                             : "this build has no " + std::string(b.label) + " backend (" + p.reason + ")");
  }
  if (reason.empty())
    reason = "a usable " + std::string(best->device) + " is present (" +
             detail::backend_entry(best->id).probe().reason + ")";
  return {best->id, reason};
}

std::vector<BackendStatus> backend_status() {
  std::vector<BackendStatus> out;
  for (const BackendInfo& b : backends) {
    const detail::Probe p = detail::backend_entry(b.id).probe();
    out.push_back({b.id, p.compiled_in, p.usable, p.reason, p.devices, "built into libtandem"});
  }
  // Once the probes have loaded the modules: each backend that lives in one gives that module's state.
  for (const ModuleStatus& m : module_status())
    for (BackendStatus& s : out)
      if (const char* module = detail::backend_entry(s.backend).module; module && m.name == module) s.module = m.reason;
  return out;
}

Backend backend_from_env() {
  const char* v = std::getenv("TANDEM_BACKEND");
  const std::string_view name = v ? v : "";
  if (name.empty() || name == "auto") return auto_backend().backend;  // (its own errors pass unchanged)
  try {
    return parse_backend(name);
  } catch (const Error&) {
    throw value_error(Arg::backend,
                      Message("TANDEM_BACKEND='", std::string(name), "' is not a backend; allowed values are ",
                              backend_names(), " (or leave it unset for auto)"));
  }
}

namespace {

// options.device, or TANDEM_DEVICE (a non-negative integer), or 0. Only backends with devices to pick
// from (a device count in the table: CUDA) read TANDEM_DEVICE; the others (the CPU) ignore it entirely.
EngineOptions resolve_device(Backend backend, EngineOptions options) {
  if (options.device >= 0) return options;
  if (options.device < -1)
    throw value_error(Arg::device, Message(Arg::device, " is ", options.device),
                      Message("use a GPU index (0, 1, ...) or -1 for TANDEM_DEVICE / device 0"));
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
    throw value_error(Arg::device, Message("TANDEM_DEVICE='", value, "' is not a GPU index"),
                      Message("set it to 0, 1, ... (a device number as nvidia-smi lists it) or leave it unset for "
                              "device 0"));
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
namespace {
std::vector<std::string> names_of(const std::vector<KernelInfo>& infos) {
  std::vector<std::string> names;
  for (const auto& k : infos) names.push_back(k.name);
  return names;
}
}  // namespace
std::vector<std::string> Engine::reduce_kernels() const { return names_of(reduce_kernel_info()); }
std::vector<std::string> Engine::matmul_kernels() const { return names_of(matmul_kernel_info()); }

// ---- the exported entries: each checks its call (engine/validate.cpp), then hands it to the executor ------

void Engine::check_reduce(Op op, const detail::ReduceInput& in, const ReduceOptions& opts) const {
  detail::check_reduce_part(*exec_, op, in, opts);
}

void Engine::reduce_entry(Op op, const detail::ReduceInput& in, const ReduceOptions& opts, void* result) const {
  if (detail::masked(opts)) return masked_entry(op, in, opts, result);  // (engine/masked.cpp)
  alignas(16) unsigned char backend[detail::kBackendResultBytes] = {};
  exec_->reduce(detail::check_reduce(*exec_, op, in, opts), backend);
  detail::api_result(op, in.dtype, backend, in.count, result);
}

void Engine::reduce_part_entry(Op op, const detail::ReduceInput& in, const ReduceOptions& opts,
                               void* backend_result) const {
  exec_->reduce(detail::check_reduce_part(*exec_, op, in, opts), backend_result);
}

void Engine::reduce_into_entry(Op op, const detail::ReduceInput& in, const detail::OutSlot& out,
                               const ReduceOptions& opts) const {
  detail::refuse_masks(opts, std::string(to_string(op)) + "_into");
  exec_->reduce_into(detail::check_reduce_into(*exec_, op, in, out, opts), out);
}

void Engine::reduce_per(Op op, Per per, const detail::MatrixInput& in, const detail::ReduceOutput& out,
                        const ReduceOptions& opts) const {
  if (detail::masked(opts)) return masked_per(op, per, in, out, opts);  // (engine/masked.cpp)
  exec_->reduce_per(detail::check_reduce_per(*exec_, op, per, in, out, opts));
}

void Engine::run_matmul(const detail::MatrixInput& a, const detail::MatrixInput& b, const detail::MatrixInput& c,
                        const MatmulOptions& opts) const {
  const detail::MatmulCall call = detail::check_matmul(*exec_, a, b, c, opts);
  if (call.c.outer_count == 1) return exec_->matmul(call);
  for (const detail::MatmulCall& run : detail::batch_runs(call)) exec_->matmul(run);  // (in order, on one stream)
}

void Engine::run_matmul_grouped(const detail::MatrixInput& a, const detail::MatrixInput& b,
                                const detail::MatrixInput& c, std::span<const std::size_t> group_sizes,
                                const MatmulOptions& opts) const {
  const detail::GroupedCall grouped = detail::check_matmul_grouped(*exec_, a, b, c, group_sizes, opts);
  if (grouped.groups.empty() || exec_->matmul_grouped(grouped)) return;  // (on CUDA: one launch, where it applies)
  for (const detail::MatmulCall& call : grouped.groups)
    exec_->matmul(call);  // (each group one product, in order: on CUDA, each on the engine's stream)
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
