// Engine: the one entry point. It picks a backend, validates every call once, and dispatches.
//
// The typed overloads below are inline: each describes its input (element type, address, count,
// stride, or the Buffer it lives in) and forwards to one exported entry per kind of operation, where
// validation and dispatch happen (engine/engine.cpp).
//
// Thread safety: one Engine may be used from several threads at once; each call is independent.
#pragma once

#include <concepts>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tandem/buffer.hpp"
#include "tandem/export.hpp"
#include "tandem/reductions.hpp"
#include "tandem/types.hpp"

namespace tandem {

namespace mpi {
class Engine;  // include/tandem/mpi.hpp: runs this engine's reductions on each rank's part
}

namespace detail {
class BackendImpl;
class Executor;  // engine/executor.hpp: how an engine runs its calls, on one device or over several

// The output element of a *_into call: out's memory, its dtype and size, and the element's index.
struct OutSlot {
  Dtype dtype;
  const Allocation* allocation;
  std::size_t size, index;
};

// A row-major matrix, or `count` of them `stride` elements apart, as the exported entry takes it (host
// memory, or a Buffer from element offset).
struct MatrixInput {
  Dtype dtype;
  const void* data;
  std::size_t rows, cols, ld;
  bool in_buffer = false;
  const Allocation* allocation = nullptr;
  std::size_t offset = 0, buffer_size = 0;
  std::size_t count = 1, stride = 0;
  std::size_t outer_count = 1, outer_stride = 0;  // (a batch's outer dimension: BatchView::outer)
};

// Where a per-row / per-column reduction writes its results: `size` elements of `element_size` bytes,
// host memory (data) or a Buffer (allocation), from element 0.
struct ReduceOutput {
  void* data;
  std::size_t size, element_size;
  bool in_buffer = false;
  const Allocation* allocation = nullptr;
};
template <class R>
ReduceOutput host_output(std::span<R> out) {
  return {out.data(), out.size(), sizeof(R)};
}
template <class R>
ReduceOutput buffer_output(const Buffer<R>& out) {
  return {nullptr, out.size(), sizeof(R), true, out.allocation().get()};
}

template <class T>
MatrixInput host_matrix(MatrixView<T> m) {
  return {dtype_of<T>, m.data, m.rows, m.cols, m.ld};
}
template <class T>
MatrixInput host_batch(BatchView<T> m) {
  return {dtype_of<T>, m.data, m.rows,  m.cols,   m.ld,          false,         nullptr,
          0,           0,      m.count, m.stride, m.outer_count, m.outer_stride};
}
template <class T>
MatrixInput buffer_batch(BufferBatch<T> m) {
  const bool has = m.buffer != nullptr && m.buffer->allocation() != nullptr;
  return {dtype_of<T>,
          has ? m.buffer->data() : nullptr,
          m.rows,
          m.cols,
          m.ld,
          true,
          has ? m.buffer->allocation().get() : nullptr,
          m.offset,
          has ? m.buffer->size() : 0,
          m.count,
          m.stride,
          m.outer_count,
          m.outer_stride};
}
template <class T>
MatrixInput buffer_matrix(BufferMatrix<T> m) {
  return buffer_batch(BufferBatch<T>{m.buffer, m.offset, m.rows, m.cols, m.ld, 1, 0});
}
}  // namespace detail

class TANDEM_API Engine : public detail::VectorReductions<Engine> {
 public:
  // Backend from TANDEM_BACKEND: "cpu", "cuda" or "auto" (also when unset): auto picks CUDA when a
  // usable GPU is present, otherwise the CPU. Throws tandem::Error for any other value, and for "cuda"
  // when no usable GPU is present.
  Engine();
  // Throws tandem::Error if that backend is not compiled in or has no usable device.
  explicit Engine(Backend backend);
  // On the caller's device and stream (EngineOptions). The caller's current CUDA device is the same
  // before and after every call of the engine.
  Engine(Backend backend, const EngineOptions& options);

  Backend backend() const noexcept;
  // The device this engine runs on (the first one of a multi-device engine).
  DeviceInfo device() const;
  // Every device it runs on, in EngineOptions::devices order (one entry for a single-device engine).
  std::vector<DeviceInfo> devices() const;

