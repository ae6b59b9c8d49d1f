// bench_cpu: the CPU backend (oneTBB + Eigen) through tandem::Engine, with plain baselines in the same
// binary. Names, counters and timing: bench_common.hpp. On the CPU a Buffer is host memory.
//
//   reduce/cpu/<kernel>/<op>/<type>/n:<n>   every reduce kernel ("auto" too), sum/min/max/argmax,
//                                           float/double/int32/bfloat16/float16
//   baseline/read_sweep/<type>/n:<n>        a plain parallel read of the same bytes (as floats):
//                                           tbb::parallel_reduce over blocked ranges, each leaf an Eigen
//                                           sum (vectorised); sweep_bytes_per_second's reference
//   baseline/tbb_parallel_reduce/sum/...    tbb::parallel_reduce with std::accumulate leaves (scalar;
//                                           not for the 16-bit types)
//   baseline/eigen_sum/sum/...              Eigen::Map(p, n).sum() on one thread (not for the 16-bit types)
//   matmul/cpu/<kernel>/<type>/<size>       every matmul kernel, float/double, 512, 1024, 2048, 1000; float 4096
//   matmul16/cpu/auto/<type>/<m>x<k>x<n>     16-bit products (bfloat16, float16; C float) beside the float
//                                           product of the same shape (float): a batch-1 product with a
//                                           4096 x 14336 B (a weight matrix), 64 x 4096 x 4096 and 512^3;
//                                           <type> floatxbfloat16: a mixed product, float A and bfloat16 B
//   baseline/eigen_gemm/<type>/<size>       c.noalias() = a * b on one thread: Eigen threads only through
//                                           OpenMP, which tandem builds without (EIGEN_DONT_PARALLELIZE),
//                                           so this is the one-core GEMM that eigen_tbb runs per block
//   baseline/eigen_gemm_openmp/<type>/<size>  the same product with Eigen's own OpenMP threading on every
//                                           core (eigen_gemm_openmp.cpp; counter "threads"): the threaded
//                                           Eigen GEMM that eigen_tbb is compared with. Built only where
//                                           CMake finds OpenMP
//   types/cpu/{sum,min,max,argmax}/<type>/bytes:1073741824  every element type of the dtype table on "auto",
//                                           1 GiB each: bytes_per_second compares the types directly
//   overhead/cpu/{engine,raw_backend}/...   engine.sum() of 16 floats against BackendImpl::reduce()
//   per/cpu/{row,col}[/deterministic]/sum/float/<rows>x<cols>  eng.sum(MatrixView, Per, out) of 4096 x 4096
//                                           and 2^18 x 64 floats; bytes_per_second counts the matrix
//   per/cpu/row/{argmin,min}/float/200000x16  per-row reductions of narrow rows (NumPy's
//                                           X.argmin(axis=1) of a 200000 x 16 float32 X); bytes likewise
//   per/cpu/{row,col}/sum/{float,bfloat16,float16}/200000x16  the narrow per-row and per-column sums of
//                                           each type (the 16-bit ones convert as they read); bytes likewise
//   strided/cpu/<kernel>/{aos_field,soa}/float/n:<n>  one float field of 2-float structs
//                                           (tandem::field, stride 2) against the same values
//                                           contiguous; bytes_per_second counts the useful n*4
//
// Run:  bench_cpu [--benchmark_filter=REGEX] [--benchmark_min_time=SECONDS]
//                 [--benchmark_out=FILE.json --benchmark_out_format=json]
// CI smoke run (about 1 s on 2 cores): bench_cpu --benchmark_filter='(n:4096|/512)/' --benchmark_min_time=0.01
#include <Eigen/Core>
#include <chrono>
#include <numeric>
#include <stdexcept>

#include "benchmarks/bench_common.hpp"
#ifdef TANDEM_BENCH_EIGEN_OPENMP
#include "benchmarks/eigen_gemm_openmp.hpp"
#endif

namespace {

using namespace tandem_bench;
using benchmark::State;

// Elements per leaf of the read sweep (the same smallest leaf as the tbb_vectorized kernel).
constexpr std::size_t kSweepGrain = 1 << 14;

// The read sweep: every float read once, summed so that the reads cannot be optimised away.
float read_sweep(const float* x, std::size_t n) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, n, kSweepGrain), 0.0f,
      [x](const tbb::blocked_range<std::size_t>& r, float acc) {
        return acc + Eigen::Map<const Eigen::ArrayXf>(x + r.begin(), Eigen::Index(r.size())).sum();
      },
      std::plus<float>());
}

