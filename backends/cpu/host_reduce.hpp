// The CPU backend's reduction kernels, for another backend's host inputs: the CUDA engine reduces part
// of a large host span on the CPU's cores while the rest streams to the GPU (backends/cuda/cuda_backend.cu).
#pragma once

#include <cstdint>

#include "tandem/dtype.hpp"
#include "tandem/types.hpp"

namespace tandem::detail {

// The accumulator (reduce_ops.hpp's Op::Acc, at most 8 bytes) of op over x[0], x[stride], ...,
// x[(n - 1) * stride], on all cores; the same values as the GPU's stages give, combined in any order.
void cpu_reduce_acc(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* acc);

// The canonical chunk values (canonical.hpp, step 1-3) of x: chunk_count(n) values of dtype, a floating
// dtype. Bitwise equal to the GPU's reduce_canonical_chunk_values.
void cpu_canonical_chunk_values(Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* values);

}  // namespace tandem::detail
