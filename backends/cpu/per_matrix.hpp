// The CPU backend's per-row / per-column reductions (BackendImpl::reduce_matrix, common/backend.hpp).
#pragma once

#include "common/backend.hpp"

namespace tandem::detail {

// Writes one result per row or column of a.data (host memory) to out, as MatrixReduceArgs describes.
void cpu_reduce_matrix(const MatrixReduceArgs& a, void* out);

}  // namespace tandem::detail