double time_read_sweep(const Buffer<float>& x) {
  const auto start = std::chrono::steady_clock::now();
  benchmark::DoNotOptimize(read_sweep(x.data(), x.size()));
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Sums as the engine returns them: int32 into int64.
template <class T>
using Sum = tandem::sum_result_t<T>;

template <class T>
Sum<T> tbb_accumulate(const T* x, std::size_t n) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, n), Sum<T>(0),
      [x](const tbb::blocked_range<std::size_t>& r, Sum<T> acc) {
        return std::accumulate(x + r.begin(), x + r.end(), acc);
      },
      std::plus<Sum<T>>());
}

template <class T>
Sum<T> eigen_sum(const T* x, std::size_t n) {
  const Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>> v(x, Eigen::Index(n));
  if constexpr (std::is_integral_v<T>)
    return v.template cast<std::int64_t>().sum();
  else
    return v.sum();
}

// baseline/read_sweep, baseline/tbb_parallel_reduce and baseline/eigen_sum for n elements of T.
template <class T>
void register_reduce_baselines(Suite& suite, std::size_t n) {
  const std::size_t bytes = n * sizeof(T);
  const std::string tail = std::string(type_name<T>()) + "/" + size_label(n);
  benchmark::RegisterBenchmark(("baseline/read_sweep/" + tail).c_str(), guarded([&suite, bytes](State& state) {
                                 const Buffer<float>& x = suite.inputs.sweep(bytes);
                                 for (auto _ : state) benchmark::DoNotOptimize(read_sweep(x.data(), x.size()));
                                 set_bandwidth_counters(state, double(bytes), suite.sweep.bytes_per_second(bytes));
                               }))
      ->UseRealTime();

  auto add_sum = [&](const std::string& what, Sum<T> (*sum)(const T*, std::size_t)) {
    benchmark::RegisterBenchmark(("baseline/" + what + "/sum/" + tail).c_str(),
                                 guarded([&suite, n, bytes, sum](State& state) {
                                   const VectorInput<T>& in = suite.inputs.vector<T>(n);
                                   check_result<Op::sum, T>(sum(in.buffer.data(), n), in.ref);
                                   for (auto _ : state) benchmark::DoNotOptimize(sum(in.buffer.data(), n));
                                   set_bandwidth_counters(state, double(bytes), suite.sweep.bytes_per_second(bytes));
                                 }))
        ->UseRealTime();
  };
  if constexpr (!tandem::is_storage_type_v<T>) {  // (Eigen does not know tandem's 16-bit types)
    add_sum("tbb_parallel_reduce", tbb_accumulate<T>);
    add_sum("eigen_sum", eigen_sum<T>);
  }
}

template <class T>
void register_reduce_group(Suite& suite, const std::vector<std::size_t>& sizes) {
  for (std::size_t n : sizes) {
    register_reduce_baselines<T>(suite, n);
    register_reductions<T>(suite, n);
  }
}

struct Pair {
  float a, b;
};
struct StridedInput {
  std::vector<Pair> aos;
  std::vector<float> soa;  // aos[i].a for every i
  Reference<float> ref;
};

// strided/cpu/<kernel>/aos_field (sum of Pair::a through tandem::field) and .../soa (the same values
// contiguous), n structs, host memory.
void register_strided(Suite& suite, std::size_t n) {
  for (const std::string& kernel : suite.eng.reduce_kernels())
    for (bool aos : {true, false}) {
      const std::string name = "strided/cpu/" + kernel + (aos ? "/aos_field" : "/soa") + "/float/" + size_label(n);
      benchmark::RegisterBenchmark(
          name.c_str(), guarded([&suite, kernel, aos, n](State& state) {
            const StridedInput& in = suite.inputs.get<StridedInput>(Inputs::other_slot, "strided" + size_label(n), [&] {
              const std::vector<float> v = random_vector<float>(2 * n, 5);
              StridedInput s{std::vector<Pair>(n), std::vector<float>(n), {}};
              for (std::size_t i = 0; i < n; ++i) {
                s.aos[i] = {v[2 * i], v[2 * i + 1]};
                s.soa[i] = v[2 * i];
              }
              s.ref = reference_of(s.soa.data(), n);
              return s;
            });
            const tandem::ReduceOptions opts{kernel};
            auto run = [&] {
              return aos ? suite.eng.sum(tandem::field(std::span<const Pair>(in.aos), &Pair::a), opts)
                         : suite.eng.sum(std::span<const float>(in.soa), opts);
            };
            check_result<Op::sum, float>(run(), in.ref);
            for (auto _ : state) benchmark::DoNotOptimize(run());
            set_bandwidth_counters(state, double(n * sizeof(float)), suite.sweep.bytes_per_second(n * sizeof(float)));
          }))
          ->UseRealTime();
    }
}

