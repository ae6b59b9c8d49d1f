// One random generator for everything that checks tandem from outside (tests, CLI, benchmarks, fuzzer):
// splitmix64, whose stream is the same on every platform and compiler (std:: distributions are not).
//
// It is counter-based: value i of the stream of seed s is splitmix64(s + i * kGolden), so a stream can
// be read sequentially (SplitMix64::next) or at any index in parallel (SplitMix64::at) with the same
// values. SplitMix64{s}.next() returns exactly what the classic stateful splitmix64 does, so streams
// that the CLI and the fuzzer made before this library are unchanged.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "common/vector.hpp"
#include "tandem/dtype.hpp"

namespace tandem_verify {

// Vector<T>, or for bool an array of bool (common/vector.hpp): what the checks hold their data in.
using tandem::detail::Vector;

inline constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// The splitmix64 output function applied to x + kGolden (the counter-based form: value i of the
// stream of seed s is splitmix64(s + i * kGolden)).
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  std::uint64_t z = x + kGolden;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct SplitMix64 {
  std::uint64_t state = 0;  // the seed, advanced by kGolden per value read with next()

  // The next value of the stream.
  constexpr std::uint64_t next() {
    const std::uint64_t v = splitmix64(state);
    state += kGolden;
    return v;
  }
  // The value next() returns after i more calls, without advancing (for parallel fills).
  constexpr std::uint64_t at(std::uint64_t i) const { return splitmix64(state + i * kGolden); }
  // A value in [0, n) (n > 0; plain modulo: the bias is irrelevant for test data).
  constexpr std::uint64_t below(std::uint64_t n) { return next() % n; }
  // Skips n values, as n calls of next() would.
  constexpr void skip(std::uint64_t n) { state += n * kGolden; }
};

// What the elements of generated data are. Each element is made from one 64-bit value of the stream
// (value_from_bits), so the data is the same on every machine, and element i of a fill is
// value_from_bits(g.at(i), kind): large inputs can be filled in parallel with the same values.
enum class Values {
  // Floats uniform in [-1, 1) on a grid of 2^-23 (float) or 2^-52 (double), every value exact in T;
  // integers uniform in [-2^20, 2^20) for int32 and [-2^40, 2^40) for int64 (sums stay readable).
  uniform,
  // Integers uniform over the whole type (sums wrap); floats as uniform.
  full_range,
  // Integers in [-8, 8] of any type: every partial sum of up to 2^21 of them is an integer below 2^24,
  // exact in float whatever the order, so float sums can be compared bit for bit.
  small_integers,
  // Floats uniform in [-1, 1) scaled by 2^e, e uniform in [-20, 20]: a wide dynamic range with both
  // signs, where another association order changes the bits of a sum. Integers as uniform.
  wide_range,
  // Never zero (zeros hide unwritten outputs), random sign: integers in +-[1, 1000]; floats in
  // +-[0.5, 1.5) in steps of 1/64, so every partial sum below 2^18 in magnitude is exact in float and
  // a sum of up to 2^30 of them is exact in any order (the benchmarks' inputs).
  nonzero,
};

// The element of kind `kind` made from one 64-bit value of the stream. The 16-bit types (bfloat16, half)
// take the float value rounded to the type (exact for small_integers and nonzero); bool a random bit.
template <tandem::Element T>
T value_from_bits(std::uint64_t bits, Values kind) {
  if constexpr (tandem::is_storage_type_v<T>) {
    return T(value_from_bits<tandem::compute_t<T>>(bits, kind));
  } else if constexpr (std::is_same_v<T, bool>) {  // about half true; all true for `nonzero`
    return kind == Values::nonzero || ((bits >> 29) & 1) != 0;
  } else {
    if (kind == Values::small_integers) return T(int(bits % 17) - 8);
    if (kind == Values::nonzero) {
      const T v = std::is_integral_v<T> ? T(1 + bits % (sizeof(T) == 1 ? 100 : 1000))  // (within int8 too)
                                        : T(T(0.5) + T(bits % 64) / T(64));
      return bits >> 63 ? T(-v) : v;
    }
    if constexpr (std::is_same_v<T, float>) {
      const float x = float(bits >> 40) * 0x1p-23f - 1.0f;
      return kind == Values::wide_range ? std::ldexp(x, int((bits >> 8) % 41) - 20) : x;
    } else if constexpr (std::is_same_v<T, double>) {
      const double x = double(bits >> 11) * 0x1p-52 - 1.0;
      return kind == Values::wide_range ? std::ldexp(x, int((bits >> 3) % 41) - 20) : x;
    } else if (kind == Values::full_range) {
      return static_cast<T>(bits);
    } else if constexpr (sizeof(T) == 4) {
      return T(std::int64_t(bits >> 43) - (std::int64_t(1) << 20));
    } else {
      return T(std::int64_t(bits >> 23) - (std::int64_t(1) << 40));
    }
  }
}

// Fills `out` with one value of the stream per element.
template <tandem::Element T>
void fill(std::span<T> out, SplitMix64& g, Values kind = Values::uniform) {
  for (T& x : out) x = value_from_bits<T>(g.next(), kind);
}

// n values from the stream of `g` (or of seed `seed`).
template <tandem::Element T>
Vector<T> random_vector(std::size_t n, SplitMix64& g, Values kind = Values::uniform) {
  Vector<T> v(n);
  fill<T>(v, g, kind);
  return v;
}
template <tandem::Element T>
Vector<T> random_vector(std::size_t n, std::uint64_t seed, Values kind = Values::uniform) {
  SplitMix64 g{seed};
  return random_vector<T>(n, g, kind);
}

}  // namespace tandem_verify
