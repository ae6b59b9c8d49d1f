// The reduction operators both backends use, so that CPU and GPU combine values by the same rules.
// Each has In (element type), Acc (result type), identity(), load() and combine(). combine() is
// commutative and associative for every input (NaN, -0.0 and +0.0 included), so min and max are
// bitwise identical whatever the order: NaN wins (the engine canonicalises its payload), and between
// zeros of both signs min picks -0.0 and max picks +0.0.
#pragma once

#include <climits>
#include <cmath>
#include <cstdint>
#include <type_traits>

#ifdef __CUDACC__
#define TANDEM_HD __host__ __device__ __forceinline__
#else
#define TANDEM_HD inline
#endif

namespace tandem::detail {

template <class T>
TANDEM_HD bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) return x != x;
  else return false;
}

template <class T>
TANDEM_HD bool sign_bit(T x) {
#ifdef __CUDA_ARCH__
  return signbit(x);
#else
  return std::signbit(x);
#endif
}

template <class T>
struct SumOp {
  using In = T;
  // Integer sums accumulate in unsigned 64-bit (wrapping, exact modulo 2^64), returned as int64.
  using Acc = std::conditional_t<std::is_integral_v<T>, std::uint64_t, T>;
  TANDEM_HD static Acc identity() { return Acc(0); }
  TANDEM_HD static Acc load(T x) { return static_cast<Acc>(x); }
  TANDEM_HD static Acc combine(Acc a, Acc b) { return a + b; }
};

template <class T>
struct MinOp {
  using In = T;
  using Acc = T;
  TANDEM_HD static T identity() {
    if constexpr (std::is_floating_point_v<T>) return T(INFINITY);
    else if constexpr (sizeof(T) == 4) return T(INT32_MAX);
    else return T(INT64_MAX);
  }
  TANDEM_HD static T load(T x) { return x; }
  TANDEM_HD static T combine(T a, T b) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    if (a < b) return a;
    if (b < a) return b;
    if constexpr (std::is_floating_point_v<T>) return sign_bit(a) ? a : b;  // -0.0 before +0.0
    else return a;
  }
};

template <class T>
struct MaxOp {
  using In = T;
  using Acc = T;
  TANDEM_HD static T identity() {
    if constexpr (std::is_floating_point_v<T>) return T(-INFINITY);
    else if constexpr (sizeof(T) == 4) return T(INT32_MIN);
    else return T(INT64_MIN);
  }
  TANDEM_HD static T load(T x) { return x; }
  TANDEM_HD static T combine(T a, T b) {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    if (a > b) return a;
    if (b > a) return b;
    if constexpr (std::is_floating_point_v<T>) return sign_bit(a) ? b : a;  // +0.0 before -0.0
    else return a;
  }
};

}  // namespace tandem::detail
