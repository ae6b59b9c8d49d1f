// The backend modules linked into the program: tandem_internal (the static library the benchmarks link)
// has the CUDA backend's code inside, so these are engine/modules.cpp's functions without dlopen.
#include <string>

#include "backends/cuda/module.hpp"
#include "common/modules.hpp"
#include "tandem/engine.hpp"

namespace tandem::detail {

const CudaModule* cuda_module(std::string*) { return &cuda::module_table; }

const CudaModule& cuda_module() { return cuda::module_table; }

const NcclModule* nccl_module(std::string* why) {
#ifdef TANDEM_HAS_NCCL
  (void)why;
  return &cuda::nccl_module_table;
#else
  if (why) *why = "this build of tandem has no NCCL, which an engine over several GPUs needs";
  return nullptr;
#endif
}

}  // namespace tandem::detail

namespace tandem {

std::vector<ModuleStatus> module_status() {
  std::vector<ModuleStatus> out{{"cuda", "", true, "linked into this program"}};
#ifdef TANDEM_HAS_NCCL
  out.push_back({"nccl", "", true, "linked into this program"});
#endif
  return out;
}

}  // namespace tandem
