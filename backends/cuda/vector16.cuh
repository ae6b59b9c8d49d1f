// The 16-byte vector type of each element type (int4, float4, longlong2, double2, ...): one 128-bit
// load or store (LDG.128 / STS.128) moves 16 / sizeof(T) elements. Shared by the reduction and matmul
// ladders.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "tandem/float16.hpp"

namespace tandem::cuda {

template <class T>
struct Vector16;
template <>
struct Vector16<std::int32_t> {
  using type = int4;
};
template <>
struct Vector16<float> {
  using type = float4;
};
template <>
struct Vector16<std::int64_t> {
  using type = longlong2;
};
template <>
struct Vector16<std::uint64_t> {
  using type = ulonglong2;
};
template <>
struct Vector16<double> {
  using type = double2;
};

// uint32 and the 8- and 16-bit integers (bool too): 4, 8 or 16 elements in four 32-bit words, read back as the
// elements' bytes.
template <class T>
requires(std::is_integral_v<T> && sizeof(T) <= 4 && !std::is_same_v<T, std::int32_t>) struct Vector16<T> {
  using type = uint4;
};

// The 16-bit storage types: 8 elements as four 32-bit words (element 2q in the low half of word q).
template <>
struct Vector16<bfloat16> {
  using type = uint4;
};
template <>
struct Vector16<half> {
  using type = uint4;
};

// Elements in one 16-byte vector.
template <class T>
inline constexpr int kVectorWidth = 16 / static_cast<int>(sizeof(T));

}  // namespace tandem::cuda
