// Per-row and per-column reductions on the CPU: each call goes to the part of the kernels that holds its
// element type (per_matrix_kernels.hpp, instantiated in per_matrix_part<P>.cpp; this file includes only their
// declaration, per_matrix.hpp).
#include "backends/cpu/per_matrix.hpp"

#include "common/dispatch.hpp"

namespace tandem::detail {

void cpu_reduce_matrix(const MatrixReduceArgs& a, void* out) {
  on_type_part(a.dtype, [&](auto p) { cpu_per_matrix::reduce_matrix_part<decltype(p)::value>(a, out); });
}

}  // namespace tandem::detail
