// How a reduction over some axes of an array runs: NumPy's axis= rules, and the array's memory seen as
// one matrix reduced per row or per column (tandem's per-row / per-column reductions).
#pragma once

#include <cstdint>
#include <vector>

#include "python/arrays.hpp"

namespace tandem_python {

// The axes `axis` names as one flag per dimension: None all of them, an int one, a tuple several
// (negative axes count from the end), by NumPy's rules: an axis out of range or named twice is a
// ValueError (out of range: tandem.AxisError, also NumPy's AxisError), anything but None / int / tuple of
// ints a TypeError. `tuples`: whether a tuple is accepted (argmin and argmax take one axis).
std::vector<bool> reduced_axes(const py::object& axis, int ndim, bool tuples);
// Raises tandem.AxisError with `message` (the class python/module.cpp makes and stores in axis_error_type).
[[noreturn]] void raise_axis_error(const std::string& message);
extern PyObject* axis_error_type;

// A reduction over some axes as per-row or per-column results of one row-major matrix (rows x cols,
// row stride ld) in a's memory, the results in the C order of the kept axes.
struct MatrixPlan {
  tandem::Per per = tandem::Per::row;
  std::int64_t rows = 0, cols = 0, ld = 0;
};
// The plan for reducing `reduced` axes of `a` in place, or false when its memory does not allow one
// (the reduced axes do not form one strided run between the kept ones, or no dimension has unit stride).
bool plan_matrix(const Array& a, const std::vector<bool>& reduced, MatrixPlan& plan);
// The order of dimensions with the kept axes first and the reduced ones last (a copy in this order
// always has a plan: one row per result).
std::vector<std::int64_t> reduced_last(const std::vector<bool>& reduced);
// The result's shape: a's shape without the reduced axes, or with 1 in their place (keepdims).
std::vector<std::int64_t> result_shape(const Array& a, const std::vector<bool>& reduced, bool keepdims);
// The number of results (the kept axes' elements) and the elements each one reduces.
std::int64_t kept_size(const Array& a, const std::vector<bool>& reduced);
std::int64_t reduced_size(const Array& a, const std::vector<bool>& reduced);
// Elements [begin, begin + count) of host array `a` in C order, copied one after the other into dst (a's
// element type): a piece of an array whose memory no view expresses (a broadcast that is not one run).
void copy_elements(const Array& a, std::int64_t begin, std::int64_t count, void* dst);
// Broadcasts kept broadcast: the index that takes a's repeated dimensions (stride 0, length > 1) as length
// 1 (0:1) and all of the others; y (an array of library lib whose shape broadcasts to `shape`) as a view of
// that shape (broadcast_to, PyTorch's expand); and a's elements cast to d by its library, of a broadcast only
// its distinct elements, broadcast again (the same values, no copy of the repeats).
py::tuple first_of_repeats(const Array& a);
// Whether each dimension of y (an array of library lib, NumPy, CuPy or PyTorch) has stride 0.
std::vector<bool> zero_strides(const py::object& y, Lib lib);
py::object broadcast_view(const py::object& y, Lib lib, const std::vector<std::int64_t>& shape);
py::object cast_keeping_repeats(const Array& a, tandem::Dtype d);
// NumPy's text for a shape: "(3, 4)", "(5,)", "()".
std::string shape_text(const std::vector<std::int64_t>& shape);

}  // namespace tandem_python
