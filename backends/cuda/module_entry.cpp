// The CUDA module's entry point (common/module_api.hpp), compiled into libtandem_cuda.so only: the header
// libtandem checks, and the core's functions that the backend's code calls, forwarded to the
// CoreServices libtandem lends at init(). (tandem_internal links the backend with the core directly and
// has neither.)
#include "backends/cuda/module.hpp"
#include "common/host_copy.hpp"
#include "common/host_reduce.hpp"
#include "tandem/version.hpp"

namespace tandem::detail {
namespace {
const CoreServices* core = nullptr;

const void* init(const CoreServices* services) {
  core = services;
  return &cuda::module_table;
}

constexpr ModuleHeader kHeader{sizeof(ModuleHeader),  kModuleInterface,      "cuda",
                               TANDEM_VERSION_STRING, TANDEM_MODULE_CXX_ABI, &init};
}  // namespace

void gather(void* dst, const void* src, std::size_t count, std::size_t stride, std::size_t elem) {
  core->gather(dst, src, count, stride, elem);
}
void copy_rows(void* dst, std::size_t ld_dst, const void* src, std::size_t ld_src, std::size_t rows, std::size_t cols,
               std::size_t elem) {
  core->copy_rows(dst, ld_dst, src, ld_src, rows, cols, elem);
}
void cpu_reduce_acc(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* acc) {
  core->cpu_reduce_acc(op, dtype, x, n, stride, acc);
}
void cpu_canonical_chunk_values(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* values) {
  core->cpu_canonical_chunk_values(op, dtype, x, n, stride, values);
}
std::vector<unsigned char> nccl_unique_id() { return core->nccl_unique_id(); }
std::unique_ptr<RankCollectives> make_nccl_ranks(int device, void* stream, const std::vector<unsigned char>& id,
                                                 int rank, int size) {
  return core->make_nccl_ranks(device, stream, id, rank, size);
}

}  // namespace tandem::detail

extern "C" __attribute__((visibility("default"))) const tandem::detail::ModuleHeader* tandem_module_header() {
  return &tandem::detail::kHeader;
}
