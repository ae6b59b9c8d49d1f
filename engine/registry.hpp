// The backends compiled into this build, from the table of include/tandem/types.hpp (TANDEM_BACKENDS).
// Each backend <name> defines <name>_probe() and make_<name>_backend(); a backend that is not compiled
// in gets stubs in engine/registry.cpp that say so.
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

#define TANDEM_DECLARE_BACKEND(name, ...) \
  Probe name##_probe();                   \
  std::shared_ptr<BackendImpl> make_##name##_backend(const EngineOptions&);
TANDEM_BACKENDS(TANDEM_DECLARE_BACKEND)
#undef TANDEM_DECLARE_BACKEND

// One row of the table.
struct BackendEntry {
  Backend id;
  const char* name;
  int auto_priority;   // auto picks the usable backend with the highest
  const char* label;   // the backend in prose: "CUDA"
  const char* device;  // what it runs on, in prose: "CUDA GPU"
  Probe (*probe)();
  // Throws tandem::Error when not compiled in or not usable. options.device is resolved (>= 0).
  std::shared_ptr<BackendImpl> (*make)(const EngineOptions& options);
};

const BackendEntry& backend_entry(Backend b);
inline constexpr std::size_t backend_count = std::size(all_backends);
const BackendEntry* backend_table();

}  // namespace tandem::detail
