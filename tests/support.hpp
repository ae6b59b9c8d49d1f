// Shared test helpers: per-backend registration, seeded data, independent references.
#pragma once

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tandem/tandem.hpp"

namespace test {

inline bool usable(tandem::Backend b) {
  for (const auto& s : tandem::backend_status())
    if (s.backend == b) return s.usable;
  return false;
}
inline bool cuda_usable() { return usable(tandem::Backend::cuda); }

// Writes a test once and registers it for every backend of TANDEM_BACKENDS: "cpu: name" in suite cpu,
// "cuda: name" in suite cuda (skipped where that backend is not usable), and so on.
#define TANDEM_BACKEND_TEST_ROW(backend, p, l, d, fn, title)                                                 \
  TEST_CASE(#backend ": " title * doctest::test_suite(#backend) *                                              \
            doctest::skip(!test::usable(tandem::Backend::backend))) {                                          \
    fn(tandem::Engine(tandem::Backend::backend));                                                              \
  }
#define TANDEM_BACKEND_TEST(fn, title)                 \
  static void fn(const tandem::Engine& eng);            \
  TANDEM_BACKENDS(TANDEM_BACKEND_TEST_ROW, fn, title) \
  static void fn(const tandem::Engine& eng)

inline std::mt19937_64& rng() {
  static std::mt19937_64 g(20261121);
  return g;
}

// The widths every reduction is checked at: 0, 1, small primes, 2^k +- 1, sizes that miss every
// block (and a few seeded random sizes).
inline bool quick() {
  const char* q = std::getenv("TANDEM_TEST_QUICK");
  return q && std::string(q) == "1";
}

// TANDEM_TEST_QUICK=1 (for compute-sanitizer runs) keeps a few odd sizes that still miss every block.
inline std::vector<std::size_t> reduce_sizes() {
  if (quick()) return {0, 1, 3, 33, 257, 1025, 4097, 65537};
  std::vector<std::size_t> s = {0,   1,    2,    3,    31,   32,   33,   63,    64,    65,     255,
                                256, 257,  511,  513,  1023, 1024, 1025, 2047,  2049,  4095,   4097,
                                65537, 1000003};
  std::mt19937_64 g(7);
  for (int i = 0; i < 4; ++i) s.push_back(std::uniform_int_distribution<std::size_t>(5, 300000)(g));
  return s;
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T>
std::string show(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", double(v));
    return buf;
  } else {
    return std::to_string(v);
  }
}

}  // namespace test
