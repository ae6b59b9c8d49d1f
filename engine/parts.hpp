// A reduction over an input split into ordered parts: each part is reduced on its own (by one rank of
// tandem::mpi::Engine, or one device of a multi-device engine) into a small record, and the records are
// combined in part order with the operators of backends/common/reduce_ops.hpp, so that whoever combines
// them gets the same bits. Deterministic float sums use the canonical chunk values instead (Chunks):
// together they are bitwise equal to one engine's sum over the concatenated parts, for any split.
// engine/mpi.cpp moves records and chunks between ranks; engine/multi_device.cpp between devices.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "backends/common/canonical.hpp"
#include "backends/common/reduce_ops.hpp"
#include "engine/backend.hpp"
#include "engine/dispatch.hpp"
#include "tandem/engine.hpp"

namespace tandem::detail::parts {

// One part's contribution: whether it has elements, the value's bytes (a sum in its result type, a min
// or max, or the argmin / argmax element, in the compute type) and the global index (argmin / argmax).
struct Record {
  std::int64_t has = 0;
  std::int64_t index = 0;
  unsigned char value[8] = {};
};

// The address of element i of a part (host memory, or the backend memory of a Buffer).
inline const void* element(const ReduceInput& in, std::size_t i) {
  const std::size_t e = size_of(in.dtype);
  const auto* base = static_cast<const unsigned char*>(in.in_buffer ? in.allocation->data() : in.data);
  return base + (in.in_buffer ? in.offset * e : 0) + i * in.stride * e;
}

// Elements [first, first + len) of a part as the compute type, on the host. A Buffer's elements are
// downloaded in one copy when their extent is small, else one by one (len < 4096: chunk pieces only).
template <class T>
std::vector<compute_t<T>> fetch(const ReduceInput& in, std::size_t first, std::size_t len) {
  std::vector<compute_t<T>> out(len);
  if (len == 0) return out;
  if (!in.in_buffer) {
    for (std::size_t i = 0; i < len; ++i) out[i] = compute_t<T>(*static_cast<const T*>(element(in, first + i)));
    return out;
  }
  const std::size_t e = sizeof(T), extent = (len - 1) * in.stride + 1;
  if (extent <= 4 * len + 4096) {
    std::vector<T> raw(extent);
    in.allocation->download((in.offset + first * in.stride) * e, raw.data(), extent * e);
    for (std::size_t i = 0; i < len; ++i) out[i] = compute_t<T>(raw[i * in.stride]);
  } else {
    for (std::size_t i = 0; i < len; ++i) {
      T v;
      in.allocation->download((in.offset + (first + i) * in.stride) * e, &v, e);
      out[i] = compute_t<T>(v);
    }
  }
  return out;
}

// A part's record for op (sum, min, max, argmin or argmax; mean is a sum here). `offset` is the global
// index of the part's first element; reduce(op, result) runs the part's own reduction (validated).
template <class T, class Reduce>
Record record(Op op, const ReduceInput& in, std::uint64_t offset, Reduce&& reduce) {
  Record r{in.count > 0, 0, {}};
  if (op == Op::sum) {
    sum_result_t<T> s{};
    reduce(Op::sum, &s);
    std::memcpy(r.value, &s, sizeof s);
  } else if (in.count == 0) {
    // an empty part contributes nothing (its part of the call was still validated by the caller)
  } else if (is_arg(op)) {
    std::size_t i = 0;
    reduce(op, &i);
    const compute_t<T> v = fetch<T>(in, i, 1)[0];  // the element itself, to compare across parts
    r.index = std::int64_t(offset + i);
    std::memcpy(r.value, &v, sizeof v);
  } else {
    compute_t<T> v{};
    reduce(op, &v);
    std::memcpy(r.value, &v, sizeof v);
  }
  return r;
}

// The caller's result from the global sum s: the sum, or mean's double(s) / total.
template <class T>
void write_sum(Op op, sum_result_t<T> s, std::uint64_t total, void* result) {
  if (op == Op::mean) {
    const double m = canonical_nan(double(s) / double(total));
    std::memcpy(result, &m, sizeof m);
  } else {
    std::memcpy(result, &s, sizeof s);
  }
}

// Writes op's result (sum, min, max, mean, argmin, argmax; the types of Engine::reduce) from the records
// of every part, in part order. `total` is the number of elements of all parts (> 0 unless op is sum).
template <class T>
void combine(Op op, const std::vector<Record>& records, std::uint64_t total, void* result) {
  using Sum = sum_result_t<T>;
  using V = compute_t<T>;
  visit_op(op == Op::mean ? Op::sum : op, [&]<Op O>(std::integral_constant<Op, O>) {
    if constexpr (O == Op::sum) {
      using Acc = typename SumOp<Sum>::Acc;
      Acc acc = SumOp<Sum>::identity();  // -0.0: a sum of only -0.0 stays -0.0
      bool any = false;
      for (const Record& r : records)
        if (r.has) {
          Sum s;
          std::memcpy(&s, r.value, sizeof s);
          acc = SumOp<Sum>::combine(acc, Acc(s)), any = true;
        }
      write_sum<T>(op, any ? canonical_nan(Sum(acc)) : Sum{}, total, result);  // empty: +0.0 / 0
    } else {
      using Operator = typename OpFor<O, T>::type;
      typename Operator::Acc acc = Operator::identity();
      for (const Record& r : records) {
        if (!r.has) continue;
        V v;
        std::memcpy(&v, r.value, sizeof v);
        if constexpr (is_arg_op<Operator>)
          acc = Operator::combine(acc, {v, r.index});
        else
          acc = Operator::combine(acc, v);
      }
      if constexpr (is_arg_op<Operator>) {
        const std::size_t i = std::size_t(acc.index);
        std::memcpy(result, &i, sizeof i);
      } else {
        const V v = canonical_nan(acc);
        std::memcpy(result, &v, sizeof v);
      }
    }
  });
}

// A part's share of a deterministic float sum (canonical.hpp): chunks are 4096 elements from global
// index 0. The part computes the values of the chunks wholly inside it with its backend (they continue
// the global order exactly); the pieces of chunks that cross its ends (its head, up to the first chunk
// boundary, and its tail, after its last whole chunk) go to whoever combines.
template <class T>
struct Chunks {
  std::uint64_t offset = 0, head = 0, whole = 0, tail = 0;
  std::vector<compute_t<T>> values, pieces;  // whole chunks' values; head then tail elements
};

template <class T>
Chunks<T> local_chunks(BackendImpl& impl, const ReduceInput& in, std::uint64_t offset) {
  const auto K = std::uint64_t(canonical::kChunk);
  Chunks<T> l;
  const std::uint64_t n = in.count;
  l.offset = offset;
  l.head = std::min<std::uint64_t>(n, (K - offset % K) % K);
  l.whole = (n - l.head) / K, l.tail = n - l.head - l.whole * K;
  l.values.resize(l.whole);
  if (l.whole > 0)
    impl.canonical_chunk_values(in.dtype, element(in, l.head), std::int64_t(l.whole * K), std::int64_t(in.stride),
                                in.in_buffer, l.values.data());
  l.pieces = fetch<T>(in, 0, l.head);
  const auto tail = fetch<T>(in, l.head + l.whole * K, l.tail);
  l.pieces.insert(l.pieces.end(), tail.begin(), tail.end());
  return l;
}

// The canonical sum of `total` elements from every part's chunks (in any order): the chunks that cross
// part boundaries are assembled from the pieces, then all chunk values summed in the canonical tree.
template <class T>
compute_t<T> combine_chunks(const std::vector<Chunks<T>>& parts, std::uint64_t total) {
  using V = compute_t<T>;
  const auto K = std::uint64_t(canonical::kChunk);
  std::vector<V> all_values(canonical::chunk_count(std::int64_t(total)));
  std::map<std::uint64_t, std::vector<V>> crossing;  // at most two per part
  auto place = [&](std::uint64_t global, const V* p, std::uint64_t len) {
    for (std::uint64_t i = 0; i < len; ++i) {
      const std::uint64_t g = global + i, c = g / K;
      std::vector<V>& chunk = crossing[c];
      if (chunk.empty()) chunk.resize(std::min<std::uint64_t>(K, total - c * K));
      chunk[g % K] = p[i];
    }
  };
  for (const Chunks<T>& l : parts) {
    place(l.offset, l.pieces.data(), l.head);
    place(l.offset + l.head + l.whole * K, l.pieces.data() + l.head, l.tail);
    std::copy_n(l.values.data(), l.whole, all_values.data() + (l.offset + l.head) / K);
  }
  for (const auto& [c, chunk] : crossing)
    all_values[c] = canonical::chunk_sum(chunk.data(), std::int64_t(chunk.size()), 1);
  return canonical_nan(canonical::sum_of_chunk_values(std::move(all_values)));
}

}  // namespace tandem::detail::parts
