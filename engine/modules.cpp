// Loading the backend modules with dlopen (common/module_api.hpp says what a module is). A module
// libtandem_<name>.so is looked for, in this order, in the absolute folders of TANDEM_MODULE_PATH
// (separated by ':') and in the folder libtandem itself was loaded from; never in the working directory
// or through a relative path. The first file that loads and passes the version check is used; the ones
// before it are remembered with their reason. Each module is loaded once per process, on first use (a
// failure is remembered too: later calls give the same reason without trying again).
#include "common/modules.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "tandem/engine.hpp"
#include "tandem/version.hpp"

namespace tandem::detail {
namespace {

class Slot {
 public:
  Slot(const char* name, const char* label, const char* when, const char* absent)
      : name_(name), label_(label), when_(when), absent_(absent) {}

  // The table, loading it on the first call; nullptr with *why on failure.
  const void* get(std::string* why) {
    if (const void* t = ready_.load(std::memory_order_acquire)) return t;
    std::lock_guard lock(mutex_);
    if (!attempted_) load(), attempted_ = true;
    if (table_ == nullptr && why != nullptr) *why = failure_;
    ready_.store(table_, std::memory_order_release);
    return table_;
  }

  ModuleStatus status() const;
  const char* name() const { return name_; }
  bool in_build() const { return absent_ == nullptr; }

 private:
  void load();
  std::string file() const { return std::string("libtandem_") + name_ + ".so"; }

  const char* name_;          // "cuda": the file libtandem_cuda.so
  const char* label_;         // "the CUDA backend"
  const char* when_;          // when it is loaded, in words
  const char* absent_;        // why this build has no such module; nullptr when it has one
  mutable std::mutex mutex_;  // guards what follows; ready_ is table_ once loaded, for the lock-free path
  std::atomic<const void*> ready_{nullptr};
  bool attempted_ = false, loaded_ = false;
  const void* table_ = nullptr;
  std::string path_, failure_, passed_over_;  // passed_over_: the files tried before the one loaded
};

// The folder libtandem was loaded from, resolved to an absolute path ("" if the loader cannot say).
std::string own_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_folder), &info) == 0 || info.dli_fname == nullptr) return "";
  char resolved[PATH_MAX];
  if (realpath(info.dli_fname, resolved) == nullptr) return "";
  std::string path = resolved;
  return path.substr(0, path.find_last_of('/'));
}

// The folders to look in, in order; relative entries of TANDEM_MODULE_PATH go to *ignored.
std::vector<std::string> folders(std::vector<std::string>* ignored) {
  std::vector<std::string> out;
  if (const char* env = std::getenv("TANDEM_MODULE_PATH")) {
    std::string list = env;
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t colon = std::min(list.find(':', start), list.size());
      std::string entry = list.substr(start, colon - start);
      while (entry.size() > 1 && entry.back() == '/') entry.pop_back();
      if (!entry.empty() && entry.front() == '/')
        out.push_back(entry);
      else if (!entry.empty() && ignored)
        ignored->push_back(entry);
      start = colon + 1;
    }
  }
  const std::string own = own_folder();
  if (!own.empty()) out.push_back(own);
  return out;
}

bool exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

void Slot::load() {
  if (!in_build()) {
    failure_ = absent_;
    return;
  }
  std::vector<std::string> ignored;
  std::string tried;
  for (const std::string& folder : folders(&ignored)) {
    const std::string path = folder + "/" + file();
    std::string why;
    if (!exists(path)) {
      why = "not found";
    } else if (void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL); handle == nullptr) {
      const char* err = dlerror();
      why = std::string("the loader says: ") + (err ? err : "unknown error");
    } else if (auto entry = reinterpret_cast<ModuleEntry>(dlsym(handle, kModuleEntryName)); entry == nullptr) {
      why = std::string("not a tandem module (no ") + kModuleEntryName + ")";
    } else {
      // (A module that fails the check stays mapped, unused: unloading code that may have registered
      // itself with the CUDA runtime is not worth the risk.)
      const ModuleHeader* h = entry();
      if (h == nullptr || h->header_size < sizeof(ModuleHeader) || h->interface != kModuleInterface ||
          std::string(h->version) != TANDEM_VERSION_STRING || std::string(h->cxx_abi) != TANDEM_MODULE_CXX_ABI ||
          std::string(h->name) != name_) {
        why = h == nullptr ? std::string("its header is missing")
                           : std::string("it is the '") + h->name + "' module of tandem " + h->version +
                                 " (module interface " + std::to_string(h->interface) + ", " + h->cxx_abi +
                                 "), but this libtandem is tandem " + TANDEM_VERSION_STRING + " and expects the '" +
                                 name_ + "' module with interface " + std::to_string(kModuleInterface) + " and " +
                                 TANDEM_MODULE_CXX_ABI + "; install the " + file() + " built with this libtandem";
      } else {
        table_ = h->init(&core_services());
        path_ = path;
        loaded_ = table_ != nullptr;
        passed_over_ = tried;
        if (loaded_) return;
        why = "its init() returned no table";
      }
    }
    tried += (tried.empty() ? "" : "; ") + path + " (" + why + ")";
  }
  failure_ = "the module " + file() + " of " + label_ + " could not be loaded: " +
             (tried.empty() ? std::string("there is no folder to look in") : "tried " + tried);
  for (const std::string& entry : ignored)
    failure_ += "; TANDEM_MODULE_PATH entry '" + entry + "' ignored (only absolute folders are searched)";
  failure_ += ". Modules are found next to libtandem or in the absolute folders of TANDEM_MODULE_PATH";
}

