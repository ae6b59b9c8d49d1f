// The reduction operators both backends (and CUB, through the CUDA backend) use, so that CPU and GPU
// combine values by the same rules. An operator Op has
//   In                      the element type
//   Acc                     the accumulator and result type
//   identity()              the Acc that changes nothing
//   load(In x, Index i)     element x at index i as an Acc (the index lets an arg-reduction carry it)
//   combine(Acc, Acc)       commutative and associative for every input (NaN, -0.0 and +0.0 included)
//   kIndexFree              true when load ignores i, so a backend may skip computing indices
//   kOrderFree              (optional, default false) true when every order of combining gives the same
//                           bits (min, max, integer sums), so a backend may keep several accumulators
//   kAdditive               (optional, default false) true when the op is the sum of load(x): combine is
//                           a + b, deterministic mode's canonical order applies, partial results add
//   kLoadTransforms         (optional, default false) true when load(x) is more than a conversion of x
//                           to Acc (a square), so that a backend must never skip it
// min and max are bitwise identical whatever the order: NaN wins (the engine canonicalises its
// payload), and between zeros of both signs min picks -0.0 and max picks +0.0.
#pragma once

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "tandem/dtype.hpp"
#include "tandem/types.hpp"

#ifdef __CUDACC__
#define TANDEM_HD __host__ __device__ __forceinline__
#else
#define TANDEM_HD inline
#endif

namespace tandem::detail {

// Element indices are 64-bit everywhere: inputs can exceed 2^31 elements.
using Index = std::int64_t;

template <class T>
TANDEM_HD bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return x != x;
  else
    return false;
}

// A NaN result as the canonical quiet NaN (GPUs and CPUs make NaNs with different bits); other values
// unchanged.
template <class T>
TANDEM_HD T canonical_nan(T v) {
  if constexpr (std::is_floating_point_v<T>)
    if (v != v) {
#ifdef __CUDA_ARCH__
      if constexpr (sizeof(T) == 4)
        return __int_as_float(0x7fc00000);
      else
        return __longlong_as_double(0x7ff8000000000000LL);
#else
      return std::numeric_limits<T>::quiet_NaN();
#endif
    }
  return v;
}

template <class T>
TANDEM_HD bool sign_bit(T x) {
#ifdef __CUDA_ARCH__
  return signbit(x);
#else
  return std::signbit(x);
#endif
}

// The type an operator computes T's values in: compute_t<T> for element types (float for the 16-bit
// ones), T itself for the others (uint64, the partials of integer sums).
template <class T>
struct ComputeOf {
  using type = T;
};
template <class T>
requires Element<T>
struct ComputeOf<T> {
  using type = compute_t<T>;
};
template <class T>
using compute_of_t = typename ComputeOf<T>::type;

