// The empty-input rule, the calls that take no where / initial, and extents and overlaps of the engine's inputs (and of
// shards), shared by engine/validate.cpp (every call), engine/multi_device.cpp (splitting a call) and engine/mpi.cpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "tandem/buffer.hpp"
#include "tandem/types.hpp"

namespace tandem::detail {

// The op table's empty-input rule (include/tandem/ops.hpp): throws for an empty input of an op whose
// empty input is undefined. `what` names the call (and, for several parts, says whose parts were empty).
inline void require_nonempty(Op op, std::uint64_t count, const std::string& what) {
  if (count == 0 && info(op).empty == EmptyRule::error)
    throw value_error(Arg::input, Message(what, " of an empty input is undefined"),
                      Message("check for an empty input first"));
}

// ReduceOptions::where / initial (engine/masked.cpp computes them): whether a mask is given, whether either
// is, and a tandem::Error naming `call` when either is given to a call that takes neither.
inline bool where_given(const ReduceOptions& o) { return o.where.data() != nullptr || !o.where.empty(); }
inline bool masked(const ReduceOptions& o) { return where_given(o) || o.initial.has_value(); }
inline void refuse_masks(const ReduceOptions& o, const std::string& call) {
  if (where_given(o))
    throw value_error(Arg::where, Message(call, " takes no ", Arg::where),
                      Message("mask it in a call that returns its result (sum, mean, ...), which takes it"));
  if (o.initial)
    throw value_error(Arg::initial, Message(call, " takes no ", Arg::initial),
                      Message("combine the initial value with the result yourself"));
}

// A given ReduceOptions::where for an input of rows x cols elements (a vector: 1 x count): one entry per
// element, not null; throws tandem::Error (Arg::where) otherwise.
inline void check_where(const ReduceOptions& o, std::size_t rows, std::size_t cols) {
  if (o.where.data() == nullptr)
    throw value_error(Arg::where, Message(Arg::where, " is null but has ", o.where.size(), " entries"),
                      Message("pass the mask's memory, or an empty span for no mask"));
  if (cols != 0 && rows > std::numeric_limits<std::size_t>::max() / cols)
    throw value_error(Arg::where, Message("the matrix's ", rows, " x ", cols, " elements cannot be masked"),
                      Message("mask fewer rows per call"));
  if (o.where.size() != rows * cols)
    throw value_error(
        Arg::where,
        Message(Arg::where, " has ", o.where.size(), " entries but the input has ", rows * cols, " elements"),
        Message("pass one bool per element of the input, in its order (a MatrixView's: rows * cols, "
                "row-major, packed)"));
}

// Matrix extent in elements: (rows-1)*ld + cols, or throws. `what` names the matrix in messages
// ("matmul: A", "sum (per row): the matrix"). `repeat`: ld 0 is allowed and repeats one row for every row
// (the per-row / per-column reductions: a broadcast matrix, read in place).
inline std::size_t matrix_extent(std::size_t rows, std::size_t cols, std::size_t ld, std::size_t elem,
                                 const std::string& what, bool repeat = false) {
  if (ld < cols && !(repeat && ld == 0))
    throw value_error(what + ": ld (" + std::to_string(ld) + ") is smaller than cols (" + std::to_string(cols) +
                      "); ld must be >= cols" + (repeat ? " (or 0: every row is the first one)" : ""));
  if (rows == 0 || cols == 0) return 0;
  if (ld == 0) return cols;  // (one row, repeated)
  const std::size_t limit = std::size_t(std::numeric_limits<std::ptrdiff_t>::max()) / elem;
  if (cols > limit || rows - 1 > (limit - cols) / ld) throw value_error(what + " is larger than the address space");
  return (rows - 1) * ld + cols;
}

// The extent of `count` matrices `stride` apart, each of `one` elements, or throws.
inline std::size_t batch_extent(std::size_t one, std::size_t count, std::size_t stride, std::size_t elem,
                                const std::string& what) {
  if (one == 0 || count <= 1 || stride == 0) return one;
  const std::size_t limit = std::size_t(std::numeric_limits<std::ptrdiff_t>::max()) / elem;
  if (count - 1 > (limit - one) / stride)
    throw value_error(what + " (count * stride of the batch) is larger than the address space");
  return (count - 1) * stride + one;
}

// Whether [a, a + a_len) and [b, b + b_len) share an element (empty ranges share none).
inline bool overlap(std::uintptr_t a, std::size_t a_len, std::uintptr_t b, std::size_t b_len) {
  return a_len > 0 && b_len > 0 && a < b + b_len && b < a + a_len;
}

// The bytes [lo, hi) of [first, first + bytes) that a shard of a sharded Allocation holds (lo >= hi: none).
inline std::pair<std::size_t, std::size_t> bytes_in(const Allocation::Shard& sh, std::size_t first, std::size_t bytes) {
  return {std::max(first, sh.first), std::min(first + bytes, sh.first + sh.mem->bytes())};
}

}  // namespace tandem::detail