  // The kernel names this engine's backend accepts: "auto" first, then every stage.
  std::vector<std::string> reduce_kernels() const;
  std::vector<std::string> matmul_kernels() const;
  // What each of those kernels accepts and promises, in the same order ("auto" first). (The same tables
  // without an engine: tandem::reduce_kernel_info(Backend), below.)
  std::vector<KernelInfo> reduce_kernel_info() const;
  std::vector<KernelInfo> matmul_kernel_info() const;

  // Reductions, one per row of the op table (include/tandem/ops.hpp: tandem::ops, each op's result type
  // and empty-input rule). NaN in the input propagates (a NaN result is the canonical quiet NaN); an empty
  // input gives +0.0 for the sums (EmptyRule::zero) and throws for the others. mean is sum(x) / n, for
  // integers the exact sum (never wrapped) converted to double once. 16-bit inputs (bfloat16, half) are read as the
  // floats they convert to (exactly): sum, min and max return float (compute_t<T>), as do their *_into and per-row
  // forms. argmin / argmax give the index of the first least (argmin) or greatest (argmax) element, counted in elements
  // of the view (0 .. count - 1): the first NaN wins (NumPy's rule), -0.0 is below +0.0 as in min and max; not every
  // CUDA stage runs them (KernelInfo::ops says which do).
  //
  // The vector forms (detail::VectorReductions, reductions.hpp), for each op: eng.sum(x) of a host span
  // or contiguous range, a StridedView, a Buffer or a BufferView, e.g. eng.sum(x),
  // eng.min(buf.view(0, n, 2)), eng.argmax(v, {"single_pass"}), eng.reduce<Op::max>(x).
  using VectorReductions::reduce;
#define TANDEM_ENGINE_USING(name, ...) using VectorReductions::name;
  TANDEM_OPS(TANDEM_ENGINE_USING)
#undef TANDEM_ENGINE_USING

  // Per-row / per-column reductions of a row-major matrix (any ld >= cols): Per::row writes one result per
  // row (out.size() == a.rows), Per::col one per column (out.size() == a.cols), each the op of that row
  // or column taken as a vector, with the rules above (an empty row or column: as an empty input).
  // The result types are those of the vector ops (argmin / argmax: the index within the row or column).
  // Host views compute before returning; the Buffer forms write elements 0 .. count - 1 of out (a Buffer
  // of at least count elements; argmin / argmax into a Buffer<std::int64_t>: op_buffer_result_t) and, like
  // the *_into calls, only enqueue on CUDA. Kernel "auto" only. For each op, e.g. sum:
  //   eng.sum(MatrixView<const T> a, Per per, std::span<op_result_t<Op::sum, T>> out, options)
  //   eng.sum(BufferMatrix<T> a, Per per, const Buffer<op_buffer_result_t<Op::sum, T>>& out, options)
  // and eng.reduce<Op::sum>(a, per, out, options) alike.
  template <Op O, class T>
  requires Element<std::remove_const_t<T>>
  void reduce(MatrixView<T> a, Per per, std::span<op_result_t<O, T>> out, const ReduceOptions& o = {}) const {
    reduce_per(O, per, detail::host_matrix(a), detail::host_output(out), o);
  }
  template <Op O, Element T>
  void reduce(BufferMatrix<T> a, Per per, const Buffer<op_buffer_result_t<O, T>>& out,
              const ReduceOptions& o = {}) const {
    reduce_per(O, per, detail::buffer_matrix(a), detail::buffer_output(out), o);
  }
#define TANDEM_MATRIX_REDUCTION(name, ...)                                                                          \
  template <class T>                                                                                                \
  requires Element<std::remove_const_t<T>>                                                                          \
  void name(MatrixView<T> a, Per per, std::span<op_result_t<Op::name, T>> out, const ReduceOptions& o = {}) const { \
    reduce<Op::name>(a, per, out, o);                                                                               \
  }                                                                                                                 \
  template <Element T>                                                                                              \
  void name(BufferMatrix<T> a, Per per, const Buffer<op_buffer_result_t<Op::name, T>>& out,                         \
            const ReduceOptions& o = {}) const {                                                                    \
    reduce<Op::name>(a, per, out, o);                                                                               \
  }
  TANDEM_OPS(TANDEM_MATRIX_REDUCTION)
#undef TANDEM_MATRIX_REDUCTION

