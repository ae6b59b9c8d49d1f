// From a run-time Dtype to compile-time code: visit(dtype, f) calls f(std::type_identity<T>{}) with the
// element type T whose dtype_traits<T>::id is dtype, for every T of a type_list (element_types by
// default). Every per-type switch of the engine and the backends goes through it, so a new row of the
// dtype table (include/tandem/dtype.hpp) reaches them all.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "tandem/dtype.hpp"
#include "tandem/error.hpp"
#include "tandem/types.hpp"

namespace tandem::detail {

template <class F, class First, class... Rest>
decltype(auto) visit(Dtype d, F&& f, type_list<First, Rest...>) {
  if (d == dtype_of<First>) return std::forward<F>(f)(std::type_identity<First>{});
  if constexpr (sizeof...(Rest) > 0) {
    return visit(d, std::forward<F>(f), type_list<Rest...>{});
  } else {
    throw type_error(std::string("tandem: element type ") + to_string(d) + " is not supported here");
  }
}

template <class F>
decltype(auto) visit(Dtype d, F&& f) {
  return visit(d, std::forward<F>(f), element_types{});
}

// The element types matmul takes (include/tandem/dtype.hpp).
using matmul_types = matmul_element_types;

// ---- One dispatch's instantiations split over several files ------------------------------------------
// A dispatch over every element type and op instantiates many kernels; in one translation unit they compile
// one after the other. Split by type, they compile in parallel: part P holds the element types whose
// position in element_types is P modulo kTypeParts (a new row of the dtype table lands in a part by its
// position). The caller routes a call to part type_part(dtype), whose code instantiates only its own types
// through visit_part<P> (in a file of its own per part, e.g. backends/cpu/per_matrix_part0.cpp).
inline constexpr int kTypeParts = 4;

template <class T, class... Ts>
consteval int position_in(type_list<Ts...>) {
  constexpr bool same[] = {std::is_same_v<T, Ts>...};
  for (int i = 0; i < int(sizeof...(Ts)); ++i)
    if (same[i]) return i;
  throw "common/dispatch.hpp: not an element type";
}
template <class T>
inline constexpr int kTypePart = position_in<T>(element_types{}) % kTypeParts;

inline int type_part(Dtype d) {
  return visit(d, []<class T>(std::type_identity<T>) { return kTypePart<T>; });
}

// visit(d, f) for the types of part P; a type of another part is a tandem::Error (a routing mistake).
template <int P, class F>
void visit_part(Dtype d, F&& f) {
  visit(d, [&]<class T>(std::type_identity<T> t) {
    if constexpr (kTypePart<T> == P)
      f(t);
    else
      throw Error(std::string("tandem: internal: element type ") + to_string(d) + " routed to part " +
                  std::to_string(P) + " of a split dispatch, not to its own part " + std::to_string(kTypePart<T>));
  });
}

// f(std::integral_constant<int, P>{}) for P = type_part(d): the caller's route to the code of d's part, e.g.
// on_type_part(d, [&](auto p) { Part<decltype(p)::value>::reduce(...); }).
template <class F>
void on_type_part(Dtype d, F&& f) {
  const int part = type_part(d);
  [&]<std::size_t... P>(std::index_sequence<P...>) {
    (void)((part == int(P) ? (f(std::integral_constant<int, int(P)>{}), true) : false) || ...);
  }
  (std::make_index_sequence<kTypeParts>{});
}

// Whether A and B of these types make a mixed product (two different types of float, bfloat16 and half:
// is_mixed_matmul_v at run time).
constexpr bool is_mixed_matmul(Dtype a, Dtype b) {
  auto floating = [](Dtype d) { return d == Dtype::f32 || d == Dtype::bf16 || d == Dtype::f16; };
  return a != b && floating(a) && floating(b);
}

}  // namespace tandem::detail
