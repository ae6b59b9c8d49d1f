// Every backend compiled into this build, registered in one place (engine/registry.cpp).
#pragma once

#include <memory>
#include <string>

#include "engine/backend.hpp"

namespace tandem::detail {

struct Probe {
  bool compiled_in = false;
  bool usable = false;
  std::string reason;  // why not usable, or what was found
};

Probe probe(Backend b);
// Throws tandem::Error when the backend is not compiled in or has no usable device.
std::shared_ptr<BackendImpl> make_backend(Backend b);

}  // namespace tandem::detail