  // The variance sum((x - mean)^2) / (n - ddof) and the standard deviation, its square root, of x's elements
  // (per row / column: of each row's or column's), as NumPy's var and std compute them, in two passes: the
  // mean (this engine's, in double: of the elements as doubles, or an integer input's exact sum; rounded to
  // var_result_t<T>), the deviations x - mean in var_result_t<T> (one exactly rounded subtraction per
  // element, into a temporary of x's size in host memory, or in a Buffer for a Buffer input), their sum of
  // squares (this engine's sumsq), one division by n - ddof (and std's correctly rounded square root).
  // Deterministic mode runs the mean and the sum of squares in the canonical order, so the bits are the same
  // on every backend and equal to the Python module's eng.var / eng.std. Throws tandem::Error when n - ddof
  // <= 0 (an empty input among them).
  template <Element T>
  var_result_t<T> var(StridedView<T> x, double ddof = 0, const ReduceOptions& o = {}) const {
    var_result_t<T> r{};
    moment_entry(false, detail::host_input(x.data, x.count, x.stride), ddof, o, &r);
    return r;
  }
  template <Element T>
  var_result_t<T> std(StridedView<T> x, double ddof = 0, const ReduceOptions& o = {}) const {
    var_result_t<T> r{};
    moment_entry(true, detail::host_input(x.data, x.count, x.stride), ddof, o, &r);
    return r;
  }
  template <Element T>
  var_result_t<T> var(std::span<const T> x, double ddof = 0, const ReduceOptions& o = {}) const {
    return var(StridedView<T>{x.data(), x.size(), 1}, ddof, o);
  }
  template <Element T>
  var_result_t<T> std(std::span<const T> x, double ddof = 0, const ReduceOptions& o = {}) const {
    return std(StridedView<T>{x.data(), x.size(), 1}, ddof, o);
  }
  // Buffers: the same steps where the Buffer lies (the deviations in a temporary Buffer of x's size); they
  // wait for the result.
  template <Element T>
  var_result_t<T> var(BufferView<T> x, double ddof = 0, const ReduceOptions& o = {}) const {
    var_result_t<T> r{};
    moment_entry(false, detail::buffer_input(x), ddof, o, &r);
    return r;
  }
  template <Element T>
  var_result_t<T> std(BufferView<T> x, double ddof = 0, const ReduceOptions& o = {}) const {
    var_result_t<T> r{};
    moment_entry(true, detail::buffer_input(x), ddof, o, &r);
    return r;
  }
  template <Element T>
  var_result_t<T> var(const Buffer<T>& x, double ddof = 0, const ReduceOptions& o = {}) const {
    return var(BufferView<T>{&x, 0, x.size(), 1}, ddof, o);
  }
  template <Element T>
  var_result_t<T> std(const Buffer<T>& x, double ddof = 0, const ReduceOptions& o = {}) const {
    return std(BufferView<T>{&x, 0, x.size(), 1}, ddof, o);
  }
  template <HostRange R>
  auto var(const R& x, double ddof = 0, const ReduceOptions& o = {}) const {
    return var(std::span<const std::ranges::range_value_t<R>>(x), ddof, o);
  }
  template <HostRange R>
  auto std(const R& x, double ddof = 0, const ReduceOptions& o = {}) const {
    return std(std::span<const std::ranges::range_value_t<R>>(x), ddof, o);
  }
  template <class T>
  requires Element<std::remove_const_t<T>>
  void var(MatrixView<T> a, Per per, std::span<var_result_t<std::remove_const_t<T>>> out, double ddof = 0,
           const ReduceOptions& o = {}) const {
    moment_per(false, per, detail::host_matrix(a), detail::host_output(out), ddof, o);
  }
  template <class T>
  requires Element<std::remove_const_t<T>>
  void std(MatrixView<T> a, Per per, std::span<var_result_t<std::remove_const_t<T>>> out, double ddof = 0,
           const ReduceOptions& o = {}) const {
    moment_per(true, per, detail::host_matrix(a), detail::host_output(out), ddof, o);
  }
  // Per row / column of a Buffer matrix into a Buffer of at least one result per row (column); waits.
  template <Element T>
  void var(BufferMatrix<T> a, Per per, const Buffer<var_result_t<T>>& out, double ddof = 0,
           const ReduceOptions& o = {}) const {
    moment_per(false, per, detail::buffer_matrix(a), detail::buffer_output(out), ddof, o);
  }
  template <Element T>
  void std(BufferMatrix<T> a, Per per, const Buffer<var_result_t<T>>& out, double ddof = 0,
           const ReduceOptions& o = {}) const {
    moment_per(true, per, detail::buffer_matrix(a), detail::buffer_output(out), ddof, o);
  }

