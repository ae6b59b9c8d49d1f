// How an Engine runs its calls: an executor. A single-device engine has a SingleDevice (the checks and
// the dispatch to its backend: engine/single_device.cpp); an engine over several devices has a Group
// (engine/multi_device.hpp), whose members are SingleDevices. Engine's exported entries hand every call
// to their executor, which is the only place that knows how many devices there are.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/backend.hpp"
#include "tandem/engine.hpp"

namespace tandem::detail {

class Executor {
 public:
  virtual ~Executor() = default;
  // The backend of the (first) device.
  virtual const std::shared_ptr<BackendImpl>& first() const noexcept = 0;
  virtual std::vector<DeviceInfo> devices() const = 0;
  virtual void reduce(Op op, const ReduceInput& in, const ReduceOptions& opts, void* result) const = 0;
  virtual void reduce_into(Op op, const ReduceInput& in, const OutSlot& out, const ReduceOptions& opts) const = 0;
  virtual void reduce_per(Op op, Per per, const MatrixInput& in, const ReduceOutput& out,
                          const ReduceOptions& opts) const = 0;
  virtual void matmul(const MatrixInput& a, const MatrixInput& b, const MatrixInput& c,
                      const MatmulOptions& opts) const = 0;
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
  void reduce(Op op, const ReduceInput& in, const ReduceOptions& opts, void* result) const override;
  void reduce_into(Op op, const ReduceInput& in, const OutSlot& out, const ReduceOptions& opts) const override;
  void reduce_per(Op op, Per per, const MatrixInput& in, const ReduceOutput& out,
                  const ReduceOptions& opts) const override;
  void matmul(const MatrixInput& a, const MatrixInput& b, const MatrixInput& c,
              const MatmulOptions& opts) const override;
  std::shared_ptr<Allocation> allocate(std::size_t count, std::size_t element_size) const override;
  std::shared_ptr<Allocation> wrap(void* data, std::size_t count, std::size_t element_size) const override;
  void synchronize() const override;

  // reduce()'s checks of the input, kernel and options, without running anything (tandem::mpi::Engine
  // checks every rank's part before the ranks exchange anything).
  void check_reduce(Op op, const ReduceInput& in, const ReduceOptions& opts) const;
  BackendImpl& impl() const noexcept { return *impl_; }

 private:
  std::shared_ptr<BackendImpl> impl_;
};

// The names of a kernel table, in order.
std::vector<std::string> kernel_names(const std::vector<KernelInfo>& infos);

}  // namespace tandem::detail
