// The CPU backend's matrix products (backends/cpu/matmul.cpp).
#pragma once

#include <string_view>

#include "common/backend.hpp"

namespace tandem::detail {

// C = alpha * op(A) * op(B) + beta * C for every entry of g's batch; kernel is "auto", "eigen_tbb" or
// "eigen_serial" (deterministic mode runs the canonical fma chain whatever it says).
void cpu_matmul(const MatmulArgs& g, std::string_view kernel);

}  // namespace tandem::detail