  // C = alpha * op(A) * op(B) + beta * C (MatmulOptions: trans_a, trans_b, alpha, beta, precision),
  // row-major, any ld >= cols; the views describe the matrices as stored. Writes only the rows x cols
  // elements of C; padding between cols and ld stays untouched. C must not overlap A or B. Host
  // matrices wait for the result; Buffer matrices only enqueue (CUDA). 16-bit A and B (bfloat16, half)
  // multiply into a float C (compute_t<T>) with float accumulation.
  template <class T>
  requires is_matmul_type_v<T>
  void matmul(MatrixView<const T> a, MatrixView<const T> b, MatrixView<compute_t<T>> c,
              const MatmulOptions& o = {}) const {
    run_matmul(detail::host_matrix(a), detail::host_matrix(b), detail::host_matrix(c), o);
  }
  template <class T>
  requires is_matmul_type_v<T>
  void matmul(BufferMatrix<T> a, BufferMatrix<T> b, BufferMatrix<compute_t<T>> c, const MatmulOptions& o = {}) const {
    run_matmul(detail::buffer_matrix(a), detail::buffer_matrix(b), detail::buffer_matrix(c), o);
  }
  // Batches: C[e] = alpha * op(A[e]) * op(B[e]) + beta * C[e] for e = 0 .. c.count - 1. A and B have C's
  // count, or stride 0 (one matrix for every entry; its count may then be 1). C's entries must not
  // overlap each other, A or B. (The first operand's type is deduced, so that a braced
  // matmul<float>({...}, {...}, {...}) always means the MatrixView form.)
  template <class T, class A>
  requires is_matmul_type_v<T> && std::convertible_to<const A&, BatchView<const T>>
  void matmul(const A& a, BatchView<const T> b, BatchView<compute_t<T>> c, const MatmulOptions& o = {}) const {
    run_matmul(detail::host_batch(BatchView<const T>(a)), detail::host_batch(b), detail::host_batch(c), o);
  }
  template <class T, class A>
  requires is_matmul_type_v<T> && std::same_as<A, BufferBatch<T>>
  void matmul(const A& a, BufferBatch<T> b, BufferBatch<compute_t<T>> c, const MatmulOptions& o = {}) const {
    run_matmul(detail::buffer_batch(a), detail::buffer_batch(b), detail::buffer_batch(c), o);
  }

  // Mixed input types: A and B any two different types of float, bfloat16 and half (weights in 16 bits,
  // activations in float, say), C float. The result is the float product of the converted operands (each
  // conversion is exact): every kernel, form, precision and mode gives what it gives for the same product of
  // float matrices holding those values. The 16-bit operand is converted as it is read where the kernel
  // allows it (the CPU's products; see docs/API.md). Views of const elements, as for one type.
  template <class TA, class TB>
  requires is_mixed_matmul_v<TA, TB>
  void matmul(MatrixView<const TA> a, MatrixView<const TB> b, MatrixView<float> c, const MatmulOptions& o = {}) const {
    run_matmul(detail::host_matrix(a), detail::host_matrix(b), detail::host_matrix(c), o);
  }
  template <class TA, class TB>
  requires is_mixed_matmul_v<TA, TB>
  void matmul(BufferMatrix<TA> a, BufferMatrix<TB> b, BufferMatrix<float> c, const MatmulOptions& o = {}) const {
    run_matmul(detail::buffer_matrix(a), detail::buffer_matrix(b), detail::buffer_matrix(c), o);
  }
  template <class TA, class TB>
  requires is_mixed_matmul_v<TA, TB>
  void matmul(BatchView<const TA> a, BatchView<const TB> b, BatchView<float> c, const MatmulOptions& o = {}) const {
    run_matmul(detail::host_batch(a), detail::host_batch(b), detail::host_batch(c), o);
  }
  template <class TA, class TB>
  requires is_mixed_matmul_v<TA, TB>
  void matmul(BufferBatch<TA> a, BufferBatch<TB> b, BufferBatch<float> c, const MatmulOptions& o = {}) const {
    run_matmul(detail::buffer_batch(a), detail::buffer_batch(b), detail::buffer_batch(c), o);
  }

