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
  int devices = 0;     // the devices it found (CUDA GPUs; 1 for the CPU)
};

#define TANDEM_DECLARE_BACKEND(name, ...) \
  Probe name##_probe();                   \
  std::shared_ptr<BackendImpl> make_##name##_backend(const EngineOptions&);
TANDEM_BACKENDS(TANDEM_DECLARE_BACKEND)
#undef TANDEM_DECLARE_BACKEND

// Multi-device engines (engine/multi_device.cpp), the columns of the table below: the number of CUDA
// devices (0 without the CUDA module), NCCL collectives over CUDA members (throws without NCCL), and the
// host collectives of CPU members (stand-ins for devices, for tests).
int cuda_device_count();
std::unique_ptr<Collectives> make_nccl_collectives(const std::vector<std::shared_ptr<BackendImpl>>& members);
std::unique_ptr<Collectives> make_host_collectives(const std::vector<std::shared_ptr<BackendImpl>>& members);
// NCCL among the MPI ranks of tandem::mpi::Engine (a CUDA rank's backend): the unique id (empty without
// NCCL) and this rank's member (device, stream: the rank's engine's).
std::vector<unsigned char> nccl_unique_id();
std::unique_ptr<RankCollectives> make_nccl_ranks(int device, void* stream, const std::vector<unsigned char>& id,
                                                 int rank, int size);

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
  // What TANDEM_DEVICES=all lists (0, 1, ... count - 1); nullptr: TANDEM_DEVICES does not apply (one device).
  int (*device_count)();
  // The collectives between the members of an engine over several devices (engine/multi_device.cpp).
  std::unique_ptr<Collectives> (*make_collectives)(const std::vector<std::shared_ptr<BackendImpl>>& members);
};

const BackendEntry& backend_entry(Backend b);
inline constexpr std::size_t backend_count = std::size(all_backends);
const BackendEntry* backend_table();

}  // namespace tandem::detail
