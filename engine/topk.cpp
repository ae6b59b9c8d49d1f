// Engine::topk and Engine::argsort (include/tandem/engine.hpp): host memory computed here, on the host, in front of
// the executors, for every backend; Buffers by the backend where it takes them (CUDA), else here too. Each row or
// column is a line: its elements' indices are put in order by one total order (so the result does not depend on the
// algorithm or the threads): topk selects the k first of the order with std::nth_element and sorts them, argsort
// sorts all.
//   topk, largest:  NaN first (by index), then larger values first, equal values by index;
//   topk, smallest: NaN first (by index), then smaller values first, equal values by index (argmin's rule);
//   argsort:        smaller values first, equal values by index, NaN last (NumPy's stable argsort).
// Lines run in parallel on oneTBB's threads.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "common/dispatch.hpp"
#include "common/reduce_ops.hpp"
#include "engine/extent.hpp"
#include "engine/validate.hpp"
#include "tandem/engine.hpp"

namespace tandem {

namespace {

// Line `line` of a: a row, or a column.
template <class T>
struct Line {
  const T* first;
  std::ptrdiff_t step;  // elements from one element of the line to the next
  std::size_t length;
};

template <class T>
Line<T> line_of(const detail::MatrixInput& a, Per per, std::size_t line) {
  const T* base = static_cast<const T*>(a.data);
  if (per == Per::row) return {base + line * a.ld, 1, a.cols};
  return {base + line, std::ptrdiff_t(a.ld), a.rows};
}

// The order of topk (largest or smallest) and of argsort on values v: a strict total order of the indices.
template <class V>
struct TopkOrder {
  const V* v;
  bool largest;
  bool operator()(std::int64_t i, std::int64_t j) const {
    const bool ni = detail::is_nan(v[i]), nj = detail::is_nan(v[j]);
    if (ni || nj) return ni && (!nj || i < j);
    if (v[i] != v[j]) return largest ? v[j] < v[i] : v[i] < v[j];
    return i < j;
  }
};
template <class V>
struct ArgsortOrder {
  const V* v;
  bool operator()(std::int64_t i, std::int64_t j) const {
    const bool ni = detail::is_nan(v[i]), nj = detail::is_nan(v[j]);
    if (ni || nj) return !ni || (nj && i < j);
    if (v[i] != v[j]) return v[i] < v[j];
    return i < j;
  }
};

// The values a line is ordered by: the compute type (bool as 0 and 1).
template <class T>
using Key = std::conditional_t<std::is_same_v<compute_t<T>, bool>, unsigned char, compute_t<T>>;

// f(line, values, order) for every line, in parallel: values the line's elements in the compute type, order
// the indices 0 .. length - 1 (each thread's vectors reused from line to line).
template <class T, class F>
void for_each_line(const detail::MatrixInput& a, Per per, F&& f) {
  const std::size_t lines = per == Per::row ? a.rows : a.cols;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, lines), [&](const tbb::blocked_range<std::size_t>& r) {
    std::vector<Key<T>> values;
    std::vector<std::int64_t> order;
    for (std::size_t line = r.begin(); line != r.end(); ++line) {
      const Line<T> l = line_of<T>(a, per, line);
      values.resize(l.length), order.resize(l.length);
      for (std::size_t i = 0; i < l.length; ++i) values[i] = Key<T>(compute_t<T>(l.first[std::ptrdiff_t(i) * l.step]));
      std::iota(order.begin(), order.end(), std::int64_t(0));
      f(line, l, values, order);
    }
  });
}

}  // namespace

