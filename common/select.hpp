// The elementwise pass of SelectArgs (common/backend.hpp), written once for the host (common/select.cpp)
// and the CUDA backend (backends/cuda/select.cu): where= replaces masked elements by the op's identity,
// and var / std take each element's deviation from its mean. One element is one conversion and at most
// one rounded subtraction, so every backend gives the same bits.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "common/backend.hpp"
#include "common/dispatch.hpp"
#include "common/reduce_ops.hpp"

namespace tandem::detail {

// Out(x), less Out(shift) where a shift is given (float and double outputs only: the deviations).
template <class T, class Out>
TANDEM_HD Out select_value(T x, bool keep, const double* shift, Index shift_index, Out fill) {
  if (!keep) return fill;
  if constexpr (std::is_same_v<Out, float> || std::is_same_v<Out, double>) {
    const Out v = static_cast<Out>(static_cast<compute_t<T>>(x));
    return shift ? Out(v - Out(shift[shift_index])) : v;
  } else {
    return Out(x);
  }
}

// The index of element (r, c)'s shift.
TANDEM_HD Index shift_index(SelectArgs::Shift kind, Index r, Index c) {
  return kind == SelectArgs::Shift::row ? r : kind == SelectArgs::Shift::col ? c : 0;
}

// f(std::type_identity<T>{}, std::type_identity<Out>{}) for args' input and output types: Out is T (a
// masked copy, without shift), var_result_t<T> or double; any other pair is a tandem::Error.
template <class F>
void visit_select(const SelectArgs& a, F&& f) {
  visit(a.dtype, [&]<class T>(std::type_identity<T> t) {
    if (a.out_dtype == a.dtype && a.shift == nullptr) return f(t, t);
    if (a.out_dtype == dtype_of<var_result_t<T>>) return f(t, std::type_identity<var_result_t<T>>{});
    if (a.out_dtype == Dtype::f64) return f(t, std::type_identity<double>{});
    throw Error(std::string("tandem: an elementwise pass from ") + to_string(a.dtype) + " to " +
                to_string(a.out_dtype) + " (a bug in tandem; please report it)");
  });
}

template <class Out>
Out fill_of(const SelectArgs& a) {
  Out v;
  std::memcpy(&v, a.fill, sizeof v);
  return v;
}

// The pass on the host, on oneTBB's threads (common/select.cpp): the CPU backend's.
void host_select(const SelectArgs& args);

}  // namespace tandem::detail