  // Grouped (expert) products: op(A)'s rows split into consecutive groups of group_sizes[g] rows, in order
  // (the sizes add up to op(A)'s rows; a group may be empty), and group g multiplied by B's entry g:
  //   C's rows of group g = alpha * (op(A)'s rows of group g) * op(B[g]) + beta * (C's rows of group g).
  // b has one entry per group (count == group_sizes.size()), or stride 0 (one matrix for every group). A and B
  // of one type or a mixed pair (C: matmul_result_t<TA, TB>), every MatmulOptions as for matmul (with trans_a,
  // a group is columns of the stored A). Each group's rows of C are exactly what matmul gives for that group
  // alone (the same bits). C must not overlap A or any entry of B.
  template <class TA, class TB = TA>
  requires(is_matmul_type_v<TA> && (std::is_same_v<TA, TB> || is_mixed_matmul_v<TA, TB>)) void matmul_grouped(
      MatrixView<const TA> a, BatchView<const TB> b, MatrixView<matmul_result_t<TA, TB>> c,
      std::span<const std::size_t> group_sizes, const MatmulOptions& o = {}) const {
    run_matmul_grouped(detail::host_matrix(a), detail::host_batch(b), detail::host_matrix(c), group_sizes, o);
  }
  template <class TA, class TB = TA>
  requires(is_matmul_type_v<TA> && (std::is_same_v<TA, TB> || is_mixed_matmul_v<TA, TB>)) void matmul_grouped(
      BufferMatrix<TA> a, BufferBatch<TB> b, BufferMatrix<matmul_result_t<TA, TB>> c,
      std::span<const std::size_t> group_sizes, const MatmulOptions& o = {}) const {
    run_matmul_grouped(detail::buffer_matrix(a), detail::buffer_batch(b), detail::buffer_matrix(c), group_sizes, o);
  }