// The value of the op table's Identity (include/tandem/ops.hpp) in type T.
template <Identity I, class T>
TANDEM_HD T identity_value() {
  if constexpr (I == Identity::zero)
    return std::is_floating_point_v<T> ? T(-0.0) : T(0);  // -0.0: a sum of only -0.0 stays -0.0
  else if constexpr (I == Identity::one)
    return T(1);
  else if constexpr (std::is_floating_point_v<T>)
    return I == Identity::highest ? T(INFINITY) : T(-INFINITY);
  else
    return I == Identity::highest ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
// min and max by the rules above in a few instructions (the portable combine below takes about twice
// as many, with branches): min.NaN / max.NaN return NaN if either input is NaN; numerically equal inputs
// (zeros of both signs among them) merge their bits, OR for min (-0.0 wins), AND for max (+0.0 wins),
// which leaves every other equal pair as it is. Doubles have no max.NaN: fmin / fmax plus a NaN test.
__device__ __forceinline__ float device_min(float a, float b) {
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return a == b ? __int_as_float(__float_as_int(a) | __float_as_int(b)) : r;
}
__device__ __forceinline__ float device_max(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return a == b ? __int_as_float(__float_as_int(a) & __float_as_int(b)) : r;
}
__device__ __forceinline__ double device_min(double a, double b) {
  if (a != a || b != b) return a + b;  // NaN
  return a == b ? __longlong_as_double(__double_as_longlong(a) | __double_as_longlong(b)) : fmin(a, b);
}
__device__ __forceinline__ double device_max(double a, double b) {
  if (a != a || b != b) return a + b;
  return a == b ? __longlong_as_double(__double_as_longlong(a) & __double_as_longlong(b)) : fmax(a, b);
}
#endif

// The exact sum of integers: 128 bits in two's complement (lo, then hi), added with the carry. Any sum of
// fewer than 2^63 int64 (or uint64) elements is exact in it, in any order. A sum's result is its low 64 bits
// (wrapping modulo 2^64, as the API documents); a mean is the exact sum converted to double once
// (to_double, correctly rounded) and divided by n.
struct ExactSum {
  std::uint64_t lo = 0, hi = 0;

  TANDEM_HD static ExactSum of(std::int64_t v) { return {std::uint64_t(v), v < 0 ? ~std::uint64_t(0) : 0}; }
  TANDEM_HD static ExactSum of_unsigned(std::uint64_t v) { return {v, 0}; }
  // high * 2^32 + low, exactly (the halves of a block of lanes: integer_sum_leaf).
  TANDEM_HD static ExactSum of_halves(std::int64_t high, std::uint64_t low) {
    return ExactSum{std::uint64_t(high) << 32, std::uint64_t(high >> 32)} + of_unsigned(low);
  }
  TANDEM_HD friend ExactSum operator+(ExactSum a, ExactSum b) {
    ExactSum r{a.lo + b.lo, a.hi + b.hi};
    r.hi += r.lo < a.lo;  // the carry
    return r;
  }
  TANDEM_HD ExactSum& operator+=(ExactSum b) { return *this = *this + b; }
  TANDEM_HD bool operator==(const ExactSum& b) const { return lo == b.lo && hi == b.hi; }
  // The low 64 bits, as a signed integer: the sum modulo 2^64.
  TANDEM_HD std::int64_t wrapped() const { return std::int64_t(lo); }
  // The value as the nearest double (ties to even): the magnitude's top 64 bits, with a sticky bit for
  // the bits below them, converted once and scaled by a power of two (exact).
  TANDEM_HD double to_double() const {
    const bool negative = std::int64_t(hi) < 0;
    std::uint64_t l = lo, h = hi;
    if (negative) l = ~l + 1, h = ~h + (l == 0);
    if (h == 0) return negative ? -double(l) : double(l);
#ifdef __CUDA_ARCH__
    const int zeros = __clzll(static_cast<long long>(h));
#else
    const int zeros = __builtin_clzll(h);
#endif
    const std::uint64_t top = zeros == 0 ? h : (h << zeros) | (l >> (64 - zeros));
    const std::uint64_t below = zeros == 0 ? l : l << zeros;
    const double d = ldexp(double(top | (below != 0)), 64 - zeros);
    return negative ? -d : d;
  }
};

template <class T>
struct SumOp {
  using In = T;
  // Integer sums accumulate exactly (ExactSum), returned as int64 modulo 2^64, their means exact; the
  // 16-bit storage types in float.
  using Acc = std::conditional_t<std::is_integral_v<T>, ExactSum, compute_of_t<T>>;
  static constexpr bool kIndexFree = true;
  static constexpr bool kOrderFree = std::is_integral_v<T> || std::is_same_v<T, ExactSum>;  // exact in any order
  static constexpr bool kAdditive = true;  // a sum of load(x): deterministic mode's canonical order applies
  // -0.0 for floats: the additive identity that keeps every sign (a sum of only -0.0 is -0.0, IEEE 754);
  // +0.0 would turn it into +0.0.
  TANDEM_HD static Acc identity() {
    if constexpr (std::is_same_v<Acc, ExactSum>)
      return ExactSum{};
    else
      return identity_value<info(Op::sum).identity, Acc>();
  }
  TANDEM_HD static Acc load(T x, Index) {
    if constexpr (std::is_same_v<T, ExactSum>)
      return x;  // (the partials of an integer sum)
    else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>)
      return ExactSum::of_unsigned(x);
    else if constexpr (std::is_integral_v<T>)
      return ExactSum::of(x);
    else
      return static_cast<Acc>(x);
  }
  TANDEM_HD static Acc combine(Acc a, Acc b) { return a + b; }
};

