// Engine: the one entry point. It picks a backend, validates every call once, and dispatches.
//
// Thread safety: one Engine may be used from several threads at once; each call is independent.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tandem/buffer.hpp"
#include "tandem/types.hpp"

namespace tandem {

namespace detail {
class BackendImpl;
}

class Engine {
 public:
  // Backend from TANDEM_BACKEND: "cpu", "cuda" or "auto" (also when unset): auto picks CUDA when a
  // usable GPU is present, otherwise the CPU. Throws tandem::Error for any other value, and for "cuda"
  // when no usable GPU is present.
  Engine();
  // Throws tandem::Error if that backend is not compiled in or has no usable device.
  explicit Engine(Backend backend);

  Backend backend() const noexcept;
  // The devices this engine's backend runs on (one for each backend today).
  DeviceInfo device() const;

  // The kernel names this engine's backend accepts: "auto" first, then every stage.
  std::vector<std::string> reduce_kernels() const;
  std::vector<std::string> matmul_kernels() const;

  // Reductions. NaN in the input propagates (a NaN result is the canonical quiet NaN); sum of an empty
  // input is 0; min, max and mean of an empty input throw. mean is computed as double(sum(x)) / n.
  template <class T> sum_result_t<T> sum(std::span<const T> x, const ReduceOptions& opts = {}) const;
  template <class T> sum_result_t<T> sum(StridedView<T> x, const ReduceOptions& opts = {}) const;
  template <class T> sum_result_t<T> sum(const Buffer<T>& x, const ReduceOptions& opts = {}) const;
  template <class T> sum_result_t<T> sum(BufferView<T> x, const ReduceOptions& opts = {}) const;

  template <class T> T min(std::span<const T> x, const ReduceOptions& opts = {}) const;
  template <class T> T min(StridedView<T> x, const ReduceOptions& opts = {}) const;
  template <class T> T min(const Buffer<T>& x, const ReduceOptions& opts = {}) const;
  template <class T> T min(BufferView<T> x, const ReduceOptions& opts = {}) const;

  template <class T> T max(std::span<const T> x, const ReduceOptions& opts = {}) const;
  template <class T> T max(StridedView<T> x, const ReduceOptions& opts = {}) const;
  template <class T> T max(const Buffer<T>& x, const ReduceOptions& opts = {}) const;
  template <class T> T max(BufferView<T> x, const ReduceOptions& opts = {}) const;

  template <class T> double mean(std::span<const T> x, const ReduceOptions& opts = {}) const;
  template <class T> double mean(StridedView<T> x, const ReduceOptions& opts = {}) const;
  template <class T> double mean(const Buffer<T>& x, const ReduceOptions& opts = {}) const;
  template <class T> double mean(BufferView<T> x, const ReduceOptions& opts = {}) const;

  // C = A * B (row-major, any ld >= cols). Writes only the rows x cols elements of C; padding between
  // cols and ld stays untouched. C must not overlap A or B.
  template <class T>
  void matmul(MatrixView<const T> a, MatrixView<const T> b, MatrixView<T> c, const MatmulOptions& opts = {}) const;
  template <class T>
  void matmul(BufferMatrix<T> a, BufferMatrix<T> b, BufferMatrix<T> c, const MatmulOptions& opts = {}) const;

  // Memory on this engine's backend (device memory on CUDA). Contents of buffer() are unspecified.
  template <class T> Buffer<T> buffer(std::size_t count) const;
  template <class T> Buffer<T> upload(std::span<const T> host) const;

  // For the backend's own tests and benchmarks: the backend behind this engine.
  detail::BackendImpl& impl() const noexcept { return *impl_; }

 private:
  std::shared_ptr<detail::BackendImpl> impl_;
};

// Which backend TANDEM_BACKEND=auto (or unset) picks on this machine, and why, in words.
struct AutoChoice {
  Backend backend;
  std::string reason;
};
AutoChoice auto_backend();

// The backends compiled into this build, and whether each has a usable device (with the reason if not).
struct BackendStatus {
  Backend backend;
  bool compiled_in;
  bool usable;
  std::string reason;
};
std::vector<BackendStatus> backend_status();

}  // namespace tandem
