// The operands of a matrix product as stored, and the same operands packed: what a backend needs to make
// a dense copy of A or B (the 16-bit inputs widened to float on the CPU and by the CUDA stages that take
// floats) and to describe the problem on the copies. Both backends use it, so that a copy's leading
// dimension and batch stride are never the caller's (a copy is ld = cols, its entries rows * cols apart).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "common/backend.hpp"

namespace tandem::detail {

// One operand as stored: `count` matrices of rows x cols, row-major with leading dimension ld, entry e at
// e * stride elements (stride 0: one matrix for every entry of the batch, count 1).
struct OperandLayout {
  std::int64_t rows, cols, ld, count, stride;

  std::int64_t elements() const { return rows * cols * count; }  // of a packed copy
  // The same operand packed: ld = cols, entries rows * cols apart (one entry stays one entry).
  OperandLayout packed() const { return {rows, cols, cols, count, count > 1 ? rows * cols : 0}; }
};

// A as stored (op(A) is m x k: A is m x k, or k x m with trans_a) and B likewise (op(B) is k x n).
inline OperandLayout operand_a(const MatmulArgs& g) {
  return {g.trans_a ? g.k : g.m, g.trans_a ? g.m : g.k, g.lda, g.stride_a == 0 ? 1 : g.batch, g.stride_a};
}
inline OperandLayout operand_b(const MatmulArgs& g) {
  return {g.trans_b ? g.n : g.k, g.trans_b ? g.k : g.n, g.ldb, g.stride_b == 0 ? 1 : g.batch, g.stride_b};
}

// g on packed copies of A and B (a, b: their first elements, laid out as operand_x(g).packed()), in
// `dtype` (the copies' element type: float for widened 16-bit inputs). C and everything else stay g's.
inline MatmulArgs on_packed_operands(const MatmulArgs& g, Dtype dtype, const void* a, const void* b) {
  MatmulArgs f = g;
  const OperandLayout pa = operand_a(g).packed(), pb = operand_b(g).packed();
  f.dtype = dtype;
  f.mixed_b.reset();
  f.a = a, f.lda = pa.ld, f.stride_a = pa.stride;
  f.b = b, f.ldb = pb.ld, f.stride_b = pb.stride;
  return f;
}

// A mixed product (g.mixed(): A and B two of float, bfloat16 and half) as the float product it defines: each
// 16-bit operand replaced by its packed float copy (a, b: the copies' first elements, laid out as
// operand_x(g).packed()), a float operand kept as stored (its copy argument is ignored).
inline MatmulArgs as_float_product(const MatmulArgs& g, const void* a, const void* b) {
  MatmulArgs f = g;
  f.dtype = Dtype::f32;
  f.mixed_b.reset();
  if (g.dtype != Dtype::f32) {
    const OperandLayout pa = operand_a(g).packed();
    f.a = a, f.lda = pa.ld, f.stride_a = pa.stride;
  }
  if (g.b_type() != Dtype::f32) {
    const OperandLayout pb = operand_b(g).packed();
    f.b = b, f.ldb = pb.ld, f.stride_b = pb.stride;
  }
  return f;
}

// Whether the elements of a strided layout are apart, no two of its index tuples at one address: its dimensions
// ({stride, count}) ordered by stride, each one's stride past the elements of all those before it (dimensions may
// interleave, as a permuted NumPy array's do). The rule for a product's C: the engine's check (validate.cpp) and
// the Python module's choice to compute out= apart and copy it (python/matmul.cpp). I: the callers' index type
// (spans that fit it: the callers check them first).
template <class I, std::size_t N>
constexpr bool elements_apart(std::array<std::pair<I, I>, N> dims) {
  std::sort(dims.begin(), dims.end());
  I span = 1;  // (elements from the first to the last of the dimensions so far)
  for (const auto& [stride, count] : dims) {
    if (count <= 1) continue;
    if (stride < span) return false;
    span += (count - 1) * stride;
  }
  return true;
}

}  // namespace tandem::detail
