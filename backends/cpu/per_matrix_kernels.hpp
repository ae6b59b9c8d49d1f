// Per-row and per-column reductions on the CPU (oneTBB), with the operators of
// common/reduce_ops.hpp, so NaN, signed-zero and first-index rules are those of the vector ops.
//   per row     rows in parallel (about kLeafElements elements a task). Narrow rows
//               (cpu_narrow::narrow_row, up to 1024 elements): one short loop each (backends/cpu/narrow.hpp;
//               float sums the row's canonical sum in both modes). Longer rows: each row one leaf of the
//               vector kernels (cpu_reduce_acc_each: lane sums, SIMD min/max, arg leaves); rows longer than
//               kLongRow are each reduced on all cores.
//   per column  rows split in parallel, the same way on every call; a leaf walks its rows and accumulates
//               each row into one accumulator per column (contiguous, so the loop over columns
//               vectorises; for up to 64 columns, cpu_narrow::narrow_columns, narrow.hpp's column_acc
//               reads groups of rows as one run of lanes); leaves combine column by column in a fixed tree.
//               argmin / argmax keep a column's best value and index as two arrays (column_arg). Wide
//               matrices of exact ops (min, max, arg-reductions, integer sums and products; fewer than
//               kWideGrain rows a task) go by blocks of columns instead, each over every row.
//   deterministic sums (sum-like ops) of floats: each row's or column's canonical sum
//               (common/canonical.hpp). Per
//               column, a task takes one 4096-row chunk of a block of columns and keeps the 32 lanes of
//               every column of the block, so rows are still read contiguously.
//
// The kernels, as templates: per_matrix.cpp sends each call to the part of its element type
// (common/dispatch.hpp's type_part), and per_matrix_part<P>.cpp instantiates part P, so that the parts
// compile in parallel.
#pragma once

#include <tbb/blocked_range.h>
#include <tbb/blocked_range2d.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "backends/cpu/narrow.hpp"
#include "backends/cpu/per_matrix.hpp"
#include "common/canonical.hpp"
#include "common/dispatch.hpp"
#include "common/host_reduce.hpp"
#include "common/reduce_ops.hpp"
#include "common/vector.hpp"

