// The backends compiled into this build, from the table of include/tandem/types.hpp (TANDEM_BACKENDS).
// Each backend <name> defines <name>_probe() and make_<name>_backend() (declared in common/backend.hpp);
// the CUDA backend's live in its module, reached through engine/registry.cpp.
#pragma once

#include <memory>
#include <string>

#include "common/backend.hpp"
#include "tandem/export.hpp"

namespace tandem::detail {

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
  // tandem::mpi::Engine (engine/mpi.cpp): a rank without a device named takes its rank on the node as
  // its device; ranks whose backends all have this exchange through the backend's rank groups
  // (BackendImpl::join_rank_group: NCCL) instead of MPI.
  bool device_per_rank;
  bool rank_groups;
};

// The table's columns that tandem_mpi (a library of its own) needs: exported for it.
struct RankColumns {
  bool device_per_rank, rank_groups;
};
TANDEM_API RankColumns rank_columns(Backend b);

const BackendEntry& backend_entry(Backend b);
inline constexpr std::size_t backend_count = std::size(all_backends);
const BackendEntry* backend_table();

}  // namespace tandem::detail
