// Order keys of the GPU's topk and sort (topk.cu, sort_lines.cu): each element becomes an unsigned key whose
// unsigned order is the order of topk (largest or smallest) or argsort. NaN is the largest key (every NaN the
// same key), -0.0 and +0.0 are the same key.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tandem/float16.hpp"

namespace tandem::cuda {

// The key type: 32 bits for elements of up to 4 bytes, else 64.
template <class T>
using KeyOf = std::conditional_t<(sizeof(T) > 4), std::uint64_t, std::uint32_t>;

// The key of x in ascending order of value (-0.0 as +0.0), NaN the largest key; `largest` false inverts it
// but for NaN (the most extreme either way).
template <class T>
__device__ KeyOf<T> key_of(T x, bool largest) {
  using K = KeyOf<T>;
  constexpr K top = K(1) << (sizeof(K) * 8 - 1);
  K asc;
  if constexpr (std::is_same_v<T, double>) {
    if (x != x) return ~K(0);
    const K b = K(__double_as_longlong(x == 0.0 ? 0.0 : x));
    asc = (b & top) ? ~b : b | top;
  } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, bfloat16> || std::is_same_v<T, half>) {
    const float f = float(x);
    if (f != f) return ~K(0);
    const K b = K(__float_as_uint(f == 0.0f ? 0.0f : f));
    asc = (b & top) ? ~b : b | top;
  } else if constexpr (std::is_signed_v<T>) {
    using S = std::make_signed_t<K>;
    asc = K(S(x)) ^ top;
  } else {
    asc = K(x);  // (unsigned integers, bool)
  }
  return largest ? asc : ~asc;
}

}  // namespace tandem::cuda