ModuleStatus Slot::status() const {
  std::lock_guard lock(mutex_);
  ModuleStatus s{name_, "", false, ""};
  if (loaded_) {
    s.path = path_, s.loaded = true;
    s.reason = "loaded from " + path_ + (passed_over_.empty() ? "" : "; passed over " + passed_over_);
    return s;
  }
  if (!failure_.empty()) {
    s.reason = failure_;
    return s;
  }
  std::vector<std::string> ignored;
  for (const std::string& folder : folders(&ignored))
    if (exists(folder + "/" + file())) {
      s.path = folder + "/" + file();
      break;
    }
  s.reason = std::string(s.path.empty() ? "not found (looked next to libtandem and in TANDEM_MODULE_PATH); "
                                        : "found, not loaded yet; ") +
             "loaded " + when_;
  return s;
}

#ifdef TANDEM_HAS_CUDA
constexpr const char* kNoCuda = nullptr;
#else
constexpr const char* kNoCuda =
    "the CUDA backend is not compiled into this build of tandem; rebuild with -DTANDEM_WITH_CUDA=ON (needs nvcc)";
#endif
#ifdef TANDEM_HAS_NCCL
constexpr const char* kNoNccl = nullptr;
#else
constexpr const char* kNoNccl =
    "this build of tandem has no NCCL, which an engine over several GPUs needs; rebuild with NCCL found "
    "(-DNCCL_ROOT=<folder with include/nccl.h and lib/libnccl.so>), or use one GPU per engine";
#endif

Slot& cuda_slot() {
  static Slot s(
      "cuda", "the CUDA backend",
      "when a CUDA engine or the CUDA kernel tables first need it, or auto or a probe where the NVIDIA driver "
      "reports a GPU",
      kNoCuda);
  return s;
}
Slot& nccl_slot() {
  static Slot s("nccl", "NCCL (engines over several GPUs)",
                "when an engine over several GPUs, or over the CUDA ranks of tandem::mpi::Engine, is made", kNoNccl);
  return s;
}

}  // namespace

const CudaModule* cuda_module(std::string* why) { return static_cast<const CudaModule*>(cuda_slot().get(why)); }

const CudaModule& cuda_module() {
  std::string why;
  if (const CudaModule* m = cuda_module(&why)) return *m;
  if (!cuda_slot().in_build())
    throw Error(ErrorKind::failure, Arg::backend, Message(why),
                Message("or use the CPU backend (", Setting{Arg::backend, "cpu"}, " or TANDEM_BACKEND=cpu)"));
  throw Error(ErrorKind::failure, Arg::backend, Message("tandem: the CUDA backend is not available: ", why),
              Message("use the CPU backend (", Setting{Arg::backend, "cpu"},
                      " or TANDEM_BACKEND=cpu), or TANDEM_BACKEND=auto to pick the GPU only where it can run"));
}

const NcclModule* nccl_module(std::string* why) { return static_cast<const NcclModule*>(nccl_slot().get(why)); }

}  // namespace tandem::detail

namespace tandem {

std::vector<ModuleStatus> module_status() {
  std::vector<ModuleStatus> out;
  for (detail::Slot* s : {&detail::cuda_slot(), &detail::nccl_slot()})
    if (s->in_build()) out.push_back(s->status());
  return out;
}

}  // namespace tandem
