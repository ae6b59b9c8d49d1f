// The element types tandem works on: one row per type in the table below. Everything that depends on
// the set of types (names, sizes, sum result types, the engine's dispatch, CLI and benchmark names)
// reads it from here; docs/ARCHITECTURE.md says what else a new type needs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "tandem/export.hpp"
#include "tandem/float16.hpp"

namespace tandem {

enum class Dtype : std::uint8_t { i32, i64, f32, f64, bf16, f16, i8, i16, u8, u16, u32, u64, b8 };

// ---- The table ------------------------------------------------------------------------------------
// dtype_traits<T>: T's Dtype, its name (one spelling everywhere: errors, CLI, benchmarks, charts), the
// name the array libraries give it (NumPy, ml_dtypes, PyTorch, CuPy: the Python module's type maps), the
// type sum() returns, the type values are computed in (min / max results, matmul's C and accumulator),
// and whether matmul takes it. Sums of signed integers return int64_t, of unsigned integers
// uint64_t (wrapping modulo 2^64). The 16-bit storage
// types (tandem::bfloat16, tandem::half; include/tandem/float16.hpp) compute in float: their sums, mins
// and maxes are floats (exact conversions), and matmul multiplies them into a float C.
template <class T>
struct dtype_traits;  // not defined: T is not a tandem element type

template <>
struct dtype_traits<std::int32_t> {
  using compute_type = std::int32_t;
  static constexpr Dtype id = Dtype::i32;
  static constexpr const char* name = "int32";
  static constexpr const char* array_name = "int32";
  using sum_type = std::int64_t;
  static constexpr bool matmul = false;
};
template <>
struct dtype_traits<std::int64_t> {
  using compute_type = std::int64_t;
  static constexpr Dtype id = Dtype::i64;
  static constexpr const char* name = "int64";
  static constexpr const char* array_name = "int64";
  using sum_type = std::int64_t;
  static constexpr bool matmul = false;
};
template <>
struct dtype_traits<float> {
  using compute_type = float;
  static constexpr Dtype id = Dtype::f32;
  static constexpr const char* name = "float";
  static constexpr const char* array_name = "float32";
  using sum_type = float;
  static constexpr bool matmul = true;
};
template <>
struct dtype_traits<double> {
  using compute_type = double;
  static constexpr Dtype id = Dtype::f64;
  static constexpr const char* name = "double";
  static constexpr const char* array_name = "float64";
  using sum_type = double;
  static constexpr bool matmul = true;
};

template <>
struct dtype_traits<bfloat16> {
  static constexpr Dtype id = Dtype::bf16;
  static constexpr const char* name = "bfloat16";
  static constexpr const char* array_name = "bfloat16";
  using sum_type = float;
  using compute_type = float;
  static constexpr bool matmul = true;
};
template <>
struct dtype_traits<half> {
  static constexpr Dtype id = Dtype::f16;
  static constexpr const char* name = "float16";
  static constexpr const char* array_name = "float16";
  using sum_type = float;
  using compute_type = float;
  static constexpr bool matmul = true;
};

// The narrow and unsigned integers: NumPy's sums of signed integers are int64, of unsigned integers uint64
// (both wrapping modulo 2^64); min / max in the type itself.
template <class T, Dtype Id, const char* Name, class Sum>
struct integer_traits {
  using compute_type = T;
  static constexpr Dtype id = Id;
  static constexpr const char* name = Name;
  static constexpr const char* array_name = Name;
  using sum_type = Sum;
  static constexpr bool matmul = false;
};
namespace detail {
inline constexpr char kInt8[] = "int8", kInt16[] = "int16", kUint8[] = "uint8", kUint16[] = "uint16",
                      kUint32[] = "uint32", kUint64[] = "uint64", kBool[] = "bool";
}  // namespace detail
template <>
struct dtype_traits<std::int8_t> : integer_traits<std::int8_t, Dtype::i8, detail::kInt8, std::int64_t> {};
template <>
struct dtype_traits<std::int16_t> : integer_traits<std::int16_t, Dtype::i16, detail::kInt16, std::int64_t> {};
template <>
struct dtype_traits<std::uint8_t> : integer_traits<std::uint8_t, Dtype::u8, detail::kUint8, std::uint64_t> {};
template <>
struct dtype_traits<std::uint16_t> : integer_traits<std::uint16_t, Dtype::u16, detail::kUint16, std::uint64_t> {};
template <>
struct dtype_traits<std::uint32_t> : integer_traits<std::uint32_t, Dtype::u32, detail::kUint32, std::uint64_t> {};
template <>
struct dtype_traits<std::uint64_t> : integer_traits<std::uint64_t, Dtype::u64, detail::kUint64, std::uint64_t> {};
// bool, one byte of 0 or 1 (NumPy's and PyTorch's bool): sum counts the true elements (int64, as NumPy's),
// min / max are bool (all / any), mean the fraction of true ones; argmin / argmax the first false / true.
template <>
struct dtype_traits<bool> : integer_traits<bool, Dtype::b8, detail::kBool, std::int64_t> {};

template <class... Ts>
struct type_list {};
// Every element type, in Dtype order.
using element_types = type_list<std::int32_t, std::int64_t, float, double, bfloat16, half, std::int8_t, std::int16_t,
                                std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t, bool>;

// ---- Derived from the table -----------------------------------------------------------------------

namespace detail {
// filter_types<Keep, type_list<Ts...>>::type: the Ts whose Keep<T>::value is true, in order.
template <template <class> class Keep, class Rest, class Kept = type_list<>>
struct filter_types;
template <template <class> class Keep, class... Kept>
struct filter_types<Keep, type_list<>, type_list<Kept...>> {
  using type = type_list<Kept...>;
};
template <template <class> class Keep, class T, class... Rest, class... Kept>
struct filter_types<Keep, type_list<T, Rest...>, type_list<Kept...>> {
  using type =
      typename filter_types<Keep, type_list<Rest...>,
                            std::conditional_t<Keep<T>::value, type_list<Kept..., T>, type_list<Kept...>>>::type;
};
template <class T>
struct takes_matmul : std::bool_constant<dtype_traits<T>::matmul> {};
}  // namespace detail

// The element types matmul takes (dtype_traits<T>::matmul), in Dtype order.
using matmul_element_types = typename detail::filter_types<detail::takes_matmul, element_types>::type;

template <class T>
concept Element = requires {
  dtype_traits<std::remove_cv_t<T>>::id;
};

template <Element T>
inline constexpr Dtype dtype_of = dtype_traits<std::remove_cv_t<T>>::id;

template <class T>
inline constexpr bool is_reduce_type_v = Element<T>;
template <class T>
inline constexpr bool is_matmul_type_v = [] {
  if constexpr (Element<T>)
    return dtype_traits<T>::matmul;
  else
    return false;
}();

// Two different element types of one matrix product: A and B any two of float, bfloat16 and half (C is
// float): the float product of the converted operands (Engine::matmul).
template <class A, class B>
inline constexpr bool is_mixed_matmul_v = [] {
  using TA = std::remove_cv_t<A>;
  using TB = std::remove_cv_t<B>;
  constexpr auto floating = []<class T>(std::type_identity<T>) {
    return std::is_same_v<T, float> || std::is_same_v<T, bfloat16> || std::is_same_v<T, half>;
  };
  return !std::is_same_v<TA, TB> && floating(std::type_identity<TA>{}) && floating(std::type_identity<TB>{});
}();

// C's type of a product of A of TA and B of TB: compute_t<TA> for one type, float for a mixed pair.
template <class TA, class TB>
using matmul_result_t = std::conditional_t<std::is_same_v<std::remove_cv_t<TA>, std::remove_cv_t<TB>>,
                                           typename dtype_traits<std::remove_cv_t<TA>>::compute_type, float>;

// The type T's values are computed in: min / max results, matmul's C. T itself, float for 16-bit types.
template <Element T>
using compute_t = typename dtype_traits<std::remove_cv_t<T>>::compute_type;

// A storage-only type (bfloat16, half): read as compute_t<T>, never computed in.
template <class T>
inline constexpr bool is_storage_type_v = [] {
  if constexpr (Element<T>)
    return !std::is_same_v<std::remove_cv_t<T>, compute_t<T>>;
  else
    return false;
}();

// Floating-point element types, the 16-bit ones included (NaN, signed zeros).
template <class T>
inline constexpr bool is_floating_v = std::is_floating_point_v<std::remove_cv_t<T>> || is_storage_type_v<T>;

// sum() of signed integers returns int64_t, of unsigned integers uint64_t (wrapping modulo 2^64:
// exact and order-independent); of floats, T; of the 16-bit storage types, float.
template <Element T>
using sum_result_t = typename dtype_traits<std::remove_cv_t<T>>::sum_type;

struct DtypeInfo {
  Dtype id;
  const char* name;
  const char* array_name;  // NumPy's, ml_dtypes', PyTorch's and CuPy's name ("float32", "bfloat16", ...)
  std::size_t size;
  bool integer;
  Dtype sum_result;
  Dtype compute;  // min / max results and matmul's C
  bool matmul;
  bool storage;      // a 16-bit storage type (computed in float)
  bool is_unsigned;  // an unsigned integer (sums as uint64)
  bool boolean;      // bool (an integer of 0 and 1 whose sums are int64)
};

namespace detail {
template <class... Ts>
constexpr auto dtype_table(type_list<Ts...>) {
  return std::array<DtypeInfo, sizeof...(Ts)>{DtypeInfo{
      dtype_traits<Ts>::id, dtype_traits<Ts>::name, dtype_traits<Ts>::array_name, sizeof(Ts), std::is_integral_v<Ts>,
      dtype_traits<typename dtype_traits<Ts>::sum_type>::id, dtype_traits<typename dtype_traits<Ts>::compute_type>::id,
      dtype_traits<Ts>::matmul, is_storage_type_v<Ts>, std::is_unsigned_v<Ts> && !std::is_same_v<Ts, bool>,
      std::is_same_v<Ts, bool>}...};
}
}  // namespace detail

// One DtypeInfo per element type, indexed by Dtype.
inline constexpr auto dtypes = detail::dtype_table(element_types{});
static_assert(
    [] {
      for (std::size_t i = 0; i < dtypes.size(); ++i)
        if (static_cast<std::size_t>(dtypes[i].id) != i) return false;
      return true;
    }(),
    "element_types must list the types in Dtype order");

constexpr const DtypeInfo& info(Dtype d) { return dtypes[static_cast<std::size_t>(d)]; }
constexpr const char* to_string(Dtype d) {
  return static_cast<std::size_t>(d) < dtypes.size() ? info(d).name : "unknown dtype";
}
constexpr std::size_t size_of(Dtype d) { return info(d).size; }

// The Dtype named `name` (as to_string spells it), or nothing.
constexpr std::optional<Dtype> parse_dtype(std::string_view name) {
  for (const DtypeInfo& d : dtypes)
    if (name == d.name) return d.id;
  return std::nullopt;
}

}  // namespace tandem
