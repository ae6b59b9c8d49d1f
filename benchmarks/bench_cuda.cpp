// bench_cuda: the CUDA backend through tandem::Engine on device-resident Buffers, with baselines in the
// same binary. Names, counters and timing: bench_common.hpp.
//
//   reduce/cuda/<kernel>/<op>/<type>/n:<n>    every reduce kernel of the engine ("auto" too; "cub" is CUB's
//                                             DeviceReduce), sum/min/max, float/double/int32, n = 2^12 to
//                                             2^30 (2^30 for float and int32 only, when the GPU has room)
//   baseline/read_sweep/<type>/n:<n>          read_sweep.cu, a float4 grid-stride read of the same bytes:
//                                             the rate pct_sweep divides by
//   matmul/cuda/<kernel>/<type>/<shape>       every matmul kernel of the engine that takes the type ("cublas",
//                                             "cublas_tf32", "cublas_bf16" are cuBLAS), float and double
//   overhead/cuda/{engine,raw_backend}/...    engine.sum() of 16 floats against BackendImpl::reduce()
//   strided/cuda/<kernel>/{aos_field,soa}/float/n:<n>  every other float of a Buffer (BufferView stride 2)
//                                             against the same values contiguous; GB/s counts n*4 bytes
//
// Timing. Engine calls are synchronous and run on the engine's own stream, which this binary cannot
// record events on, so they are timed on the host (real time): launch, the result copy and the
// synchronisation are included, and at small n they are most of the time. The read sweep runs on this
// binary's stream and is timed with CUDA events (manual time), so at small n pct_sweep compares a whole
// engine call with one kernel's device time.
//
// Run:  bench_cuda [--benchmark_filter=REGEX] [--benchmark_min_time=SECONDS] [--benchmark_out=F.json
//                  --benchmark_out_format=json]
// Without --benchmark_min_time each benchmark runs for 0.05 s (Google Benchmark's default of 0.5 s would
// take the ~840 benchmarks past ten minutes); the whole suite took 1 min 45 s on an H200, and the CI
// smoke run --benchmark_filter='(n:4096|/512)/' --benchmark_min_time=0.01 took 3 s. Without a usable GPU
// it prints why and exits 0, so CI can run it anywhere.
#include <cstdio>

#include "benchmarks/bench_common.hpp"
#include "benchmarks/read_sweep.hpp"

namespace {

using namespace tandem_bench;
using benchmark::State;

// Whether input and sweep buffers of `bytes` each fit in free GPU memory, with 1 GiB to spare.
bool fits_on_gpu(std::size_t bytes) {
  std::size_t free = 0, total = 0;
  cuda_check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return 2 * bytes + (std::size_t(1) << 30) <= free;
}

template <class T>
void register_reduce_group(Suite& suite, ReadSweep& sweep, const std::vector<std::size_t>& sizes) {
  for (std::size_t n : sizes) {
    const std::size_t bytes = n * sizeof(T);
    if (!fits_on_gpu(bytes)) {
      std::fprintf(stderr, "bench_cuda: skipping %s n=%zu: not enough free GPU memory\n", type_name<T>(), n);
      continue;
    }
    const std::string name = "baseline/read_sweep/" + std::string(type_name<T>()) + "/" + size_label(n);
    benchmark::RegisterBenchmark(name.c_str(), guarded([&suite, &sweep, bytes](State& state) {
                                   const Buffer<float>& x = suite.inputs.sweep(bytes);
                                   sweep.seconds(x.data(), x.size());
                                   for (auto _ : state) state.SetIterationTime(sweep.seconds(x.data(), x.size()));
                                   set_bandwidth_counters(state, double(bytes), suite.sweep.bytes_per_second(bytes));
                                 }))
        ->UseManualTime();
    register_reductions<T>(suite, n);
  }
}

struct StridedBuffers {
  Buffer<float> aos;  // 2n floats: the field is every other one
  Buffer<float> soa;  // the same n values contiguous
  Reference ref;
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
            check_result(Op::sum, run(), in.ref);
            for (auto _ : state) benchmark::DoNotOptimize(run());
            set_bandwidth_counters(state, double(n * sizeof(float)), suite.sweep.bytes_per_second(n * sizeof(float)));
          }))
          ->UseRealTime();
    }
}

template <class T>
void register_matmul_group(Suite& suite, const std::vector<Shape>& shapes) {
  const std::vector<std::string> kernels = matmul_kernels_for<T>(suite.eng);  // tensor-core kernels: float only
  for (const Shape& s : shapes) register_matmuls<T>(suite, kernels, s);
}

}  // namespace

int main(int argc, char** argv) {
  // The default minimum time goes first, so that a --benchmark_min_time given by the caller wins.
  std::string default_min_time = "--benchmark_min_time=0.05";
  std::vector<char*> args(argv, argv + argc);
  args.insert(args.begin() + 1, default_min_time.data());
  int args_count = int(args.size());
  benchmark::Initialize(&args_count, args.data());
  if (benchmark::ReportUnrecognizedArguments(args_count, args.data())) return 1;

  for (const tandem::BackendStatus& b : tandem::backend_status())
    if (b.backend == tandem::Backend::cuda && !b.usable) {
      std::printf("bench_cuda: no usable GPU (%s); nothing to run\n", b.reason.c_str());
      return 0;
    }

  try {
    ReadSweep sweep;
    Suite suite(
        Engine(tandem::Backend::cuda), [&sweep](const Buffer<float>& x) { return sweep.seconds(x.data(), x.size()); },
        "TFLOP/s", 1e12);
    add_device_context(suite.eng);

    const std::vector<std::size_t> sizes = {1u << 12, 1u << 16, 1u << 20, 1u << 24, 1u << 28, 1u << 30};
    register_reduce_group<float>(suite, sweep, sizes);
    register_reduce_group<double>(suite, sweep, {1u << 12, 1u << 16, 1u << 20, 1u << 24, 1u << 28});
    register_reduce_group<std::int32_t>(suite, sweep, sizes);
    register_overhead(suite, "auto");
    register_strided(suite, 1u << 24);
    const std::vector<Shape> shapes = {{512, 512, 512},    {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
                                       {1000, 1000, 1000}, {2049, 2049, 2049}, {4097, 4097, 4097}, {8192, 64, 8192}};
    register_matmul_group<float>(suite, shapes);
    register_matmul_group<double>(suite, shapes);

    benchmark::RunSpecifiedBenchmarks();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cuda: %s\n", e.what());
    return 1;
  }
  benchmark::Shutdown();
  return 0;
}