void Engine::topk_entry(Per per, const detail::MatrixInput& a, std::size_t k, void* values, std::size_t values_size,
                        std::size_t values_ld, std::int64_t* indices, std::size_t indices_size, std::size_t indices_ld,
                        const TopkOptions& o, std::size_t values_rows, std::size_t values_cols,
                        std::size_t indices_rows, std::size_t indices_cols) const {
  detail::check_topk(per, a, k, values, values_size, values_rows, values_cols, values_ld, indices, indices_size,
                     indices_rows, indices_cols, indices_ld);
  // Result r of line `line`: row `line`, column r (Per::row); row r, column `line` (Per::col).
  auto at = [per](std::size_t line, std::size_t r, std::size_t ld) {
    return per == Per::row ? line * ld + r : r * ld + line;
  };
  detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
    auto* out = static_cast<T*>(values);
    for_each_line<T>(a, per, [&](std::size_t line, const Line<T>& l, const auto& v, std::vector<std::int64_t>& order) {
      const TopkOrder<Key<T>> before{v.data(), o.largest};
      const auto kth = order.begin() + std::ptrdiff_t(k);
      if (k < order.size()) std::nth_element(order.begin(), kth - 1, order.end(), before);
      std::sort(order.begin(), kth, before);
      for (std::size_t r = 0; r < k; ++r) {
        out[at(line, r, values_ld)] = l.first[order[r] * l.step];
        indices[at(line, r, indices_ld)] = order[r];
      }
    });
  });
}

namespace {

// A checked Buffer matrix's extent downloaded into `bytes` (empty for no elements), as host memory.
detail::MatrixInput on_host(const detail::MatrixInput& v, std::vector<unsigned char>& bytes) {
  const std::size_t e = size_of(v.dtype);
  bytes.resize(detail::matrix_extent(v.rows, v.cols, v.ld, e, "", true) * e);
  if (!bytes.empty()) v.allocation->download(v.offset * e, bytes.data(), bytes.size());
  detail::MatrixInput h = v;
  h.in_buffer = false, h.allocation = nullptr, h.offset = 0, h.buffer_size = 0;
  h.data = bytes.empty() ? nullptr : bytes.data();
  return h;
}

// `bytes` (on_host's) uploaded back into v's extent (nothing for an empty one: it may have no Buffer).
void uploaded(const detail::MatrixInput& v, const std::vector<unsigned char>& bytes) {
  if (!bytes.empty())
    const_cast<detail::Allocation*>(v.allocation)->upload(v.offset * size_of(v.dtype), bytes.data(), bytes.size());
}

}  // namespace

// Buffers: on the device where the backend takes it (CUDA, one engine), else as host memory: the input's and the
// outputs' extents downloaded (the outputs' too: their padding is written back as it was), the host topk, the
// outputs uploaded.
void Engine::topk_buffer_entry(Per per, const detail::MatrixInput& a, std::size_t k, const detail::MatrixInput& values,
                               const detail::MatrixInput& indices, const TopkOptions& o) const {
  detail::check_topk_buffers(*exec_, per, a, k, values, indices);
  if (exec_->topk(per, a, k, o.largest, values, indices)) return;
  std::vector<unsigned char> ha, hv, hi;
  const detail::MatrixInput in = on_host(a, ha), vals = on_host(values, hv), idx = on_host(indices, hi);
  topk_entry(per, in, k, const_cast<void*>(vals.data), 0, vals.ld,
             static_cast<std::int64_t*>(const_cast<void*>(idx.data)), 0, idx.ld, o, vals.rows, vals.cols, idx.rows,
             idx.cols);
  uploaded(values, hv);
  uploaded(indices, hi);
}

void Engine::argsort_buffer_entry(Per per, const detail::MatrixInput& a, const detail::MatrixInput& out) const {
  detail::check_argsort_buffers(*exec_, a, out);
  if (exec_->argsort(per, a, out)) return;
  std::vector<unsigned char> ha, ho;
  const detail::MatrixInput in = on_host(a, ha), o = on_host(out, ho);
  argsort_entry(per, in, static_cast<std::int64_t*>(const_cast<void*>(o.data)), o.rows, o.cols, o.ld);
  uploaded(out, ho);
}

void Engine::argsort_entry(Per per, const detail::MatrixInput& a, std::int64_t* out, std::size_t rows, std::size_t cols,
                           std::size_t ld) const {
  detail::check_argsort(a, out, rows, cols, ld);
  detail::visit(a.dtype, [&]<class T>(std::type_identity<T>) {
    for_each_line<T>(a, per, [&](std::size_t line, const Line<T>&, const auto& v, std::vector<std::int64_t>& order) {
      std::sort(order.begin(), order.end(), ArgsortOrder<Key<T>>{v.data()});
      for (std::size_t r = 0; r < order.size(); ++r) out[per == Per::row ? line * ld + r : r * ld + line] = order[r];
    });
  });
}

}  // namespace tandem
