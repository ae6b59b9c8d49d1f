// Kernels standing for an application's own CUDA work in the interop tests (tests/test_cuda_interop.cpp).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace test_app {

// p[i] = float(i % 7) - 3 + offset, for i < n, on `stream`.
void fill(float* p, std::size_t n, float offset, cudaStream_t stream);
// Keeps one SM busy for about `ms` milliseconds on `stream` (0: the legacy default stream).
void spin(double ms, cudaStream_t stream);

}  // namespace test_app
