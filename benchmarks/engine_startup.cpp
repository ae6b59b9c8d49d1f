// What the first CUDA engine of a process costs (the CUDA module's load, the CUDA context) against
// later ones, through the public API of the shared libtandem. One process per measurement of the
// first calls: run it several times and take the median. Prints milliseconds.
//   build/benchmarks/engine_startup [repetitions of the later engines, default 20]
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <tandem/tandem.hpp>
#include <vector>

namespace {
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  // The loader's share: the module file libtandem would load, opened here first (libtandem then finds it
  // loaded). module_status() loads nothing.
  auto t0 = std::chrono::steady_clock::now();
  for (const auto& m : tandem::module_status())
    if (m.name == "cuda" && !m.path.empty()) {
      t0 = std::chrono::steady_clock::now();
      if (dlopen(m.path.c_str(), RTLD_NOW | RTLD_LOCAL) == nullptr) std::printf("dlopen failed: %s\n", dlerror());
      std::printf("dlopen of %s (with cuBLAS): %.2f ms\n", m.path.c_str(), ms_since(t0));
    }
  t0 = std::chrono::steady_clock::now();
  const auto statuses = tandem::backend_status();  // the probe: loads the CUDA module
  const double probe_ms = ms_since(t0);
  bool cuda = false;
  for (const auto& s : statuses) cuda = cuda || (s.backend == tandem::Backend::cuda && s.usable);
  std::printf("first backend_status() (the module's checks and init, the probe: CUDA runtime start): %.2f ms\n",
              probe_ms);
  for (const auto& m : tandem::module_status())
    std::printf("module %s: %s\n", m.name.c_str(), m.loaded ? m.path.c_str() : m.reason.c_str());
  if (!cuda) {
    std::printf("no usable CUDA backend: nothing more to measure\n");
    return 0;
  }
  const std::vector<float> x(1 << 20, 1.0f);
  t0 = std::chrono::steady_clock::now();
  {
    tandem::Engine first(tandem::Backend::cuda);
    std::printf("first Engine(cuda) (context, stream, pool): %.2f ms\n", ms_since(t0));
    t0 = std::chrono::steady_clock::now();
    (void)first.sum(x);
    std::printf("its first sum of 2^20 host floats: %.2f ms\n", ms_since(t0));
    std::vector<double> later;
    for (int r = 0; r < reps; ++r) {
      t0 = std::chrono::steady_clock::now();
      tandem::Engine e(tandem::Backend::cuda);
      later.push_back(ms_since(t0));
    }
    std::sort(later.begin(), later.end());
    std::printf("later Engine(cuda), median of %d: %.3f ms (min %.3f, max %.3f)\n", reps, later[later.size() / 2],
                later.front(), later.back());
  }
  return 0;
}