// per/cpu/...: per-row and per-column sums of small integers (exact in any order), checked once against a
// double loop before timing.
void register_per(Suite& suite) {
  for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{4096, 4096}, {std::size_t(1) << 18, 64}})
    for (tandem::Per per : {tandem::Per::row, tandem::Per::col})
      for (bool det : {false, true}) {
        const std::string name = std::string("per/cpu/") + tandem::to_string(per) + (det ? "/deterministic" : "") +
                                 "/sum/float/" + std::to_string(rows) + "x" + std::to_string(cols);
        benchmark::RegisterBenchmark(name.c_str(), guarded([&suite, rows, cols, per, det, name](State& state) {
                                       std::vector<float> m(rows * cols);
                                       for (std::size_t i = 0; i < m.size(); ++i)
                                         m[i] = float(int(i * 2654435761u % 17) - 8);
                                       const std::size_t count = per == tandem::Per::row ? rows : cols;
                                       std::vector<double> want(count, 0.0);
                                       for (std::size_t i = 0; i < rows; ++i)
                                         for (std::size_t j = 0; j < cols; ++j)
                                           want[per == tandem::Per::row ? i : j] += m[i * cols + j];
                                       std::vector<float> out(count);
                                       const tandem::MatrixView<const float> view{m.data(), rows, cols, cols};
                                       const tandem::ReduceOptions opts{"auto", det};
                                       suite.eng.sum(view, per, out, opts);
                                       for (std::size_t v = 0; v < count; ++v)
                                         if (double(out[v]) != want[v])
                                           throw std::runtime_error(name + ": wrong result " + std::to_string(v));
                                       for (auto _ : state) suite.eng.sum(view, per, out, opts);
                                       const double bytes = double(rows * cols * sizeof(float));
                                       set_bandwidth_counters(
                                           state, bytes, suite.sweep.bytes_per_second(rows * cols * sizeof(float)));
                                     }))
            ->UseRealTime();
      }
}

// per/cpu/{row,col}/sum/<type>/200000x16: the narrow per-row and per-column sums of float, bfloat16 and
// float16 (small integers: exact in any order), checked once against double loops before timing.
template <class T>
void register_per_narrow_sum(Suite& suite) {
  static constexpr std::size_t rows = 200000, cols = 16;
  for (tandem::Per per : {tandem::Per::row, tandem::Per::col}) {
    const std::string name = std::string("per/cpu/") + tandem::to_string(per) + "/sum/" + type_name<T>() + "/" +
                             std::to_string(rows) + "x" + std::to_string(cols);
    benchmark::RegisterBenchmark(name.c_str(), guarded([&suite, name, per](State& state) {
                                   std::vector<T> m(rows * cols);
                                   for (std::size_t i = 0; i < m.size(); ++i)
                                     m[i] = T(float(int(i * 2654435761u % 17) - 8));
                                   const std::size_t count = per == tandem::Per::row ? rows : cols;
                                   std::vector<double> want(count, 0.0);
                                   for (std::size_t i = 0; i < rows; ++i)
                                     for (std::size_t j = 0; j < cols; ++j)
                                       want[per == tandem::Per::row ? i : j] += double(float(m[i * cols + j]));
                                   std::vector<tandem::op_result_t<Op::sum, T>> out(count);
                                   const tandem::MatrixView<const T> view{m.data(), rows, cols, cols};
                                   suite.eng.sum(view, per, std::span(out));
                                   for (std::size_t v = 0; v < count; ++v)
                                     if (double(out[v]) != want[v])
                                       throw std::runtime_error(name + ": wrong result " + std::to_string(v));
                                   for (auto _ : state) suite.eng.sum(view, per, std::span(out));
                                   const double bytes = double(rows * cols * sizeof(T));
                                   set_bandwidth_counters(state, bytes,
                                                          suite.sweep.bytes_per_second(rows * cols * sizeof(T)));
                                 }))
        ->UseRealTime();
  }
}

