// The kernel tables an engine checks its calls against: a backend's stages with "auto" first (made once per
// backend), and the same tables without an engine or a device (tandem::reduce_kernel_info(Backend)).
#include <algorithm>
#include <string>

#include "common/backend.hpp"
#include "common/modules.hpp"
#include "engine/registry.hpp"
#include "tandem/engine.hpp"

namespace tandem {

namespace {

// "auto": every dtype and op any stage takes, deterministic, full precision, and the weakest determinism
// of the stages it may pick (native_16bit: whether one of those multiplies 16-bit inputs as stored).
KernelInfo auto_info(const std::vector<KernelInfo>& stages) {
  KernelInfo a{
      .name = "auto", .precision = Precision::full, .deterministic = true, .determinism = Determinism::every_backend};
  for (const KernelInfo& k : stages) {
    if (k.auto_pick) a.determinism = std::min(a.determinism, k.determinism);
    if (k.auto_pick && k.native_16bit) a.native_16bit = true;  // ("auto" may run it on 16-bit inputs)
    for (Dtype d : k.dtypes)
      if (!a.accepts(d)) a.dtypes.push_back(d);
    for (Op o : k.ops)
      if (!a.accepts(o)) a.ops.push_back(o);
  }
  std::sort(a.dtypes.begin(), a.dtypes.end());
  std::sort(a.ops.begin(), a.ops.end());
  a.precisions.assign(a.dtypes.size(), Precision::full);
  return a;
}

// The tables an engine checks its calls against, from a backend's stages: "auto" first.
detail::BackendImpl::KernelTables tables_of(std::vector<KernelInfo> reduce, std::vector<KernelInfo> matmul) {
  reduce.insert(reduce.begin(), auto_info(reduce));
  matmul.insert(matmul.begin(), auto_info(matmul));
  reduce.front().per_row_col = true;  // per-row / per-column reductions run "auto" on every backend
  return {std::move(reduce), std::move(matmul)};
}

// A backend's tables without an engine or a device (tandem::reduce_kernel_info(Backend)), from the
// registry's column.
detail::BackendImpl::KernelTables device_free_tables(Backend backend) {
  const detail::DeviceFreeTables t = detail::backend_entry(backend).kernel_tables();
  return tables_of(t.reduce, t.matmul);
}

}  // namespace

const detail::BackendImpl::KernelTables& detail::BackendImpl::kernel_tables() const {
  std::call_once(tables_once_, [this] { tables_ = tables_of(reduce_kernel_info(), matmul_kernel_info()); });
  return tables_;
}

std::vector<KernelInfo> reduce_kernel_info(Backend backend) { return device_free_tables(backend).reduce; }
std::vector<KernelInfo> matmul_kernel_info(Backend backend) { return device_free_tables(backend).matmul; }

}  // namespace tandem