// sumsq: the sum of the squares, each square rounded to the compute type (integers: the wrapping 64-bit
// product, so the sum is exact modulo 2^64), summed as SumOp sums. On a GPU the square is rounded
// explicitly (__fmul_rn), so that no compiler fuses it into the add: deterministic mode's canonical order
// adds the rounded squares.
template <class T>
struct SumSqOp {
  using In = T;
  using Acc = std::conditional_t<std::is_integral_v<T>, std::uint64_t, compute_of_t<T>>;
  static constexpr bool kIndexFree = true;
  static constexpr bool kOrderFree = std::is_integral_v<Acc>;
  static constexpr bool kAdditive = true;
  static constexpr bool kLoadTransforms = true;
  TANDEM_HD static Acc identity() { return identity_value<info(Op::sumsq).identity, Acc>(); }
  TANDEM_HD static Acc load(T x, Index) {
    const Acc v = static_cast<Acc>(x);
#ifdef __CUDA_ARCH__
    if constexpr (std::is_same_v<Acc, float>) return __fmul_rn(v, v);
    if constexpr (std::is_same_v<Acc, double>) return __dmul_rn(v, v);
#endif
    return v * v;
  }
  TANDEM_HD static Acc combine(Acc a, Acc b) { return a + b; }
};

// prod: the product, in the compute type for floats (each product rounded: __fmul_rn on a GPU, so that
// deterministic mode's canonical order multiplies exactly as the CPU does), and for integers the wrapping
// 64-bit product (two's complement: the signed product modulo 2^64, the same in any order).
template <class T>
struct ProdOp {
  using In = T;
  using Acc = std::conditional_t<std::is_integral_v<T>, std::uint64_t, compute_of_t<T>>;
  static constexpr bool kIndexFree = true;
  static constexpr bool kOrderFree = std::is_integral_v<Acc>;
  TANDEM_HD static Acc identity() { return identity_value<info(Op::prod).identity, Acc>(); }
  TANDEM_HD static Acc load(T x, Index) {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
      return Acc(std::int64_t(x));  // (sign-extended first: -1 is 2^64 - 1)
    else
      return static_cast<Acc>(x);
  }
  TANDEM_HD static Acc combine(Acc a, Acc b) {
#ifdef __CUDA_ARCH__
    if constexpr (std::is_same_v<Acc, float>) return __fmul_rn(a, b);
    if constexpr (std::is_same_v<Acc, double>) return __dmul_rn(a, b);
#endif
    return a * b;
  }
};

template <class T>
struct MinOp {
  using In = T;
  using Acc = compute_of_t<T>;  // T, or float for the 16-bit storage types
  TANDEM_HD static Acc identity() { return identity_value<info(Op::min).identity, Acc>(); }
  static constexpr bool kIndexFree = true;
  static constexpr bool kOrderFree = true;
  TANDEM_HD static Acc load(T x, Index) { return static_cast<Acc>(x); }
  TANDEM_HD static Acc combine(Acc a, Acc b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (std::is_floating_point_v<Acc>) return device_min(a, b);
#endif
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    if (a < b) return a;
    if (b < a) return b;
    if constexpr (std::is_floating_point_v<Acc>)
      return sign_bit(a) ? a : b;  // -0.0 before +0.0
    else
      return a;
  }
};

template <class T>
struct MaxOp {
  using In = T;
  using Acc = compute_of_t<T>;
  TANDEM_HD static Acc identity() { return identity_value<info(Op::max).identity, Acc>(); }
  static constexpr bool kIndexFree = true;
  static constexpr bool kOrderFree = true;
  TANDEM_HD static Acc load(T x, Index) { return static_cast<Acc>(x); }
  TANDEM_HD static Acc combine(Acc a, Acc b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (std::is_floating_point_v<Acc>) return device_max(a, b);
#endif
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    if (a > b) return a;
    if (b > a) return b;
    if constexpr (std::is_floating_point_v<Acc>)
      return sign_bit(a) ? b : a;  // +0.0 before -0.0
    else
      return a;
  }
};

// argmin / argmax: the accumulator is an element and its index; the result is the index of the first
// least (greatest) element. NaN counts as the extreme, so the first NaN wins (NumPy's rule); between
// zeros of both signs argmin takes -0.0 and argmax +0.0 (as min and max); equal values go to the lower
// index. The identity has the index INT64_MAX, so any element beats it.
template <class T>
struct ArgAcc {
  T value;
  Index index;
};

