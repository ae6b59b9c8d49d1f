// The table of backends (TANDEM_BACKENDS in include/tandem/types.hpp) with each one's probe, factory, kernel
// tables and columns. Each is compiled in by a CMake option (TANDEM_WITH_CUDA defines TANDEM_HAS_CUDA, and
// the CUDA backend is then a module loaded at run time); the CPU backend is always there.
#include "engine/registry.hpp"

#include <dlfcn.h>

#include <string>
#include <vector>

#include "common/modules.hpp"
#include "common/table_check.hpp"

namespace tandem::detail {

// ---- CPU ----------------------------------------------------------------------------------------------

namespace {
DeviceFreeTables cpu_tables() {  // (built into libtandem; making one touches no device)
  const auto cpu = make_cpu_backend(EngineOptions{.device = 0});
  return {cpu->reduce_kernel_info(), cpu->matmul_kernel_info()};
}
}  // namespace

// ---- CUDA: the backend lives in its module (common/modules.hpp), loaded by the first of these calls --------

#ifdef TANDEM_HAS_CUDA
namespace {
// Why the NVIDIA driver offers no GPU here, or "" when it reports one: asked of the driver library itself
// (libcuda.so.1, which the driver installs in the loader's folders), before the module and cuBLAS are
// loaded, so that a machine without a GPU pays a few microseconds, not the module's start. Asked once.
const std::string& cuda_driver_absent() {
  static const std::string why = [] {
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);  // (kept open: the module's runtime uses it)
    if (driver == nullptr)
      return std::string("no NVIDIA driver is installed (libcuda.so.1 is not among the loader's libraries)");
    using Init = int (*)(unsigned);
    using Count = int (*)(int*);
    const auto init = reinterpret_cast<Init>(dlsym(driver, "cuInit"));
    const auto count = reinterpret_cast<Count>(dlsym(driver, "cuDeviceGetCount"));
    if (init == nullptr || count == nullptr) return std::string("libcuda.so.1 is not an NVIDIA driver library");
    if (const int err = init(0); err != 0)  // CUDA_SUCCESS is 0; 100: no device, 34: a stub library
      return std::string("the NVIDIA driver found no usable GPU (cuInit: CUDA driver error ") + std::to_string(err) +
             (err == 100  ? ", no device"
              : err == 34 ? ", a stub library, not a driver"
                          : "") +
             ")";
    int n = 0;
    if (count(&n) != 0 || n == 0) return std::string("the NVIDIA driver reports no GPU");
    return std::string();
  }();
  return why;
}
}  // namespace
#endif

Probe cuda_probe() {
#ifdef TANDEM_HAS_CUDA
  if (const std::string& none = cuda_driver_absent(); !none.empty()) return {true, false, none};
  std::string why;
  const CudaModule* m = cuda_module(&why);
  return m ? m->probe() : Probe{true, false, why};
#else
  return {false, false, "configured with TANDEM_WITH_CUDA=OFF or without nvcc"};
#endif
}
// (An explicit CUDA engine loads the module even without a driver: its error then names what is missing.)
std::shared_ptr<BackendImpl> make_cuda_backend(const EngineOptions& options) { return cuda_module().make(options); }
int cuda_device_count() {
#ifdef TANDEM_HAS_CUDA
  if (!cuda_driver_absent().empty()) return 0;
#endif
  const CudaModule* m = cuda_module(nullptr);
  return m ? m->device_count() : 0;
}

namespace {
DeviceFreeTables cuda_tables() {  // the module's stage tables, fixed information that needs no GPU
  std::string why;
  const CudaModule* m = cuda_module(&why);
  if (m == nullptr)
#ifdef TANDEM_HAS_CUDA
    throw Error("tandem: the CUDA kernel tables come from the CUDA module (no GPU is needed to read them): " + why +
                ". Install the libtandem_cuda.so built with this libtandem, with the CUDA libraries it links "
                "(cuBLAS) where the loader finds them");
#else
    throw Error("tandem: the CUDA kernel tables cannot be read: " + why);
#endif
  return {m->reduce_kernel_info(), m->matmul_kernel_info()};
}
}  // namespace

// NCCL lives in its own module, loaded when the first engine over several GPUs (or over CUDA ranks) is made.
std::unique_ptr<Collectives> make_nccl_collectives(const std::vector<std::shared_ptr<BackendImpl>>& members) {
  std::string why;
  const NcclModule* m = nccl_module(&why);
  if (m == nullptr) throw Error("tandem: an engine over several GPUs needs NCCL, which is not available: " + why);
  return m->make_collectives(members);
}
std::vector<unsigned char> nccl_unique_id() {
  const NcclModule* m = nccl_module(nullptr);
  return m ? m->unique_id() : std::vector<unsigned char>{};  // (empty: MPI ranks then exchange through MPI)
}
std::unique_ptr<RankCollectives> make_nccl_ranks(int device, void* stream, const std::vector<unsigned char>& id,
                                                 int rank, int size) {
  const NcclModule* m = nccl_module(nullptr);
  return m ? m->make_ranks(device, stream, id, rank, size) : nullptr;
}

// ---- the table: one row per backend of TANDEM_BACKENDS, in its order ----------------------------------------

namespace {
constexpr BackendEntry kBackends[] = {
    {.info = &info(Backend::cpu),
     .probe = &cpu_probe,
     .make = &make_cpu_backend,
     .kernel_tables = &cpu_tables,
     .make_collectives = &make_host_collectives},
    {.info = &info(Backend::cuda),
     .probe = &cuda_probe,
     .make = &make_cuda_backend,
     .kernel_tables = &cuda_tables,
     .module = "cuda",
     .device_count = &cuda_device_count,
     .make_collectives = &make_nccl_collectives,
     .device_per_rank = true,
     .rank_groups = true},
};
static_assert(
    [] {
      if (std::size(kBackends) != std::size(backends)) return false;
      for (std::size_t i = 0; i < std::size(kBackends); ++i)
        if (kBackends[i].info != &backends[i]) return false;
      return true;
    }(),
    "engine/registry.cpp: one row per backend of TANDEM_BACKENDS, in its order");
static_assert(
    [] {
      for (const BackendEntry& e : kBackends)
        if (!given(e.probe) || !given(e.make) || !given(e.kernel_tables) || !given(e.make_collectives)) return false;
      return true;
    }(),
    "engine/registry.cpp: every row needs its probe, make, kernel_tables and make_collectives (a backend of one "
    "device takes make_host_collectives)");
}  // namespace

const BackendEntry& backend_entry(Backend b) {
  if (std::size_t(b) >= std::size(kBackends)) throw Error("tandem: unknown backend id " + std::to_string(int(b)));
  return kBackends[std::size_t(b)];
}

RankColumns rank_columns(Backend b) {
  const BackendEntry& e = backend_entry(b);
  return {e.device_per_rank, e.rank_groups};
}

}  // namespace tandem::detail
