// How libtandem finds, checks and refuses its modules (engine/modules.cpp), through the public API; one
// scenario per process (a module is loaded once per process), named by the first argument:
//   refused_then_found  TANDEM_MODULE_PATH names a folder whose libtandem_cuda.so is from another tandem
//                       version, and a relative folder: the first is refused with both versions named, the
//                       second ignored, and the module next to libtandem is the one loaded.
//   only_refused        libtandem's folder holds only the wrong-version module: the CUDA backend is not
//                       usable, auto runs on the CPU, and Engine(Backend::cuda) throws naming both versions.
//   concurrent_first_use  eight threads probe at once: one load, one outcome for all.
//   cpu_loads_nothing   an engine of TANDEM_BACKEND=cpu runs, and rejects a mistyped kernel name, without
//                       loading any module.
//   auto_without_driver an engine of TANDEM_BACKEND=auto where the NVIDIA driver reports no GPU (or is absent)
//                       runs on the CPU without loading any module (the probe asks the driver first). 77 where
//                       the driver reports a GPU.
//   static_engine_exit  a CUDA engine and a Buffer in static storage: their destructors run during exit, when the
//                       CUDA runtime may already be unloading, and must not throw (std::terminate). 77 without a GPU.
// Exits 0 when every check holds, 1 otherwise (each failed check printed).
#include <dlfcn.h>

#include <cstdio>
#include <string>
#include <tandem/tandem.hpp>
#include <thread>
#include <vector>

namespace {
int failures = 0;
void check(bool ok, const std::string& what, const std::string& seen) {
  if (ok) return;
  ++failures;
  std::printf("FAILED: %s\n  got: %s\n", what.c_str(), seen.c_str());
}
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

tandem::ModuleStatus cuda_status() {
  for (const auto& m : tandem::module_status())
    if (m.name == "cuda") return m;
  return {};
}

std::string cuda_reason() {
  for (const auto& s : tandem::backend_status())
    if (s.backend == tandem::Backend::cuda) return s.reason;
  return "";
}

tandem::BackendStatus status_of(tandem::Backend b) {
  for (const auto& s : tandem::backend_status())
    if (s.backend == b) return s;
  return {};
}

// Loads the CUDA module as reading its kernel tables does (the probes load it only where the NVIDIA driver
// reports a GPU): "" when it loads, else the error.
std::string load_module() {
  try {
    (void)tandem::reduce_kernel_info(tandem::Backend::cuda);
    return "";
  } catch (const tandem::Error& e) {
    return e.what();
  }
}

// The NVIDIA driver reports a GPU, as the probe asks it (the probes then load the module; without one they
// load nothing): libcuda.so.1 loads, cuInit succeeds and the device count is above 0.
bool driver_reports_gpu() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) return false;
  const auto init = reinterpret_cast<int (*)(unsigned)>(dlsym(driver, "cuInit"));
  const auto count = reinterpret_cast<int (*)(int*)>(dlsym(driver, "cuDeviceGetCount"));
  int n = 0;
  return init != nullptr && count != nullptr && init(0) == 0 && count(&n) == 0 && n > 0;
}
}  // namespace

