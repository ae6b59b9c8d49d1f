// The test runner. `--test-suite=<backend>` on a machine where that backend is not usable (no GPU, or
// not compiled in) prints why and exits 77, which CTest reports as skipped (never as passed).
// `--tandem-list-backends` prints the name of every backend of tandem::backends, one a line, and exits:
// CTest registers one run of the suite per name (tests/CMakeLists.txt).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "tandem/tandem.hpp"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--tandem-list-backends") {
      for (const tandem::BackendInfo& b : tandem::backends) std::printf("%s\n", b.name);
      return std::fflush(stdout) == 0 ? 0 : 1;
    }
  for (int i = 1; i < argc; ++i)
    for (const auto& s : tandem::backend_status())
      if (std::string(argv[i]) == std::string("--test-suite=") + tandem::to_string(s.backend) && !s.usable) {
        std::printf("%s tests skipped: %s\n", tandem::to_string(s.backend), s.reason.c_str());
        return 77;
      }
  doctest::Context context(argc, argv);
  return context.run();
}
