// The CPU backend.
//
// Reductions split the input into blocked ranges with oneTBB; a float or double sum leaf is one Eigen
// expression over a Map (vectorised by Eigen), the other leaves are backends/cpu/leaves.hpp's (SIMD
// lanes, vectorised by the compiler), and leaves are combined with the operators of
// backends/common/reduce_ops.hpp.
//   tbb_vectorized    tbb::parallel_reduce, auto_partitioner (default)
//   tbb_deterministic tbb::parallel_deterministic_reduce with fixed 16 Ki-element leaves: the same
//                     association order, and so the same float bits, for any number of threads
//   serial            one leaf over the whole input on the calling thread
// Matmul (eigen_tbb, eigen_serial) lives in backends/cpu/matmul.cpp.
// Deterministic mode (backends/common/canonical.hpp) runs its own kernel: canonical_sum (chunks in
// parallel, 32 SIMD lanes per chunk); matmul.cpp has the canonical fma chain.
#include <tbb/blocked_range.h>
#include <tbb/blocked_range2d.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <new>
#include <thread>

#include "backends/common/canonical.hpp"
#include "backends/common/reduce_ops.hpp"
#include "backends/cpu/host_reduce.hpp"
#include "backends/cpu/leaves.hpp"
#include "backends/cpu/matmul.hpp"
#include "backends/cpu/per_matrix.hpp"
#include "engine/dispatch.hpp"
#include "engine/registry.hpp"

namespace tandem::detail {
namespace {

using cpu_leaves::arg_leaf;
using cpu_leaves::integer_sum_leaf;
using cpu_leaves::min_max_leaf;
using cpu_leaves::storage_sum_leaf;

constexpr std::int64_t kDeterministicLeaf = 1 << 14;  // elements per leaf of tbb_deterministic
constexpr std::int64_t kGrain = 1 << 14;              // smallest leaf of tbb_vectorized

template <class T>
using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;

// Reduces x[begin*stride], ..., x[(end-1)*stride]: float and double sums with one vectorised Eigen
// expression, integer sums with integer_sum_leaf, 16-bit sums with storage_sum_leaf, min and max with
// min_max_leaf, argmin and argmax with arg_leaf (leaves.hpp).
template <class Op>
typename Op::Acc reduce_leaf(const typename Op::In* x, std::int64_t begin, std::int64_t end, std::int64_t stride) {
  using T = typename Op::In;
  const T* p = x + begin * stride;
  const Eigen::Index len = end - begin;
  if (len <= 0) return Op::identity();
  if constexpr (is_arg_op<Op>) {
    return arg_leaf<Op>(p, len, stride, begin);
  } else if constexpr (!std::is_same_v<Op, SumOp<T>>) {
    return min_max_leaf<Op>(p, len, stride);
  } else {
    if constexpr (std::is_integral_v<T>) {
      return integer_sum_leaf(p, len, stride);
    } else if constexpr (is_storage_type_v<T>) {
      return storage_sum_leaf(p, len, stride);
    } else {
      if (stride == 1) return Eigen::Map<const Vec<T>>(p, len).sum();
      return Eigen::Map<const Vec<T>, 0, Eigen::InnerStride<>>(p, len, Eigen::InnerStride<>(stride)).sum();
    }
  }
}

template <class Op>
typename Op::Acc reduce_with(std::string_view kernel, const typename Op::In* x, std::int64_t n, std::int64_t stride) {
  using Acc = typename Op::Acc;
  auto leaf = [&](const tbb::blocked_range<std::int64_t>& r, Acc acc) {
    return Op::combine(acc, reduce_leaf<Op>(x, r.begin(), r.end(), stride));
  };
  auto join = [](Acc a, Acc b) { return Op::combine(a, b); };
  if (kernel == "serial") return reduce_leaf<Op>(x, 0, n, stride);
  if (kernel == "tbb_deterministic")
    return tbb::parallel_deterministic_reduce(tbb::blocked_range<std::int64_t>(0, n, kDeterministicLeaf),
                                              Op::identity(), leaf, join, tbb::simple_partitioner());
  return tbb::parallel_reduce(tbb::blocked_range<std::int64_t>(0, n, kGrain), Op::identity(), leaf, join);
}

// canonical::chunk_sum for a full, contiguous chunk: the same lane-wise adds, with the 32 lanes held
// in SIMD registers as one fixed-size Eigen array (2 AVX-512 registers of floats).
template <class In, class T = compute_t<In>>
T full_chunk_sum(const In* x) {
  using Lanes = Eigen::Array<T, canonical::kLanes, 1>;
  Lanes lanes = Lanes::Constant(T(-0.0));  // canonical.hpp: lanes start at -0.0
  for (std::int64_t r = 0; r < canonical::kChunk / canonical::kLanes; ++r) {
    if constexpr (is_storage_type_v<In>) {  // (Eigen's cast of its bfloat16 / half converts one at a time)
      T v[canonical::kLanes];
      cpu_leaves::widen<canonical::kLanes>(x + r * canonical::kLanes, v);
      lanes += Eigen::Map<const Lanes>(v);
    } else {
      lanes += Eigen::Map<const Lanes>(x + r * canonical::kLanes);
    }
  }
  T lane[canonical::kLanes];
  Eigen::Map<Lanes> lane_map(lane);
  lane_map = lanes;
  for (std::int64_t s = canonical::kLanes / 2; s > 0; s /= 2)
    for (std::int64_t j = 0; j < s; ++j) lane[j] = lane[j] + lane[j + s];
  return lane[0];
}

// Steps 1-3 of the canonical order: the chunk values, in parallel (any partition gives the same values).
template <class In, class T = compute_t<In>>
void canonical_chunk_values(const In* x, std::int64_t n, std::int64_t stride, T* values) {
  using namespace canonical;
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, chunk_count(n), 16),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      for (std::int64_t c = r.begin(); c < r.end(); ++c) {
                        const std::int64_t len = std::min(kChunk, n - c * kChunk);
                        values[c] = stride == 1 && len == kChunk ? full_chunk_sum(x + c * kChunk)
                                                                 : chunk_sum(x + c * kChunk * stride, len, stride);
                      }
                    });
}

