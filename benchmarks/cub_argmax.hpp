// CUB's own DeviceReduce::ArgMax (cub_argmax.cu): the vendor baseline of tandem's argmax in bench_cuda's
// kernel level. (tandem's "cub" stage runs CUB's DeviceReduce with tandem's operator, whose NaN rule
// CUB's ArgMax does not have; this is CUB's ArgMax itself.)
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace tandem_bench {

// Bytes of temporary storage cub_argmax needs for n elements of T.
template <class T>
std::size_t cub_argmax_temp_bytes(std::int64_t n);

// The greatest of x[0 .. n) into out (a T at offset 0) and its first index into out + 8 (int64), on
// stream: the layout of tandem's arg-reduction result. Throws std::runtime_error on a CUDA error.
template <class T>
void cub_argmax(const T* x, std::int64_t n, void* out, void* temp, std::size_t temp_bytes, cudaStream_t stream);

}  // namespace tandem_bench
