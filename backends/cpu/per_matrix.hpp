// The CPU backend's per-row / per-column reductions (BackendImpl::reduce_matrix, common/backend.hpp).
#pragma once

#include "common/backend.hpp"

namespace tandem::detail {

// Writes one result per row or column of a.data (host memory) to out, as MatrixReduceArgs describes.
void cpu_reduce_matrix(const MatrixReduceArgs& a, void* out);

namespace cpu_per_matrix {
// cpu_reduce_matrix for the element types of part P (common/dispatch.hpp's kTypePart): defined in
// per_matrix_kernels.hpp, instantiated in per_matrix_part<P>.cpp only (per_matrix.cpp, which routes each call
// to its part, sees this declaration alone, so that it instantiates no kernel).
template <int P>
void reduce_matrix_part(const MatrixReduceArgs& a, void* out);
}  // namespace cpu_per_matrix

}  // namespace tandem::detail
