// Buffer inputs of where= and var / std (engine/resident.hpp).
#include "engine/resident.hpp"

#include <algorithm>
#include <cstring>

#include "engine/extent.hpp"
#include "tandem/buffer.hpp"

namespace tandem::detail {

ResidentElements elements_of(const ReduceInput& in) { return {in.allocation, in.offset, 1, in.count, 0, in.stride}; }
ResidentElements elements_of(const MatrixInput& a) { return {a.allocation, a.offset, a.rows, a.cols, a.ld, 1}; }

std::shared_ptr<Allocation> select_resident(const Executor& ex, Dtype dtype, const ResidentElements& e,
                                            std::span<const bool> where, const Allocation* shift,
                                            SelectArgs::Shift kind, Dtype out_dtype, const void* fill) {
  const std::size_t count = e.rows * e.cols;
  std::shared_ptr<Allocation> out = ex.allocate(count, size_of(out_dtype));
  if (count == 0) return out;
  std::shared_ptr<Allocation> mask;
  if (!where.empty()) {
    mask = ex.allocate(where.size(), sizeof(bool));
    mask->upload(0, where.data(), where.size());
  }
  SelectArgs args{.dtype = dtype,
                  .data = static_cast<const char*>(e.allocation->data()) + e.first * size_of(dtype),
                  .rows = std::int64_t(e.rows),
                  .cols = std::int64_t(e.cols),
                  .ld = std::int64_t(e.ld),
                  .stride = std::int64_t(e.stride),
                  .mask = mask ? static_cast<const bool*>(mask->data()) : nullptr,
                  .shift = shift ? static_cast<const double*>(shift->data()) : nullptr,
                  .shift_kind = shift ? kind : SelectArgs::Shift::none,
                  .out_dtype = out_dtype,
                  .out = out->data()};
  std::memcpy(args.fill, fill, size_of(out_dtype));
  e.allocation->impl().select(args);  // (the temporaries are freed in stream order after it)
  return out;
}

ReduceInput resident_input(Dtype dtype, const std::shared_ptr<Allocation>& a, std::size_t count) {
  return {dtype, a->data(), count, 1, true, a.get(), 0, count};
}
MatrixInput resident_matrix(Dtype dtype, const std::shared_ptr<Allocation>& a, std::size_t rows, std::size_t cols) {
  return {dtype, a->data(), rows, cols, cols, true, a.get(), 0, rows * cols};
}
ReduceOutput resident_output(const std::shared_ptr<Allocation>& a, std::size_t count, std::size_t element_size) {
  return {nullptr, count, element_size, true, a.get()};
}

namespace {
// The elements [first, first + extent) of a Buffer in host memory.
std::vector<unsigned char> download(const Allocation* a, std::size_t first, std::size_t extent, std::size_t elem) {
  std::vector<unsigned char> bytes(std::max<std::size_t>(extent * elem, 1));
  if (extent > 0) a->download(first * elem, bytes.data(), extent * elem);
  return bytes;
}
}  // namespace

HostStaged stage_on_host(const ReduceInput& in) {
  const std::size_t ext = in.count == 0 ? 0 : (in.count - 1) * in.stride + 1;
  HostStaged h{download(in.allocation, in.offset, ext, size_of(in.dtype)), {}, {}};
  h.vector = {in.dtype, h.bytes.data(), in.count, in.stride};
  return h;
}
HostStaged stage_on_host(const MatrixInput& a) {
  const std::size_t ext = matrix_extent(a.rows, a.cols, a.ld, size_of(a.dtype), "the matrix", true);
  HostStaged h{download(a.allocation, a.offset, ext, size_of(a.dtype)), {}, {}};
  h.matrix = {a.dtype, h.bytes.data(), a.rows, a.cols, a.ld};
  return h;
}

void write_results(const ReduceOutput& out, const void* host, std::size_t count) {
  if (count == 0) return;
  if (out.in_buffer)  // (the Buffer the caller passed to be written)
    const_cast<Allocation*>(out.allocation)->upload(0, host, count * out.element_size);
  else
    std::memcpy(out.data, host, count * out.element_size);
}

}  // namespace tandem::detail