namespace tandem::detail::cpu_per_matrix {

inline constexpr std::int64_t kLeafElements = 1 << 14;  // about this many elements per task
inline constexpr std::int64_t kLongRow = 1 << 16;       // rows at least this long are reduced on all cores
inline constexpr std::int64_t kColumnBlock = 64;        // columns per task of the deterministic column sums
inline constexpr std::int64_t kWideGrain = 16;          // fewer rows per task than this: exact ops split by columns
inline constexpr std::int64_t kWideBlock = 1024;        // columns per task then, at most
inline constexpr std::int64_t kWideMinBlock = 64;       // and at least

// Result i of vector length `len` from its accumulator, as MatrixReduceArgs::out holds it.
template <Op O, class T>
void store(const MatrixReduceArgs& a, typename OpFor<O, T>::type::Acc acc, std::int64_t len, void* out,
           std::int64_t i) {
  store_result<O, T>(acc, len, a.divide, out, i);
}

// The canonical order's value of Op (sum, sumsq, prod of floats) over x[0], x[stride], ..., x[(n-1) * stride] on
// the calling thread.
template <class Op, class T = typename Op::Acc>
T canonical_vector_sum(const typename Op::In* x, std::int64_t n, std::int64_t stride) {
  using namespace canonical;
  if (n == 0) return T(0);
  if (n <= kChunk) return chunk_sum_of<Op>(x, n, stride);  // one chunk: its value is the sum (no allocation)
  std::vector<T> values(chunk_count(n));
  for (std::int64_t c = 0; c < std::int64_t(values.size()); ++c)
    values[c] = chunk_sum_of<Op>(x + c * kChunk * stride, std::min(kChunk, n - c * kChunk), stride);
  return sum_of_chunk_values<T, PartialOp<Op>>(std::move(values));
}

template <Op O, class T>
void per_row(const MatrixReduceArgs& a, const T* x, void* out) {
  using Operator = typename OpFor<O, T>::type;
  using Acc = typename Operator::Acc;
  const std::int64_t rows = a.rows, cols = a.cols, ld = a.ld;
  const std::int64_t grain = std::max<std::int64_t>(1, kLeafElements / std::max<std::int64_t>(cols, 1));
  if (cpu_narrow::narrow_row<O, T>(cols)) {  // (deterministic mode: a narrow row's float sums are canonical)
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, rows, grain), [&](const tbb::blocked_range<std::int64_t>& r) {
      // Stored kBlock at a time, apart from the rows' loops: a mean's divisions vectorise (one at a time
      // after each row, per-row float means took 12% longer).
      constexpr std::int64_t kBlock = 256;
      Acc accs[kBlock];
      for (std::int64_t i0 = r.begin(); i0 < r.end(); i0 += kBlock) {
        const std::int64_t n = std::min(kBlock, r.end() - i0);
        for (std::int64_t i = 0; i < n; ++i) accs[i] = cpu_narrow::row_acc<O>(x + (i0 + i) * ld, cols);
        for (std::int64_t i = 0; i < n; ++i) store<O, T>(a, accs[i], cols, out, i0 + i);
      }
    });
    return;
  }
  if constexpr (canonical_order<Operator>) {
    if (a.deterministic) {
      tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, rows, grain),
                        [&](const tbb::blocked_range<std::int64_t>& r) {
                          for (std::int64_t i = r.begin(); i < r.end(); ++i)
                            store<O, T>(a, canonical_vector_sum<Operator>(x + i * ld, cols, 1), cols, out, i);
                        });
      return;
    }
  }
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, rows, grain), [&](const tbb::blocked_range<std::int64_t>& r) {
    Vector<Acc> accs(std::size_t(r.size()));
    if (cols >= kLongRow)
      for (std::int64_t i = r.begin(); i < r.end(); ++i)
        cpu_reduce_acc(a.op, a.dtype, x + i * ld, cols, 1, &accs[i - r.begin()]);
    else
      cpu_reduce_acc_each(a.op, a.dtype, x + r.begin() * ld, std::int64_t(r.size()), ld, cols, 1, accs.data());
    for (std::int64_t i = r.begin(); i < r.end(); ++i) store<O, T>(a, accs[i - r.begin()], cols, out, i);
  });
}

// argmin / argmax of every column over rows [begin, end), begin < end, into `acc` (combined with what it
// holds). The rows come in order, so a later element replaces the column's best only when it comes strictly
// before it (ArgOp::before without the index tie): smaller (larger), the first NaN, or -0.0 after +0.0
// (+0.0 after -0.0). Values and indices are kept as two arrays, a branch-free select per element, which
// runs several times faster than combining ArgAcc structs.
template <Op O, class T, class Acc>
void column_arg(const T* x, std::int64_t begin, std::int64_t end, std::int64_t cols, std::int64_t ld, Acc* acc) {
  using Operator = typename OpFor<O, T>::type;
  using Value = typename Operator::Value;
  using V = std::conditional_t<std::is_same_v<Value, bool>, unsigned char, Value>;  // (no std::vector<bool>)
  constexpr bool kMax = O == Op::argmax;
  std::vector<V> best(static_cast<std::size_t>(cols));
  std::vector<Index> at(static_cast<std::size_t>(cols), Index(begin));
  for (std::int64_t j = 0; j < cols; ++j) best[j] = static_cast<V>(x[begin * ld + j]);
  V* __restrict__ b = best.data();
  Index* __restrict__ k = at.data();
  for (std::int64_t i = begin + 1; i < end; ++i) {
    const T* __restrict__ row = x + i * ld;
    for (std::int64_t j = 0; j < cols; ++j) {
      const V v = static_cast<V>(row[j]), c = b[j];
      bool take = kMax ? v > c : v < c;
      if constexpr (std::is_floating_point_v<V>)
        take = take || (v != v && c == c) ||
               (v == c && std::signbit(v) != std::signbit(c) && (kMax ? !std::signbit(v) : std::signbit(v)));
      b[j] = take ? v : c;
      k[j] = take ? Index(i) : k[j];
    }
  }
  for (std::int64_t j = 0; j < cols; ++j) acc[j] = Operator::combine(acc[j], Acc{static_cast<Value>(b[j]), k[j]});
}

