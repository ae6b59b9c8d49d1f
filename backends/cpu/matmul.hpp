// The CPU backend's matrix products (backends/cpu/matmul.cpp; deterministic float and double:
// matmul_canonical.cpp; the tensor-core arithmetic: matmul_tc.cpp).
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstdint>
#include <vector>

#include "common/backend.hpp"

namespace tandem::detail {

// C = alpha * op(A) * op(B) + beta * C for every entry of g's batch, with g.kernel, a row of the table
// (deterministic mode runs the canonical fma chain whatever it says).
void cpu_matmul(const MatmulArgs& g);
// Deterministic products in the tensor-core arithmetic (16-bit inputs; float inputs where g.precision allows
// tf32: common/tensor_core.hpp), computed by emulating the k-step (matmul_tc.cpp). False, doing nothing, where
// g is not such a product (not deterministic, the fma chain's types, or no product to compute).
bool cpu_tensor_core_matmul(const MatmulArgs& g);
// Deterministic mode's product of one entry of a float or double product (a, b, c that entry's; g's shape,
// lds, transposes, alpha and beta): the canonical fma chain and epilogue (matmul_canonical.cpp).
void cpu_canonical_entry(const MatmulArgs& g, const void* a, const void* b, void* c);
// The same of a float product whose B is 16-bit (b_type: bfloat16 or half; a mixed or 16-bit product's), B read as
// stored (g.ldb, g.trans_b) and converted as the tasks pack it, never copied whole: the bits of the float product
// of the converted B (matmul_canonical.cpp's chunked_entry). a: A as floats, as g describes it.
void cpu_canonical_entry_16bit_b(const MatmulArgs& g, const float* a, const void* b, Dtype b_type, float* c);

// C(i, j) = f(C(i, j), i, j) over the m x n elements, rows in parallel.
template <class T, class F>
void for_each_c(T* c, std::int64_t m, std::int64_t n, std::int64_t ldc, F f) {
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, m, 16), [&](const tbb::blocked_range<std::int64_t>& r) {
    for (std::int64_t i = r.begin(); i < r.end(); ++i)
      for (std::int64_t j = 0; j < n; ++j) c[i * ldc + j] = f(c[i * ldc + j], i, j);
  });
}

// The table's rows as KernelInfo.
std::vector<KernelInfo> cpu_matmul_kernel_info();

}  // namespace tandem::detail
