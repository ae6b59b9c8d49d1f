// The vector forms of every reduction, written once for tandem::Engine (engine.hpp) and
// tandem::mpi::Engine (mpi.hpp), which derive from VectorReductions<Self>: each op takes a host span (or
// any contiguous host range), a strided host view, a Buffer, or a view of a Buffer, describes its input,
// and forwards to Self::reduce_as<Result>(op, input, options). The forms of every op are generated from
// the op table (TANDEM_OPS, include/tandem/ops.hpp). The rules of each op (NaN, signed zeros, empty
// inputs, result types) are engine.hpp's.
#pragma once

#include <cstddef>
#include <ranges>
#include <span>

#include "tandem/buffer.hpp"
#include "tandem/types.hpp"

namespace tandem {

// A contiguous host range of a tandem element type other than a span (std::vector, std::array, ...):
// eng.sum(v) works without naming the element type.
template <class R>
concept HostRange =
    std::ranges::contiguous_range<R> && std::ranges::sized_range<R> && Element<std::ranges::range_value_t<R>>;

namespace detail {

// A reduction's input as the exported entry takes it: count elements, stride apart, of host memory
// (allocation == nullptr and !in_buffer) or of a Buffer starting at element offset.
struct ReduceInput {
  Dtype dtype;
  const void* data;  // host memory; for a Buffer, the start of the buffer (data() of element 0)
  std::size_t count, stride;
  bool in_buffer = false;
  const Allocation* allocation = nullptr;
  std::size_t offset = 0, buffer_size = 0;
};

template <class T>
ReduceInput host_input(const T* data, std::size_t count, std::size_t stride) {
  return {dtype_of<T>, data, count, stride};
}
template <class T>
ReduceInput buffer_input(BufferView<T> v) {
  const bool has = v.buffer != nullptr && v.buffer->allocation() != nullptr;
  return {dtype_of<T>, has ? v.buffer->data() : nullptr,
          v.count,     v.stride,
          true,        has ? v.buffer->allocation().get() : nullptr,
          v.offset,    has ? v.buffer->size() : 0};
}
// The vector forms of every op of the table (include/tandem/ops.hpp), for each op `name`:
//   name(std::span<const T>), name(StridedView<T>), name(BufferView<T>), name(const Buffer<T>&), and
//   name(r) of any contiguous host range r (std::vector, std::array, ...) without naming T;
// each returns op_result_t<Op::name, T> (sum: sum_result_t<T>, min / max: compute_t<T>, mean: double,
// argmin / argmax: std::size_t) and takes ReduceOptions last. reduce<Op::name>(x, options) is the same
// call with the op as a template argument (for code generic over ops; visit_op turns a run-time Op into
// one).
#define TANDEM_VECTOR_REDUCTION(name, ...)                                                 \
  template <Element T>                                                                     \
  op_result_t<Op::name, T> name(std::span<const T> x, const ReduceOptions& o = {}) const { \
    return this->template reduce<Op::name>(x, o);                                          \
  }                                                                                        \
  template <Element T>                                                                     \
  op_result_t<Op::name, T> name(StridedView<T> x, const ReduceOptions& o = {}) const {     \
    return this->template reduce<Op::name>(x, o);                                          \
  }                                                                                        \
  template <Element T>                                                                     \
  op_result_t<Op::name, T> name(BufferView<T> x, const ReduceOptions& o = {}) const {      \
    return this->template reduce<Op::name>(x, o);                                          \
  }                                                                                        \
  template <Element T>                                                                     \
  op_result_t<Op::name, T> name(const Buffer<T>& x, const ReduceOptions& o = {}) const {   \
    return this->template reduce<Op::name>(x, o);                                          \
  }                                                                                        \
  template <HostRange R>                                                                   \
  auto name(const R& x, const ReduceOptions& o = {}) const {                               \
    return this->template reduce<Op::name>(x, o);                                          \
  }

template <class Self>
class VectorReductions {
 public:
  template <Op O, Element T>
  op_result_t<O, T> reduce(std::span<const T> x, const ReduceOptions& o = {}) const {
    return run<op_result_t<O, T>>(O, host_input(x.data(), x.size(), 1), o);
  }
  template <Op O, Element T>
  op_result_t<O, T> reduce(StridedView<T> x, const ReduceOptions& o = {}) const {
    return run<op_result_t<O, T>>(O, host_input(x.data, x.count, x.stride), o);
  }
  template <Op O, Element T>
  op_result_t<O, T> reduce(BufferView<T> x, const ReduceOptions& o = {}) const {
    return run<op_result_t<O, T>>(O, buffer_input(x), o);
  }
  template <Op O, Element T>
  op_result_t<O, T> reduce(const Buffer<T>& x, const ReduceOptions& o = {}) const {
    return reduce<O>(x.view(), o);
  }
  template <Op O, HostRange R>
  auto reduce(const R& x, const ReduceOptions& o = {}) const {
    return reduce<O>(std::span<const std::ranges::range_value_t<R>>(x), o);
  }

  TANDEM_OPS(TANDEM_VECTOR_REDUCTION)

 private:
  template <class Result>
  Result run(Op op, const ReduceInput& in, const ReduceOptions& o) const {
    return static_cast<const Self&>(*this).template reduce_as<Result>(op, in, o);
  }
};

}  // namespace detail
}  // namespace tandem
