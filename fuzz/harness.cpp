// The shared machinery of fuzz_api; harness.hpp declares it and says what each part is for.
#include "harness.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace tandem_fuzz {

bool verbose() {
  static const bool v = [] {
    const char* e = std::getenv("TANDEM_FUZZ_VERBOSE");
    return e && e[0] == '1';
  }();
  return v;
}

bool avoid(const char* bug) {
  static const std::string list = [] {
    const char* e = std::getenv("TANDEM_FUZZ_AVOID");
    return "," + std::string(e ? e : "") + ",";
  }();
  return list.find("," + std::string(bug) + ",") != std::string::npos;
}

namespace {

// The call being made, printed with any failure.
std::string g_call;

}  // namespace

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "\nfuzz_api: %s\n  call: %s\n", what.c_str(), g_call.c_str());
  std::fflush(stderr);
  std::abort();
}

void begin_call(std::string call) {
  g_call = std::move(call);
  if (verbose()) std::fprintf(stderr, "fuzz_api: %s\n", g_call.c_str());
}

std::string str(std::size_t v) {
  if (v == SIZE_MAX) return "SIZE_MAX";
  if (v > (std::size_t(1) << 40)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%zu (0x%zx)", v, v);
    return buf;
  }
  return std::to_string(v);
}

std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (unsigned char c : s) {
    if (c >= 32 && c < 127 && c != '"' && c != '\\') {
      q += char(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      q += buf;
    }
  }
  return q + "\"";
}

const Engine& engine() {
  static const Engine e(Backend::cpu);
  return e;
}
const Engine& other_engine() {
  static const Engine e(Backend::cpu);
  return e;
}

bool cuda_usable() {
  static const bool usable = [] {
    for (const auto& s : tandem::backend_status())
      if (s.backend == Backend::cuda) return s.usable;
    return false;
  }();
  return usable;
}

// ---- fuzzed values -----------------------------------------------------------------------------------

std::string fuzz_kernel(FuzzedDataProvider& in, const std::vector<std::string>& valid,
                        const std::vector<std::string>& other_kind) {
  switch (in.ConsumeIntegralInRange<int>(0, 9)) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
      return valid[in.ConsumeIntegralInRange<std::size_t>(0, valid.size() - 1)];
    case 5:
      return other_kind[in.ConsumeIntegralInRange<std::size_t>(0, other_kind.size() - 1)];
    case 6:
      return "";
    case 7: {
      std::string k = valid[in.ConsumeIntegralInRange<std::size_t>(0, valid.size() - 1)];
      switch (in.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:
          return k + " ";
        case 1:
          return k.substr(0, k.size() - 1);
        case 2:
          return std::string(k).append(1, '\0');
        default:
          std::transform(k.begin(), k.end(), k.begin(), [](char c) { return char(std::toupper(c)); });
          return k;
      }
    }
    case 8:
      return std::string(in.ConsumeIntegralInRange<std::size_t>(0, 5000), 'a');
    default:
      return in.ConsumeRandomLengthString(40);
  }
}

}  // namespace tandem_fuzz

// Out-of-memory is an error the API reports (tandem::Error), so an allocation the sanitizer cannot
// serve must return null, as malloc does, instead of ending the process.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
