// The one interface every backend implements. The engine validates each call before it gets here, so
// a backend may assume: n >= 1 for min/max (n >= 0 for sum), stride >= 1, pointers valid for the
// extent they describe, ld >= cols, matching shapes, C not overlapping A or B, and a kernel name that
// is "auto" or one of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tandem/types.hpp"

namespace tandem::detail {

enum class Dtype { i32, i64, f32, f64 };
enum class ReduceOp { sum, min, max };

const char* to_string(Dtype d) noexcept;
const char* to_string(ReduceOp op) noexcept;
std::size_t size_of(Dtype d) noexcept;

template <class T> constexpr Dtype dtype_of();
template <> constexpr Dtype dtype_of<std::int32_t>() { return Dtype::i32; }
template <> constexpr Dtype dtype_of<std::int64_t>() { return Dtype::i64; }
template <> constexpr Dtype dtype_of<float>() { return Dtype::f32; }
template <> constexpr Dtype dtype_of<double>() { return Dtype::f64; }

// n elements data[0], data[stride], ... ; `resident` means data lives in the backend's own memory
// (a Buffer), otherwise in host memory.
struct ReduceArgs {
  ReduceOp op;
  Dtype dtype;
  const void* data;
  std::int64_t n;
  std::int64_t stride;
  bool resident;
  bool deterministic = false;  // the canonical order of engine/canonical.hpp (kernel is then "auto")
};

// C (m x n, ldc) = A (m x k, lda) * B (k x n, ldb), all row-major, all in host memory or all resident.
struct MatmulArgs {
  Dtype dtype;  // f32 or f64
  const void* a;
  const void* b;
  void* c;
  std::int64_t m, k, n;
  std::int64_t lda, ldb, ldc;
  bool resident;
  bool deterministic = false;  // the canonical fma chain of engine/canonical.hpp (kernel is then "auto")
};

class BackendImpl {
 public:
  virtual ~BackendImpl() = default;

  virtual Backend kind() const noexcept = 0;
  virtual DeviceInfo device() const = 0;

  // Stage names without "auto".
  virtual std::vector<std::string> reduce_kernels() const = 0;
  virtual std::vector<std::string> matmul_kernels() const = 0;

  // Writes the result to *result: an int64_t for integer sums, otherwise a value of the input's type.
  // kernel is "auto" or one of reduce_kernels().
  virtual void reduce(const ReduceArgs& args, std::string_view kernel, void* result) = 0;
  virtual void matmul(const MatmulArgs& args, std::string_view kernel) = 0;

  // Backend memory. allocate(0) may return nullptr.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p) noexcept = 0;
  virtual void copy_to_backend(void* dst, const void* host_src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* src, std::size_t bytes) = 0;
};

}  // namespace tandem::detail
