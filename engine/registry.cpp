// The table of backends (TANDEM_BACKENDS in include/tandem/types.hpp) with each one's probe and factory.
// Each is compiled in by a CMake option (TANDEM_WITH_CUDA defines TANDEM_HAS_CUDA, and the CUDA backend
// is then a module loaded at run time); the CPU backend is always there.
#include "engine/registry.hpp"

#include <string>
#include <vector>

#include "common/modules.hpp"

namespace tandem::detail {

// The CUDA backend lives in its module (common/modules.hpp), loaded by the first of these calls;
// cuda_module() throws what a build without it, or a missing module, means.
Probe cuda_probe() {
#ifdef TANDEM_HAS_CUDA
  std::string why;
  const CudaModule* m = cuda_module(&why);
  return m ? m->probe() : Probe{true, false, why};
#else
  return {false, false, "configured with TANDEM_WITH_CUDA=OFF or without nvcc"};
#endif
}
std::shared_ptr<BackendImpl> make_cuda_backend(const EngineOptions& options) { return cuda_module().make(options); }
int cuda_device_count() {
  const CudaModule* m = cuda_module(nullptr);
  return m ? m->device_count() : 0;
}

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

namespace {
constexpr BackendEntry kBackends[] = {
    {Backend::cpu, "cpu", 0, "CPU", "CPU", &cpu_probe, &make_cpu_backend, nullptr, &make_host_collectives, false,
     false},
    {Backend::cuda, "cuda", 10, "CUDA", "CUDA GPU", &cuda_probe, &make_cuda_backend, &cuda_device_count,
     &make_nccl_collectives, true, true},
};
// The rows follow TANDEM_BACKENDS (include/tandem/types.hpp), whose names, priorities and words they repeat:
// checked here, so that the two cannot drift apart.
constexpr bool same(const char* a, const char* b) { return *a == *b && (*a == 0 || same(a + 1, b + 1)); }
#define TANDEM_BACKEND_CHECK(id_, priority_, label_, device_, ...)                     \
  static_assert(kBackends[std::size_t(Backend::id_)].id == Backend::id_ &&             \
                    same(kBackends[std::size_t(Backend::id_)].name, #id_) &&           \
                    kBackends[std::size_t(Backend::id_)].auto_priority == priority_ && \
                    same(kBackends[std::size_t(Backend::id_)].label, label_) &&        \
                    same(kBackends[std::size_t(Backend::id_)].device, device_),        \
                "engine/registry.cpp: the row of backend " #id_ " differs from TANDEM_BACKENDS");
TANDEM_BACKENDS(TANDEM_BACKEND_CHECK)
#undef TANDEM_BACKEND_CHECK
static_assert(std::size(kBackends) == backend_count);
}  // namespace

const BackendEntry* backend_table() { return kBackends; }

RankColumns rank_columns(Backend b) {
  const BackendEntry& e = backend_entry(b);
  return {e.device_per_rank, e.rank_groups};
}

const BackendEntry& backend_entry(Backend b) {
  for (const BackendEntry& e : kBackends)
    if (e.id == b) return e;
  throw Error("tandem: unknown backend id " + std::to_string(int(b)));
}

}  // namespace tandem::detail
