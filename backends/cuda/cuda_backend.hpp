// The CUDA backend's entry points, in plain C++ so that the engine never includes a CUDA header.
#pragma once

#include <memory>

#include "engine/backend.hpp"
#include "engine/registry.hpp"

namespace tandem::detail {
// Whether a usable GPU is present (and which), without creating a backend.
Probe cuda_probe();
// Throws tandem::Error when no usable GPU is present, saying what to do.
std::shared_ptr<BackendImpl> make_cuda_backend();
}  // namespace tandem::detail
