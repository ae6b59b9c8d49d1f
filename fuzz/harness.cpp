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

// ---- values and their references -------------------------------------------------------------------

namespace {

// The next value of the stream whose state is s (tests/support/rng.hpp's generator).
TANDEM_FUZZ_BULK std::uint64_t splitmix(std::uint64_t& s) {
  tandem_test::SplitMix64 g{s};
  const std::uint64_t v = g.next();
  s = g.state;
  return v;
}

}  // namespace

template <class T>
TANDEM_FUZZ_BULK T fuzz_value(std::uint64_t& rng, int special_per_256) {
  if constexpr (tandem::is_storage_type_v<T>)  // a float's value rounded to 16 bits (small integers stay exact)
    return T(fuzz_value<float>(rng, special_per_256));
  const std::uint64_t r = splitmix(rng);
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

#define TANDEM_FUZZ_INSTANTIATE(T)                                   \
  template std::size_t fuzz_size<T>(FuzzedDataProvider&);            \
  template std::size_t fuzz_dim<T>(FuzzedDataProvider&);             \
  template std::size_t fuzz_ld<T>(FuzzedDataProvider&, std::size_t); \
  template T fuzz_value<T>(std::uint64_t&, int);
TANDEM_FUZZ_INSTANTIATE(std::int32_t)
TANDEM_FUZZ_INSTANTIATE(std::int64_t)
TANDEM_FUZZ_INSTANTIATE(float)
TANDEM_FUZZ_INSTANTIATE(double)
TANDEM_FUZZ_INSTANTIATE(tandem::bfloat16)
TANDEM_FUZZ_INSTANTIATE(tandem::half)
#undef TANDEM_FUZZ_INSTANTIATE

}  // namespace tandem_fuzz

// Out-of-memory is an error the API reports (tandem::Error), so an allocation the sanitizer cannot
// serve must return null, as malloc does, instead of ending the process.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
