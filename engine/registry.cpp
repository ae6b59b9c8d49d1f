// The one place where backends are registered. Each is compiled in by a CMake option
// (TANDEM_WITH_CUDA defines TANDEM_HAS_CUDA); the CPU backend is always there.
#include "engine/registry.hpp"

#include "backends/cpu/cpu_backend.hpp"
#ifdef TANDEM_HAS_CUDA
#include "backends/cuda/cuda_backend.hpp"
#endif

namespace tandem::detail {

Probe probe(Backend b) {
  switch (b) {
    case Backend::cpu:
      return {true, true, "oneTBB + Eigen"};
    case Backend::cuda:
#ifdef TANDEM_HAS_CUDA
      return cuda_probe();
#else
      return {false, false, "not compiled in (this build was configured with TANDEM_WITH_CUDA=OFF or without nvcc)"};
#endif
  }
  return {};
}

std::shared_ptr<BackendImpl> make_backend(Backend b) {
  if (b == Backend::cpu) return make_cpu_backend();
#ifdef TANDEM_HAS_CUDA
  return make_cuda_backend();  // throws tandem::Error when no GPU is usable
#else
  throw Error(
      "the CUDA backend is not compiled into this build of tandem; rebuild with -DTANDEM_WITH_CUDA=ON (needs nvcc), "
      "or use the CPU backend (TANDEM_BACKEND=cpu or Backend::cpu)");
#endif
}

}  // namespace tandem::detail
