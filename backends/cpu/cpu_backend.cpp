// The CPU backend.
//
// Reductions split the input into blocked ranges with oneTBB; the leaves are backends/cpu/leaves.hpp's (SIMD
// lanes, vectorised by the compiler, in an order set by the indices alone), combined with the operators of
// common/reduce_ops.hpp. The kernels are the rows of kReduceKernels (below), each a way to split the input:
//   tbb_vectorized   tbb::parallel_reduce, auto_partitioner: leaves as the threads steal them
//   tbb_fixed_split  tbb::parallel_deterministic_reduce with leaves of a size set by n alone (auto runs
//                    it): the same association order, and so the same float bits, for any number of
//                    threads
//   serial           one leaf over the whole input on the calling thread
// Matmul (eigen_tbb, eigen_serial) lives in backends/cpu/matmul.cpp, with its own table.
// Deterministic mode (common/canonical.hpp) runs its own code whatever the kernel: canonical_sum (chunks
// in parallel, 32 SIMD lanes per chunk); matmul.cpp has the canonical fma chain.
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

#include "backends/cpu/leaves.hpp"
#include "backends/cpu/matmul.hpp"
#include "backends/cpu/per_matrix.hpp"
#include "common/canonical.hpp"
#include "common/dispatch.hpp"
#include "common/host_reduce.hpp"
#include "common/reduce_ops.hpp"
#include "common/select.hpp"
#include "common/table_check.hpp"

namespace tandem::detail {
namespace {

using cpu_leaves::arg_leaf;
using cpu_leaves::integer_sum_leaf;
using cpu_leaves::min_max_leaf;

constexpr std::int64_t kGrain = 1 << 14;  // smallest leaf of tbb_vectorized and tbb_fixed_split

// The leaves of tbb_fixed_split (and auto) for n elements: from n alone, never from the thread count,
// so that every call splits the input the same way (at most about 256 leaves: enough for 64 cores, few
// enough that a task's overhead is small against its reads).
std::int64_t deterministic_leaf(std::int64_t n) { return std::clamp<std::int64_t>(n / 256, kGrain, 1 << 20); }

// Reduces x[begin*stride], ..., x[(end-1)*stride] for backend op O (leaves.hpp): floating sums with
// float_sum_leaf, integer sums with integer_sum_leaf, min and max with min_max_leaf, argmin and argmax with arg_leaf,
// sums of squares with square_sum_leaf, other float ops whose bits depend on the order (prod) in the canonical order's
// lanes (canonical::chunk_sum_of, any length), any other op of the table with generic_leaf (element by element).
template <Op O, class T>
typename OpFor<O, T>::type::Acc reduce_leaf(const T* x, std::int64_t begin, std::int64_t end, std::int64_t stride) {
  using Operator = typename OpFor<O, T>::type;
  const T* p = x + begin * stride;
  const Eigen::Index len = end - begin;
  if (len <= 0) return Operator::identity();
  if constexpr (std::is_same_v<T, bool> && (O == Op::sum || O == Op::min || O == Op::max || is_arg(O))) {
    // A bool's byte is 0 or 1: sum, min, max and the arg-reductions read it as uint8, whose loads GCC
    // vectorises (bool's it did not: a sum at 0.27x uint8's, a max at 0.65x).
    const auto r = reduce_leaf<O, std::uint8_t>(reinterpret_cast<const std::uint8_t*>(x), begin, end, stride);
    if constexpr (is_arg(O))
      return {r.value != 0, r.index};
    else if constexpr (O == Op::sum)
      return r;  // (an ExactSum either way)
    else
      return r != 0;
  } else if constexpr (O == Op::sum) {
    if constexpr (std::is_integral_v<T>)
      return integer_sum_leaf(p, len, stride);
    else
      return cpu_leaves::float_sum_leaf(p, len, stride);
  } else if constexpr (O == Op::min || O == Op::max) {
    return min_max_leaf<Operator>(p, len, stride);
  } else if constexpr (O == Op::argmin || O == Op::argmax) {
    return arg_leaf<Operator>(p, len, stride, begin);
  } else if constexpr (O == Op::sumsq) {
    return cpu_leaves::square_sum_leaf(p, len, stride);
  } else if constexpr (canonical_order<Operator>) {  // (prod of floats) 32 lanes and their tree, which vectorise where
    return canonical::chunk_sum_of<Operator>(p, len, stride);  // one chain did not: 4.6 -> 30 GB/s on one core
  } else {
    return cpu_leaves::generic_leaf<Operator>(p, len, stride, begin);
  }
}

// ---- The kernels: how each splits x[0], x[stride], ..., x[(n-1)*stride] among the threads -----------
// Split::reduce<O>(x, n, stride) gives the accumulator of backend op O over the n >= 1 elements.
template <Op O, class T>
using AccOf = typename OpFor<O, T>::type::Acc;

struct Stealing {  // TBB's auto_partitioner: leaves as the threads steal them
  template <Op O, class T>
  static AccOf<O, T> reduce(const T* x, std::int64_t n, std::int64_t stride) {
    using Operator = typename OpFor<O, T>::type;
    return tbb::parallel_reduce(
        tbb::blocked_range<std::int64_t>(0, n, kGrain), Operator::identity(),
        [&](const tbb::blocked_range<std::int64_t>& r, AccOf<O, T> acc) {
          return Operator::combine(acc, reduce_leaf<O>(x, r.begin(), r.end(), stride));
        },
        [](AccOf<O, T> a, AccOf<O, T> b) { return Operator::combine(a, b); });
  }
};

struct FixedSplit {  // a fixed split of the range, halved the same way on every call, and a fixed tree of
                     // joins: the same bits for any thread count
  template <Op O, class T>
  static AccOf<O, T> reduce(const T* x, std::int64_t n, std::int64_t stride) {
    using Operator = typename OpFor<O, T>::type;
    return tbb::parallel_deterministic_reduce(
        tbb::blocked_range<std::int64_t>(0, n, deterministic_leaf(n)), Operator::identity(),
        [&](const tbb::blocked_range<std::int64_t>& r, AccOf<O, T> acc) {
          return Operator::combine(acc, reduce_leaf<O>(x, r.begin(), r.end(), stride));
        },
        [](AccOf<O, T> a, AccOf<O, T> b) { return Operator::combine(a, b); }, tbb::simple_partitioner());
  }
};

struct Serial {  // one leaf over the whole input on the calling thread
  template <Op O, class T>
  static AccOf<O, T> reduce(const T* x, std::int64_t n, std::int64_t stride) {
    return reduce_leaf<O>(x, 0, n, stride);
  }
};

// Runs Split for a run-time op and dtype: the accumulator into *acc.
template <class Split>
void run_split(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* acc) {
  visit(dtype, [&]<class T>(std::type_identity<T>) {
    visit_backend_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      const auto v = Split::template reduce<O>(static_cast<const T*>(x), n, stride);
      std::memcpy(acc, &v, sizeof v);
    });
  });
}

