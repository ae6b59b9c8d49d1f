// Buffer inputs of where= and var / std (engine/masked.cpp, engine/moments.cpp). On an engine of one
// device the engine's elementwise pass (SelectArgs, common/backend.hpp) runs where the Buffer lies, into a
// packed temporary Buffer of the engine, which the reductions then read. A multi-device engine's Buffers
// are sharded over its devices: their elements are downloaded and reduced as a host input.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "common/backend.hpp"
#include "common/select.hpp"
#include "engine/executor.hpp"

namespace tandem::detail {

// The elements of a Buffer input as a rows x cols matrix: element (r, c) at first + r * ld + c * stride
// (elements of the Buffer; a vector: one row of count elements).
struct ResidentElements {
  const Allocation* allocation;
  std::size_t first, rows, cols, ld, stride;
};
ResidentElements elements_of(const ReduceInput& in);
ResidentElements elements_of(const MatrixInput& a);

// Whether the elements' pass runs on the device (one device's Buffer), or they go through the host
// (a multi-device engine's sharded Buffer).
inline bool on_device(const ResidentElements& e) { return !e.allocation->sharded(); }

// The pass over e into a new packed Buffer of the executor (rows * cols elements of out_dtype): where
// (host bools, rows * cols of them, or empty) is uploaded first; shift is a Buffer of doubles or nullptr.
std::shared_ptr<Allocation> select_resident(const Executor& ex, Dtype dtype, const ResidentElements& e,
                                            std::span<const bool> where, const Allocation* shift,
                                            SelectArgs::Shift kind, Dtype out_dtype, const void* fill);

// The same pass over a host input (data: its first element) into a new host array of rows * cols elements of
// Out, on oneTBB's threads (host_select): a host input's masked copy, its elements as doubles, or its
// deviations from the host doubles `shift`.
template <class Out>
std::unique_ptr<Out[]> select_host(Dtype dtype, const void* data, std::size_t rows, std::size_t cols, std::size_t ld,
                                   std::size_t stride, std::span<const bool> where, const double* shift,
                                   SelectArgs::Shift kind, Out fill) {
  auto out = std::make_unique_for_overwrite<Out[]>(rows * cols);
  SelectArgs args{.dtype = dtype,
                  .data = data,
                  .rows = std::int64_t(rows),
                  .cols = std::int64_t(cols),
                  .ld = std::int64_t(ld),
                  .stride = std::int64_t(stride),
                  .mask = where.empty() ? nullptr : where.data(),
                  .shift = shift,
                  .shift_kind = shift ? kind : SelectArgs::Shift::none,
                  .out_dtype = dtype_of<Out>,
                  .out = out.get()};
  std::memcpy(args.fill, &fill, sizeof fill);
  host_select(args);
  return out;
}

// A packed Buffer input: count elements, or a rows x cols matrix (ld = cols).
ReduceInput resident_input(Dtype dtype, const std::shared_ptr<Allocation>& a, std::size_t count);
MatrixInput resident_matrix(Dtype dtype, const std::shared_ptr<Allocation>& a, std::size_t rows, std::size_t cols);
ReduceOutput resident_output(const std::shared_ptr<Allocation>& a, std::size_t count, std::size_t element_size);

// A sharded Buffer input's elements in host memory (bytes from the view's first element to its last),
// and the same input over them.
struct HostStaged {
  std::vector<unsigned char> bytes;
  ReduceInput vector;
  MatrixInput matrix;
};
HostStaged stage_on_host(const ReduceInput& in);
HostStaged stage_on_host(const MatrixInput& a);

// count results of element_size bytes from host memory into a per-row / per-column output (a span, or a
// Buffer from element 0).
void write_results(const ReduceOutput& out, const void* host, std::size_t count);

}  // namespace tandem::detail
