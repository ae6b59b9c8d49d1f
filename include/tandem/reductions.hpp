// The vector forms of every reduction, written once for tandem::Engine (engine.hpp) and
// tandem::mpi::Engine (mpi.hpp), which derive from VectorReductions<Self>: each op takes a host span (or
// any contiguous host range), a strided host view, a Buffer, or a view of a Buffer, describes its input,
// and forwards to Self::reduce_as<Result>(op, input, options). A new op is one block of five lines
// here. The rules of each op (NaN, signed zeros, empty inputs, result types) are engine.hpp's.
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
template <class Self>
class VectorReductions {
 public:
  // sum: sum_result_t<T> (int64 for integers, wrapping; float for the 16-bit types; else T).
  template <Element T>
  sum_result_t<T> sum(std::span<const T> x, const ReduceOptions& o = {}) const {
    return run<sum_result_t<T>>(Op::sum, host_input(x.data(), x.size(), 1), o);
  }
  template <Element T>
  sum_result_t<T> sum(StridedView<T> x, const ReduceOptions& o = {}) const {
    return run<sum_result_t<T>>(Op::sum, host_input(x.data, x.count, x.stride), o);
  }
  template <Element T>
  sum_result_t<T> sum(BufferView<T> x, const ReduceOptions& o = {}) const {
    return run<sum_result_t<T>>(Op::sum, buffer_input(x), o);
  }
  template <Element T>
  sum_result_t<T> sum(const Buffer<T>& x, const ReduceOptions& o = {}) const {
    return sum(x.view(), o);
  }
  template <HostRange R>
  auto sum(const R& x, const ReduceOptions& o = {}) const {
    return sum(std::span<const std::ranges::range_value_t<R>>(x), o);
  }

  // min, max: compute_t<T> (float for the 16-bit types, else T).
  template <Element T>
  compute_t<T> min(std::span<const T> x, const ReduceOptions& o = {}) const {
    return run<compute_t<T>>(Op::min, host_input(x.data(), x.size(), 1), o);
  }
  template <Element T>
  compute_t<T> min(StridedView<T> x, const ReduceOptions& o = {}) const {
    return run<compute_t<T>>(Op::min, host_input(x.data, x.count, x.stride), o);
  }
  template <Element T>
  compute_t<T> min(BufferView<T> x, const ReduceOptions& o = {}) const {
    return run<compute_t<T>>(Op::min, buffer_input(x), o);
  }
  template <Element T>
  compute_t<T> min(const Buffer<T>& x, const ReduceOptions& o = {}) const {
    return min(x.view(), o);
  }
  template <HostRange R>
  auto min(const R& x, const ReduceOptions& o = {}) const {
    return min(std::span<const std::ranges::range_value_t<R>>(x), o);
  }

  template <Element T>
  compute_t<T> max(std::span<const T> x, const ReduceOptions& o = {}) const {
    return run<compute_t<T>>(Op::max, host_input(x.data(), x.size(), 1), o);
  }
  template <Element T>
  compute_t<T> max(StridedView<T> x, const ReduceOptions& o = {}) const {
    return run<compute_t<T>>(Op::max, host_input(x.data, x.count, x.stride), o);
  }
  template <Element T>
  compute_t<T> max(BufferView<T> x, const ReduceOptions& o = {}) const {
    return run<compute_t<T>>(Op::max, buffer_input(x), o);
  }
  template <Element T>
  compute_t<T> max(const Buffer<T>& x, const ReduceOptions& o = {}) const {
    return max(x.view(), o);
  }
  template <HostRange R>
  auto max(const R& x, const ReduceOptions& o = {}) const {
    return max(std::span<const std::ranges::range_value_t<R>>(x), o);
  }

  // mean: double(sum) / n.
  template <Element T>
  double mean(std::span<const T> x, const ReduceOptions& o = {}) const {
    return run<double>(Op::mean, host_input(x.data(), x.size(), 1), o);
  }
  template <Element T>
  double mean(StridedView<T> x, const ReduceOptions& o = {}) const {
    return run<double>(Op::mean, host_input(x.data, x.count, x.stride), o);
  }
  template <Element T>
  double mean(BufferView<T> x, const ReduceOptions& o = {}) const {
    return run<double>(Op::mean, buffer_input(x), o);
  }
  template <Element T>
  double mean(const Buffer<T>& x, const ReduceOptions& o = {}) const {
    return mean(x.view(), o);
  }
  template <HostRange R>
  double mean(const R& x, const ReduceOptions& o = {}) const {
    return mean(std::span<const std::ranges::range_value_t<R>>(x), o);
  }

  // argmin, argmax: the index of the first least / greatest element of the view (the first NaN wins).
  template <Element T>
  std::size_t argmin(std::span<const T> x, const ReduceOptions& o = {}) const {
    return run<std::size_t>(Op::argmin, host_input(x.data(), x.size(), 1), o);
  }
  template <Element T>
  std::size_t argmin(StridedView<T> x, const ReduceOptions& o = {}) const {
    return run<std::size_t>(Op::argmin, host_input(x.data, x.count, x.stride), o);
  }
  template <Element T>
  std::size_t argmin(BufferView<T> x, const ReduceOptions& o = {}) const {
    return run<std::size_t>(Op::argmin, buffer_input(x), o);
  }
  template <Element T>
  std::size_t argmin(const Buffer<T>& x, const ReduceOptions& o = {}) const {
    return argmin(x.view(), o);
  }
  template <HostRange R>
  std::size_t argmin(const R& x, const ReduceOptions& o = {}) const {
    return argmin(std::span<const std::ranges::range_value_t<R>>(x), o);
  }

  template <Element T>
  std::size_t argmax(std::span<const T> x, const ReduceOptions& o = {}) const {
    return run<std::size_t>(Op::argmax, host_input(x.data(), x.size(), 1), o);
  }
  template <Element T>
  std::size_t argmax(StridedView<T> x, const ReduceOptions& o = {}) const {
    return run<std::size_t>(Op::argmax, host_input(x.data, x.count, x.stride), o);
  }
  template <Element T>
  std::size_t argmax(BufferView<T> x, const ReduceOptions& o = {}) const {
    return run<std::size_t>(Op::argmax, buffer_input(x), o);
  }
  template <Element T>
  std::size_t argmax(const Buffer<T>& x, const ReduceOptions& o = {}) const {
    return argmax(x.view(), o);
  }
  template <HostRange R>
  std::size_t argmax(const R& x, const ReduceOptions& o = {}) const {
    return argmax(std::span<const std::ranges::range_value_t<R>>(x), o);
  }

 private:
  template <class Result>
  Result run(Op op, const ReduceInput& in, const ReduceOptions& o) const {
    return static_cast<const Self&>(*this).template reduce_as<Result>(op, in, o);
  }
};

}  // namespace detail
}  // namespace tandem
