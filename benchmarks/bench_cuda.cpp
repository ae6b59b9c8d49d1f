// bench_cuda: the CUDA backend through tandem::Engine on device-resident Buffers, the kernel ladders
// called directly on a stream of this binary's own, and baselines in the same binary. Names, counters and
// engine-level timing: bench_common.hpp.
//
// Engine level (what an application sees per call):
//   reduce/cuda/<kernel>/<op>/<type>/n:<n>    every reduce kernel of the engine ("auto" too; "cub" is CUB's
//                                             DeviceReduce), sum/min/max/argmax (the stages whose KernelInfo
//                                             lists it), float/double/int32, n = 2^12 to
//                                             2^30 (2^30 for float and int32 only, when the GPU has room)
//   baseline/read_sweep/<type>/n:<n>          read_sweep.cu, a float4 grid-stride read of the same bytes, one
//                                             sweep per pair of events: sweep_bytes_per_second's reference
//   matmul/cuda/<kernel>/<type>/<shape>       every matmul kernel of the engine that takes the type ("cublas",
//                                             "cublas_tf32", "cublas_bf16" are cuBLAS), float and double;
//                                             8192^3 for the float tf32 / bf16 kernels only
//   types/cuda/{sum,min,max,argmax}/<type>/bytes:1073741824  every element type of the dtype table on "auto",
//                                             1 GiB each: bytes_per_second compares the types directly
//   overhead/cuda/{engine,raw_backend}/...    engine.sum() of 16 floats against BackendImpl::reduce()
//   strided/cuda/<kernel>/{aos_field,soa}/float/n:<n>  every other float of a Buffer (BufferView stride 2)
//                                             against the same values contiguous; bytes_per_second: n*4
// Kernel level (the ladders themselves, backends/cuda/kernels.hpp, without the engine):
//   kernel/cuda/<stage>/<op>/<type>/n:<n>     tandem::cuda::reduce() of every stage ("auto": the stage the
//                                             engine would pick, named in the label; "cub": CUB's
//                                             DeviceReduce), same operators, types and sizes as reduce/
//   kernel/cuda/cub_argmax_baseline/argmax/<type>/n:<n>  CUB's own DeviceReduce::ArgMax, argmax's baseline
//   kernel/cuda/<stage>/gemm/<type>/<shape>   tandem::cuda::matmul() of every stage that takes the type
//                                             (cublas* through a cuBLAS handle of this binary), same shapes
//   baseline/read_sweep_batched/<type>/n:<n>  the read sweep timed like the kernel level (20 sweeps back to
//                                             back per pair of events): the kernel level's
//                                             sweep_bytes_per_second reference
//
// Timing. Engine calls are synchronous and run on the engine's own stream, which this binary cannot
// record events on, so they are timed on the host (real time): launch, the result copy and the
// synchronisation are included, and at small n they are most of the time. The read sweep runs on this
// binary's stream and is timed with CUDA events (manual time), so at small n the engine level's sweep ratio
// compares a whole engine call with one kernel's device time.
// The kernel level runs each stage on this binary's stream with its own Workspace and times it with CUDA
// events (manual time): per iteration, `calls_per_iteration` calls back to back between two events (as
// many as make about 200 us, at most 20, from one timed call first), and the time of one call is
// reported. So at small n the time is the stage's device time plus whatever launch gaps back-to-back
// launches leave, with no result copy and no host synchronisation per call; inputs of up to a few tens of
// MiB stay in the L2 cache between calls (the same for every stage, CUB and the read sweep). Every
// kernel-level benchmark checks one call's result against the host before it times.
//
// Run:  bench_cuda [--benchmark_filter=REGEX] [--benchmark_min_time=SECONDS] [--benchmark_out=F.json
//                  --benchmark_out_format=json]
// Without --benchmark_min_time each benchmark runs for 0.05 s (Google Benchmark's default of 0.5 s would
// take the ~1,650 benchmarks far past ten minutes); the batched families (kernel level and
// read_sweep_batched) get a twentieth of it, see batched_min_time. --benchmark_filter='^kernel/' runs the
// kernel level alone (its sweep_bytes_per_second still has its reference), and --benchmark_filter='(n:4096|/512)/'
// --benchmark_min_time=0.01 both levels at the smallest sizes only. Without a usable GPU it prints why
// and exits 0, so CI can run it anywhere.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backends/cuda/kernels.hpp"
#include "benchmarks/bench_common.hpp"
#include "benchmarks/cub_argmax.hpp"
#include "benchmarks/read_sweep.hpp"