  // Top-k and argsort of host memory (engine/topk.cpp; computed on the host, on oneTBB's threads, whatever
  // the backend; for Buffers below). topk: the k largest (TopkOptions::largest) or k smallest elements of a vector, or
  // of each row / column of a matrix, and their indices, most extreme first; equal values by index (the first index
  // first); NaN is more extreme than any number, as in argmax / argmin (the first NaN wins), so NaNs come
  // first, by index. Values are the elements themselves, indices int64 into the vector (or within the row /
  // column). 1 <= k <= the vector's (row's, column's) length. Per::row writes rows x k matrices (row i's
  // results in row i), Per::col k x cols ones (column j's in column j).
  //   eng.topk(x, k, values, indices, options)          x a span or StridedView; values, indices spans of k
  //   eng.topk(a, per, k, values, indices, options)     a MatrixView; values, indices MatrixViews
  template <Element T>
  void topk(StridedView<T> x, std::size_t k, std::span<T> values, std::span<std::int64_t> indices,
            const TopkOptions& o = {}) const {
    topk_entry(Per::col, detail::host_matrix(MatrixView<const T>{x.data, x.count, 1, x.stride}), k, values.data(),
               values.size(), 1, indices.data(), indices.size(), 1, o);
  }
  template <Element T>
  void topk(std::span<const T> x, std::size_t k, std::span<T> values, std::span<std::int64_t> indices,
            const TopkOptions& o = {}) const {
    topk(StridedView<T>{x.data(), x.size(), 1}, k, values, indices, o);
  }
  template <Element T>
  void topk(MatrixView<const T> a, Per per, std::size_t k, MatrixView<T> values, MatrixView<std::int64_t> indices,
            const TopkOptions& o = {}) const {
    topk_entry(per, detail::host_matrix(a), k, values.data, values.rows * values.cols, values.ld, indices.data,
               indices.rows * indices.cols, indices.ld, o, values.rows, values.cols, indices.rows, indices.cols);
  }
  // The same of Buffers, results into Buffers (values: k elements of T from their view's start for a
  // vector; matrices as above). On CUDA on the GPU, on the engine's stream: a selection kernel of its own for
  // k <= 1024, enqueued without waiting; for a larger k each line sorted (the call may wait for the stream);
  // otherwise (the CPU, a multi-device engine, lines past 2^30 elements) computed as for host memory, the call
  // waiting for the results.
  template <Element T>
  void topk(BufferView<T> x, std::size_t k, BufferView<T> values, BufferView<std::int64_t> indices,
            const TopkOptions& o = {}) const {
    auto column = []<class E>(const BufferView<E>& v, std::size_t rows) {  // (a vector as a column: stride = ld)
      return detail::buffer_matrix(BufferMatrix<E>{v.buffer, v.offset, rows, std::size_t(1), v.stride});
    };
    topk_buffer_entry(Per::col, column(x, x.count), k, column(values, std::min(values.count, k)),
                      column(indices, std::min(indices.count, k)), o);
  }
  template <Element T>
  void topk(BufferMatrix<T> a, Per per, std::size_t k, BufferMatrix<T> values, BufferMatrix<std::int64_t> indices,
            const TopkOptions& o = {}) const {
    topk_buffer_entry(per, detail::buffer_matrix(a), k, detail::buffer_matrix(values), detail::buffer_matrix(indices),
                      o);
  }
  // Each row's (Per::row) or column's indices in ascending order of its values, equal values by index (a
  // stable sort), NaN last: NumPy's np.argsort(kind='stable'). out: a MatrixView of a's shape.
  template <Element T>
  void argsort(MatrixView<const T> a, Per per, MatrixView<std::int64_t> out) const {
    argsort_entry(per, detail::host_matrix(a), out.data, out.rows, out.cols, out.ld);
  }
  // The same of a Buffer into a Buffer of a's shape. On CUDA each line is sorted on the GPU, on the engine's
  // stream (the call may wait for it); otherwise (the CPU, a multi-device engine, lines past 2^30 elements)
  // computed as for host memory, the call waiting for the results.
  template <Element T>
  void argsort(BufferMatrix<T> a, Per per, BufferMatrix<std::int64_t> out) const {
    argsort_buffer_entry(per, detail::buffer_matrix(a), detail::buffer_matrix(out));
  }

  // Memory on this engine's backend (device memory on CUDA). Contents of buffer() are unspecified.
  template <Element T>
  Buffer<T> buffer(std::size_t count) const {
    return Buffer<T>(allocate(count, sizeof(T)), count);
  }
  template <Element T>
  Buffer<T> upload(std::span<const T> host) const {
    if (!host.empty() && host.data() == nullptr) throw value_error("upload: data is null but size is non-zero");
    Buffer<T> b = buffer<T>(host.size());
    b.upload(host);
    return b;
  }
  template <HostRange R>
  auto upload(const R& host) const {
    return upload(std::span<const std::ranges::range_value_t<R>>(host));
  }

  // A Buffer over memory the caller owns and keeps alive (nothing is copied, nothing freed): device
  // memory of this engine's GPU on CUDA (checked: host memory, another GPU's memory or a null pointer
  // with count > 0 throw tandem::Error), host memory on the CPU backend. Every op that takes a Buffer
  // takes it.
  template <Element T>
  Buffer<T> wrap(T* data, std::size_t count) const {
    return Buffer<T>(wrap_memory(data, count, sizeof(T)), count);
  }