// The table: one row per kernel, with the function that runs it. Every kernel takes every dtype and op.
// tbb_vectorized splits the work as TBB's auto_partitioner decides at run time (its float sums' bits may
// differ between calls); auto runs tbb_fixed_split, whose fixed split gives the same bits for any thread
// count (at the same speed: docs/PERFORMANCE.md), but which is not the canonical order of deterministic mode.
struct ReduceKernel {
  const char* name;
  Determinism determinism;
  bool auto_pick = false;  // the one kernel "auto" runs
  void (*run)(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* acc);
};
constexpr ReduceKernel kReduceKernels[] = {
    {.name = "tbb_vectorized", .determinism = Determinism::not_guaranteed, .run = &run_split<Stealing>},
    {.name = "tbb_fixed_split",
     .determinism = Determinism::run_to_run,
     .auto_pick = true,
     .run = &run_split<FixedSplit>},
    {.name = "serial", .determinism = Determinism::run_to_run, .run = &run_split<Serial>},
};
constexpr const ReduceKernel& kAutoReduce = []() -> const ReduceKernel& {
  for (const ReduceKernel& k : kReduceKernels)
    if (k.auto_pick) return k;
  throw "backends/cpu: no reduce kernel has auto_pick";
}();
static_assert(
    [] {
      int picked = 0;
      for (const ReduceKernel& k : kReduceKernels) {
        if (!given(k.run)) return false;
        picked += k.auto_pick;
      }
      return picked == 1;
    }(),
    "backends/cpu: every reduce kernel needs its function, and exactly one is auto's");