namespace tandem_bench {
void register_cuda_interop(Suite& suite);  // bench_cuda_interop.cpp
void register_cuda_forms();                // bench_cuda_forms.cpp
void register_cuda_per();                  // bench_cuda_per.cpp
void register_cuda_float16();              // bench_cuda_float16.cpp
}  // namespace tandem_bench

namespace {

using namespace tandem_bench;
using benchmark::State;

// Whether input and sweep buffers of `bytes` each fit in free GPU memory, with 1 GiB to spare.
bool fits_on_gpu(std::size_t bytes) {
  std::size_t free = 0, total = 0;
  cuda_check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return 2 * bytes + (std::size_t(1) << 30) <= free;
}

// ---- Kernel level ----------------------------------------------------------------------------------

using tandem::Dtype;

// One timed iteration of the kernel level makes about this much device time of back-to-back calls, so
// that the events' resolution (about 0.5 us) is under 1% of it, with at most kMaxCallsPerIteration calls.
constexpr double kKernelIterationSeconds = 200e-6;
constexpr int kMaxCallsPerIteration = 20;
// Sweeps per pair of events in baseline/read_sweep_batched and in the kernel level's sweep reference.
constexpr int kBatchedSweepCalls = 20;

// The minimum time of the batched families (kernel level, read_sweep_batched). Google Benchmark sizes a
// benchmark by the time it is told per iteration, and these report the time of ONE call while an
// iteration runs up to kMaxCallsPerIteration of them, so with the plain --benchmark_min_time a kernel
// benchmark ran up to 20 times longer than asked (the whole suite did not fit in ten minutes). They get
// the minimum time divided by kMaxCallsPerIteration instead: at most the device time asked for, and at
// least min_time / 20 of it (set in main from --benchmark_min_time).
double batched_min_time = 0.05 / kMaxCallsPerIteration;

// Kernel-level reductions up to 2^20 elements take 4-6 us a call, where two timings of the same kernel
// in one run differed by up to 15% (H200, 2026-11-23: `auto` against the stage it runs): they warm up
// for batched_min_time first and run 3 times; bench_charts takes the median (names carry
// "/min_warmup_time:.../repeats:3", which it drops).
int small_reduction_repetitions(std::size_t n) { return n <= (std::size_t(1) << 20) ? 3 : 1; }

// What the kernel-level benchmarks share: a stream of this binary's own with two events on it, the
// ladders' scratch memory, a cuBLAS handle and an 8-byte device slot for reduction results. The stages
// run on stream() only; the engine's own calls (input upload, the matmul check) are synchronous.
class KernelRunner {
 public:
  KernelRunner() {
    cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    cuda_check(cudaEventCreate(&start_), "cudaEventCreate");
    cuda_check(cudaEventCreate(&stop_), "cudaEventCreate");
    cuda_check(cudaMalloc(&result_, 16), "cudaMalloc");  // an arg-reduction's value and index
    const cublasStatus_t status = cublasCreate(&cublas_);
    if (status != CUBLAS_STATUS_SUCCESS) {
      cublas_ = nullptr;
      throw std::runtime_error(std::string("cublasCreate failed: ") + cublasGetStatusName(status));
    }
  }
  ~KernelRunner() {
    if (cublas_) cublasDestroy(cublas_);
    cudaFree(result_);
    cudaEventDestroy(stop_);
    cudaEventDestroy(start_);
    cudaStreamDestroy(stream_);
  }
  KernelRunner(const KernelRunner&) = delete;
  KernelRunner& operator=(const KernelRunner&) = delete;

  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }
  tandem::cuda::Workspace& workspace() { return workspace_; }
  void* result() const { return result_; }  // where the reductions write their one result

