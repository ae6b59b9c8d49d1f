// A reduction over an input split into ordered parts: each part is reduced on its own (by one rank of
// tandem::mpi::Engine, or one device of a multi-device engine) into a small record, and the records are
// combined in part order with the operators of common/reduce_ops.hpp, so that whoever combines
// them gets the same bits. Deterministic float sums use the canonical chunk values instead (Chunks):
// together they are bitwise equal to one engine's sum over the concatenated parts, for any split.
// engine/mpi.cpp moves records and chunks between ranks; engine/multi_device.cpp between devices.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "common/backend.hpp"
#include "common/canonical.hpp"
#include "common/dispatch.hpp"
#include "common/reduce_ops.hpp"
#include "common/vector.hpp"
#include "tandem/engine.hpp"

namespace tandem::detail::parts {

// One part's contribution: whether it has elements, the value's bytes (a sum as the backend gives it:
// ExactSum for integers, the compute type for floats; a min or max, or the argmin / argmax element, in the
// compute type) and the global index (argmin / argmax).
struct Record {
  std::int64_t has = 0;
  std::int64_t index = 0;
  unsigned char value[16] = {};
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
Vector<compute_t<T>> fetch(const ReduceInput& in, std::size_t first, std::size_t len) {
  Vector<compute_t<T>> out(len);
  if (len == 0) return out;
  if (!in.in_buffer) {
    for (std::size_t i = 0; i < len; ++i) out[i] = compute_t<T>(*static_cast<const T*>(element(in, first + i)));
    return out;
  }
  const std::size_t e = sizeof(T), extent = (len - 1) * in.stride + 1;
  if (extent <= 4 * len + 4096) {
    Vector<T> raw(extent);
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

// Whether a reduction's parts combine through the canonical chunk values (Chunks, below) rather than
// records: deterministic mode, an op whose backend operator's bits depend on the order (reduce_ops.hpp's
// canonical_order: sum, mean computed as sum, sumsq, prod), floating-point elements.
inline bool by_chunks(Op op, Dtype dtype, bool deterministic) {
  return deterministic && canonical::in_canonical_order(info(op).computed_as, dtype);
}

// A part's record for op `local` (an op the backends run: the engine op's computed_as). `offset` is the
// global index of the part's first element; reduce(op, result) runs the part's own reduction (checked; its
// backend_result_t: an integer sum exact). An empty part of an op whose empty input is an error contributes
// nothing.
template <class T, class Reduce>
Record record(Op local, const ReduceInput& in, std::uint64_t offset, Reduce&& reduce) {
  Record r{in.count > 0, 0, {}};
  if (in.count == 0 && info(local).empty == EmptyRule::error) return r;
  visit_backend_op(local, [&]<Op O>(std::integral_constant<Op, O>) {
    backend_result_t<O, T> v{};
    static_assert(sizeof v <= sizeof r.value);
    reduce(O, &v);
    if constexpr (info(O).result == ResultKind::index) {
      const compute_t<T> x = fetch<T>(in, std::size_t(v), 1)[0];  // the element itself, to compare across parts
      r.index = std::int64_t(offset) + v;
      std::memcpy(r.value, &x, sizeof x);
    } else {
      std::memcpy(r.value, &v, sizeof v);
    }
  });
  return r;
}

// The backend result of op's computed_as (backend_result_t) from the records of every part, in part order,
// with the backends' operator: sum-like ops add the parts' sums (integers exactly), the others combine them
// with the operator. The engine turns it into the op's result (engine/results.hpp).
template <class T>
void combine(Op op, const std::vector<Record>& records, void* result) {
  visit_backend_op(info(op).computed_as, [&]<Op O>(std::integral_constant<Op, O>) {
    using Operator = typename OpFor<O, T>::type;
    using R = backend_result_t<O, T>;
    if constexpr (additive<Operator>) {
      using Add = SumOp<R>;  // the parts' sums, added: -0.0 first (a sum of only -0.0 stays -0.0), integers exactly
      typename Add::Acc acc = Add::identity();
      bool any = false;
      for (const Record& r : records)
        if (r.has) {
          R s;
          std::memcpy(&s, r.value, sizeof s);
          acc = Add::combine(acc, Add::load(s, 0)), any = true;
        }
      R sum{};  // (no part had elements: +0.0 / 0)
      if constexpr (std::is_same_v<typename Add::Acc, ExactSum> && !std::is_same_v<R, ExactSum>)
        sum = R(acc.wrapped());  // (integer sums of squares: modulo 2^64)
      else if (any)
        sum = canonical_nan(R(acc));
      std::memcpy(result, &sum, sizeof sum);
    } else {
      // A part's value: the element (arg ops, with its index) or its backend result (min, max: compute_t<T>;
      // prod: sum_result_t<T>, whose integers wrap as the operator's uint64 does).
      using V = std::conditional_t<is_arg_op<Operator>, compute_t<T>, R>;
      typename Operator::Acc acc = Operator::identity();
      for (const Record& r : records) {
        if (!r.has) continue;
        V v;
        std::memcpy(&v, r.value, sizeof v);
        if constexpr (is_arg_op<Operator>)
          acc = Operator::combine(acc, {v, r.index});
        else
          acc = Operator::combine(acc, typename Operator::Acc(v));
      }
      const R out = result_of<O, T>(acc);
      std::memcpy(result, &out, sizeof out);
    }
  });
}

// A part's share of a deterministic float sum of a sum-like op (canonical.hpp): chunks are 4096
// elements from global index 0. The part computes the values of the chunks wholly inside it with its backend (they
// continue the global order exactly); the pieces of chunks that cross its ends (its head, up to the first chunk
// boundary, and its tail, after its last whole chunk) go to whoever combines.
template <class T>
struct Chunks {
  Op op = Op::sum;  // the backend op (its operator combines the values: canonical_order)
  std::uint64_t offset = 0, head = 0, whole = 0, tail = 0;
  Vector<compute_t<T>> values, pieces;  // whole chunks' values; head then tail elements
};

template <class T>
Chunks<T> local_chunks(Op local, BackendImpl& impl, const ReduceInput& in, std::uint64_t offset) {
  const auto K = std::uint64_t(canonical::kChunk);
  Chunks<T> l;
  l.op = local;
  const std::uint64_t n = in.count;
  l.offset = offset;
  l.head = std::min<std::uint64_t>(n, (K - offset % K) % K);
  l.whole = (n - l.head) / K, l.tail = n - l.head - l.whole * K;
  l.values.resize(l.whole);
  if (l.whole > 0)
    impl.canonical_chunk_values(local, in.dtype, element(in, l.head), std::int64_t(l.whole * K),
                                std::int64_t(in.stride), in.in_buffer, l.values.data());
  l.pieces = fetch<T>(in, 0, l.head);
  const auto tail = fetch<T>(in, l.head + l.whole * K, l.tail);
  l.pieces.insert(l.pieces.end(), tail.begin(), tail.end());
  // The pieces as the op loads them (its squares for sumsq): the values the chunk sums add.
  visit_backend_op(local, [&]<Op O>(std::integral_constant<Op, O>) {
    using Operator = typename OpFor<O, T>::type;
    if constexpr (canonical_order<Operator>)
      for (auto& v : l.pieces) v = Operator::load(T(v), 0);
  });
  return l;
}

// The canonical value of `total` elements from every part's chunks (in any order): the chunks that cross
// part boundaries are assembled from the pieces, then all chunk values combined in the canonical tree.
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
  // The values combine with the op's partial operator (the sums' add, prod's multiply).
  return visit_backend_op(parts.front().op, [&]<Op O>(std::integral_constant<Op, O>) {
    using Partial = PartialOp<typename OpFor<O, T>::type>;
    if constexpr (canonical_order<Partial> && std::is_same_v<typename Partial::Acc, V>) {
      for (const auto& [c, chunk] : crossing)
        all_values[c] = canonical::chunk_sum_of<Partial>(chunk.data(), std::int64_t(chunk.size()), 1);
      return canonical_nan(canonical::sum_of_chunk_values<V, Partial>(std::move(all_values)));
    } else {
      throw Error(std::string("combine_chunks: ") + to_string(O) + " has no canonical order");
      return V{};
    }
  });
}

}  // namespace tandem::detail::parts