// The canonical order: the chunk values, then step 4 over them serially.
template <class In, class T = compute_t<In>>
T canonical_sum(const In* x, std::int64_t n, std::int64_t stride) {
  std::vector<T> values(canonical::chunk_count(n));
  canonical_chunk_values(x, n, stride, values.data());
  return canonical::sum_of_chunk_values(std::move(values));
}

// One backend-level op (sum, min, max) on element type T; integer sums return int64 (modulo 2^64).
template <class T, Op O>
void reduce_typed(const ReduceArgs& a, std::string_view kernel, void* result) {
  using Operator = typename OpFor<O, T>::type;
  const T* x = static_cast<const T*>(a.data);
  if constexpr (O == Op::sum && is_floating_v<T>) {
    if (a.deterministic) {
      const compute_t<T> v = canonical_sum(x, a.n, a.stride);
      std::memcpy(result, &v, sizeof v);
      return;
    }
  }
  const auto v = result_of<O, T>(reduce_with<Operator>(kernel, x, a.n, a.stride));  // uint64 -> int64 wraps
  std::memcpy(result, &v, sizeof v);
}

std::string cpu_model_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      auto pos = line.find(':');
      if (pos != std::string::npos) return line.substr(pos + 2);
    }
  return "CPU";
}

std::size_t physical_memory() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  std::size_t kb = 0;
  while (f >> key >> kb) {
    if (key == "MemTotal:") return kb * 1024;
    f.ignore(256, '\n');
  }
  return 0;
}

class CpuBackend final : public BackendImpl {
 public:
  explicit CpuBackend(int device) : device_(device) {}
  Backend kind() const noexcept override { return Backend::cpu; }
  int device_index() const noexcept override { return device_; }

  DeviceInfo device() const override {
    DeviceInfo d;
    d.name = cpu_model_name();
    d.compute_units = tbb::info::default_concurrency();
    d.memory_bytes = physical_memory();
    d.details = "oneTBB " + std::to_string(TBB_VERSION_MAJOR) + "." + std::to_string(TBB_VERSION_MINOR) + ", Eigen " +
                std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
                std::to_string(EIGEN_MINOR_VERSION) + " (SIMD: " + Eigen::SimdInstructionSetsInUse() + ")";
    return d;
  }

  // The kernel table: every stage takes every dtype and op; tbb_deterministic gives the same bits for
  // any thread count but is not the canonical order of deterministic mode (which runs its own kernel).
  std::vector<KernelInfo> reduce_kernel_info() const override {
    auto stage = [](const char* name, bool auto_pick) {
      return KernelInfo{.name = name, .dtypes = every_dtype(), .ops = every_op(), .auto_pick = auto_pick};
    };
    return {stage("tbb_vectorized", true), stage("tbb_deterministic", false), stage("serial", false)};
  }
  std::vector<KernelInfo> matmul_kernel_info() const override {
    auto stage = [](const char* name, bool auto_pick) {
      return KernelInfo{.name = name, .dtypes = matmul_dtypes(), .auto_pick = auto_pick};
    };
    return {stage("eigen_tbb", true), stage("eigen_serial", false)};
  }

