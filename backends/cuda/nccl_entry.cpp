// The NCCL module's entry point (common/module_api.hpp), compiled into libtandem_nccl.so only.
#include "backends/cuda/module.hpp"
#include "tandem/version.hpp"

namespace tandem::detail {
namespace {
const void* init(const CoreServices*) { return &cuda::nccl_module_table; }

constexpr ModuleHeader kHeader{sizeof(ModuleHeader),  kModuleInterface,      "nccl",
                               TANDEM_VERSION_STRING, TANDEM_MODULE_CXX_ABI, &init};
}  // namespace
}  // namespace tandem::detail

extern "C" __attribute__((visibility("default"))) const tandem::detail::ModuleHeader* tandem_module_header() {
  return &tandem::detail::kHeader;
}