  void synchronize() { cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

  // Seconds per call of run(), which enqueues one call on stream(): `calls` calls back to back between
  // two events, the elapsed time divided by `calls`.
  template <class Run>
  double seconds_per_call(const Run& run, int calls) {
    cuda_check(cudaEventRecord(start_, stream_), "cudaEventRecord");
    for (int call = 0; call < calls; ++call) run();
    cuda_check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms * 1e-3 / calls;
  }

  // Calls per timed iteration: about kKernelIterationSeconds of device time, from one timed call.
  template <class Run>
  int calls_per_iteration(const Run& run) {
    const double one = seconds_per_call(run, 1);
    const double calls = std::ceil(kKernelIterationSeconds / std::max(one, 1e-9));
    return int(std::clamp(calls, 1.0, double(kMaxCallsPerIteration)));
  }

  // Runs one reduction of T into result() (poisoned first, so that a stage that writes nothing is
  // caught) and returns what it wrote as the engine would return it: int32 sums as int64.
  // The result a stage left in result(): its operator's accumulator, as the engine returns it.
  template <Op O, class T, class Run>
  tandem::op_result_t<O, T> reduction_result(const Run& run) {
    using Acc = typename tandem::detail::OpFor<O, T>::type::Acc;
    cuda_check(cudaMemsetAsync(result_, 0xFF, 16, stream_), "cudaMemsetAsync");
    run();
    Acc acc;
    cuda_check(cudaMemcpyAsync(&acc, result_, sizeof acc, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
    synchronize();
    const auto backend = tandem::detail::result_of<O, T>(acc);
    if constexpr (tandem::info(O).result == tandem::ResultKind::sum)
      return tandem::detail::sum_value<T>(backend);  // (an exact integer sum: its low 64 bits)
    else
      return tandem::op_result_t<O, T>(backend);
  }

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  void* result_ = nullptr;
  tandem::cuda::Workspace workspace_;
};

// kernel/cuda/<stage>/<op>/<type>/n:<n> for "auto" (the stage the engine picks, in the label) and every
// stage of the reduction ladder, on the same device Buffer as the engine-level reduce/ family.
template <class T>
void register_kernel_reductions(Suite& suite, KernelRunner& runner, SweepReference& batched_sweep, std::size_t n) {
  std::vector<std::string> stages = {"auto"};
  const std::vector<tandem::KernelInfo> infos = tandem::cuda::reduce_stage_info();
  for (const tandem::KernelInfo& stage : infos) stages.push_back(stage.name);
  for (const std::string& stage : stages)
    for (Op op : bench_ops()) {
      if (stage != "auto" && !tandem_verify::kernel_accepts(infos, stage, tandem::dtype_of<T>, &op, false)) continue;
      const std::string name = "kernel/cuda/" + stage + "/" + op_name(op) + "/" + type_name<T>() + "/" + size_label(n);
      benchmark::RegisterBenchmark(
          name.c_str(), guarded([&suite, &runner, &batched_sweep, stage, op, n](State& state) {
            const VectorInput<T>& in = suite.inputs.vector<T>(n);
            constexpr Dtype dtype = tandem::dtype_of<T>;
            const std::int64_t count = std::int64_t(n);
            const std::size_t ran = stage == "auto" ? tandem::cuda::auto_reduce_stage(op, dtype, count, 1)
                                                    : tandem::cuda::reduce_stage_named(stage);
            auto run = [&] {
              tandem::cuda::reduce(ran, op, dtype, in.buffer.data(), count, 1, runner.result(), runner.workspace(),
                                   runner.stream());
            };
            tandem::detail::visit_backend_op(op, [&]<Op O>(std::integral_constant<Op, O>) {
              check_result<O, T>(runner.reduction_result<O, T>(run), in.ref);
            });
            const int calls = runner.calls_per_iteration(run);
            for (auto _ : state) state.SetIterationTime(runner.seconds_per_call(run, calls));
            set_bandwidth_counters(state, double(n * sizeof(T)), batched_sweep.bytes_per_second(n * sizeof(T)));
            state.counters["calls_per_iteration"] = calls;
            if (stage == "auto") state.SetLabel(tandem::cuda::reduce_stage_name(ran));
          }))
          ->UseManualTime()
          ->MinTime(batched_min_time)
          ->MinWarmUpTime(batched_min_time)
          ->Repetitions(small_reduction_repetitions(n));
    }
  // CUB's own ArgMax, the vendor baseline of argmax (its NaN rule differs; the inputs hold no NaN).
  const std::string name =
      "kernel/cuda/cub_argmax_baseline/argmax/" + std::string(type_name<T>()) + "/" + size_label(n);
  benchmark::RegisterBenchmark(
      name.c_str(), guarded([&suite, &runner, &batched_sweep, n](State& state) {
        const VectorInput<T>& in = suite.inputs.vector<T>(n);
        const std::int64_t count = std::int64_t(n);
        const std::size_t temp_bytes = cub_argmax_temp_bytes<T>(count);
        void* temp = runner.workspace().get(std::max<std::size_t>(temp_bytes, 16));
        auto run = [&] { cub_argmax<T>(in.buffer.data(), count, runner.result(), temp, temp_bytes, runner.stream()); };
        check_result<Op::argmax, T>(runner.reduction_result<Op::argmax, T>(run), in.ref);
        const int calls = runner.calls_per_iteration(run);
        for (auto _ : state) state.SetIterationTime(runner.seconds_per_call(run, calls));
        set_bandwidth_counters(state, double(n * sizeof(T)), batched_sweep.bytes_per_second(n * sizeof(T)));
        state.counters["calls_per_iteration"] = calls;
      }))
      ->UseManualTime()
      ->MinTime(batched_min_time)
      ->MinWarmUpTime(batched_min_time)
      ->Repetitions(small_reduction_repetitions(n));
}

// kernel/cuda/<stage>/gemm/<type>/<shape> for every kernel given ("auto": the stage the engine picks, in
// the label), on the same device Buffers as the engine-level matmul/ family.
template <class T>
void register_kernel_matmuls(Suite& suite, KernelRunner& runner, const std::vector<std::string>& kernels,
                             const Shape& s) {
  for (const std::string& kernel : kernels) {
    const std::string name = "kernel/cuda/" + kernel + "/gemm/" + type_name<T>() + "/" + shape_label(s);
    benchmark::RegisterBenchmark(
        name.c_str(), guarded([&suite, &runner, kernel, s, name](State& state) {
          const MatmulInput<T>& in = suite.inputs.matrices<T>(s);
          constexpr Dtype dtype = tandem::dtype_of<T>;
          const std::int64_t m = std::int64_t(s.m), k = std::int64_t(s.k), n = std::int64_t(s.n);
          const std::size_t ran = kernel == "auto" ? tandem::cuda::auto_matmul_stage(dtype, m, k, n, k, n, n)
                                                   : tandem::cuda::matmul_stage_named(kernel);
          auto run = [&] {
            tandem::cuda::matmul(ran, dtype, in.a.data(), in.b.data(), in.c.data(), m, k, n, k, n, n,
                                 runner.workspace(), runner.cublas(), runner.stream());
          };
          if (suite.checked_matmuls.insert(name).second)
            check_matmul(in, s, [&] {
              run();
              runner.synchronize();
            });
          const int calls = runner.calls_per_iteration(run);
          for (auto _ : state) state.SetIterationTime(runner.seconds_per_call(run, calls));
          set_flop_counter(state, s);
          state.counters["calls_per_iteration"] = calls;
          if (kernel == "auto") state.SetLabel(tandem::cuda::matmul_stage_name(ran));
        }))
        ->UseManualTime()
        ->MinTime(batched_min_time)
        ->Unit(benchmark::kMillisecond);
  }
}

// ---- Families by input ----------------------------------------------------------------------------
// Registered grouped by input, so that each input is made once (bench_common.hpp, Inputs).

// Everything bench_cuda's benchmarks share: the engine suite, the read sweep, the kernel level's runner
// and the batched sweep reference.
struct CudaBench {
  Suite& suite;
  ReadSweep& sweep;
  KernelRunner& runner;
  SweepReference& batched_sweep;
};

template <class T>
void register_reduce_group(CudaBench& bench, const std::vector<std::size_t>& sizes) {
  Suite& suite = bench.suite;
  for (std::size_t n : sizes) {
    const std::size_t bytes = n * sizeof(T);
    if (!fits_on_gpu(bytes)) {
      std::fprintf(stderr, "bench_cuda: skipping %s n=%zu: not enough free GPU memory\n", type_name<T>(), n);
      continue;
    }
    const std::string tail = std::string(type_name<T>()) + "/" + size_label(n);
    ReadSweep& sweep = bench.sweep;
    benchmark::RegisterBenchmark(("baseline/read_sweep/" + tail).c_str(),
                                 guarded([&suite, &sweep, bytes](State& state) {
                                   const Buffer<float>& x = suite.inputs.sweep(bytes);
                                   sweep.seconds(x.data(), x.size());
                                   for (auto _ : state) state.SetIterationTime(sweep.seconds(x.data(), x.size()));
                                   set_bandwidth_counters(state, double(bytes), suite.sweep.bytes_per_second(bytes));
                                 }))
        ->UseManualTime();
    SweepReference& batched_sweep = bench.batched_sweep;
    benchmark::RegisterBenchmark(("baseline/read_sweep_batched/" + tail).c_str(),
                                 guarded([&suite, &sweep, &batched_sweep, bytes](State& state) {
                                   const Buffer<float>& x = suite.inputs.sweep(bytes);
                                   sweep.seconds(x.data(), x.size(), kBatchedSweepCalls);
                                   for (auto _ : state)
                                     state.SetIterationTime(sweep.seconds(x.data(), x.size(), kBatchedSweepCalls));
                                   set_bandwidth_counters(state, double(bytes), batched_sweep.bytes_per_second(bytes));
                                   state.counters["calls_per_iteration"] = kBatchedSweepCalls;
                                 }))
        ->UseManualTime()
        ->MinTime(batched_min_time);
    register_reductions<T>(suite, n);
    register_kernel_reductions<T>(suite, bench.runner, batched_sweep, n);
  }
}

struct StridedBuffers {
  Buffer<float> aos;  // 2n floats: the field is every other one
  Buffer<float> soa;  // the same n values contiguous
  Reference<float> ref;
};

void register_strided(Suite& suite, std::size_t n) {
  for (const std::string& kernel : suite.eng.reduce_kernels())
    for (bool aos : {true, false}) {
      const std::string name = "strided/cuda/" + kernel + (aos ? "/aos_field" : "/soa") + "/float/" + size_label(n);
      benchmark::RegisterBenchmark(
          name.c_str(), guarded([&suite, kernel, aos, n](State& state) {
            const StridedBuffers& in =
                suite.inputs.get<StridedBuffers>(Inputs::other_slot, "strided" + size_label(n), [&] {
                  const std::vector<float> v = random_vector<float>(2 * n, 5);
                  std::vector<float> field(n);
                  for (std::size_t i = 0; i < n; ++i) field[i] = v[2 * i];
                  return StridedBuffers{suite.eng.upload<float>(v), suite.eng.upload<float>(field),
                                        reference_of(field.data(), n)};
                });
            const tandem::ReduceOptions opts{kernel};
            auto run = [&] { return aos ? suite.eng.sum(in.aos.view(0, n, 2), opts) : suite.eng.sum(in.soa, opts); };
            check_result<Op::sum, float>(run(), in.ref);
            for (auto _ : state) benchmark::DoNotOptimize(run());
            set_bandwidth_counters(state, double(n * sizeof(float)), suite.sweep.bytes_per_second(n * sizeof(float)));
          }))
          ->UseRealTime();
    }
}

// tensor_only: only the tf32 / bf16 stages (for shapes where a SIMT stage would take seconds per call).
template <class T>
void register_matmul_group(CudaBench& bench, const std::vector<Shape>& shapes, bool tensor_only = false) {
  std::vector<std::string> kernels = matmul_kernels_for<T>(bench.suite.eng);  // tensor-core kernels: float only
  if (tensor_only)
    std::erase_if(kernels, [](const std::string& k) {
      return k.find("tf32") == std::string::npos && k.find("bf16") == std::string::npos;
    });
  for (const Shape& s : shapes) {
    register_matmuls<T>(bench.suite, kernels, s);
    register_kernel_matmuls<T>(bench.suite, bench.runner, kernels, s);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // The default minimum time goes first, so that a --benchmark_min_time given by the caller wins.
  std::string default_min_time = "--benchmark_min_time=0.05";
  std::vector<char*> args(argv, argv + argc);
  args.insert(args.begin() + 1, default_min_time.data());
  int args_count = int(args.size());
  for (char* arg : args)  // the last --benchmark_min_time wins, as in Google Benchmark
    if (std::strncmp(arg, "--benchmark_min_time=", 21) == 0)
      batched_min_time = std::strtod(arg + 21, nullptr) / kMaxCallsPerIteration;
  benchmark::Initialize(&args_count, args.data());
  if (benchmark::ReportUnrecognizedArguments(args_count, args.data())) return 1;

  for (const tandem::BackendStatus& b : tandem::backend_status())
    if (b.backend == tandem::Backend::cuda && !b.usable) {
      std::printf("bench_cuda: no usable GPU (%s); nothing to run\n", b.reason.c_str());
      return 0;
    }

  try {
    ReadSweep sweep;
    Suite suite(Engine(tandem::Backend::cuda),
                [&sweep](const Buffer<float>& x) { return sweep.seconds(x.data(), x.size()); });
    add_device_context(suite.eng);
    KernelRunner runner;
    SweepReference batched_sweep(suite.inputs, [&sweep](const Buffer<float>& x) {
      return sweep.seconds(x.data(), x.size(), kBatchedSweepCalls);
    });
    CudaBench bench{suite, sweep, runner, batched_sweep};

    const std::vector<std::size_t> sizes = {1u << 12, 1u << 16, 1u << 20, 1u << 24, 1u << 28, 1u << 30};
    register_reduce_group<float>(bench, sizes);
    register_reduce_group<double>(bench, {1u << 12, 1u << 16, 1u << 20, 1u << 24, 1u << 28});
    register_reduce_group<std::int32_t>(bench, sizes);
    register_type_reads(suite, std::size_t(1) << 30, tandem::element_types{});  // 1 GiB of each type
    register_overhead(suite, "auto");
    register_cuda_interop(suite);
    register_cuda_per();
    register_strided(suite, 1u << 24);
    const std::vector<Shape> shapes = {{512, 512, 512},    {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
                                       {1000, 1000, 1000}, {2049, 2049, 2049}, {4097, 4097, 4097}, {8192, 64, 8192}};
    register_matmul_group<float>(bench, shapes);
    register_matmul_group<double>(bench, shapes);
    register_matmul_group<float>(bench, {{8192, 8192, 8192}}, true);  // issue #14's tf32 target at 8192^3
    register_cuda_forms();
    register_cuda_float16();

    benchmark::RunSpecifiedBenchmarks();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cuda: %s\n", e.what());
    return 1;
  }
  benchmark::Shutdown();
  return 0;
}
