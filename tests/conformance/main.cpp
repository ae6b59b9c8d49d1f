// tandem_conformance: the conformance matrix (verify/conformance.hpp) as a test program.
//   tandem_conformance [--quick] [--backends cpu,cuda | --all-usable]
// (--quick, or TANDEM_TEST_QUICK=1 as for the test suites: fewer sizes, shapes and data kinds, for sanitizer runs.)
// Runs every listed backend (default: every usable one) in one process, prints each failure and a
// summary with the case counts and the cross-backend comparisons, and exits 1 if anything failed. A
// listed backend that is not usable here makes it print why and exit 77 (CTest: skipped); so does
// --all-usable (every usable backend) where fewer than two are usable, with nothing to compare across.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "verify/conformance.hpp"

int main(int argc, char** argv) {
  namespace c = tandem_verify::conformance;
  c::Options o;
  std::string backends;
  bool all_usable = false;
  if (const char* q = std::getenv("TANDEM_TEST_QUICK"); q && std::string_view(q) == "1") o.quick = true;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--quick")
      o.quick = true;
    else if (a == "--all-usable")
      all_usable = true;
    else if (a.rfind("--backends=", 0) == 0)
      backends = std::string(a.substr(11));
    else if (a == "--backends" && i + 1 < argc)
      backends = argv[++i];
    else {
      std::fprintf(stderr, "usage: tandem_conformance [--quick] [--backends cpu,cuda | --all-usable]\n");
      return 2;
    }
  }
  for (const tandem::BackendStatus& s : tandem::backend_status()) {
    const std::string name = tandem::to_string(s.backend);
    const bool listed = backends.empty() || ("," + backends + ",").find("," + name + ",") != std::string::npos;
    if (!listed) continue;
    if (!s.usable) {
      if (backends.empty()) continue;
      std::printf("conformance: %s is not usable here (%s): skipped\n", name.c_str(), s.reason.c_str());
      return 77;
    }
    o.backends.push_back(s.backend);
  }
  if (all_usable && o.backends.size() < 2) {
    std::printf("conformance: %zu backend(s) usable here, nothing to compare across: skipped\n", o.backends.size());
    return 77;
  }
  std::size_t shown = 0;
  o.on_failure = [&](const std::string& what) {
    if (shown++ < 50) std::printf("FAIL %s\n", what.c_str());
  };
  const c::Report r = c::run(o);
  std::printf("conformance%s: %zu cases (", o.quick ? " (quick)" : "", r.cases);
  const char* sep = "";
  for (const auto& [backend, n] : r.per_backend) std::printf("%s%s %zu", sep, backend.c_str(), n), sep = ", ";
  std::printf("), %zu of them expected errors, %zu unavailable on this machine; %zu failed\n", r.refused, r.unavailable,
              r.failed);
  std::printf("conformance: deterministic bits compared %zu times (%zu across backends), %zu backend(s) run\n",
              r.compared, r.compared_across_backends, o.backends.size());
  return r.failed == 0 ? 0 : 1;
}
