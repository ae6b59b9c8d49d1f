// The machinery that fuzz_api's areas (fuzz_reduce.cpp, fuzz_matmul.cpp, fuzz_buffer.cpp,
// fuzz_engine.cpp) share: the contract (begin_call/run/Expect/fail), the engines, fuzzed sizes, dims, lds
// and kernel names, and the values arrays are filled with. See fuzz_api.cpp for what the target checks.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "tandem/tandem.hpp"
#include "tests/support/kernels.hpp"
#include "tests/support/rng.hpp"
#include "tests/support/values.hpp"

namespace tandem_fuzz {

using tandem::Backend;
using tandem::Buffer;
using tandem::Engine;
using u128 = unsigned __int128;

// Work per input stays small so the fuzzer runs many inputs a second.
// (Still past the CPU backend's 16 Ki-element leaves and 4 Ki-element chunks, and its 256 x 256 blocks.)
constexpr std::size_t kMaxElems = std::size_t(1) << 16;     // largest array for a reduction or a buffer
constexpr std::size_t kMaxMatElems = std::size_t(1) << 16;  // largest matrix
constexpr std::size_t kMaxMatWork = std::size_t(1) << 18;   // largest m * k * n that runs
constexpr std::size_t kMaxHostCopy = 4096;                  // largest span for upload()/download()

bool verbose();

// Known library bugs the harness can be told to step around while they are open, so that a bounded CI
// run keeps looking for new ones: TANDEM_FUZZ_AVOID=matrix-extent,null-host-span,... (see README.md).
//   matrix-extent     matmul with a matrix whose cols exceed PTRDIFF_MAX / sizeof(T)
//   null-host-span    Buffer::upload/download of a span with null data and a non-zero size
//   deterministic-k0  deterministic matmul with k == 0 (and C not empty)
bool avoid(const char* bug);

// Prints `what` and the call being made (the last begin_call), and aborts so that libFuzzer reports it.
[[noreturn]] void fail(const std::string& what);
// Records the call about to be made (printed with any failure, and by TANDEM_FUZZ_VERBOSE=1).
void begin_call(std::string call);

std::string str(std::size_t v);            // a size; huge ones also in hex, SIZE_MAX by name
std::string quoted(const std::string& s);  // a kernel name, with unprintable bytes escaped

// The harness's own loops over arrays (filling them, and checking results against plain loops) are left
// out of the coverage instrumentation: they would slow every input down and guide the fuzzer nowhere.
#define TANDEM_FUZZ_BULK __attribute__((no_sanitize("coverage")))

enum class Expect { ok, error, either };

// Runs f under the contract: `expect` says whether the call is valid. Returns true when f returned.
template <class F>
bool run(Expect expect, F&& f) {
  try {
    f();
  } catch (const tandem::Error& e) {
    if (expect == Expect::ok) fail(std::string("a valid call threw tandem::Error: ") + e.what());
    if (e.what()[0] == '\0') fail("tandem::Error with an empty message");
    if (verbose()) std::fprintf(stderr, "  -> tandem::Error: %s\n", e.what());
    return false;
  }
  if (expect == Expect::error) fail("an invalid call returned instead of throwing tandem::Error");
  if (verbose()) std::fprintf(stderr, "  -> returned\n");
  return true;
}

// The engines: every input uses the same two (one for "a buffer of another engine").
const Engine& engine();
const Engine& other_engine();

bool cuda_usable();

// ---- fuzzed values -----------------------------------------------------------------------------------
// (fuzz_size, fuzz_dim, fuzz_ld and fuzz_value are defined in harness.cpp, for int32_t, int64_t, float,
// double, bfloat16 and half.)

// The largest element count whose bytes fit in ptrdiff_t: the API's address-space limit.
template <class T>
constexpr std::size_t limit_of() {
  return std::size_t(std::numeric_limits<std::ptrdiff_t>::max()) / sizeof(T);
}

// A size, count, stride, ld or offset: mostly small, sometimes at the edges of the address space.
template <class T>
std::size_t fuzz_size(FuzzedDataProvider& in);

// A matrix dimension: small far more often than fuzz_size makes it, so products do run.
template <class T>
std::size_t fuzz_dim(FuzzedDataProvider& in);

// An ld for a matrix with `cols` columns: usually >= cols, sometimes smaller or huge.
template <class T>
std::size_t fuzz_ld(FuzzedDataProvider& in, std::size_t cols);

// A kernel name: one of `valid` (which lists "auto" first), one of the other operation's, a near miss of
// a valid one, an empty, a long or a random string.
std::string fuzz_kernel(FuzzedDataProvider& in, const std::vector<std::string>& valid,
                        const std::vector<std::string>& other_kind);

// Whether the engine must take kernel k for a call (by its KernelInfo): tests/support/kernels.hpp.
using tandem_test::kernel_accepts;

// ---- values and their references -------------------------------------------------------------------

// What fills every element no call may read or write: a NaN with a payload for floats (a read shows up
// as a NaN result, a write as changed bits), an odd large value for integers.
template <class T>
T poison() {
  if constexpr (std::is_same_v<T, float>)
    return std::bit_cast<float>(0x7fa5a5a5u);
  else if constexpr (std::is_same_v<T, double>)
    return std::bit_cast<double>(0x7ff5a5a5a5a5a5a5ull);
  else if constexpr (tandem::is_storage_type_v<T>)
    return T::from_bits(0x7fa5);  // a NaN with a payload in both 16-bit formats
  else
    return T(std::numeric_limits<T>::max() / 3 + 12345);
}

// Bit comparison from the test-support library (tests/support/values.hpp), also for a vector against
// the memory it should equal.
using tandem_test::same_bits;
template <class T>
bool same_bits(const std::vector<T>& a, const T* b) {
  return a.empty() || tandem_test::same_bits(std::span<const T>(a), std::span<const T>(b, a.size()));
}

// An element a call reads: a small integer (so every float sum is exact, whatever its order), or now and
// then one of the values the API has rules for (NaN, infinities, signed zeros, integer extremes).
// `rng` is a splitmix64 state, advanced once per value.
template <class T>
T fuzz_value(std::uint64_t& rng, int special_per_256);

// The element type's name from the dtype table.
using tandem_test::type_name;

// ---- the areas, one file each; fuzz_typed (fuzz_api.cpp) picks one per call ---------------------------

template <class T>
void fuzz_reduce(FuzzedDataProvider& in);  // fuzz_reduce.cpp: sum/min/max/mean over every input kind
template <class T>
void fuzz_matmul(FuzzedDataProvider& in);  // fuzz_matmul.cpp: matmul on host matrices or buffers
template <class T>
void fuzz_buffer(FuzzedDataProvider& in);  // fuzz_buffer.cpp: buffer(), upload(), Buffer's methods
void fuzz_engine(FuzzedDataProvider& in);  // fuzz_engine.cpp: Engine(Backend) and Engine()

}  // namespace tandem_fuzz
