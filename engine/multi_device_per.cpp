// Per-row and per-column reductions of an engine over several devices (engine/multi_device.hpp). Both
// split the rows among the members, every member at once. Per row, a member's rows are whole results:
// one engine's bits. Per column, each member reduces its rows of every column into partial results, and
// the partials of each column are combined in row order as the parts of a reduction are
// (engine/parts.hpp): exact and order-free results (integers, min, max, indices) and deterministic float
// sums keep one engine's bits. Deterministic float sums split the rows into the 4096-row chunks of the
// canonical order (common/canonical.hpp): a chunk's per-column sum is that column's chunk value, and the
// chunk values of a column are summed in the canonical tree.
#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "engine/multi_device.hpp"
#include "engine/parallel.hpp"
#include "engine/parts.hpp"
#include "engine/results.hpp"

namespace tandem::detail {

namespace {

constexpr std::size_t kChunkRows = std::size_t(canonical::kChunk);

// A part of a per-column reduction: rows [first, first + count) reduced by member `member`.
struct Unit {
  std::size_t member, first, count;
};

// Op `local`'s partial result of one part for one column (`partial`: the per-column result as a Buffer
// holds it; `value`: for argmin / argmax the part's least / greatest element) as a parts::Record whose
// index is global (the part's first row added).
template <class T>
parts::Record record_of(Op local, const unsigned char* partial, const unsigned char* value, std::size_t first) {
  parts::Record r{1, 0, {}};
  visit_backend_op(local, [&]<Op O>(std::integral_constant<Op, O>) {
    using R = backend_result_t<O, T>;
    if constexpr (info(O).result == ResultKind::index) {
      std::int64_t i;
      std::memcpy(&i, partial, sizeof i);
      r.index = std::int64_t(first) + i;
      std::memcpy(r.value, value, sizeof(compute_t<T>));
    } else if constexpr (std::is_same_v<R, ExactSum>) {  // (an integer sum: exact in each part, see reduce_cols)
      sum_result_t<T> v;
      std::memcpy(&v, partial, sizeof v);
      const ExactSum s =
          std::is_signed_v<sum_result_t<T>> ? ExactSum::of(std::int64_t(v)) : ExactSum::of_unsigned(std::uint64_t(v));
      std::memcpy(r.value, &s, sizeof s);
    } else {
      static_assert(sizeof(R) <= sizeof r.value);
      static_assert(std::is_same_v<R, compute_t<T>> || std::is_same_v<R, sum_result_t<T>>);  // (as stored)
      std::memcpy(r.value, partial, sizeof(R));
    }
  });
  return r;
}

// Op `local`'s backend result for one column from its chunk values (`units` of them, `pitch` bytes apart
// from `values`): their canonical sum (or product), as one engine's deterministic result.
template <class T>
void chunk_result(Op local, const unsigned char* values, std::size_t pitch, std::size_t units, void* backend) {
  using V = compute_t<T>;
  if constexpr (std::is_floating_point_v<V>) {
    std::vector<V> chunk_values(units);
    for (std::size_t u = 0; u < units; ++u) std::memcpy(&chunk_values[u], values + u * pitch, sizeof(V));
    visit_backend_op(local, [&]<Op O>(std::integral_constant<Op, O>) {
      using Partial = PartialOp<typename OpFor<O, T>::type>;
      if constexpr (canonical_order<Partial> && std::is_same_v<typename Partial::Acc, V> &&
                    std::is_same_v<backend_result_t<O, T>, V>) {
        const V v = canonical_nan(canonical::sum_of_chunk_values<V, Partial>(std::move(chunk_values)));
        std::memcpy(backend, &v, sizeof v);
      } else {
        throw Error(std::string("per-column ") + to_string(O) + ": no canonical chunk order (a bug in tandem)");
      }
    });
  } else {
    throw Error("per-column chunk values of an integer type (a bug in tandem)");
  }
}

// Op `op`'s backend result for one column from its parts' partial results (`pitch` bytes apart from
// `partial`; arg ops' values `value_pitch` apart from `values`), combined in row order.
template <class T>
void record_result(Op op, Op local, const std::vector<Unit>& units, const unsigned char* partial, std::size_t pitch,
                   const unsigned char* values, std::size_t value_pitch, void* backend) {
  std::vector<parts::Record> records(units.size());
  for (std::size_t u = 0; u < units.size(); ++u)
    records[u] = record_of<T>(local, partial + u * pitch, values ? values + u * value_pitch : nullptr, units[u].first);
  parts::combine<T>(op, records, backend);
}

// The companion of an arg op: the op whose per-column result is the element the arg op's index points at.
Op companion(Op local) { return local == Op::argmin ? Op::min : Op::max; }

}  // namespace

// Per row: rows per member (reduce_rows). Per column: rows per member (reduce_cols) where that applies,
// else on the first member, Buffers staged there.
void Group::reduce_per(const ReducePerCall& call) const {
  if (call.in.rows > 1 && call.in.in_buffer == call.out.in_buffer) {
    if (call.per == Per::row) return reduce_rows(call);
    if (reduce_cols(call)) return;
  }
  if (!call.in.in_buffer) return members_.front().reduce_per(call);
  std::lock_guard lock(collective_mutex_);
  std::vector<Staged> keep;
  ReducePerCall staged = call;
  staged.in = on_member(call.in, 0, keep);
  const std::size_t count = std::min(call.out.size, call.per == Per::row ? call.in.rows : call.in.cols);
  std::optional<Staged> staged_out;
  if (call.out.allocation != nullptr && count > 0) {
    staged_out = stage(call.out.allocation, 0, count * call.out.element_size, 0);
    staged.out.allocation = staged_out->view.get();
    staged.out.size = count;
  }
  members_.front().reduce_per(staged);
  if (staged_out) write_back(*staged_out);
}

// Rows per member, every member at once: host matrices in even blocks; Buffers, the rows that start in the
// member's shard (staged there when they cross into the next), their results staged where the output's
// shards hold them. Each row's result is computed as one engine computes it: the same bits.
void Group::reduce_rows(const ReducePerCall& call) const {
  const MatrixInput& in = call.in;
  const std::size_t D = members_.size(), e = size_of(in.dtype), es = call.out.element_size;
  const std::vector<std::size_t> rows =
      bounds_by_shard(in.in_buffer ? in.allocation : nullptr, e, in.offset, in.ld, in.rows, D);
  std::vector<ReducePerCall> calls(D, call);
  for (std::size_t d = 0; d < D; ++d) calls[d].in.rows = calls[d].out.size = rows[d + 1] - rows[d];
  if (!in.in_buffer) {
    run_all(D, [&](std::size_t d) {
      if (rows[d] == rows[d + 1]) return;
      calls[d].in.data = static_cast<const char*>(in.data) + rows[d] * in.ld * e;
      calls[d].out.data = static_cast<char*>(call.out.data) + rows[d] * es;
      members_[d].reduce_per(calls[d]);
    });
    return;
  }
  std::lock_guard lock(collective_mutex_);
  std::vector<Staged> keep;
  std::vector<std::optional<Staged>> outs(D);
  for (std::size_t d = 0; d < D; ++d) {
    if (rows[d] == rows[d + 1]) continue;
    MatrixInput x = in;
    x.rows = rows[d + 1] - rows[d], x.offset = in.offset + rows[d] * in.ld;
    calls[d].in = on_member(x, int(d), keep);
    outs[d] = stage(call.out.allocation, rows[d] * es, (rows[d + 1] - rows[d]) * es, int(d));
    calls[d].out.allocation = outs[d]->view.get();
  }
  run_all(D, [&](std::size_t d) {
    if (rows[d] < rows[d + 1]) members_[d].reduce_per(calls[d]);
  });
  for (const auto& o : outs)
    if (o) write_back(*o);
}

// Per column, rows per member (host matrices: even blocks; Buffers: the rows that start in each member's
// shard, but for float sums and products outside deterministic mode a split by index; deterministic float
// sums: those blocks on 4096-row chunk boundaries). Not split (false): a single
// part; fewer than 16 rows a part (the partial results would outgrow the input); integer means of 64-bit
// elements, whose exact sums a part's 64-bit result would not hold.
bool Group::reduce_cols(const ReducePerCall& call) const {
  const MatrixInput& in = call.in;
  const std::size_t D = members_.size();
#ifndef TANDEM_LAB_KERNELS
  // (CUDA engines keep per-column reductions on the first GPU outside lab builds: on two GPUs the split ran
  // slower than one GPU, its partial results being combined on the host.)
  if (first()->kind() != Backend::cpu) return false;
#endif
  const bool chunks = parts::by_chunks(call.op, in.dtype, call.deterministic);
  if (in.cols == 0 || in.rows < 16 * D || in.rows >= (std::size_t(1) << 31)) return false;
  if (call.op == Op::mean && info(in.dtype).integer && size_of(in.dtype) == 8) return false;
  if (chunks && in.rows <= kChunkRows) return false;
  // (Float sums and products outside deterministic mode: Buffers' rows by index, as in Group::reduce.)
  const bool by_index = reduction_by_index(info(call.op).computed_as, in.dtype, call.deterministic, in.in_buffer);
  std::vector<std::size_t> rows = by_index ? bounds_by_index(in.ld, in.rows, D)
                                           : bounds_by_shard(in.in_buffer ? in.allocation : nullptr, size_of(in.dtype),
                                                             in.offset, in.ld, in.rows, D);
  if (chunks)
    for (std::size_t d = 1; d < D; ++d) rows[d] = rows[d] / kChunkRows * kChunkRows;
  std::size_t parts = 0;
  for (std::size_t d = 0; d < D; ++d) parts += rows[d] < rows[d + 1];
  if (parts < 2) return false;
  visit(in.dtype, [&]<class T>(std::type_identity<T>) { reduce_cols_as<T>(call, rows, chunks); });
  return true;
}

template <class T>
void Group::reduce_cols_as(const ReducePerCall& call, const std::vector<std::size_t>& rows, bool chunks) const {
  const MatrixInput& in = call.in;
  const std::size_t D = members_.size(), n = in.cols, e = sizeof(T);
  const Op local = info(call.op).computed_as;  // (a mean: the parts' sums)
  const bool arg = local == Op::argmin || local == Op::argmax;
  std::vector<Unit> units;
  for (std::size_t d = 0; d < D; ++d) {
    const std::size_t step = chunks ? kChunkRows : rows[d + 1] - rows[d];
    for (std::size_t r = rows[d]; r < rows[d + 1]; r += step) units.push_back({d, r, std::min(step, rows[d + 1] - r)});
  }
  const std::size_t rs = size_of(result_dtype(local, in.dtype)), vs = sizeof(compute_t<T>);
  // Each unit's n partial results (and for arg ops its n values), on the host in unit order.
  std::vector<unsigned char> partial(units.size() * n * rs), values(arg ? units.size() * n * vs : 0);
  // The calls of unit u: local into partial, and for arg ops the companion into values.
  auto unit_calls = [&](std::size_t u, const MatrixInput& x, const ReduceOutput& p, const ReduceOutput& v) {
    ReducePerCall c = call;
    c.op = local, c.in = x, c.out = p;
    members_[units[u].member].reduce_per(c);
    if (!arg) return;
    c.op = companion(local), c.kernel = KernelId{}, c.out = v;
    members_[units[u].member].reduce_per(c);
  };
  if (!in.in_buffer) {
    run_all(D, [&](std::size_t d) {
      for (std::size_t u = 0; u < units.size(); ++u) {
        if (units[u].member != d) continue;
        MatrixInput x = in;
        x.data = static_cast<const char*>(in.data) + units[u].first * in.ld * e, x.rows = units[u].count;
        unit_calls(u, x, {partial.data() + u * n * rs, n, rs}, {arg ? values.data() + u * n * vs : nullptr, n, vs});
      }
    });
  } else {
    std::lock_guard lock(collective_mutex_);
    std::vector<Staged> keep;
    std::vector<MatrixInput> xs(units.size());
    for (std::size_t u = 0; u < units.size(); ++u) {
      MatrixInput x = in;
      x.rows = units[u].count, x.offset = in.offset + units[u].first * in.ld;
      xs[u] = on_member(x, int(units[u].member), keep);
    }
    // The partial results in each member's memory (a unit's n results, then its n values), then copied here.
    const std::size_t per_unit = n * rs + (arg ? n * vs : 0);
    std::vector<std::shared_ptr<Allocation>> mem(units.size());
    for (std::size_t u = 0; u < units.size(); ++u)
      mem[u] = std::make_shared<Allocation>(members_[units[u].member].first(), per_unit);
    run_all(D, [&](std::size_t d) {  // each member's units enqueued, then their results copied (one wait)
      std::vector<std::shared_ptr<Allocation>> views;
      for (std::size_t u = 0; u < units.size(); ++u) {
        if (units[u].member != d) continue;
        const std::shared_ptr<BackendImpl>& impl = members_[d].first();
        char* base = static_cast<char*>(mem[u]->data());
        views.push_back(std::make_shared<Allocation>(impl, base, n * rs));
        views.push_back(std::make_shared<Allocation>(impl, base + n * rs, arg ? n * vs : 0));
        unit_calls(u, xs[u], {nullptr, n, rs, true, views[views.size() - 2].get()},
                   {nullptr, n, vs, true, views.back().get()});
      }
      for (std::size_t u = 0; u < units.size(); ++u) {
        if (units[u].member != d) continue;
        mem[u]->download(0, partial.data() + u * n * rs, n * rs);
        if (arg) mem[u]->download(n * rs, values.data() + u * n * vs, n * vs);
      }
    });
  }
  // Each column's partials combined in row order into its result, as the output holds it.
  const std::size_t count = std::min(call.out.size, n), es = call.out.element_size;
  std::vector<unsigned char> results(count * es);
  for (std::size_t j = 0; j < count; ++j) {
    alignas(16) unsigned char backend[kBackendResultBytes] = {};
    if (chunks)
      chunk_result<T>(local, partial.data() + j * rs, n * rs, units.size(), backend);
    else
      record_result<T>(call.op, local, units, partial.data() + j * rs, n * rs, arg ? values.data() + j * vs : nullptr,
                       n * vs, backend);
    api_result(call.op, in.dtype, backend, in.rows, results.data() + j * es);
  }
  if (count == 0) return;
  if (in.in_buffer)
    const_cast<Allocation*>(call.out.allocation)->upload(0, results.data(), results.size());
  else
    std::memcpy(call.out.data, results.data(), results.size());
}

}  // namespace tandem::detail