template <class T, bool Max>
struct ArgOp {
  using In = T;
  using Value = compute_of_t<T>;
  using Acc = ArgAcc<Value>;
  static constexpr bool kIndexFree = false;
  TANDEM_HD static Acc identity() {
    return {identity_value<info(Max ? Op::argmax : Op::argmin).identity, Value>(), std::numeric_limits<Index>::max()};
  }
  TANDEM_HD static Acc load(T x, Index i) { return {static_cast<Value>(x), i}; }
  // Whether a comes before b in the order above.
  TANDEM_HD static bool before(const Acc& a, const Acc& b) {
    const bool a_nan = is_nan(a.value), b_nan = is_nan(b.value);
    if (a_nan || b_nan) return a_nan && b_nan ? a.index < b.index : a_nan;
    if (a.value != b.value) return Max ? a.value > b.value : a.value < b.value;
    if constexpr (std::is_floating_point_v<Value>)
      if (sign_bit(a.value) != sign_bit(b.value)) return Max ? !sign_bit(a.value) : sign_bit(a.value);
    return a.index < b.index;
  }
  TANDEM_HD static Acc combine(Acc a, Acc b) { return before(b, a) ? b : a; }
};

template <class Op>
inline constexpr bool order_free = [] {
  if constexpr (requires { Op::kOrderFree; })
    return Op::kOrderFree;
  else
    return false;
}();

// Op is a sum of Op::load(x) (Op::kAdditive): in deterministic mode its floating-point results follow
// the canonical order (common/canonical.hpp) over the loaded values.
template <class Op>
inline constexpr bool additive = [] {
  if constexpr (requires { Op::kAdditive; })
    return Op::kAdditive;
  else
    return false;
}();

// Deterministic mode combines Op's values in the canonical order (common/canonical.hpp): a floating-point
// accumulator whose bits depend on the order (sum, sumsq and prod of floats; min, max and the
// arg-reductions give the same bits in any order, integer sums and products are exact modulo 2^64).
template <class Op>
inline constexpr bool canonical_order = [] {
  if constexpr (requires { Op::kIndexFree; })
    return Op::kIndexFree && !order_free<Op> && std::is_floating_point_v<typename Op::Acc>;
  else
    return false;
}();

// Op::load(x) is more than the conversion Acc(x) (Op::kLoadTransforms).
template <class Op>
inline constexpr bool load_transforms = [] {
  if constexpr (requires { Op::kLoadTransforms; })
    return Op::kLoadTransforms;
  else
    return false;
}();

template <class Op>
inline constexpr bool is_arg_op = false;
template <class T, bool Max>
inline constexpr bool is_arg_op<ArgOp<T, Max>> = true;

// Later passes of a multi-pass reduction combine the Acc partials of an earlier pass: an operator whose
// elements are Op's accumulators, loaded as they are. Sum-like operators' partials are summed (SumOp of
// the Acc: a square is never taken twice; for a wrapping uint64 Acc, PartialsOf); other operators whose In
// is already Acc and whose load only converts serve as their own partial operator.
template <class Op>
struct PartialsOf {
  using In = typename Op::Acc;
  using Acc = typename Op::Acc;
  static constexpr bool kIndexFree = true;
  static constexpr bool kOrderFree = order_free<Op>;
  TANDEM_HD static Acc identity() { return Op::identity(); }
  TANDEM_HD static Acc load(Acc x, Index) { return x; }
  TANDEM_HD static Acc combine(Acc a, Acc b) { return Op::combine(a, b); }
};
template <class Op>
struct PartialOpOf {
  // (An integer sum of squares' partials wrap in uint64 as its own combine adds them; SumOp of a uint64
  // would sum them exactly, in another type.)
  using type =
      std::conditional_t<additive<Op> && !std::is_integral_v<typename Op::Acc>, SumOp<typename Op::Acc>,
                         std::conditional_t<std::is_same_v<typename Op::In, typename Op::Acc> && !load_transforms<Op>,
                                            Op, PartialsOf<Op>>>;
};
template <class Op>
using PartialOp = typename PartialOpOf<Op>::type;

// The operator of each backend-level Op (sum, min, max, argmin, argmax) for element type T: backends instantiate
// their kernels for OpFor<Op::sum, T> and so on.
template <Op O, class T>
struct OpFor;
template <class T>
struct OpFor<Op::sum, T> {
  using type = SumOp<T>;
};
template <class T>
struct OpFor<Op::min, T> {
  using type = MinOp<T>;
};
template <class T>
struct OpFor<Op::max, T> {
  using type = MaxOp<T>;
};
template <class T>
struct OpFor<Op::argmin, T> {
  using type = ArgOp<T, false>;
};
template <class T>
struct OpFor<Op::argmax, T> {
  using type = ArgOp<T, true>;
};
template <class T>
struct OpFor<Op::sumsq, T> {
  using type = SumSqOp<T>;
};

template <class T>
struct OpFor<Op::prod, T> {
  using type = ProdOp<T>;
};

