// The CPU backend's matrix products (backends/cpu/matmul.cpp).
#pragma once

#include <vector>

#include "common/backend.hpp"

namespace tandem::detail {

// C = alpha * op(A) * op(B) + beta * C for every entry of g's batch, with g.kernel, a row of the table
// (deterministic mode runs the canonical fma chain whatever it says).
void cpu_matmul(const MatmulArgs& g);
// The table's rows as KernelInfo.
std::vector<KernelInfo> cpu_matmul_kernel_info();

}  // namespace tandem::detail
