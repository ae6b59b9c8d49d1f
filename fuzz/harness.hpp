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
#include "verify/kernels.hpp"
#include "verify/rng.hpp"
#include "verify/values.hpp"

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

// The largest element count whose bytes fit in ptrdiff_t: the API's address-space limit.
template <class T>
constexpr std::size_t limit_of() {
  return std::size_t(std::numeric_limits<std::ptrdiff_t>::max()) / sizeof(T);
}

// A size, count, stride, ld or offset: mostly small, sometimes at the edges of the address space.
// A matrix dimension (fuzz_dim): small far more often than fuzz_size makes it, so products do run.
// An ld for a matrix with `cols` columns (fuzz_ld): usually >= cols, sometimes smaller or huge.
template <class T>
std::size_t fuzz_size(FuzzedDataProvider& in) {
  const auto delta = [&] { return std::size_t(in.ConsumeIntegralInRange<int>(-3, 3)); };
  switch (in.ConsumeIntegralInRange<int>(0, 15)) {
    case 0:
      return 0;
    case 1:
      return 1;
    case 2:
    case 3:
      return in.ConsumeIntegralInRange<std::size_t>(2, 17);
    case 4:
    case 5:
      return in.ConsumeIntegralInRange<std::size_t>(0, 300);
    case 6:
      return (std::size_t(1) << in.ConsumeIntegralInRange<int>(4, 18)) + delta();  // 2^k - 3 .. 2^k + 3
    case 7:
      return in.ConsumeIntegralInRange<std::size_t>(0, kMaxElems);
    case 8:
      return SIZE_MAX - in.ConsumeIntegralInRange<std::size_t>(0, 4);
    case 9:
      return std::size_t(std::numeric_limits<std::ptrdiff_t>::max()) + delta();
    case 10:
      return limit_of<T>() + delta();
    case 11:
      return limit_of<T>() / in.ConsumeIntegralInRange<std::size_t>(1, 1024) + delta();
    case 12:
      return (std::size_t(1) << in.ConsumeIntegralInRange<int>(19, 63)) + delta();
    case 13:
      return SIZE_MAX / in.ConsumeIntegralInRange<std::size_t>(2, 64) + delta();
    case 14:
      return std::size_t(1) << 32 | in.ConsumeIntegralInRange<std::size_t>(0, 3);
    default:
      return in.ConsumeIntegral<std::size_t>();
  }
}

template <class T>
std::size_t fuzz_dim(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 8)) {
    case 0:
      return 0;
    case 1:
      return 1;
    case 2:
    case 3:
    case 4:
      return in.ConsumeIntegralInRange<std::size_t>(2, 24);
    case 5:
      return in.ConsumeIntegralInRange<std::size_t>(25, 600);
    case 6: {  // just past (or at) the address-space limit, where extent arithmetic overflows
      const std::size_t edges[] = {
          limit_of<T>(), limit_of<T>() + 1, std::size_t(1) << 62, std::size_t(1) << 63, SIZE_MAX / 2,
          SIZE_MAX / 3,  SIZE_MAX};
      return edges[in.ConsumeIntegralInRange<std::size_t>(0, std::size(edges) - 1)] -
             in.ConsumeIntegralInRange<std::size_t>(0, 2);
    }
    default:
      return fuzz_size<T>(in);
  }
}

template <class T>
std::size_t fuzz_ld(FuzzedDataProvider& in, std::size_t cols) {
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0:
    case 1:
    case 2:
      return cols;
    case 3:
      return cols + in.ConsumeIntegralInRange<std::size_t>(1, 9);
    case 4:
      return cols - in.ConsumeIntegralInRange<std::size_t>(1, 2);  // wraps when cols is 0 or 1
    case 5:
      return 0;
    default:
      return fuzz_size<T>(in);
  }
}

// A kernel name: one of `valid` (which lists "auto" first), one of the other operation's, a near miss of
// a valid one, an empty, a long or a random string.
std::string fuzz_kernel(FuzzedDataProvider& in, const std::vector<std::string>& valid,
                        const std::vector<std::string>& other_kind);

// Whether the engine must take kernel k for a call (by its KernelInfo): verify/kernels.hpp.
using tandem_verify::kernel_accepts;

