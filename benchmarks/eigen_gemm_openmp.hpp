// The OpenMP-threaded Eigen GEMM behind bench_cpu's baseline/eigen_gemm_openmp (eigen_gemm_openmp.cpp,
// its own shared library: benchmarks/CMakeLists.txt says why). Only these functions are exported.
#pragma once

#include <cstddef>

#define TANDEM_BENCH_EXPORT __attribute__((visibility("default")))

namespace tandem_bench {

// C (m x n) = A (m x k) * B (k x n), all row-major and packed, by Eigen's GEMM on eigen_openmp_threads()
// OpenMP threads.
TANDEM_BENCH_EXPORT void eigen_gemm_openmp(const float* a, const float* b, float* c, std::size_t m, std::size_t k,
                                           std::size_t n);
TANDEM_BENCH_EXPORT void eigen_gemm_openmp(const double* a, const double* b, double* c, std::size_t m, std::size_t k,
                                           std::size_t n);

// The threads Eigen's GEMM uses: every processor OpenMP may run on (omp_get_num_procs(), which honours
// the process's CPU affinity, as oneTBB does), set with Eigen::setNbThreads on first use.
TANDEM_BENCH_EXPORT int eigen_openmp_threads();

}  // namespace tandem_bench