const ReduceKernel& reduce_kernel(KernelId id) { return id.is_auto() ? kAutoReduce : kReduceKernels[id.stage]; }

// canonical::chunk_sum_of for a full, contiguous chunk: the same lane-wise adds (prod: multiplies), with the
// 32 lanes held in SIMD registers as one fixed-size Eigen array (2 AVX-512 registers of floats).
template <class Op, class T = typename Op::Acc>
T full_chunk_sum(const typename Op::In* x) {
  using In = typename Op::In;
  using Lanes = Eigen::Array<T, canonical::kLanes, 1>;
  Lanes lanes = Lanes::Constant(Op::identity());  // canonical.hpp: lanes start at -0.0 (prod: 1)
  const auto combine = [&](const auto& v) {
    if constexpr (additive<Op>)
      lanes += v;
    else
      lanes *= v;  // (prod: Op::combine, element by element)
  };
  for (std::int64_t r = 0; r < canonical::kChunk / canonical::kLanes; ++r) {
    const In* row = x + r * canonical::kLanes;
    T v[canonical::kLanes];
    if constexpr (!std::is_same_v<Op, SumOp<In>> && !std::is_same_v<Op, ProdOp<In>>) {
      for (std::int64_t j = 0; j < canonical::kLanes; ++j) v[j] = Op::load(row[j], 0);
      combine(Eigen::Map<const Lanes>(v));
    } else if constexpr (is_storage_type_v<In>) {  // (Eigen's cast of its bfloat16 / half converts one at a time)
      cpu_leaves::widen<canonical::kLanes>(row, v);
      combine(Eigen::Map<const Lanes>(v));
    } else {
      combine(Eigen::Map<const Lanes>(row));
    }
  }
  T lane[canonical::kLanes];
  Eigen::Map<Lanes> lane_map(lane);
  lane_map = lanes;
  for (std::int64_t s = canonical::kLanes / 2; s > 0; s /= 2)
    for (std::int64_t j = 0; j < s; ++j) lane[j] = Op::combine(lane[j], lane[j + s]);
  return lane[0];
}

// Steps 1-3 of the canonical order: the chunk values, in parallel (any partition gives the same values).
template <class Op, class T = typename Op::Acc>
void canonical_chunk_values(const typename Op::In* x, std::int64_t n, std::int64_t stride, T* values) {
  using namespace canonical;
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, chunk_count(n), 16), [&](const tbb::blocked_range<std::int64_t>& r) {
        for (std::int64_t c = r.begin(); c < r.end(); ++c) {
          const std::int64_t len = std::min(kChunk, n - c * kChunk);
          values[c] = stride == 1 && len == kChunk ? full_chunk_sum<Op>(x + c * kChunk)
                                                   : chunk_sum_of<Op>(x + c * kChunk * stride, len, stride);
        }
      });
}

// The canonical order: the chunk values, then step 4 over them serially.
template <class Op, class T = typename Op::Acc>
T canonical_sum(const typename Op::In* x, std::int64_t n, std::int64_t stride) {
  std::vector<T> values(canonical::chunk_count(n));
  canonical_chunk_values<Op>(x, n, stride, values.data());
  return canonical::sum_of_chunk_values<T, PartialOp<Op>>(std::move(values));
}

