#include "verify/values.hpp"

#include <cstdio>

namespace tandem_verify {

std::string show(std::int32_t v) { return std::to_string(v); }
std::string show(std::int64_t v) { return std::to_string(v); }

namespace {
std::string printed(const char* format, long double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}
}  // namespace

std::string show(float v) { return printed("%.9Lg", v); }
std::string show(double v) { return printed("%.17Lg", v); }
std::string show(long double v) { return printed("%.21Lg", v); }

}  // namespace tandem_verify
