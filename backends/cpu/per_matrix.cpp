// Per-row and per-column reductions on the CPU: each call goes to the part of the kernels that holds its
// element type (per_matrix_kernels.hpp, instantiated in per_matrix_part<P>.cpp; this file includes only their
// declaration, per_matrix.hpp).
#include "backends/cpu/per_matrix.hpp"

#include <array>
#include <cstddef>
#include <utility>

#include "common/dispatch.hpp"

namespace tandem::detail {

namespace {
template <std::size_t... P>
constexpr auto matrix_parts(std::index_sequence<P...>) {
  return std::array{&cpu_per_matrix::reduce_matrix_part<int(P)>...};
}
}  // namespace

void cpu_reduce_matrix(const MatrixReduceArgs& a, void* out) {
  matrix_parts(kTypePartIndices)[type_part(a.dtype)](a, out);
}

}  // namespace tandem::detail
