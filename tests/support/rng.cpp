#include "tests/support/rng.hpp"

namespace tandem_test {

template <tandem::Element T>
void fill(std::span<T> out, SplitMix64& g, Values kind) {
  for (T& x : out) x = value_from_bits<T>(g.next(), kind);
}

template void fill<std::int32_t>(std::span<std::int32_t>, SplitMix64&, Values);
template void fill<std::int64_t>(std::span<std::int64_t>, SplitMix64&, Values);
template void fill<float>(std::span<float>, SplitMix64&, Values);
template void fill<double>(std::span<double>, SplitMix64&, Values);
template void fill<tandem::bfloat16>(std::span<tandem::bfloat16>, SplitMix64&, Values);
template void fill<tandem::half>(std::span<tandem::half>, SplitMix64&, Values);

}  // namespace tandem_test
