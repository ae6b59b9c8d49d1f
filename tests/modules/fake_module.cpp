// A module file that libtandem must refuse: it is named libtandem_cuda.so but its header says another
// tandem version (tests/modules/CMakeLists.txt). Nothing of it may ever be called except the header.
#include <cstdint>
#include <cstdlib>

#include "common/module_api.hpp"

namespace {
const void* init(const tandem::detail::CoreServices*) { std::abort(); }  // a refused module is never initialised
constexpr tandem::detail::ModuleHeader kHeader{sizeof(tandem::detail::ModuleHeader),
                                               tandem::detail::kModuleInterface,
                                               "cuda",
                                               "9.9.9",
                                               TANDEM_MODULE_CXX_ABI,
                                               &init};
}  // namespace

extern "C" __attribute__((visibility("default"))) const tandem::detail::ModuleHeader* tandem_module_header() {
  return &kHeader;
}
