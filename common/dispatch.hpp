// From a run-time Dtype to compile-time code: visit(dtype, f) calls f(std::type_identity<T>{}) with the
// element type T whose dtype_traits<T>::id is dtype, for every T of a type_list (element_types by
// default). Every per-type switch of the engine and the backends goes through it, so a new row of the
// dtype table (include/tandem/dtype.hpp) reaches them all.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "tandem/dtype.hpp"
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

}  // namespace tandem::detail