// per/cpu/row/<op>/float/200000x16: argmin and min of each 16-float row (small integers: many ties), checked
// once against plain loops before timing (the sums: register_per_narrow_sum).
void register_per_narrow(Suite& suite) {
  static constexpr std::size_t rows = 200000, cols = 16;
  for (Op op : {Op::argmin, Op::min})
    tandem::visit_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
      const std::string name =
          std::string("per/cpu/row/") + op_name(O) + "/float/" + std::to_string(rows) + "x" + std::to_string(cols);
      benchmark::RegisterBenchmark(name.c_str(), guarded([&suite, name](State& state) {
                                     std::vector<float> m(rows * cols);
                                     for (std::size_t i = 0; i < m.size(); ++i)
                                       m[i] = float(int(i * 2654435761u % 17) - 8);
                                     std::vector<tandem::op_result_t<O, float>> out(rows);
                                     const tandem::MatrixView<const float> view{m.data(), rows, cols, cols};
                                     suite.eng.reduce<O>(view, tandem::Per::row, std::span(out));
                                     for (std::size_t i = 0; i < rows; ++i) {
                                       const float* row = m.data() + i * cols;
                                       double want = 0;
                                       if constexpr (O == Op::argmin)
                                         want = double(std::min_element(row, row + cols) - row);  // the first least
                                       else
                                         want = *std::min_element(row, row + cols);
                                       if (double(out[i]) != want)
                                         throw std::runtime_error(name + ": wrong result " + std::to_string(i));
                                     }
                                     for (auto _ : state) suite.eng.reduce<O>(view, tandem::Per::row, std::span(out));
                                     const double bytes = double(rows * cols * sizeof(float));
                                     set_bandwidth_counters(state, bytes,
                                                            suite.sweep.bytes_per_second(rows * cols * sizeof(float)));
                                   }))
          ->UseRealTime();
    });
}

