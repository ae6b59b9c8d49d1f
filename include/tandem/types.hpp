// Plain value types of the public API: backends, errors, views and options.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace tandem {

enum class Backend { cpu, cuda };

// "cpu" or "cuda".
const char* to_string(Backend b) noexcept;

// Every failure the caller can cause or handle. The message says what went wrong and what to do.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The element types every operation accepts.
template <class T>
inline constexpr bool is_reduce_type_v = std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t> ||
                                         std::is_same_v<T, float> || std::is_same_v<T, double>;
template <class T>
inline constexpr bool is_matmul_type_v = std::is_same_v<T, float> || std::is_same_v<T, double>;

// sum() of integers returns int64_t (wrapping modulo 2^64: exact and order-independent); of floats, T.
template <class T>
using sum_result_t = std::conditional_t<std::is_integral_v<T>, std::int64_t, T>;

// A row-major matrix: element (i, j) is data[i * ld + j]; ld >= cols.
template <class T>
struct MatrixView {
  T* data;
  std::size_t rows, cols, ld;

  // A MatrixView<T> is usable wherever a MatrixView<const T> is expected.
  operator MatrixView<const T>() const
    requires(!std::is_const_v<T>)
  {
    return {data, rows, cols, ld};
  }
};

// `count` elements of host memory, `stride` elements apart: data[0], data[stride], ...
// One column of a row-major matrix is StridedView{&m[0][j], rows, ld}.
template <class T>
struct StridedView {
  const T* data;
  std::size_t count;
  std::size_t stride = 1;
};

// The view of one field of an array of structs, e.g. field(std::span(particles), &Particle::mass).
template <class S, class T>
StridedView<T> field(std::span<const S> items, T S::*member) {
  static_assert(sizeof(S) % sizeof(T) == 0, "the struct size must be a multiple of the field size");
  if (items.empty()) return {nullptr, 0, sizeof(S) / sizeof(T)};
  return {&(items[0].*member), items.size(), sizeof(S) / sizeof(T)};
}

struct ReduceOptions {
  std::string kernel = "auto";  // one of Engine::reduce_kernels()
  // Bitwise-identical results on every backend, run, thread count and GPU: the sum runs in one fixed
  // association order (docs in engine/canonical.hpp). Needs kernel == "auto".
  bool deterministic = false;
};

struct MatmulOptions {
  std::string kernel = "auto";  // one of Engine::matmul_kernels()
  // Bitwise-identical results on every backend: each C(i, j) is one fma chain over k = 0 .. K-1.
  // Needs kernel == "auto".
  bool deterministic = false;
};

// One device a backend runs on.
struct DeviceInfo {
  std::string name;            // e.g. "NVIDIA H100 80GB HBM3" or the CPU model
  int compute_units = 0;       // CPU hardware threads TBB uses, or GPU multiprocessors
  std::size_t memory_bytes = 0;
  double peak_bandwidth_gbs = 0;  // theoretical memory bandwidth where known, else 0
  std::string details;         // e.g. "sm_90, 50 MiB L2"
};

}  // namespace tandem
