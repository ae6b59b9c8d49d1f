// Comparing and printing values: bitwise equality, round-trip text, element type names, and calling
// a template with the element type a Dtype names.
#pragma once

#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "tandem/dtype.hpp"
#include "tandem/ops.hpp"

namespace tandem_verify {

// a and b have the same bits (NaN payloads and the sign of zero included).
template <class T>
bool same_bits(T a, T b) {
  static_assert(std::is_trivially_copyable_v<T>);
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}
// Element by element; spans of different sizes differ.
template <class T>
bool same_bits(std::span<const T> a, std::span<const T> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// A value as text that reads back to the same value: integers in full, float with 9 significant
// digits, double (and long double) with 17.
std::string show(std::int32_t v);
std::string show(std::int64_t v);
std::string show(float v);
std::string show(double v);
std::string show(long double v);
inline std::string show(std::size_t v) { return std::to_string(v); }  // an index, a uint64
inline std::string show(std::int8_t v) { return std::to_string(int(v)); }
inline std::string show(std::int16_t v) { return std::to_string(int(v)); }
inline std::string show(std::uint8_t v) { return std::to_string(unsigned(v)); }
inline std::string show(std::uint16_t v) { return std::to_string(unsigned(v)); }
inline std::string show(std::uint32_t v) { return std::to_string(v); }

// The element type's name from the dtype table (include/tandem/dtype.hpp): "int32", "float", ...
template <tandem::Element T>
constexpr const char* type_name() {
  return tandem::dtype_traits<std::remove_cv_t<T>>::name;
}

namespace detail {
template <class F, class T, class... Ts>
decltype(auto) with_dtype(tandem::Dtype d, F& f, tandem::type_list<T, Ts...>) {
  if constexpr (sizeof...(Ts) == 0)
    return f.template operator()<T>();
  else if (d == tandem::dtype_of<T>)
    return f.template operator()<T>();
  else
    return with_dtype(d, f, tandem::type_list<Ts...>{});
}
}  // namespace detail

// The distinct compute types of the element types (int32, int64, float, double): the types references
// are kept in (16-bit elements are checked as the floats they convert to), and the floating-point ones.
namespace detail {
template <class Seen, class Rest>
struct unique_types;
template <class... Seen>
struct unique_types<tandem::type_list<Seen...>, tandem::type_list<>> {
  using type = tandem::type_list<Seen...>;
};
template <class... Seen, class T, class... Rest>
struct unique_types<tandem::type_list<Seen...>, tandem::type_list<T, Rest...>> {
  using type = typename unique_types<
      std::conditional_t<(std::is_same_v<T, Seen> || ...), tandem::type_list<Seen...>, tandem::type_list<Seen..., T>>,
      tandem::type_list<Rest...>>::type;
};
template <class... Ts>
auto compute_of(tandem::type_list<Ts...>) -> tandem::type_list<tandem::compute_t<Ts>...>;
}  // namespace detail
using compute_types =
    typename detail::unique_types<tandem::type_list<>, decltype(detail::compute_of(tandem::element_types{}))>::type;
using floating_compute_types = typename tandem::detail::filter_types<std::is_floating_point, compute_types>::type;

// f.template operator()<T>() for every T of a type list (the dtype table's element_types by default), in
// the list's order: tests, CLI and fuzzers iterate the element types through it, never a list of their own.
template <class List = tandem::element_types, class F>
void for_each_type(F&& f) {
  [&]<class... Ts>(tandem::type_list<Ts...>) { (f.template operator()<Ts>(), ...); }(List{});
}

// f.template operator()<O>() for every op of the table (include/tandem/ops.hpp), in table order.
template <class F>
void for_each_op(F&& f) {
  for (tandem::Op op : tandem::all_ops)
    tandem::visit_op(op, [&]<tandem::Op O>(std::integral_constant<tandem::Op, O>) { f.template operator()<O>(); });
}

// f.template operator()<T>() with T the element type d names, e.g.
//   with_dtype(d, [&]<class T>() { return run<T>(...); });
// Every element type is instantiated, so f must compile for each (use if constexpr for the others).
template <class F>
decltype(auto) with_dtype(tandem::Dtype d, F&& f) {
  return detail::with_dtype(d, f, tandem::element_types{});
}

}  // namespace tandem_verify