template <class T>
void register_eigen_gemm(Suite& suite, const Shape& s) {
  const std::string name = "baseline/eigen_gemm/" + std::string(type_name<T>()) + "/" + shape_label(s);
  benchmark::RegisterBenchmark(name.c_str(), guarded([&suite, s](State& state) {
                                 using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
                                 const MatmulInput<T>& in = suite.inputs.matrices<T>(s);
                                 const Eigen::Map<const Matrix> a(in.a.data(), Eigen::Index(s.m), Eigen::Index(s.k));
                                 const Eigen::Map<const Matrix> b(in.b.data(), Eigen::Index(s.k), Eigen::Index(s.n));
                                 Eigen::Map<Matrix> c(in.c.data(), Eigen::Index(s.m), Eigen::Index(s.n));
                                 c.noalias() = a * b;
                                 for (auto _ : state) {
                                   c.noalias() = a * b;
                                   benchmark::ClobberMemory();
                                 }
                                 set_flop_counter(state, s);
                               }))
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

#ifdef TANDEM_BENCH_EIGEN_OPENMP
template <class T>
void register_eigen_gemm_openmp(Suite& suite, const Shape& s) {
  const std::string name = "baseline/eigen_gemm_openmp/" + std::string(type_name<T>()) + "/" + shape_label(s);
  benchmark::RegisterBenchmark(name.c_str(), guarded([&suite, s, name](State& state) {
                                 const MatmulInput<T>& in = suite.inputs.matrices<T>(s);
                                 auto run = [&] {
                                   eigen_gemm_openmp(in.a.data(), in.b.data(), in.c.data(), s.m, s.k, s.n);
                                 };
                                 if (suite.checked_matmuls.insert(name).second) check_matmul(in, s, run);
                                 run();
                                 for (auto _ : state) {
                                   run();
                                   benchmark::ClobberMemory();
                                 }
                                 set_flop_counter(state, s);
                                 state.counters["threads"] = eigen_openmp_threads();
                               }))
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}
#endif

template <class T>
void register_matmul_group(Suite& suite, const std::vector<Shape>& shapes) {
  const std::vector<std::string> kernels = matmul_kernels_for<T>(suite.eng);
  for (const Shape& s : shapes) {
    register_eigen_gemm<T>(suite, s);
#ifdef TANDEM_BENCH_EIGEN_OPENMP
    register_eigen_gemm_openmp<T>(suite, s);
#endif
    register_matmuls<T>(suite, kernels, s);
  }
}

// 16-bit products against the float product of the same shape (the 16-bit inputs are converted as they are
// read: no widened copy of B).
// A of T, B of TB: a mixed product where they differ (float activations, 16-bit weights), named
// matmul16/cpu/auto/<T>x<TB>/<shape>.
template <class T, class TB = T>
void register_matmul16(Suite& suite, const Shape& s) {
  const std::string types =
      std::is_same_v<T, TB> ? std::string(type_name<T>()) : std::string(type_name<T>()) + "x" + type_name<TB>();
  const std::string name = "matmul16/cpu/auto/" + types + "/" + shape_label(s);
  benchmark::RegisterBenchmark(name.c_str(), guarded([&suite, s](State& state) {
                                 std::vector<T> a(s.m * s.k);
                                 std::vector<TB> b(s.k * s.n);
                                 for (std::size_t i = 0; i < a.size(); ++i) a[i] = T(float(i % 7) - 3.0f);
                                 for (std::size_t i = 0; i < b.size(); ++i) b[i] = TB(float(i % 5) - 2.0f);
                                 std::vector<float> c(s.m * s.n);
                                 auto run = [&] {
                                   suite.eng.matmul(tandem::MatrixView<const T>{a.data(), s.m, s.k, s.k},
                                                    tandem::MatrixView<const TB>{b.data(), s.k, s.n, s.n},
                                                    tandem::MatrixView<float>{c.data(), s.m, s.n, s.n});
                                 };
                                 run();
                                 double want = 0;  // (small integers: every sum exact)
                                 for (std::size_t p = 0; p < s.k; ++p)
                                   want += double(float(a[p])) * double(float(b[p * s.n + s.n - 1]));
                                 if (double(c[s.n - 1]) != want) throw std::runtime_error("matmul16: wrong result");
                                 for (auto _ : state) {
                                   run();
                                   benchmark::ClobberMemory();
                                 }
                                 set_flop_counter(state, s);
                               }))
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  Suite suite(Engine(tandem::Backend::cpu), time_read_sweep);
  add_device_context(suite.eng);

  // 2^27 floats = 512 MiB; the largest input (2^27 doubles) and its sweep buffer take 2 GiB together.
  const std::vector<std::size_t> sizes = {1u << 12, 1u << 16, 1u << 20, 1u << 24, 1u << 27};
  register_reduce_group<float>(suite, sizes);
  register_reduce_group<double>(suite, sizes);
  register_reduce_group<std::int32_t>(suite, sizes);
  register_reduce_group<tandem::bfloat16>(suite, sizes);
  register_reduce_group<tandem::half>(suite, sizes);
  register_type_reads(suite, std::size_t(1) << 30, tandem::element_types{});  // 1 GiB of each type (past the L3)
  register_overhead(suite, "serial");
  register_strided(suite, 1u << 24);
  register_per(suite);
  register_per_narrow(suite);
  register_per_narrow_sum<float>(suite);
  register_per_narrow_sum<tandem::bfloat16>(suite);
  register_per_narrow_sum<tandem::half>(suite);
  const std::vector<Shape> shapes = {{512, 512, 512}, {1024, 1024, 1024}, {2048, 2048, 2048}, {1000, 1000, 1000}};
  std::vector<Shape> float_shapes = shapes;
  float_shapes.push_back({4096, 4096, 4096});  // issue #14's second size against Eigen's own threading
  register_matmul_group<float>(suite, float_shapes);
  register_matmul_group<double>(suite, shapes);
  for (const Shape& s : {Shape{1, 4096, 14336}, Shape{64, 4096, 4096}, Shape{512, 512, 512}}) {
    register_matmul16<float>(suite, s);
    register_matmul16<tandem::bfloat16>(suite, s);
    register_matmul16<tandem::half>(suite, s);
    register_matmul16<float, tandem::bfloat16>(suite, s);
  }

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
