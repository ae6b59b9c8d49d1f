#include "tests/support/rng.hpp"

#include <cmath>
#include <type_traits>

namespace tandem_test {

template <tandem::Element T>
void fill(std::span<T> out, SplitMix64& g, Values kind) {
  for (T& x : out) {
    const std::uint64_t bits = g.next();
    if (kind == Values::small_integers) {
      x = T(int(bits % 17) - 8);
    } else if constexpr (std::is_same_v<T, float>) {
      x = float(bits >> 40) * 0x1p-23f - 1.0f;
      if (kind == Values::wide_range) x = std::ldexp(x, int((bits >> 8) % 41) - 20);
    } else if constexpr (std::is_same_v<T, double>) {
      x = double(bits >> 11) * 0x1p-52 - 1.0;
      if (kind == Values::wide_range) x = std::ldexp(x, int((bits >> 3) % 41) - 20);
    } else if (kind == Values::full_range) {
      x = static_cast<T>(bits);
    } else if constexpr (sizeof(T) == 4) {
      x = T(std::int64_t(bits >> 43) - (std::int64_t(1) << 20));
    } else {
      x = T(std::int64_t(bits >> 23) - (std::int64_t(1) << 40));
    }
  }
}

template void fill<std::int32_t>(std::span<std::int32_t>, SplitMix64&, Values);
template void fill<std::int64_t>(std::span<std::int64_t>, SplitMix64&, Values);
template void fill<float>(std::span<float>, SplitMix64&, Values);
template void fill<double>(std::span<double>, SplitMix64&, Values);

}  // namespace tandem_test
