// Host-side launch configuration shared by the stages: grid sizes for n elements, the grid that fills
// the current device (queried once per device and kernel), and scratch carved from the Workspace.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "backends/cuda/common.cuh"
#include "backends/cuda/reduce/block_helpers.cuh"

namespace tandem::cuda::reduction {

// gridDim.x may be at most 2^31 - 1.
inline constexpr Index kMaxGridX = 2147483647;

// Blocks needed to cover n elements, elements_per_block each. At least one, so that an empty sum still
// writes the identity.
inline unsigned grid_size_for(Index n, Index elements_per_block) {
  const Index blocks = std::max<Index>(1, (n + elements_per_block - 1) / elements_per_block);
  if (blocks > kMaxGridX)
    throw Error("reduce: " + std::to_string(n) + " elements need more than 2^31-1 blocks of " +
                std::to_string(elements_per_block) + " elements for this stage; use a grid-stride stage");
  return static_cast<unsigned>(blocks);
}

// How many blocks of `kernel` are resident on the whole current device at once: SM count times blocks
// per SM from the occupancy calculator. Both depend only on the device and the kernel's resources, so
// they are queried once per (device, kernel, block size, shared memory) and cached; the lock makes
// the cache safe to use from several threads.
inline int resident_grid_size(const void* kernel, int block_size, std::size_t dynamic_shared_bytes) {
  using Key = std::tuple<int, const void*, int, std::size_t>;
  static std::mutex mutex;
  static std::map<Key, int> cache;

  const int device = current_device();
  const Key key{device, kernel, block_size, dynamic_shared_bytes};
  std::lock_guard lock(mutex);
  if (const auto found = cache.find(key); found != cache.end()) return found->second;

  const int multiprocessors = multiprocessor_count();
  int blocks_per_multiprocessor = 0;
  TANDEM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_multiprocessor, kernel, block_size,
                                                                  dynamic_shared_bytes));
  const int blocks = std::max(1, blocks_per_multiprocessor) * std::max(1, multiprocessors);
  cache.emplace(key, blocks);
  return blocks;
}

// The device-filling grid, but no more blocks than there is work for (small n needs one block).
template <class Kernel>
unsigned device_grid_size(Kernel kernel, int block_size, std::size_t dynamic_shared_bytes, Index n,
                          Index elements_per_block_step) {
  const Index resident = resident_grid_size(reinterpret_cast<const void*>(kernel), block_size, dynamic_shared_bytes);
  return static_cast<unsigned>(std::min(resident, Index{grid_size_for(n, elements_per_block_step)}));
}

inline constexpr std::size_t kScratchAlignment = 256;

inline constexpr std::size_t align_up(std::size_t bytes) {
  return (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment;
}

}  // namespace tandem::cuda::reduction
