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

namespace tandem_test {

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
inline std::string show(std::size_t v) { return std::to_string(v); }  // an index (argmin, argmax)

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

// f.template operator()<T>() with T the element type d names, e.g.
//   with_dtype(d, [&]<class T>() { return run<T>(...); });
// Every element type is instantiated, so f must compile for each (use if constexpr for the others).
template <class F>
decltype(auto) with_dtype(tandem::Dtype d, F&& f) {
  return detail::with_dtype(d, f, tandem::element_types{});
}

}  // namespace tandem_test