// The first choices of a matmul call (fuzz_matmul, fuzz_batch): Buffers or host memory, a kernel name
// (valid or not), deterministic mode, and whether that kernel takes T in that mode; alpha and beta are
// then picked from kMatmulScalars.
struct MatmulChoice {
  bool buffers;
  std::string kernel;
  bool deterministic, kernel_ok;
};
template <class T>
MatmulChoice fuzz_matmul_choice(FuzzedDataProvider& in) {
  const Engine& eng = engine();
  MatmulChoice c;
  c.buffers = in.ConsumeBool();
  c.kernel = fuzz_kernel(in, eng.matmul_kernels(), eng.reduce_kernels());
  c.deterministic = in.ConsumeIntegralInRange<int>(0, 3) == 0;
  c.kernel_ok = kernel_accepts(eng.matmul_kernel_info(), c.kernel, tandem::dtype_of<T>, nullptr, c.deterministic);
  return c;
}
inline constexpr double kMatmulScalars[] = {1, 0, -1, 2, 0.5};

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

// Bit comparison from the test-support library (verify/values.hpp), also for a vector against
// the memory it should equal.
using tandem_verify::same_bits;
template <class T>
bool same_bits(const tandem_verify::Vector<T>& a, const T* b) {
  return a.empty() || tandem_verify::same_bits(std::span<const T>(a), std::span<const T>(b, a.size()));
}

// An element a call reads: a small integer (so every float sum is exact, whatever its order), or now and
// then one of the values the API has rules for (NaN, infinities, signed zeros, integer extremes).
// `rng` is a splitmix64 state, advanced once per value.
namespace detail {

// The next value of the stream whose state is s (verify/rng.hpp's generator).
TANDEM_FUZZ_BULK inline std::uint64_t splitmix(std::uint64_t& s) {
  tandem_verify::SplitMix64 g{s};
  const std::uint64_t v = g.next();
  s = g.state;
  return v;
}

}  // namespace detail

template <class T>
TANDEM_FUZZ_BULK T fuzz_value(std::uint64_t& rng, int special_per_256) {
  if constexpr (tandem::is_storage_type_v<T>)  // a float's value rounded to 16 bits (small integers stay exact)
    return T(fuzz_value<float>(rng, special_per_256));
  const std::uint64_t r = detail::splitmix(rng);
  if (int(r & 255) < special_per_256) {
    if constexpr (std::is_floating_point_v<T>) {
      switch ((r >> 8) % 5) {
        case 0:
          return std::numeric_limits<T>::quiet_NaN();
        case 1:
          return -std::numeric_limits<T>::infinity();
        case 2:
          return std::numeric_limits<T>::infinity();
        case 3:
          return T(-0.0);
        default:
          return std::bit_cast<T>(~std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(
              T(0)));  // a negative NaN with every payload bit set
      }
    } else {
      switch ((r >> 8) % 3) {
        case 0:
          return std::numeric_limits<T>::min();
        case 1:
          return std::numeric_limits<T>::max();
        default:
          return T(r >> 11);
      }
    }
  }
  return T(int((r >> 8) % 17) - 8);
}

// The element type's name from the dtype table.
using tandem_verify::type_name;

// ---- the areas, one file each; fuzz_typed (fuzz_api.cpp) picks one per call ---------------------------

// Each takes the element type to fuzz (any of the dtype table; matmul: one it takes).
void fuzz_reduce(tandem::Dtype d, FuzzedDataProvider& in);  // fuzz_reduce.cpp: every op over every input kind
void fuzz_matmul(tandem::Dtype d, FuzzedDataProvider& in);  // fuzz_matmul.cpp: matmul on host matrices or buffers
void fuzz_batch(tandem::Dtype d, FuzzedDataProvider& in);   // fuzz_batch.cpp: batches, padding, 16-bit inputs
void fuzz_buffer(tandem::Dtype d, FuzzedDataProvider& in);  // fuzz_buffer.cpp: buffer(), upload(), Buffer's methods
void fuzz_engine(FuzzedDataProvider& in);                   // fuzz_engine.cpp: Engine(Backend) and Engine()

}  // namespace tandem_fuzz
