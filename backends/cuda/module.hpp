// The tables of the CUDA and NCCL modules (common/module_api.hpp): backends/cuda/module.cu and
// backends/cuda/nccl.cu define them; the modules' entry points (module_entry.cpp, nccl_entry.cpp) hand
// them to libtandem, and backends/cuda/static_module.cpp links them in directly.
#pragma once

#include "common/module_api.hpp"

namespace tandem::cuda {

extern const detail::CudaModule module_table;
extern const detail::NcclModule nccl_module_table;

// The backend's own functions behind the table (backends/cuda/device.cu, cuda_backend.cu).
detail::Probe probe();
int device_count();
std::shared_ptr<detail::BackendImpl> make_backend(const EngineOptions& options);

}  // namespace tandem::cuda
