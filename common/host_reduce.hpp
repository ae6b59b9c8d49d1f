// The CPU backend's reduction kernels, for another backend's host inputs: the CUDA engine reduces part
// of a large host span on the CPU's cores while the rest streams to the GPU (backends/cuda/cuda_backend.cu).
#pragma once

#include <cstdint>

#include "tandem/dtype.hpp"
#include "tandem/types.hpp"

namespace tandem::detail {

// The accumulator (reduce_ops.hpp's Op::Acc, at most 16 bytes) of op over x[0], x[stride], ...,
// x[(n - 1) * stride], on all cores, as kernel "auto" computes it (the same bits on every call).
void cpu_reduce_acc(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* acc);

// The accumulators of op over `count` vectors, on the calling thread (callers parallelise over vectors):
// vector v is x[v * vstride + k * stride] for k < n (n >= 1), its Acc into accs[v]; an arg-reduction's
// index counts within the vector. The per-row reductions of backends/cpu/per_matrix_kernels.hpp use it.
void cpu_reduce_acc_each(Op op, Dtype dtype, const void* x, std::int64_t count, std::int64_t vstride, std::int64_t n,
                         std::int64_t stride, void* accs);

// The canonical chunk values (canonical.hpp, step 1-3) of op (a sum-like op: sum, or sumsq of the
// squares) over x: chunk_count(n) values of dtype's compute type (float for 16-bit dtypes), a floating
// dtype. Bitwise equal to the GPU's reduce_canonical_chunk_values.
void cpu_canonical_chunk_values(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* values);

}  // namespace tandem::detail