// Rows [begin, end) of x (cols columns; row i at x + i * ld) into one accumulator per column, acc[j]:
// argmin / argmax by column_arg, any other op by its operator, element by element (the loop over the
// columns vectorises).
template <Op O, class T, class Acc>
void rows_into_columns(const T* x, std::int64_t begin, std::int64_t end, std::int64_t cols, std::int64_t ld,
                       Acc* __restrict__ acc) {
  using Operator = typename OpFor<O, T>::type;
  if constexpr (is_arg(O)) {
    if (begin < end) column_arg<O>(x, begin, end, cols, ld, acc);
  } else {
    for (std::int64_t i = begin; i < end; ++i) {
      const T* __restrict__ row = x + i * ld;
      for (std::int64_t j = 0; j < cols; ++j) acc[j] = Operator::combine(acc[j], Operator::load(row[j], i));
    }
  }
}

template <Op O, class T>
void per_column(const MatrixReduceArgs& a, const T* x, void* out) {
  using Operator = typename OpFor<O, T>::type;
  using Acc = typename Operator::Acc;
  const std::int64_t rows = a.rows, cols = a.cols, ld = a.ld;
  const std::int64_t grain = std::max<std::int64_t>(1, kLeafElements / cols);
  // Wide matrices of an exact op (any order gives the same result: min, max, argmin, argmax, and the sums,
  // sums of squares and products of integers): blocks of columns in parallel, each over every row, with no
  // accumulators to join (split by rows, each task would take a row or two and copy a whole row of
  // accumulators).
  if constexpr (is_arg(O) || order_free<Operator>) {
    if (grain < kWideGrain && rows > 0) {
      // Blocks of up to kWideBlock columns, at least four per thread where the matrix is wide enough.
      const std::int64_t threads = tbb::this_task_arena::max_concurrency();
      const std::int64_t block = std::clamp<std::int64_t>(cols / (4 * threads), kWideMinBlock, kWideBlock);
      tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, cols, block), [&](const auto& c) {
        const std::int64_t c0 = c.begin(), width = std::int64_t(c.size());
        Vector<Acc> acc(std::size_t(width), Operator::identity());
        rows_into_columns<O>(x + c0, 0, rows, width, ld, acc.data());
        for (std::int64_t j = 0; j < width; ++j) store<O, T>(a, acc[j], rows, out, c0 + j);
      });
      return;
    }
  }
  // Rows [r.begin(), r.end()) into one accumulator per column.
  auto leaf = [&](const tbb::blocked_range<std::int64_t>& r, Vector<Acc> acc) {
    if (cpu_narrow::narrow_columns<O, T>(cols, ld)) {
      cpu_narrow::column_acc<O>(x + r.begin() * ld, r.begin(), std::int64_t(r.size()), cols, ld, acc.data());
      return acc;
    }
    rows_into_columns<O>(x, r.begin(), r.end(), cols, ld, acc.data());
    return acc;
  };
  auto join = [](Vector<Acc> a0, const Vector<Acc>& a1) {
    for (std::size_t j = 0; j < a0.size(); ++j) a0[j] = Operator::combine(a0[j], a1[j]);
    return a0;
  };
  // A fixed split of the rows and a fixed tree of joins: the same bits on every call.
  const Vector<Acc> acc = tbb::parallel_deterministic_reduce(tbb::blocked_range<std::int64_t>(0, rows, grain),
                                                             Vector<Acc>(std::size_t(cols), Operator::identity()), leaf,
                                                             join, tbb::simple_partitioner());
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, cols, 4096), [&](const tbb::blocked_range<std::int64_t>& r) {
    for (std::int64_t j = r.begin(); j < r.end(); ++j) store<O, T>(a, acc[j], rows, out, j);
  });
}

