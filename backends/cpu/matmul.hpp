// The CPU backend's matrix products (backends/cpu/matmul.cpp).
#pragma once

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
// The table's rows as KernelInfo.
std::vector<KernelInfo> cpu_matmul_kernel_info();

}  // namespace tandem::detail
