// The CPU backend: reductions on oneTBB with Eigen-vectorised leaves, matmul through Eigen's GEMM
// parallelised over blocks of C with oneTBB.
#pragma once

#include <memory>

#include "engine/backend.hpp"

namespace tandem::detail {
std::shared_ptr<BackendImpl> make_cpu_backend();
}
