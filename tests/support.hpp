// The tests' doctest glue: per-backend registration, the sizes the tests run, small helpers for
// messages and the environment, and the test-support library (verify/: the random generator,
// independent references, error bounds, verdicts, kernel metadata, value formatting) visible as test::.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "tandem/tandem.hpp"
#include "verify/bounds.hpp"
#include "verify/kernels.hpp"
#include "verify/reference.hpp"
#include "verify/rng.hpp"
#include "verify/values.hpp"
#include "verify/verdict.hpp"

// Lists of names (kernels, backends) print as such in failed checks.
template <>
struct doctest::StringMaker<std::vector<std::string>> {
  static doctest::String convert(const std::vector<std::string>& names) {
    std::string s = "{";
    for (const std::string& n : names) s += (s.size() > 1 ? ", " : "") + n;
    return (s + "}").c_str();
  }
};

namespace test {

// The element of type T closest to v (16-bit types: through float).
template <class T>
T make(double v) {
  if constexpr (tandem::is_storage_type_v<T>)
    return T(float(v));
  else
    return static_cast<T>(v);
}

using namespace tandem_verify;

inline bool usable(tandem::Backend b) {
  for (const auto& s : tandem::backend_status())
    if (s.backend == b) return s.usable;
  return false;
}
inline bool cuda_usable() { return usable(tandem::Backend::cuda); }

// Writes a test once and registers it for every backend of TANDEM_BACKENDS: "cpu: name" in suite cpu,
// "cuda: name" in suite cuda (skipped where that backend is not usable), and so on.
// TANDEM_BACKEND_TEST_UNLESS(fn, title, skip_when) also reports it skipped (never passed) wherever
// `skip_when`, a condition computed when the test is registered (e.g. !test::large()), holds.
#define TANDEM_BACKEND_TEST_ROW(backend, p, l, d, u, fn, title, skip_when)           \
  TEST_CASE(#backend ": " title* doctest::test_suite(#backend) *                     \
            doctest::skip(!test::usable(tandem::Backend::backend) || (skip_when))) { \
    fn(tandem::Engine(tandem::Backend::backend));                                    \
  }
#define TANDEM_BACKEND_TEST_UNLESS(fn, title, skip_when)         \
  static void fn(const tandem::Engine& eng);                     \
  TANDEM_BACKENDS(TANDEM_BACKEND_TEST_ROW, fn, title, skip_when) \
  static void fn(const tandem::Engine& eng)
#define TANDEM_BACKEND_TEST(fn, title) TANDEM_BACKEND_TEST_UNLESS(fn, title, false)

// Random 16-bit values (tandem::bfloat16, tandem::half) in [-8, 8): every magnitude of the type below 8, and zeros
// of both signs.
template <class H>
std::vector<H> random16(std::size_t n, std::uint64_t seed) {
  SplitMix64 g{seed};
  std::vector<H> x(n);
  for (auto& v : x) {
    const double u = double(g.next() >> 11) * 0x1p-53;
    v = H(float((u - 0.5) * 16.0 * std::ldexp(1.0, -int(g.below(12)))));
  }
  return x;
}

// TANDEM_TEST_QUICK=1 (for compute-sanitizer runs): fewer and smaller cases.
inline bool quick() {
  const char* q = std::getenv("TANDEM_TEST_QUICK");
  return q && std::string(q) == "1";
}
// TANDEM_TEST_LARGE=1: the tests of sizes past 2^31 (gigabytes of memory) run; without it they are
// registered as skipped (TANDEM_BACKEND_TEST_UNLESS(..., !test::large())).
inline bool large() {
  const char* l = std::getenv("TANDEM_TEST_LARGE");
  return l && std::string(l) == "1";
}

// The widths every reduction is checked at: 0, 1, small primes, 2^k +- 1, sizes that miss every
// block, and a few seeded random sizes. Quick: a few odd sizes that still miss every block.
inline std::vector<std::size_t> reduce_sizes() {
  if (quick()) return {0, 1, 3, 33, 257, 1025, 4097, 65537};
  std::vector<std::size_t> s = {0,   1,   2,   3,    31,   32,   33,   63,   64,   65,   255,   256,
                                257, 511, 513, 1023, 1024, 1025, 2047, 2049, 4095, 4097, 65537, 1000003};
  SplitMix64 g{7};
  for (int i = 0; i < 4; ++i) s.push_back(5 + g.below(300000));
  return s;
}

// The message of the tandem::Error f throws, or a text saying that it threw none.
std::string message_of(auto&& f) {
  try {
    f();
  } catch (const tandem::Error& e) {
    return e.what();
  }
  return "(no tandem::Error thrown)";
}
// The kind of the tandem::Error f throws, or nothing when it throws none.
std::optional<tandem::ErrorKind> kind_of(auto&& f) {
  try {
    f();
  } catch (const tandem::Error& e) {
    return e.kind();
  }
  return std::nullopt;
}
inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Runs f, a call of kernel k, as k.runs_here says it must go: where k runs here, f must return (a
// tandem::Error fails the test); where it does not, f must throw tandem::Error naming k.requirement.
// Returns whether f returned (then the caller checks its result).
template <class F>
bool run_kernel(const tandem::KernelInfo& k, F&& f) {
  try {
    f();
  } catch (const tandem::Error& e) {
    const std::string what = e.what();  // (doctest prints a char* as a pointer)
    if (k.runs_here)
      FAIL_CHECK(k.name << " runs here (KernelInfo::runs_here), yet threw: " << what);
    else
      CHECK_MESSAGE(
          (!k.requirement.empty() && contains(what, k.requirement)),
          k.name << " does not run here; its error should name its requirement '" << k.requirement << "': " << what);
    return false;
  }
  if (!k.runs_here) FAIL_CHECK(k.name << " does not run here (KernelInfo::runs_here), yet ran");
  return true;
}

// Sets (value) or unsets (nullptr) an environment variable for one scope, then restores it.
class ScopedVar {
 public:
  ScopedVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedVar() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedVar(const ScopedVar&) = delete;
  ScopedVar& operator=(const ScopedVar&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

}  // namespace test
