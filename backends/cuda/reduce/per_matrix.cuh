// Per-row and per-column reductions on the GPU (BackendImpl::reduce_matrix): the entry the CUDA backend
// calls with device data; the kernels are in per_matrix.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/common.cuh"
#include "tandem/dtype.hpp"

namespace tandem::cuda {

// Bytes of one result of a (MatrixReduceArgs::out's element type).
inline std::size_t matrix_result_size(const detail::MatrixReduceArgs& a) {
  return a.divide ? sizeof(double) : size_of(result_dtype(a.op, a.dtype));
}

// One result per row or column of x (device memory, a.rows x a.cols, leading dimension ld; a.data is
// ignored) into out (device memory), enqueued on stream; scratch from ws.
void reduce_matrix(const detail::MatrixReduceArgs& a, const void* x, std::int64_t ld, void* out, Workspace& ws,
                   cudaStream_t stream);

}  // namespace tandem::cuda