  // Results that don't wait: the result goes into element `index` of `out` (a Buffer of this engine)
  // and the call returns once the work is enqueued on the engine's stream (CUDA; the CPU backend
  // computes it before returning). Validation errors throw at the call; errors of the enqueued work
  // surface at the next call that waits (synchronize(), a call returning a value, a download). On an
  // engine over several devices they compute the result first, then write it (they wait). For each op,
  // e.g. sum: eng.sum_into(BufferView<T> x, const Buffer<op_buffer_result_t<Op::sum, T>>& out, index,
  // options), the same with a Buffer x, and eng.reduce_into<Op::sum>(x, out, index, options) alike
  // (argmin / argmax into a Buffer<std::int64_t> element: the index, as an element type Buffers hold).
  template <Op O, Element T>
  void reduce_into(BufferView<T> x, const Buffer<op_buffer_result_t<O, T>>& out, std::size_t index = 0,
                   const ReduceOptions& o = {}) const {
    reduce_into_entry(O, detail::buffer_input(x), out_slot(out, index), o);
  }
  template <Op O, Element T>
  void reduce_into(const Buffer<T>& x, const Buffer<op_buffer_result_t<O, T>>& out, std::size_t index = 0,
                   const ReduceOptions& o = {}) const {
    reduce_into<O>(x.view(), out, index, o);
  }
#define TANDEM_INTO_REDUCTION(name, ...)                                                                          \
  template <Element T>                                                                                            \
  void name##_into(BufferView<T> x, const Buffer<op_buffer_result_t<Op::name, T>>& out, std::size_t index = 0,    \
                   const ReduceOptions& o = {}) const {                                                           \
    reduce_into<Op::name>(x, out, index, o);                                                                      \
  }                                                                                                               \
  template <Element T>                                                                                            \
  void name##_into(const Buffer<T>& x, const Buffer<op_buffer_result_t<Op::name, T>>& out, std::size_t index = 0, \
                   const ReduceOptions& o = {}) const {                                                           \
    reduce_into<Op::name>(x.view(), out, index, o);                                                               \
  }
  TANDEM_OPS(TANDEM_INTO_REDUCTION)
#undef TANDEM_INTO_REDUCTION

  // Waits until everything this engine enqueued has finished; throws tandem::Error for a failure of
  // that work.
  void synchronize() const;

  // For the backend's own tests and benchmarks: the backend behind this engine.
  detail::BackendImpl& impl() const noexcept { return *impl_; }

 private:
  // The exported entries: validate, then dispatch. reduce_entry() writes op's result (op_result_t of
  // the input type) to *result.
  void reduce_entry(Op op, const detail::ReduceInput& in, const ReduceOptions& opts, void* result) const;
  // reduce()'s checks of the input, kernel and options, without running anything (tandem::mpi::Engine
  // checks every rank's part before the ranks exchange anything).
  void check_reduce(Op op, const detail::ReduceInput& in, const ReduceOptions& opts) const;
  // One rank's part of a tandem::mpi::Engine reduction (op: a backend op): the backend's result of it
  // (an integer sum exact, up to 16 bytes), for the ranks to combine.
  void reduce_part_entry(Op op, const detail::ReduceInput& in, const ReduceOptions& opts, void* backend_result) const;
  void reduce_per(Op op, Per per, const detail::MatrixInput& a, const detail::ReduceOutput& out,
                  const ReduceOptions& opts) const;
  void run_matmul(const detail::MatrixInput& a, const detail::MatrixInput& b, const detail::MatrixInput& c,
                  const MatmulOptions& opts) const;
  void run_matmul_grouped(const detail::MatrixInput& a, const detail::MatrixInput& b, const detail::MatrixInput& c,
                          std::span<const std::size_t> group_sizes, const MatmulOptions& o) const;
  // ReduceOptions::where / initial of a vector and per row / column (engine/masked.cpp).
  void masked_entry(Op op, const detail::ReduceInput& in, const ReduceOptions& opts, void* result) const;
  void masked_per(Op op, Per per, const detail::MatrixInput& a, const detail::ReduceOutput& out,
                  const ReduceOptions& opts) const;
  // var (root: std) of a vector and per row / column (engine/moments.cpp).
  void moment_entry(bool root, const detail::ReduceInput& in, double ddof, const ReduceOptions& opts,
                    void* result) const;
  void moment_per(bool root, Per per, const detail::MatrixInput& a, const detail::ReduceOutput& out, double ddof,
                  const ReduceOptions& opts) const;
  // topk and argsort (engine/topk.cpp). A vector is an n x 1 matrix (ld: its stride) reduced per column;
  // its outputs are k x 1 (ld 1). values / indices: `*_size` elements (a span's) or a rows x cols MatrixView.
  void topk_entry(Per per, const detail::MatrixInput& a, std::size_t k, void* values, std::size_t values_size,
                  std::size_t values_ld, std::int64_t* indices, std::size_t indices_size, std::size_t indices_ld,
                  const TopkOptions& o, std::size_t values_rows = 0, std::size_t values_cols = 0,
                  std::size_t indices_rows = 0, std::size_t indices_cols = 0) const;
  void topk_buffer_entry(Per per, const detail::MatrixInput& a, std::size_t k, const detail::MatrixInput& values,
                         const detail::MatrixInput& indices, const TopkOptions& o) const;
  void argsort_entry(Per per, const detail::MatrixInput& a, std::int64_t* out, std::size_t rows, std::size_t cols,
                     std::size_t ld) const;
  void argsort_buffer_entry(Per per, const detail::MatrixInput& a, const detail::MatrixInput& out) const;
  std::shared_ptr<detail::Allocation> allocate(std::size_t count, std::size_t element_size) const;
  std::shared_ptr<detail::Allocation> wrap_memory(void* data, std::size_t count, std::size_t element_size) const;
  template <class R>
  static detail::OutSlot out_slot(const Buffer<R>& out, std::size_t index) {
    return {dtype_of<R>, out.allocation().get(), out.size(), index};
  }
  void reduce_into_entry(Op op, const detail::ReduceInput& in, const detail::OutSlot& out,
                         const ReduceOptions& opts) const;

  template <class R>
  R reduce_as(Op op, const detail::ReduceInput& in, const ReduceOptions& opts) const {
    R result{};
    reduce_entry(op, in, opts, &result);
    return result;
  }

  std::shared_ptr<detail::Executor> exec_;     // one device, or a Group of them (engine/executor.hpp)
  std::shared_ptr<detail::BackendImpl> impl_;  // exec_->first(): the backend (of the first device)
  friend class mpi::Engine;
  friend class detail::VectorReductions<Engine>;
};