int main(int argc, char** argv) {
  const std::string scenario = argc > 1 ? argv[1] : "";
  const std::string refusal = "is the 'cuda' module of tandem 9.9.9";
  const std::string expected = std::string("this libtandem is tandem ") + TANDEM_VERSION_STRING;
  if (scenario == "refused_then_found") {
    check(load_module().empty(), "the module loads", load_module());
    const tandem::ModuleStatus m = cuda_status();
    check(m.loaded, "the module next to libtandem is loaded", m.reason);
    check(has(m.path, "/libtandem_cuda.so") && !has(m.path, "fake"), "it is the real one", m.path);
    check(has(m.reason, refusal) && has(m.reason, expected), "the wrong version is named as passed over", m.reason);
    const std::string module = status_of(tandem::Backend::cuda).module;
    check(has(module, "loaded from " + m.path), "backend_status() says where the CUDA backend was loaded from", module);
    check(status_of(tandem::Backend::cpu).module == "built into libtandem", "the CPU backend is in libtandem",
          status_of(tandem::Backend::cpu).module);
  } else if (scenario == "only_refused") {
    const std::string loaded = load_module();
    check(has(loaded, refusal) && has(loaded, expected) && has(loaded, "install the libtandem_cuda.so"),
          "reading the CUDA tables says why the module was refused", loaded);
    const std::string reason = cuda_reason();  // (without a driver, the driver's reason)
    check(driver_reports_gpu() ? has(reason, refusal) : has(reason, "NVIDIA driver"), "the CUDA backend says why",
          reason);
    check(tandem::auto_backend().backend == tandem::Backend::cpu, "auto picks the CPU", reason);
    std::string error = "(no error)";
    try {
      tandem::Engine eng(tandem::Backend::cuda);
    } catch (const tandem::Error& e) {
      error = e.what();
    }
    check(has(error, refusal) && has(error, "TANDEM_BACKEND=cpu"), "Engine(cuda) throws the refusal", error);
    const tandem::ModuleStatus m = cuda_status();
    check(!m.loaded && has(m.reason, refusal), "module_status says it is not loaded, and why", m.reason);
    const std::string module = status_of(tandem::Backend::cuda).module;
    check(has(module, refusal), "backend_status() says why the module is not loaded", module);
    std::vector<float> x{1, 2, 3};
    check(tandem::Engine().sum(x) == 6.0f, "Engine() (auto) sums on the CPU", "");
  } else if (scenario == "concurrent_first_use") {
    // Eight threads ask for the CUDA backend at once (its probe, then its tables, which load the module):
    // the module is loaded once, and every thread sees the same outcome (the same reason: a usable GPU, or
    // why not; the tables read).
    std::vector<std::string> reasons(8);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < reasons.size(); ++t)
      threads.emplace_back([&, t] { reasons[t] = cuda_reason() + " / " + load_module(); });
    for (auto& t : threads) t.join();
    for (const auto& r : reasons)
      check(r == reasons[0] && r.size() > 3 && r.ends_with(" / "), "every thread sees the same probe and tables", r);
    const tandem::ModuleStatus m = cuda_status();
    check(m.loaded && has(m.reason, "loaded from"), "the module is loaded", m.reason);
  } else if (scenario == "cpu_loads_nothing") {
    tandem::Engine eng;  // TANDEM_BACKEND=cpu (set by the test)
    std::vector<double> x{1, 2, 3};
    check(eng.backend() == tandem::Backend::cpu && eng.sum(x) == 6.0, "the CPU engine runs", "");
    std::string error = "(no error)";  // a mistyped kernel name: the error, without loading the CUDA module
    try {
      (void)eng.sum(x, {.kernel = "no_such_kernel"});
    } catch (const tandem::Error& e) {
      error = e.what();
    }
    check(has(error, "no_such_kernel"), "a mistyped kernel name throws", error);
    for (const auto& m : tandem::module_status()) check(!m.loaded, "no module is loaded: " + m.name, m.reason);
  } else if (scenario == "auto_without_driver") {
    if (driver_reports_gpu()) {
      std::printf("auto_without_driver: skipped: the NVIDIA driver reports a GPU here\n");
      return 77;
    }
    tandem::Engine eng;  // auto: asks the driver, which has no GPU (or is absent), loads nothing
    std::vector<double> x{1, 2, 3};
    check(eng.backend() == tandem::Backend::cpu && eng.sum(x) == 6.0, "auto runs on the CPU", "");
    check(has(cuda_reason(), "NVIDIA driver"), "the CUDA backend names the driver's answer", cuda_reason());
    for (const auto& m : tandem::module_status()) check(!m.loaded, "no module is loaded: " + m.name, m.reason);
  } else if (scenario == "static_engine_exit") {
    if (!status_of(tandem::Backend::cuda).usable) {
      std::printf("static_engine_exit: skipped: %s\n", cuda_reason().c_str());
      return 77;
    }
    static const tandem::Engine eng(tandem::Backend::cuda);
    static const tandem::Buffer<float> x = eng.upload<float>(std::vector<float>{1, 2, 3});
    check(eng.sum(x) == 6.0f, "the static engine sums its Buffer", "");
  } else {
    std::printf(
        "usage: tandem_module_tests refused_then_found | only_refused | concurrent_first_use | cpu_loads_nothing | "
        "auto_without_driver | static_engine_exit\n");
    return 2;
  }
  std::printf("%s: %s\n", scenario.c_str(), failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
