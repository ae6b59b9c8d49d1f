// bench_cuda's GEMM-form families (issue #11): transposes, alpha / beta and batches through the engine,
// against cuBLAS called directly with the same form on the same data and stream.
//   forms/cuda/<kernel>/<form>/float/<shape>    eng.matmul() on Buffers (BufferBatch), kernel auto (the
//                                               engine's choice: cuBLAS) or an own stage (register_tiled:
//                                               forms.cuh's transposes, epilogue and per-entry launches)
//   baseline/cublas/<form>/float/<shape>        cublasSgemm / cublasSgemmStridedBatched with the same
//                                               transposes, alpha, beta and strides
// <form>: nn, tn, nt, tt (op(A), op(B)), ab (alpha 2, beta 1), or batch:<count>. Timed with CUDA events
// on the stream the engine was given (manual time); flop_per_second counts 2 m n k per entry.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "benchmarks/bench_common.hpp"
#include "benchmarks/read_sweep.hpp"
#include "benchmarks/stream_timer.hpp"

namespace tandem_bench {

namespace {

struct FormCase {
  std::string form;
  std::size_t m, k, n, batch;
  bool ta, tb;
  float alpha, beta;
};

std::string label(const FormCase& f) {
  return f.form + "/float/" + std::to_string(f.m) + "x" + std::to_string(f.k) + "x" + std::to_string(f.n);
}

void set_tflops(benchmark::State& state, const FormCase& f) {
  set_flop_counter(state, 2.0 * double(f.m) * double(f.k) * double(f.n) * double(f.batch));
}

void register_case(const FormCase& f, const std::vector<std::string>& kernels) {
  // One set of operands per case, shared by its benchmarks (made on first use).
  struct Operands {
    StreamTimer bench;
    Engine eng{tandem::Backend::cuda, tandem::EngineOptions{.stream = bench.stream}};
    Buffer<float> a, b, c;
  };
  auto ops = std::make_shared<std::unique_ptr<Operands>>();
  auto get = [ops, f]() -> Operands& {
    if (!*ops) {
      *ops = std::make_unique<Operands>();
      Operands& o = **ops;
      o.a = o.eng.upload<float>(random_vector<float>(f.m * f.k * f.batch, 11));
      o.b = o.eng.upload<float>(random_vector<float>(f.k * f.n * f.batch, 12));
      o.c = o.eng.upload<float>(random_vector<float>(f.m * f.n * f.batch, 13));
    }
    return **ops;
  };
  const std::size_t ar = f.ta ? f.k : f.m, ac = f.ta ? f.m : f.k, br = f.tb ? f.n : f.k, bc = f.tb ? f.k : f.n;
  for (const std::string& kernel : kernels) {
    const std::string name = "forms/cuda/" + kernel + "/" + label(f);
    benchmark::RegisterBenchmark(name.c_str(), guarded([get, f, kernel, ar, ac, br, bc](benchmark::State& state) {
                                   Operands& o = get();
                                   tandem::MatmulOptions opts{kernel};
                                   opts.trans_a = f.ta, opts.trans_b = f.tb, opts.alpha = f.alpha, opts.beta = f.beta;
                                   auto run = [&] {
                                     o.eng.matmul(o.a.batch(ar, ac, f.batch, ar * ac),
                                                  o.b.batch(br, bc, f.batch, br * bc),
                                                  o.c.batch(f.m, f.n, f.batch, f.m * f.n), opts);
                                   };
                                   run();  // sizes the engine's scratch memory
                                   for (auto _ : state) state.SetIterationTime(o.bench.seconds(run));
                                   set_tflops(state, f);
                                 }))
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  const std::string name = "baseline/cublas/" + label(f);
  benchmark::RegisterBenchmark(
      name.c_str(), guarded([get, f, ar, ac, br, bc](benchmark::State& state) {
        Operands& o = get();
        cublasHandle_t h = nullptr;
        if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw tandem::Error("cublasCreate failed");
        cublasSetStream(h, o.bench.stream);
        const cublasOperation_t opb = f.tb ? CUBLAS_OP_T : CUBLAS_OP_N, opa = f.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
        const int m = int(f.m), k = int(f.k), n = int(f.n);
        cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
        auto run = [&] {  // row-major C^T = op(B)^T op(A)^T, as the cublas stage
          st = cublasSgemmStridedBatched(h, opb, opa, n, m, k, &f.alpha, o.b.data(), int(bc), (long long)(br * bc),
                                         o.a.data(), int(ac), (long long)(ar * ac), &f.beta, o.c.data(), n,
                                         (long long)(f.m * f.n), int(f.batch));
        };
        run();
        for (auto _ : state) state.SetIterationTime(o.bench.seconds(run));
        cublasDestroy(h);
        if (st != CUBLAS_STATUS_SUCCESS) throw tandem::Error("cublasSgemmStridedBatched failed");
        set_tflops(state, f);
      }))
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace

void register_cuda_forms() {
  const std::vector<std::string> kernels = {"auto", "register_tiled"};
  for (auto [form, ta, tb] :
       {std::tuple{"nn", false, false}, {"tn", true, false}, {"nt", false, true}, {"tt", true, true}})
    register_case({form, 4096, 4096, 4096, 1, ta, tb, 1.0f, 0.0f}, kernels);
  register_case({"ab", 4096, 4096, 4096, 1, false, false, 2.0f, 1.0f}, kernels);
  register_case({"batch:4096", 64, 64, 64, 4096, false, false, 1.0f, 0.0f}, kernels);
  register_case({"batch:64", 512, 512, 512, 64, false, false, 1.0f, 0.0f}, kernels);
}

}  // namespace tandem_bench
