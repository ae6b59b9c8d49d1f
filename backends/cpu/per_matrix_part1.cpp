// Per-row and per-column reductions of the element types of part 1 (common/dispatch.hpp's kTypePart),
// instantiated here so that the parts compile in parallel (per_matrix_kernels.hpp).
#include "backends/cpu/per_matrix_kernels.hpp"

template void tandem::detail::cpu_per_matrix::reduce_matrix_part<1>(const MatrixReduceArgs&, void*);
