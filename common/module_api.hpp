// The interface between libtandem and the backend modules it loads at run time (engine/modules.cpp):
// libtandem_cuda.so (the CUDA backend: CUB, cuBLAS, the ladders) and libtandem_nccl.so (NCCL, for engines
// over several GPUs). libtandem itself links no CUDA library; a machine without them runs the CPU backend.
//
// A module exports one C function, tandem_module_header(), returning a ModuleHeader. The loader checks
// the header's interface number, tandem version and C++ ABI before it touches anything else (the tables
// below pass C++ types), then calls init() with the CoreServices libtandem lends the module and gets the
// module's table back. Change anything below the header and kModuleInterface goes up by one.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/backend.hpp"

namespace tandem::detail {

inline constexpr std::uint32_t kModuleInterface = 6;

#define TANDEM_MODULE_STR2(x) #x
#define TANDEM_MODULE_STR(x) TANDEM_MODULE_STR2(x)
#ifndef TANDEM_MODULE_INTERFACE_HASH  // (CMakeLists.txt: a hash of the headers whose types cross the boundary)
#define TANDEM_MODULE_INTERFACE_HASH "unknown"
#endif
// The C++ library the tables' types come from, and the interface's hash: both sides must match.
#if defined(__GLIBCXX__)
#define TANDEM_MODULE_CXX_ABI                                                  \
  "libstdc++ " TANDEM_MODULE_STR(__GLIBCXX__) " cxx11-abi " TANDEM_MODULE_STR( \
      _GLIBCXX_USE_CXX11_ABI) ", interface hash " TANDEM_MODULE_INTERFACE_HASH
#elif defined(_LIBCPP_VERSION)
#define TANDEM_MODULE_CXX_ABI \
  "libc++ " TANDEM_MODULE_STR(_LIBCPP_VERSION) ", interface hash " TANDEM_MODULE_INTERFACE_HASH
#else
#define TANDEM_MODULE_CXX_ABI "unknown C++ library, interface hash " TANDEM_MODULE_INTERFACE_HASH
#endif

// What libtandem lends a module: the code of the core that the module's code calls.
struct CoreServices {
  // common/host_copy.hpp
  void (*gather)(void* dst, const void* src, std::size_t count, std::size_t stride, std::size_t elem);
  void (*copy_rows)(void* dst, std::size_t ld_dst, const void* src, std::size_t ld_src, std::size_t rows,
                    std::size_t cols, std::size_t elem);
  // common/host_reduce.hpp
  void (*cpu_reduce_acc)(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* acc);
  void (*cpu_canonical_chunk_values)(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride,
                                     void* values);
  // NCCL among MPI ranks (common/backend.hpp), through the NCCL module that libtandem loads on demand.
  std::vector<unsigned char> (*nccl_unique_id)();
  std::unique_ptr<RankCollectives> (*make_nccl_ranks)(int device, void* stream, const std::vector<unsigned char>& id,
                                                      int rank, int size);
};

// The CUDA module's table.
struct CudaModule {
  Probe (*probe)();
  std::shared_ptr<BackendImpl> (*make)(const EngineOptions& options);
  int (*device_count)();
  // For the Python module's device arrays (streams as integers, as DLPack and CuPy pass them: 1 and 2
  // are the legacy and per-thread default streams). order_after makes later work on `consumer` wait for
  // the work enqueued so far on `producer` (a stream of GPU producer_device; -1: the current one).
  void (*order_after)(std::uintptr_t producer, int producer_device, std::uintptr_t consumer);
  int (*device_of)(const void* p);  // the GPU that holds p, or -1
  // The stage tables (BackendImpl::reduce_kernel_info() / matmul_kernel_info() of a CUDA backend: every
  // stage in ladder order, without "auto"), fixed information that touches no device: callable where no
  // GPU or driver is present (tandem::reduce_kernel_info(Backend::cuda)).
  std::vector<KernelInfo> (*reduce_kernel_info)();
  std::vector<KernelInfo> (*matmul_kernel_info)();
};

// The NCCL module's table (backends/cuda/nccl.cu).
struct NcclModule {
  std::unique_ptr<Collectives> (*make_collectives)(const std::vector<std::shared_ptr<BackendImpl>>& members);
  std::vector<unsigned char> (*unique_id)();
  std::unique_ptr<RankCollectives> (*make_ranks)(int device, void* stream, const std::vector<unsigned char>& id,
                                                 int rank, int size);
};

// The first thing the loader reads: plain C, and its layout never changes.
struct ModuleHeader {
  std::uint32_t header_size;  // sizeof(ModuleHeader)
  std::uint32_t interface;    // kModuleInterface of the module's build
  const char* name;           // "cuda" or "nccl"
  const char* version;        // TANDEM_VERSION_STRING of the module's build
  const char* cxx_abi;        // TANDEM_MODULE_CXX_ABI of the module's build
  // Keeps `core` (it outlives the module) and returns the module's table: a CudaModule or NcclModule.
  const void* (*init)(const CoreServices* core);
};

using ModuleEntry = const ModuleHeader* (*)();
inline constexpr const char* kModuleEntryName = "tandem_module_header";

// libtandem's services (engine/core_services.cpp).
const CoreServices& core_services();

}  // namespace tandem::detail
