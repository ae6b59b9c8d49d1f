#include "verify/verdict.hpp"

#include <cstdio>

namespace tandem_verify {

std::string MatmulVerdict::problem() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%zu of %zu checked elements outside the bound", outside, checked);
  std::string s = buf;
  if (not_finite) {
    std::snprintf(buf, sizeof buf, "; %zu elements of C not finite (never written?)", not_finite);
    s += buf;
  }
  return s;
}

}  // namespace tandem_verify