// Which backend TANDEM_BACKEND=auto (or unset) picks on this machine, and why, in words.
struct AutoChoice {
  Backend backend;
  std::string reason;
};
TANDEM_API AutoChoice auto_backend();

// The backends compiled into this build, and whether each has a usable device (with the reason if not).
struct BackendStatus {
  Backend backend;
  bool compiled_in;
  bool usable;
  std::string reason;
  int devices = 0;  // the devices found: CUDA GPUs (EngineOptions::devices takes their indices); 1 for the CPU
  // Where the backend's code lives: "built into libtandem" (the CPU), or its module's state as
  // module_status() gives it (where it was loaded from, or why it was not).
  std::string module;
};
TANDEM_API std::vector<BackendStatus> backend_status();

// A backend's kernel tables, read without an engine and without its device: what an Engine of that
// backend gives (Engine::reduce_kernel_info() / matmul_kernel_info(): "auto" first, then every stage), also
// where the backend cannot run here; only KernelInfo::runs_here, which needs the device, then says whether
// a kernel needs nothing beyond the backend. The CUDA tables come from the CUDA module, which needs
// the CUDA libraries it links but no GPU or driver. Throws tandem::Error (ErrorKind::failure) with the
// reason and what to do when the backend is not compiled into this build or its module cannot be loaded.
TANDEM_API std::vector<KernelInfo> reduce_kernel_info(Backend backend);
TANDEM_API std::vector<KernelInfo> matmul_kernel_info(Backend backend);

// The backend modules this build of libtandem loads at run time (the CUDA backend is one, in
// libtandem_cuda.so next to libtandem; NCCL for engines over several GPUs another): where each was
// found, whether it is loaded, and why not. Asking loads nothing. Empty for a build without CUDA.
struct ModuleStatus {
  std::string name;  // "cuda", "nccl": the file libtandem_<name>.so
  std::string path;  // the file found (loaded, or to be loaded when needed); "" when none was found
  bool loaded = false;
  std::string reason;  // in words: where it was loaded from, why it was not, or when it will be
};
TANDEM_API std::vector<ModuleStatus> module_status();

}  // namespace tandem
