// The table of backends (TANDEM_BACKENDS in include/tandem/types.hpp) with each one's probe and factory.
// Each is compiled in by a CMake option (TANDEM_WITH_CUDA defines TANDEM_HAS_CUDA); the CPU backend is
// always there.
#include "engine/registry.hpp"

#include <string>
#include <vector>

namespace tandem::detail {

#ifndef TANDEM_HAS_CUDA
Probe cuda_probe() { return {false, false, "configured with TANDEM_WITH_CUDA=OFF or without nvcc"}; }
std::shared_ptr<BackendImpl> make_cuda_backend(const EngineOptions&) {
  throw Error(
      "the CUDA backend is not compiled into this build of tandem; rebuild with -DTANDEM_WITH_CUDA=ON (needs nvcc), "
      "or use the CPU backend (TANDEM_BACKEND=cpu or Backend::cpu)");
}
int cuda_device_count() { return 0; }
#endif
#ifndef TANDEM_HAS_NCCL
std::unique_ptr<Collectives> make_nccl_collectives(const std::vector<std::shared_ptr<BackendImpl>>&) {
  throw Error(
      "this build of tandem has no NCCL, which an engine over several GPUs needs; rebuild with NCCL found "
      "(-DNCCL_ROOT=<folder with include/nccl.h and lib/libnccl.so>), or use one GPU per engine");
}
std::vector<unsigned char> nccl_unique_id() { return {}; }  // (MPI ranks then exchange through MPI)
std::unique_ptr<RankCollectives> make_nccl_ranks(int, void*, const std::vector<unsigned char>&, int, int) {
  return nullptr;
}
#endif

namespace {
constexpr BackendEntry kBackends[] = {
#define TANDEM_BACKEND_ROW(name, priority, label, device, ...) \
  {Backend::name, #name, priority, label, device, &name##_probe, &make_##name##_backend},
    TANDEM_BACKENDS(TANDEM_BACKEND_ROW)
#undef TANDEM_BACKEND_ROW
};
static_assert(std::size(kBackends) == backend_count);
}  // namespace

const BackendEntry* backend_table() { return kBackends; }

const BackendEntry& backend_entry(Backend b) {
  for (const BackendEntry& e : kBackends)
    if (e.id == b) return e;
  throw Error("tandem: unknown backend id " + std::to_string(int(b)));
}

}  // namespace tandem::detail
