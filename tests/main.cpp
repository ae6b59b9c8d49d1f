// The test runner. `--test-suite=cuda` on a machine without a usable GPU prints why and exits 77,
// which CTest reports as skipped (never as passed).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>

#include "tandem/tandem.hpp"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--test-suite=cuda") == 0) {
      for (const auto& s : tandem::backend_status())
        if (s.backend == tandem::Backend::cuda && !s.usable) {
          std::printf("CUDA tests skipped: %s\n", s.reason.c_str());
          return 77;
        }
    }
  }
  doctest::Context context(argc, argv);
  return context.run();
}