// Deterministic per-column results of an op O in the canonical order (sum, sumsq, prod of floats):
// canonical.hpp's steps 1-3 for every (chunk of rows, block of columns), then step 4 per column.
template <Op O, class In>
void canonical_per_column(const MatrixReduceArgs& a, const In* x, void* out) {
  using namespace canonical;
  using Operator = typename OpFor<O, In>::type;
  using T = compute_t<In>;
  const std::int64_t rows = a.rows, cols = a.cols, ld = a.ld, chunks = chunk_count(rows);
  std::vector<T> values(std::size_t(chunks * cols));  // values[c * cols + j]: chunk c of column j
  tbb::parallel_for(tbb::blocked_range2d<std::int64_t>(0, chunks, 1, 0, cols, kColumnBlock),
                    [&](const tbb::blocked_range2d<std::int64_t>& r) {
                      for (std::int64_t c = r.rows().begin(); c < r.rows().end(); ++c)
                        for (std::int64_t j0 = r.cols().begin(); j0 < r.cols().end(); j0 += kColumnBlock) {
                          const std::int64_t w = std::min(kColumnBlock, r.cols().end() - j0);
                          const std::int64_t len = std::min(kChunk, rows - c * kChunk);
                          T lane[kLanes][kColumnBlock];
                          for (auto& l : lane) std::fill_n(l, kColumnBlock, Operator::identity());  // -0.0 (prod: 1)
                          for (std::int64_t k = 0; k < len; ++k) {
                            const In* row = x + (c * kChunk + k) * ld + j0;
                            T* l = lane[k % kLanes];
                            for (std::int64_t j = 0; j < w; ++j)
                              l[j] = Operator::combine(l[j], Operator::load(row[j], 0));
                          }
                          for (std::int64_t s = kLanes / 2; s > 0; s /= 2)
                            for (std::int64_t q = 0; q < s; ++q)
                              for (std::int64_t j = 0; j < w; ++j)
                                lane[q][j] = Operator::combine(lane[q][j], lane[q + s][j]);
                          for (std::int64_t j = 0; j < w; ++j) values[std::size_t(c * cols + j0 + j)] = lane[0][j];
                        }
                    });
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, cols, 256), [&](const tbb::blocked_range<std::int64_t>& r) {
    std::vector<T> column(static_cast<std::size_t>(chunks));
    for (std::int64_t j = r.begin(); j < r.end(); ++j) {
      for (std::int64_t c = 0; c < chunks; ++c) column[c] = values[std::size_t(c * cols + j)];
      store<O, In>(a, chunks == 1 ? column[0] : sum_of_chunk_values<T, PartialOp<Operator>>(column), rows, out, j);
    }
  });
}

// cpu_reduce_matrix for the element types of part P (declared in per_matrix.hpp).
template <int P>
void reduce_matrix_part(const MatrixReduceArgs& a, void* out) {
  visit_part<P>(a.dtype, [&]<class T>(std::type_identity<T>) {
    const T* x = static_cast<const T*>(a.data);
    const std::int64_t len = a.per == Per::row ? a.cols : a.rows, count = a.per == Per::row ? a.rows : a.cols;
    visit_backend_op(a.op, [&]<Op O>(std::integral_constant<Op, O>) {
      if (len == 0) {  // the op's EmptyRule (the engine rejects an empty row of the others): 0 or 1
        for (std::int64_t i = 0; i < count; ++i) store_result<O, T>(empty_acc<O, T>(), 0, false, out, i);
        return;
      }
      if constexpr (canonical_order<typename OpFor<O, T>::type>)
        if (a.deterministic && a.per == Per::col) return canonical_per_column<O>(a, x, out);
      if (a.per == Per::row)
        per_row<O, T>(a, x, out);
      else
        per_column<O, T>(a, x, out);
    });
  });
}

}  // namespace tandem::detail::cpu_per_matrix
