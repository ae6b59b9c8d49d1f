// One device's executor (engine/executor.hpp): a checked call (engine/validate.cpp) translated into the
// backend's arguments (ReduceArgs, MatrixReduceArgs, MatmulArgs) and run there; the result turned into the
// engine's (the op table's result, mean divided by n).
#include <cstring>

#include "common/backend.hpp"
#include "common/dispatch.hpp"
#include "common/reduce_ops.hpp"
#include "engine/executor.hpp"
#include "engine/validate.hpp"

namespace tandem::detail {

void SingleDevice::reduce(const ReduceCall& call, void* result) const {
  const ReduceInput& in = call.in;
  const char* name = to_string(call.op);
  // The result as the op table says (include/tandem/ops.hpp): the backend runs op's computed_as and
  // writes its result (detail::result_of); mean divides it by n.
  visit(in.dtype, [&]<class T>(std::type_identity<T>) {
    visit_op(call.op, [&]<Op O>(std::integral_constant<Op, O>) {
      using R = op_result_t<O, T>;
      constexpr Op computed = info(O).computed_as;
      if (in.count == 0) {  // EmptyRule::zero
        const R zero{};
        std::memcpy(result, &zero, sizeof zero);
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
      backend_result_t<computed, T> r{};
      impl_->reduce(args, &r);
      if constexpr (info(O).result == ResultKind::mean) {
        // double(r) / n: for integers the exact sum (while it fits in int64), for floats the sum in the
        // input's compute precision (float for 16-bit inputs). One quiet NaN on every backend.
        const double m = canonical_nan(double(r) / double(in.count));
        std::memcpy(result, &m, sizeof m);
      } else if constexpr (info(O).result == ResultKind::index) {
        if (r < 0 || std::uint64_t(r) >= in.count)
          throw Error(std::string(name) + ": the backend returned index " + std::to_string(r) + " for " +
                      std::to_string(in.count) + " elements (a bug in tandem; please report it)");
        const std::size_t i = std::size_t(r);
        std::memcpy(result, &i, sizeof i);
      } else {
        const R v = canonical_nan(R(r));
        std::memcpy(result, &v, sizeof v);
      }
    });
  });
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
  impl_->reduce(args, nullptr);  // n == 0 (EmptyRule::zero): the backend stores 0
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

void SingleDevice::matmul(const MatmulCall& call) const {
  const MatrixInput &a = call.a, &b = call.b, &c = call.c;
  if (call.m == 0 || call.n == 0) return;
  const MatmulArgs args{.kernel = call.kernel,
                        .dtype = a.dtype,
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
  impl_->matmul(args);
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