// An operator over the compute type of its elements (SumSqOp<half> -> SumSqOp<float>): its load gives the
// term of an element already widened, as the CPU's vector paths widen 16-bit rows before adding them.
template <class Operator>
struct OnComputeOf;
template <template <class> class O, class T>
struct OnComputeOf<O<T>> {
  using type = O<compute_of_t<T>>;
};
template <class Operator>
using on_compute_t = typename OnComputeOf<Operator>::type;

// What the engine receives for op O's accumulator over elements T, by the op table's result kind
// (include/tandem/ops.hpp): a sum as sum_result_t<T> (an integer sum's uint64 wraps to int64; an exact
// integer sum as it is, ExactSum: the engine takes its low bits, or its mean), a value as compute_t<T>, an
// index as int64; NaN results as the canonical quiet NaN.
template <Op O, class T>
TANDEM_HD auto result_of(typename OpFor<O, T>::type::Acc acc) {
  constexpr ResultKind kind = info(O).result;
  if constexpr (kind == ResultKind::index)
    return static_cast<std::int64_t>(acc.index);
  else if constexpr (kind == ResultKind::sum && std::is_same_v<decltype(acc), ExactSum>)
    return acc;
  else if constexpr (kind == ResultKind::sum)
    return canonical_nan(static_cast<sum_result_t<T>>(acc));
  else if constexpr (kind == ResultKind::value)
    return canonical_nan(static_cast<compute_t<T>>(acc));
  else
    static_assert(kind != ResultKind::mean, "mean reaches a backend as sum (with divide: store_result)");
}

template <Op O, class T>
using backend_result_t = decltype(result_of<O, T>(std::declval<typename OpFor<O, T>::type::Acc>()));

// A sum's result as the API gives it (sum_result_t<T>: an exact integer sum's low 64 bits), and the mean
// of `count` elements from it: double(sum) / count, for integers the exact sum converted once.
template <class T, class R>
TANDEM_HD sum_result_t<T> sum_value(R r) {
  if constexpr (std::is_same_v<R, ExactSum>)
    return r.wrapped();
  else
    return static_cast<sum_result_t<T>>(r);
}
template <class R>
TANDEM_HD double mean_value(R r, double count) {
  if constexpr (std::is_same_v<R, ExactSum>)
    return r.to_double() / count;
  else
    return canonical_nan(double(r) / count);
}

// The accumulator whose result is op O's result for an empty input (the op table's EmptyRule; the engine
// refuses an empty input of the others): zero, all bits zero (+0.0, 0, an ExactSum of 0), or one.
template <Op O, class T>
TANDEM_HD typename OpFor<O, T>::type::Acc empty_acc() {
  if constexpr (info(O).empty == EmptyRule::one)
    return OpFor<O, T>::type::identity();
  else
    return typename OpFor<O, T>::type::Acc{};
}

// Result i of an array of results (a Buffer element, a per-row / per-column output): result_of, or with
// `divide` (ReduceArgs::divide: mean, computed as sum) the double mean_value(result, count).
template <Op O, class T>
TANDEM_HD void store_result(typename OpFor<O, T>::type::Acc acc, Index count, bool divide, void* out, Index i) {
  const auto r = result_of<O, T>(acc);
  if constexpr (info(O).result == ResultKind::sum) {
    if (divide) {
      const double m = mean_value(r, double(count));
      memcpy(static_cast<char*>(out) + i * Index(sizeof m), &m, sizeof m);
      return;
    }
    const sum_result_t<T> v = sum_value<T>(r);
    memcpy(static_cast<char*>(out) + i * Index(sizeof v), &v, sizeof v);
    return;
  }
  memcpy(static_cast<char*>(out) + i * Index(sizeof r), &r, sizeof r);
}

// f(std::integral_constant<Op, O>{}) for the op the backends run, `op` (host code; mean is never passed as
// an op: it arrives as sum, with ReduceArgs / MatrixReduceArgs::divide where the backend stores the result).
template <class F>
decltype(auto) visit_backend_op(Op op, F&& f) {
  return visit_op(op, [&]<Op O>(std::integral_constant<Op, O> c) -> decltype(f(std::integral_constant<Op, Op::sum>{})) {
    if constexpr (is_backend_op(O))
      return f(c);
    else
      throw Error(std::string("tandem: op ") + to_string(op) +
                  " has no backend kernel (the engine passes it as its computed_as op)");
  });
}

}  // namespace tandem::detail
