// Finding and loading the backend modules (common/module_api.hpp says what a module is). libtandem
// loads them with dlopen (engine/modules.cpp); the static tandem_internal, which the benchmarks link,
// has them linked in (backends/cuda/static_module.cpp). Both implement these functions.
#pragma once

#include <string>

#include "common/module_api.hpp"
#include "tandem/export.hpp"

namespace tandem::detail {

// The CUDA module's table, loaded the first time it is asked for (once per process, thread-safely).
// nullptr when this build has no CUDA backend or no module could be loaded; *why (when given) then says
// why: each path tried and the loader's message.
const CudaModule* cuda_module(std::string* why);
// The same, or throws tandem::Error with that reason and what to do (what Engine(Backend::cuda) throws).
// Exported for the Python module (device arrays).
TANDEM_API const CudaModule& cuda_module();

// The NCCL module's table, loaded the first time an engine over several GPUs (or CUDA ranks of
// tandem::mpi::Engine) needs it; nullptr and *why as above.
const NcclModule* nccl_module(std::string* why);

}  // namespace tandem::detail
