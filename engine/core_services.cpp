// What libtandem lends the modules it loads (common/module_api.hpp): the host copies and CPU reductions
// that the CUDA backend's host pipeline uses, and the NCCL hooks (loading the NCCL module on demand).
#include "common/host_copy.hpp"
#include "common/host_reduce.hpp"
#include "common/module_api.hpp"

namespace tandem::detail {

const CoreServices& core_services() {
  static const CoreServices services{&gather,         &copy_rows,      &cpu_reduce_acc, &cpu_canonical_chunk_values,
                                     &nccl_unique_id, &make_nccl_ranks};
  return services;
}

}  // namespace tandem::detail
