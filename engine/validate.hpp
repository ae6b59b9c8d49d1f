// The checks of every call, in one place: Engine's exported entries (engine/engine.cpp) and
// tandem::mpi::Engine run them before any executor or backend code, and get back a checked call
// (engine/executor.hpp) with the kernel found in the backend's table. Executors check nothing again: a
// Group only splits a checked call among its members and combines their results.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "engine/executor.hpp"

namespace tandem::detail {

// The kernel named `name` in `table` ("auto" first, then the backend's stages), or a tandem::Error
// (Arg::kernel) listing the valid names. `kind` is "reduce" or "matmul".
KernelId find_kernel(const std::vector<KernelInfo>& table, const std::string& name, const char* kind, Backend here);

// A reduction of `in` (its elements, its Buffer), with the kernel and options.
ReduceCall check_reduce(const Executor& ex, Op op, const ReduceInput& in, const ReduceOptions& opts);
// The same checks but the empty-input rule: `in` is one part of a reduction over several (an MPI rank's),
// which may be empty.
ReduceCall check_reduce_part(const Executor& ex, Op op, const ReduceInput& in, const ReduceOptions& opts);
// The same, into element out.index of a Buffer (Engine::*_into).
ReduceCall check_reduce_into(const Executor& ex, Op op, const ReduceInput& in, const OutSlot& out,
                             const ReduceOptions& opts);
// A per-row / per-column reduction: the matrix, the output (one result per row / column), the kernel; empty
// rows / columns of an op without an identity only where `empty_allowed` (ReduceOptions::initial gives them).
ReducePerCall check_reduce_per(const Executor& ex, Op op, Per per, const MatrixInput& in, const ReduceOutput& out,
                               const ReduceOptions& opts, bool empty_allowed = false);
// A product: shapes, batches, memory (Buffers of this engine, C apart from A and B), options, kernel.
MatmulCall check_matmul(const Executor& ex, const MatrixInput& a, const MatrixInput& b, const MatrixInput& c,
                        const MatmulOptions& opts);

// A checked product whose batches have two dimensions (BatchView::outer) as products of one batch dimension
// each: one, where every operand's two dimensions merge into one run (or C has only one), else one per entry
// of C's shorter dimension, its longer one their batch. Every entry is computed as it would be alone.
std::vector<MatmulCall> batch_runs(const MatmulCall& call);

// A grouped product (Engine::matmul_grouped): the whole call checked (group sizes adding up to op(A)'s rows, B
// one entry per group or stride 0, C apart from A and every entry of B): the whole call, and one checked product
// per non-empty group, in order.
GroupedCall check_matmul_grouped(const Executor& ex, const MatrixInput& a, const MatrixInput& b, const MatrixInput& c,
                                 std::span<const std::size_t> group_sizes, const MatmulOptions& opts);
// topk of each row / column of `a` (host memory), k of them: 1 <= k <= the row's / column's length; the
// outputs hold the results (values: `values_size` elements from its start, rows x cols where given).
void check_topk(Per per, const MatrixInput& a, std::size_t k, const void* values, std::size_t values_size,
                std::size_t values_rows, std::size_t values_cols, std::size_t values_ld, const void* indices,
                std::size_t indices_size, std::size_t indices_rows, std::size_t indices_cols, std::size_t indices_ld);
// topk of Buffers: `a` and the outputs Buffers of ex's engine within their Buffers, values of a's type and
// indices int64 of the results' shape, neither overlapping the input or each other.
void check_topk_buffers(const Executor& ex, Per per, const MatrixInput& a, std::size_t k, const MatrixInput& values,
                        const MatrixInput& indices);
// argsort of each row / column of `a` (host memory) into out, a rows x cols matrix of a's shape.
void check_argsort(const MatrixInput& a, const void* out, std::size_t rows, std::size_t cols, std::size_t ld);
// argsort of Buffers: `a` and `out` Buffers of ex's engine within their Buffers, out int64 of a's shape, apart
// from a.
void check_argsort_buffers(const Executor& ex, const MatrixInput& a, const MatrixInput& out);

// v from `elements` elements on (host memory: its data pointer; a Buffer: its offset), its shape as it was.
MatrixInput shifted(MatrixInput v, std::size_t elements);

// The address of a checked input's first element: host memory, or the Buffer's memory at its offset
// (a single device's Buffer; a Group's are sharded and split first).
const void* first_element(const ReduceInput& in);
const void* first_element(const MatrixInput& in);

}  // namespace tandem::detail
