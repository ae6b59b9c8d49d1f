// Eigen's GEMM with Eigen's own threading: compiled with OpenMP and without EIGEN_DONT_PARALLELIZE, so
// that Eigen splits one product over OpenMP threads (Eigen/src/Core/products/Parallelizer.h).
#if defined(EIGEN_DONT_PARALLELIZE)
#error "eigen_gemm_openmp.cpp must be compiled without EIGEN_DONT_PARALLELIZE"
#endif
#if !defined(_OPENMP)
#error "eigen_gemm_openmp.cpp must be compiled with OpenMP"
#endif

#include "benchmarks/eigen_gemm_openmp.hpp"

#include <omp.h>

#include <Eigen/Core>

namespace tandem_bench {
namespace {

template <class T>
void gemm(const T* a, const T* b, T* c, std::size_t m, std::size_t k, std::size_t n) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  eigen_openmp_threads();
  const Eigen::Map<const Matrix> a_map(a, Eigen::Index(m), Eigen::Index(k));
  const Eigen::Map<const Matrix> b_map(b, Eigen::Index(k), Eigen::Index(n));
  Eigen::Map<Matrix> c_map(c, Eigen::Index(m), Eigen::Index(n));
  c_map.noalias() = a_map * b_map;
}

}  // namespace

int eigen_openmp_threads() {
  static const int threads = [] {
    const int procs = omp_get_num_procs();
    Eigen::setNbThreads(procs);
    return Eigen::nbThreads();
  }();
  return threads;
}

void eigen_gemm_openmp(const float* a, const float* b, float* c, std::size_t m, std::size_t k, std::size_t n) {
  gemm(a, b, c, m, k, n);
}

void eigen_gemm_openmp(const double* a, const double* b, double* c, std::size_t m, std::size_t k, std::size_t n) {
  gemm(a, b, c, m, k, n);
}

}  // namespace tandem_bench