  void reduce(const ReduceArgs& a, std::string_view kernel, void* result) override {
    visit(a.dtype, [&]<class T>(std::type_identity<T>) {
      if (a.out) return reduce_into<T>(a, kernel);
      visit_op(a.op, [&]<Op O>(std::integral_constant<Op, O>) { reduce_typed<T, O>(a, kernel, result); });
    });
  }

  // Engine::*_into: the result is computed now and stored in the Buffer element (host memory here).
  template <class T>
  void reduce_into(const ReduceArgs& a, std::string_view kernel) {
    using Sum = sum_result_t<T>;
    if (a.op == Op::sum) {
      Sum s{};
      if (a.n > 0) reduce_typed<T, Op::sum>(a, kernel, &s);
      if (a.mean) {
        const double m = canonical_nan(double(s) / double(a.n));
        std::memcpy(a.out, &m, sizeof m);
      } else {
        s = canonical_nan(s);
        std::memcpy(a.out, &s, sizeof s);
      }
      return;
    }
    if (is_arg(a.op)) {  // the index, into a Buffer<int64_t> element
      std::int64_t i = 0;
      visit_op(a.op, [&]<Op O>(std::integral_constant<Op, O>) { reduce_typed<T, O>(a, kernel, &i); });
      std::memcpy(a.out, &i, sizeof i);
      return;
    }
    compute_t<T> v{};
    visit_op(a.op, [&]<Op O>(std::integral_constant<Op, O>) {
      if constexpr (!is_arg(O)) reduce_typed<T, O>(a, kernel, &v);
    });
    v = canonical_nan(v);
    std::memcpy(a.out, &v, sizeof v);
  }

  // Per-row / per-column reductions: backends/cpu/per_matrix.cpp.
  void reduce_matrix(const MatrixReduceArgs& a, std::string_view, void* out) override { cpu_reduce_matrix(a, out); }

  void canonical_chunk_values(Dtype dtype, const void* data, std::int64_t n, std::int64_t stride, bool,
                              void* host_values) override {
    cpu_canonical_chunk_values(dtype, data, n, stride, host_values);  // Buffers are host memory too
  }

  void synchronize() override {}
  // Host memory: the CPU backend cannot tell it from other memory, and takes any readable address.
  void check_external(const void*, std::size_t) const override {}

  void matmul(const MatmulArgs& a, std::string_view kernel) override { cpu_matmul(a, kernel); }

  void* allocate(std::size_t bytes) override {
    void* p = ::operator new(bytes, std::align_val_t(64), std::nothrow);
    if (!p) throw Error("cpu backend: out of host memory allocating " + std::to_string(bytes) + " bytes");
    return p;
  }
  void deallocate(void* p) noexcept override { ::operator delete(p, std::align_val_t(64)); }
  void copy_to_backend(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }

 private:
  int device_ = 0;
};

}  // namespace

void cpu_reduce_acc(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* acc) {
  visit(dtype, [&]<class T>(std::type_identity<T>) {
    visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      using Operator = typename OpFor<O, T>::type;
      const auto v = reduce_with<Operator>("tbb_vectorized", static_cast<const T*>(x), n, stride);
      std::memcpy(acc, &v, sizeof v);
    });
  });
}

void cpu_reduce_acc_each(Op op, Dtype dtype, const void* x, std::int64_t count, std::int64_t vstride, std::int64_t n,
                         std::int64_t stride, void* accs) {
  visit(dtype, [&]<class T>(std::type_identity<T>) {
    visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      using Operator = typename OpFor<O, T>::type;
      auto* out = static_cast<typename Operator::Acc*>(accs);
      for (std::int64_t v = 0; v < count; ++v)
        out[v] = reduce_leaf<Operator>(static_cast<const T*>(x) + v * vstride, 0, n, stride);
    });
  });
}

void cpu_canonical_chunk_values(Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* values) {
  visit(dtype, [&]<class T>(std::type_identity<T>) {
    if constexpr (is_floating_v<T>)
      canonical_chunk_values(static_cast<const T*>(x), n, stride, static_cast<compute_t<T>*>(values));
    else
      throw Error("cpu_canonical_chunk_values: " + std::string(to_string(dtype)) + " is not a floating dtype");
  });
}

Probe cpu_probe() { return {true, true, "oneTBB + Eigen", 1}; }
std::shared_ptr<BackendImpl> make_cpu_backend(const EngineOptions& options) {
  return std::make_shared<CpuBackend>(options.device);
}

}  // namespace tandem::detail
