// One device's executor (engine/executor.hpp): a checked call (engine/validate.cpp) translated into the
// backend's arguments (ReduceArgs, MatrixReduceArgs, MatmulArgs) and run there.
#include <cstring>

#include "common/backend.hpp"
#include "common/dispatch.hpp"
#include "common/reduce_ops.hpp"
#include "engine/executor.hpp"
#include "engine/results.hpp"
#include "engine/validate.hpp"

namespace tandem::detail {

void SingleDevice::reduce(const ReduceCall& call, void* result) const {
  const ReduceInput& in = call.in;
  const Op computed = info(call.op).computed_as;
  if (in.count == 0) {  // the op's EmptyRule (the checks refused the others): 0 (an ExactSum of 0) or 1
    std::memset(result, 0, kBackendResultBytes);
    visit(in.dtype, [&]<class T>(std::type_identity<T>) {
      visit_backend_op(computed, [&]<Op O>(std::integral_constant<Op, O>) {
        const auto v = result_of<O, T>(empty_acc<O, T>());
        std::memcpy(result, &v, sizeof v);
      });
    });
    return;
  }
  const ReduceArgs args{.op = computed,
                        .kernel = call.kernel,
                        .dtype = in.dtype,
                        .data = first_element(in),
                        .n = std::int64_t(in.count),
                        .stride = std::int64_t(in.stride),
                        .resident = in.in_buffer,
                        .deterministic = call.deterministic};
  impl_->reduce(args, result);
}

void SingleDevice::reduce_into(const ReduceCall& call, const OutSlot& out) const {
  const ReduceArgs args{.op = info(call.op).computed_as,
                        .kernel = call.kernel,
                        .dtype = call.in.dtype,
                        .data = first_element(call.in),
                        .n = std::int64_t(call.in.count),
                        .stride = std::int64_t(call.in.stride),
                        .resident = true,
                        .deterministic = call.deterministic,
                        .out = static_cast<char*>(out.allocation->data()) + out.index * size_of(out.dtype),
                        .divide = info(call.op).result == ResultKind::mean};
  impl_->reduce(args, nullptr);  // n == 0: the backend stores the op's empty result (EmptyRule)
}

void SingleDevice::reduce_per(const ReducePerCall& call) const {
  const MatrixInput& in = call.in;
  if ((call.per == Per::row ? in.rows : in.cols) == 0) return;
  const MatrixReduceArgs args{.op = info(call.op).computed_as,
                              .kernel = call.kernel,
                              .dtype = in.dtype,
                              .data = first_element(in),
                              .rows = std::int64_t(in.rows),
                              .cols = std::int64_t(in.cols),
                              .ld = std::int64_t(in.ld),
                              .per = call.per,
                              .resident = in.in_buffer,
                              .deterministic = call.deterministic,
                              .divide = info(call.op).result == ResultKind::mean};
  impl_->reduce_matrix(args, call.out.in_buffer ? call.out.allocation->data() : call.out.data);
}

namespace {

// The backend's arguments of a checked product (its batch: C's entries).
MatmulArgs matmul_args(const MatmulCall& call) {
  const MatrixInput &a = call.a, &b = call.b, &c = call.c;
  return MatmulArgs{.kernel = call.kernel,
                    .dtype = a.dtype,
                    .mixed_b = b.dtype != a.dtype ? std::optional<Dtype>(b.dtype) : std::nullopt,
                    .a = first_element(a),
                    .b = first_element(b),
                    .c = const_cast<void*>(first_element(c)),
                    .m = std::int64_t(call.m),
                    .k = std::int64_t(call.k),
                    .n = std::int64_t(call.n),
                    .lda = std::int64_t(a.ld),
                    .ldb = std::int64_t(b.ld),
                    .ldc = std::int64_t(c.ld),
                    .resident = a.in_buffer,
                    .deterministic = call.deterministic,
                    .trans_a = call.trans_a,
                    .trans_b = call.trans_b,
                    .alpha = call.alpha,
                    .beta = call.beta,
                    .precision = call.precision,
                    .batch = std::int64_t(c.count),
                    .stride_a = a.count == 1 ? 0 : std::int64_t(a.stride),
                    .stride_b = b.count == 1 ? 0 : std::int64_t(b.stride),
                    .stride_c = c.count == 1 ? 0 : std::int64_t(c.stride)};
}

}  // namespace

void SingleDevice::matmul(const MatmulCall& call) const {
  if (call.m == 0 || call.n == 0) return;
  impl_->matmul(matmul_args(call));
}

// Buffers only (host matrices are staged group by group); the engine passes no call without a group to compute.
bool SingleDevice::matmul_grouped(const GroupedCall& call) const {
  const MatmulCall& w = call.whole;
  if (!w.a.in_buffer || !w.b.in_buffer || !w.c.in_buffer) return false;
  MatmulArgs args = matmul_args(w);
  args.batch = std::int64_t(w.b.count), args.stride_a = args.stride_c = 0;
  return impl_->matmul_grouped(args, call.group_rows);
}

namespace {

// The lines of a (rows per row, else columns) and the results' layout (result r of line l likewise in the outputs).
TopkArgs line_args(Per per, const MatrixInput& a, std::size_t k, bool largest, const MatrixInput* values,
                   const MatrixInput& indices) {
  const bool rows = per == Per::row;
  auto line = [rows](const MatrixInput& v) { return rows ? std::int64_t(v.ld) : 1; };
  auto step = [rows](const MatrixInput& v) { return rows ? 1 : std::int64_t(v.ld); };
  return TopkArgs{a.dtype,
                  first_element(a),
                  std::int64_t(rows ? a.rows : a.cols),
                  std::int64_t(rows ? a.cols : a.rows),
                  line(a),
                  step(a),
                  std::int64_t(k),
                  largest,
                  values ? const_cast<void*>(first_element(*values)) : nullptr,
                  values ? line(*values) : 0,
                  values ? step(*values) : 0,
                  static_cast<std::int64_t*>(const_cast<void*>(first_element(indices))),
                  line(indices),
                  step(indices)};
}

}  // namespace

bool SingleDevice::topk(Per per, const MatrixInput& a, std::size_t k, bool largest, const MatrixInput& values,
                        const MatrixInput& indices) const {
  return impl_->topk(line_args(per, a, k, largest, &values, indices));
}

bool SingleDevice::argsort(Per per, const MatrixInput& a, const MatrixInput& out) const {
  TopkArgs args = line_args(per, a, per == Per::row ? a.cols : a.rows, true, nullptr, out);
  args.argsort = true;
  return impl_->topk(args);
}

void SingleDevice::synchronize() const { impl_->synchronize(); }

std::shared_ptr<Allocation> SingleDevice::wrap(void* data, std::size_t count, std::size_t element_size) const {
  if (count > 0) impl_->check_external(data, count * element_size);
  return std::make_shared<Allocation>(impl_, count > 0 ? data : nullptr, count * element_size);
}

std::shared_ptr<Allocation> SingleDevice::allocate(std::size_t count, std::size_t element_size) const {
  return std::make_shared<Allocation>(impl_, count * element_size);
}

}  // namespace tandem::detail