// The accumulator of a's op over its n >= 1 elements into *acc: the kernel's, or in deterministic mode the
// canonical order's for the operators whose bits depend on the order (reduce_ops.hpp's canonical_order).
void reduce_acc(const ReduceArgs& a, void* acc) {
  visit(a.dtype, [&]<class T>(std::type_identity<T>) {
    visit_backend_op(a.op, [&]<Op O>(std::integral_constant<Op, O>) {
      using Operator = typename OpFor<O, T>::type;
      if constexpr (canonical_order<Operator>)
        if (a.deterministic) {
          const auto v = canonical_sum<Operator>(static_cast<const T*>(a.data), a.n, a.stride);
          std::memcpy(acc, &v, sizeof v);
          return;
        }
      reduce_kernel(a.kernel).run(a.op, a.dtype, a.data, a.n, a.stride, acc);
    });
  });
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
    d.index = device_;
    d.compute_units = tbb::info::default_concurrency();
    d.memory_bytes = physical_memory();
    d.details = "oneTBB " + std::to_string(TBB_VERSION_MAJOR) + "." + std::to_string(TBB_VERSION_MINOR) + ", Eigen " +
                std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
                std::to_string(EIGEN_MINOR_VERSION) + " (SIMD: " + Eigen::SimdInstructionSetsInUse() + ")";
    return d;
  }

  std::vector<KernelInfo> reduce_kernel_info() const override {
    std::vector<KernelInfo> infos;
    for (const ReduceKernel& k : kReduceKernels)
      infos.push_back(KernelInfo{.name = k.name,
                                 .dtypes = every_dtype(),
                                 .ops = every_op(),
                                 .precisions = std::vector<Precision>(every_dtype().size(), Precision::full),
                                 .determinism = k.determinism,
                                 .auto_pick = k.auto_pick});
    return infos;
  }
  std::vector<KernelInfo> matmul_kernel_info() const override { return cpu_matmul_kernel_info(); }

  // The result (detail::result_of), or with a.out (Engine::*_into) stored in the Buffer element, which
  // is host memory here: computed now either way.
  void reduce(const ReduceArgs& a, void* result) override {
    visit(a.dtype, [&]<class T>(std::type_identity<T>) {
      visit_backend_op(a.op, [&]<Op O>(std::integral_constant<Op, O>) {
        if (a.n == 0) {  // the op's EmptyRule (the engine rejects an empty input of the others): 0 or 1
          if (a.out) return store_result<O, T>(empty_acc<O, T>(), 0, false, a.out, 0);
          const auto v = result_of<O, T>(empty_acc<O, T>());
          std::memcpy(result, &v, sizeof v);
          return;
        }
        AccOf<O, T> acc;
        reduce_acc(a, &acc);
        if (a.out) return store_result<O, T>(acc, a.n, a.divide, a.out, 0);
        const auto v = result_of<O, T>(acc);
        std::memcpy(result, &v, sizeof v);
      });
    });
  }

  // Per-row / per-column reductions: backends/cpu/per_matrix_kernels.hpp.
  void reduce_matrix(const MatrixReduceArgs& a, void* out) override { cpu_reduce_matrix(a, out); }

  void canonical_chunk_values(Op op, Dtype dtype, const void* data, std::int64_t n, std::int64_t stride, bool,
                              void* host_values) override {
    cpu_canonical_chunk_values(op, dtype, data, n, stride, host_values);  // Buffers are host memory too
  }

  void select(const SelectArgs& args) override { host_select(args); }  // (Buffers are host memory)
  void synchronize() override {}
  // Host memory: the CPU backend cannot tell it from other memory, and takes any readable address.
  void check_external(const void*, std::size_t) const override {}

  void matmul(const MatmulArgs& a) override { cpu_matmul(a); }

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
  kAutoReduce.run(op, dtype, x, n, stride, acc);
}

void cpu_reduce_acc_each(Op op, Dtype dtype, const void* x, std::int64_t count, std::int64_t vstride, std::int64_t n,
                         std::int64_t stride, void* accs) {
  visit(dtype, [&]<class T>(std::type_identity<T>) {
    visit_backend_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      auto* out = static_cast<typename OpFor<O, T>::type::Acc*>(accs);
      for (std::int64_t v = 0; v < count; ++v)
        out[v] = reduce_leaf<O>(static_cast<const T*>(x) + v * vstride, 0, n, stride);
    });
  });
}

void cpu_canonical_chunk_values(Op op, Dtype dtype, const void* x, std::int64_t n, std::int64_t stride, void* values) {
  visit(dtype, [&]<class T>(std::type_identity<T>) {
    visit_backend_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      using Operator = typename OpFor<O, T>::type;
      if constexpr (canonical_order<Operator>)
        canonical_chunk_values<Operator>(static_cast<const T*>(x), n, stride, static_cast<compute_t<T>*>(values));
      else
        throw Error("cpu_canonical_chunk_values: " + std::string(to_string(op)) + " of " + to_string(dtype) +
                    " has no canonical order (a floating-point sum, sumsq or prod has)");
    });
  });
}

Probe cpu_probe() { return {true, true, "oneTBB + Eigen", 1}; }
std::shared_ptr<BackendImpl> make_cpu_backend(const EngineOptions& options) {
  return std::make_shared<CpuBackend>(options.device);
}

}  // namespace tandem::detail
