// How an Engine runs its calls: an executor. Every call is checked first, in one place
// (engine/validate.hpp), which hands the executor a checked call: every argument valid, the kernel found
// in the backend's table. A single-device engine's executor is a SingleDevice (the translation into the
// backend's arguments: engine/single_device.cpp); an engine over several devices has a Group
// (engine/multi_device.hpp), which only splits a checked call among its members, SingleDevices, and
// combines their results. Engine's exported entries (engine/engine.cpp) check, then hand the call over.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/backend.hpp"
#include "tandem/engine.hpp"

namespace tandem::detail {

// A checked reduction: op (mean too) over `in`, with the kernel of the backend's table.
struct ReduceCall {
  Op op;
  ReduceInput in;
  KernelId kernel;
  bool deterministic = false;
};

// A checked per-row / per-column reduction: one result per row (column) of `in` into `out`.
struct ReducePerCall {
  Op op;
  Per per;
  MatrixInput in;
  ReduceOutput out;
  KernelId kernel;
  bool deterministic = false;
};

// A checked product C = alpha * op(A) * op(B) + beta * C: op(A) is m x k, op(B) k x n, C m x n (m and n
// may be 0: nothing to compute), every entry of C's batch.
struct MatmulCall {
  MatrixInput a, b, c;
  std::size_t m, k, n;
  KernelId kernel;
  bool deterministic = false, trans_a = false, trans_b = false;
  double alpha = 1.0, beta = 0.0;
  Precision precision = Precision::full;
};

// A checked grouped product (Engine::matmul_grouped): the whole call (A and C whole, m all of op(A)'s rows, B
// one entry per group or one for every group: count 1), each group's rows of op(A) in order, and the same as one
// product per non-empty group.
struct GroupedCall {
  MatmulCall whole;
  std::vector<std::int64_t> group_rows;
  std::vector<MatmulCall> groups;
};

class Executor {
 public:
  virtual ~Executor() = default;
  // The backend of the (first) device: its kernel tables are the engine's.
  virtual const std::shared_ptr<BackendImpl>& first() const noexcept = 0;
  virtual std::vector<DeviceInfo> devices() const = 0;
  // Whether `a` is the memory of one of this engine's Buffers (the checks take no other).
  virtual bool owns(const Allocation& a) const noexcept = 0;
  // The backend result of the op's computed_as (backend_result_t; at most kBackendResultBytes: an integer
  // sum exact) into *result; the engine turns it into the op's result (engine/results.hpp).
  virtual void reduce(const ReduceCall& call, void* result) const = 0;
  // The op's result into element out.index of a Buffer (Engine::*_into).
  virtual void reduce_into(const ReduceCall& call, const OutSlot& out) const = 0;
  virtual void reduce_per(const ReducePerCall& call) const = 0;
  virtual void matmul(const MatmulCall& call) const = 0;
  // topk of checked Buffers (check_topk_buffers) on the device, enqueued; false where the backend does not
  // take it (the engine computes it on the host). The default: false.
  virtual bool topk(Per per, const MatrixInput& a, std::size_t k, bool largest, const MatrixInput& values,
                    const MatrixInput& indices) const {
    (void)per, (void)a, (void)k, (void)largest, (void)values, (void)indices;
    return false;
  }
  // A checked grouped product of Buffers in one call to the backend, enqueued; false where it does not take it
  // (the engine runs call.groups one by one). The default: false.
  virtual bool matmul_grouped(const GroupedCall& call) const {
    (void)call;
    return false;
  }
  // argsort of checked Buffers (check_argsort_buffers) likewise.
  virtual bool argsort(Per per, const MatrixInput& a, const MatrixInput& out) const {
    (void)per, (void)a, (void)out;
    return false;
  }
  // count * element_size fits in the address space, and data is not null when count > 0 (Engine checks).
  virtual std::shared_ptr<Allocation> allocate(std::size_t count, std::size_t element_size) const = 0;
  virtual std::shared_ptr<Allocation> wrap(void* data, std::size_t count, std::size_t element_size) const = 0;
  virtual void synchronize() const = 0;
};

class SingleDevice final : public Executor {
 public:
  explicit SingleDevice(std::shared_ptr<BackendImpl> impl) : impl_(std::move(impl)) {}

  const std::shared_ptr<BackendImpl>& first() const noexcept override { return impl_; }
  std::vector<DeviceInfo> devices() const override { return {impl_->device()}; }
  bool owns(const Allocation& a) const noexcept override { return &a.impl() == impl_.get(); }
  void reduce(const ReduceCall& call, void* result) const override;
  void reduce_into(const ReduceCall& call, const OutSlot& out) const override;
  void reduce_per(const ReducePerCall& call) const override;
  void matmul(const MatmulCall& call) const override;
  bool topk(Per per, const MatrixInput& a, std::size_t k, bool largest, const MatrixInput& values,
            const MatrixInput& indices) const override;
  bool argsort(Per per, const MatrixInput& a, const MatrixInput& out) const override;
  bool matmul_grouped(const GroupedCall& call) const override;
  std::shared_ptr<Allocation> allocate(std::size_t count, std::size_t element_size) const override;
  std::shared_ptr<Allocation> wrap(void* data, std::size_t count, std::size_t element_size) const override;
  void synchronize() const override;

  BackendImpl& impl() const noexcept { return *impl_; }

 private:
  std::shared_ptr<BackendImpl> impl_;
};

}  // namespace tandem::detail
