// The backends compiled into this build: one row per backend of include/tandem/types.hpp's table
// (TANDEM_BACKENDS, whose words each row takes from tandem::backends), with everything the engine needs of
// it. Each backend <name> defines <name>_probe() and make_<name>_backend() (declared in common/backend.hpp);
// the CUDA backend's live in its module, reached through engine/registry.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/backend.hpp"
#include "tandem/export.hpp"

namespace tandem::detail {

// A backend's stages (without "auto"), read without an engine or a device.
struct DeviceFreeTables {
  std::vector<KernelInfo> reduce, matmul;
};

// One row of the table.
struct BackendEntry {
  const BackendInfo* info;  // the public row: name, auto priority, words
  Probe (*probe)();
  // Throws tandem::Error when not compiled in or not usable. options.device is resolved (>= 0).
  std::shared_ptr<BackendImpl> (*make)(const EngineOptions& options);
  // The kernel tables without an engine or its device (tandem::reduce_kernel_info(Backend)); throws
  // tandem::Error (a failure) with the reason where they cannot be read.
  DeviceFreeTables (*kernel_tables)();
  // The module the backend's code lives in ("cuda": libtandem_cuda.so), or nullptr: built into libtandem.
  const char* module = nullptr;
  // What TANDEM_DEVICES=all lists (0, 1, ... count - 1); nullptr: TANDEM_DEVICES does not apply (one device).
  int (*device_count)() = nullptr;
  // The collectives between the members of an engine over several devices (engine/multi_device.cpp).
  std::unique_ptr<Collectives> (*make_collectives)(const std::vector<std::shared_ptr<BackendImpl>>& members) = nullptr;
  // tandem::mpi::Engine (engine/mpi.cpp): a rank without a device named takes its rank on the node as
  // its device; ranks whose backends all have this exchange through the backend's rank groups
  // (BackendImpl::join_rank_group: NCCL) instead of MPI.
  bool device_per_rank = false;
  bool rank_groups = false;
};

// The table's columns that tandem_mpi (a library of its own) needs: exported for it.
struct RankColumns {
  bool device_per_rank, rank_groups;
};
TANDEM_API RankColumns rank_columns(Backend b);

const BackendEntry& backend_entry(Backend b);

}  // namespace tandem::detail
