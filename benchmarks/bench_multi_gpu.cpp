// bench_multi_gpu (issue #12): an engine over every GPU of the machine against one GPU, in the same run,
// through the public API only. Every case runs with gpus:1 (a single-device engine on GPU 0) and
// gpus:<D> (EngineOptions::devices = all D GPUs) on the same amount of work:
//   multi/sum/buffer/float/<elements>/gpus:<g>      sum of a Buffer (sharded over the GPUs)       bytes/s
//   multi/sum_det/buffer/float/<elements>/gpus:<g>  the same, deterministic (canonical order)     bytes/s
//   multi/sum/host/float/<elements>/gpus:<g>        sum of a host span (split, copied in parallel) bytes/s
//   multi/matmul/<dtype>/<n>/gpus:<g>               C = A B, n x n x n, on Buffers; over several GPUs
//                                                   rows of A and C per GPU, B sent in panels beside
//                                                   the products                                   FLOP/s
//   multi/sum_rows/buffer/float/<rows>x<cols>/gpus:<g>  per-row sums of a Buffer matrix (rows per GPU) bytes/s
//   multi/sum_cols/buffer/float/<rows>x<cols>/gpus:<g>  per-column sums (rows per GPU, partial sums
//                                                       combined); sum_cols_det: deterministic          bytes/s
//   multi/matmul_batched/bfloat16/<count>x<n>/gpus:<g>  count products n x n x n (entries per GPU)  FLOP/s
// (counters bytes_per_second and flop_per_second, printed with decimal prefixes: "8.5T/s" is 8.5e12 per
// second)
// Wall-clock time per call (the result is back on the host, or synchronize() after a Buffer matmul).
// Run with NCCL_NVLS_ENABLE=0. Flags: --benchmark_filter etc.; TANDEM_BENCH_SCALE=small shrinks the
// sizes 16x (a quick check).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "tandem/float16.hpp"
#include "tandem/tandem.hpp"

namespace {

using tandem::Backend;
using tandem::Engine;

int gpu_count() {
  for (const auto& s : tandem::backend_status())
    if (s.backend == Backend::cuda && s.usable) return s.devices;
  return 0;
}

bool small() {
  const char* v = std::getenv("TANDEM_BENCH_SCALE");
  return v && std::string(v) == "small";
}

// One engine per GPU count, made once (NCCL's communicators take a while).
const Engine& engine(int gpus) {
  static std::map<int, std::unique_ptr<Engine>> engines;
  auto& e = engines[gpus];
  if (!e) {
    tandem::EngineOptions o;
    if (gpus > 1)
      for (int d = 0; d < gpus; ++d) o.devices.push_back(d);
    e = std::make_unique<Engine>(Backend::cuda, o);
  }
  return *e;
}

template <class T>
std::vector<T> filled(std::size_t n, float scale) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = T(scale * float(int(i % 1999) - 999) / 999.0f);
  return v;
}

template <class F>
void guarded(benchmark::State& state, F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void sum_buffer(benchmark::State& state, int gpus, std::size_t n, bool deterministic) {
  guarded(state, [&] {
    const Engine& eng = engine(gpus);
    static std::vector<float> host;  // (filled once: 2^32 floats take a while)
    if (host.size() != n) host = filled<float>(n, 1.0f);
    const auto x = eng.upload(host);
    tandem::ReduceOptions o;
    o.deterministic = deterministic;
    benchmark::DoNotOptimize(eng.sum(x, o));
    for (auto _ : state) benchmark::DoNotOptimize(eng.sum(x, o));
    state.counters["bytes_per_second"] =
        benchmark::Counter(double(n) * 4, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  });
}

void sum_host(benchmark::State& state, int gpus, const std::vector<float>& x) {
  guarded(state, [&] {
    const Engine& eng = engine(gpus);
    for (auto _ : state) benchmark::DoNotOptimize(eng.sum(x));
    state.counters["bytes_per_second"] = benchmark::Counter(
        double(x.size()) * 4, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  });
}

template <class T>
void matmul(benchmark::State& state, int gpus, std::size_t n) {
  guarded(state, [&] {
    const Engine& eng = engine(gpus);
    const auto a = eng.upload(filled<T>(n * n, 1.0f)), b = eng.upload(filled<T>(n * n, 0.5f));
    auto c = eng.template buffer<tandem::compute_t<T>>(n * n);
    auto run = [&] {
      eng.matmul(a.matrix(n, n), b.matrix(n, n), c.matrix(n, n));
      eng.synchronize();
    };
    run();
    for (auto _ : state) run();
    state.counters["flop_per_second"] =
        benchmark::Counter(2.0 * double(n) * double(n) * double(n), benchmark::Counter::kIsIterationInvariantRate,
                           benchmark::Counter::kIs1000);
  });
}

void sum_per(benchmark::State& state, int gpus, std::size_t rows, std::size_t cols, tandem::Per per, bool det) {
  guarded(state, [&] {
    const Engine& eng = engine(gpus);
    const auto x = eng.upload(filled<float>(rows * cols, 1.0f));
    auto out = eng.template buffer<float>(per == tandem::Per::row ? rows : cols);
    auto run = [&] {
      eng.sum(x.matrix(rows, cols), per, out, {.deterministic = det});
      eng.synchronize();
    };
    run();
    for (auto _ : state) run();
    state.counters["bytes_per_second"] = benchmark::Counter(
        double(rows * cols) * 4, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  });
}

template <class T>
void matmul_batched(benchmark::State& state, int gpus, std::size_t count, std::size_t n) {
  guarded(state, [&] {
    const Engine& eng = engine(gpus);
    const auto a = eng.upload(filled<T>(count * n * n, 1.0f)), b = eng.upload(filled<T>(count * n * n, 0.5f));
    auto c = eng.template buffer<tandem::compute_t<T>>(count * n * n);
    auto run = [&] {
      eng.matmul(a.batch(n, n, count, n * n), b.batch(n, n, count, n * n), c.batch(n, n, count, n * n));
      eng.synchronize();
    };
    run();
    for (auto _ : state) run();
    state.counters["flop_per_second"] =
        benchmark::Counter(2.0 * double(count) * double(n) * double(n) * double(n),
                           benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
  });
}

void register_all() {
  const int D = gpu_count();
  if (D == 0) return;
  const std::vector<int> counts = D > 1 ? std::vector<int>{1, D} : std::vector<int>{1};
  const std::size_t div = small() ? 16 : 1;
  const std::size_t per_gpu = (std::size_t(1) << 30) / div, host_n = (std::size_t(1) << 31) / div;
  const std::size_t mm = 16384 / (small() ? 4 : 1);
  const std::size_t n = per_gpu * std::size_t(D);  // D x 2^30 floats on 1 GPU and on D
  auto host = std::make_shared<std::vector<float>>();
  for (int g : counts) {
    const std::string tail = "/gpus:" + std::to_string(g);
    benchmark::RegisterBenchmark(("multi/sum/buffer/float/" + std::to_string(n) + tail).c_str(),
                                 [g, n](benchmark::State& s) { sum_buffer(s, g, n, false); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("multi/sum_det/buffer/float/" + std::to_string(n) + tail).c_str(),
                                 [g, n](benchmark::State& s) { sum_buffer(s, g, n, true); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("multi/sum/host/float/" + std::to_string(host_n) + tail).c_str(),
                                 [g, host, host_n](benchmark::State& s) {
                                   if (host->empty()) *host = filled<float>(host_n, 1.0f);
                                   sum_host(s, g, *host);
                                 })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(5);
    benchmark::RegisterBenchmark(("multi/matmul/float/" + std::to_string(mm) + tail).c_str(),
                                 [g, mm](benchmark::State& s) { matmul<float>(s, g, mm); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(5);
    benchmark::RegisterBenchmark(("multi/matmul/bfloat16/" + std::to_string(mm) + tail).c_str(),
                                 [g, mm](benchmark::State& s) { matmul<tandem::bfloat16>(s, g, mm); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(10);
    const std::size_t rows = 32768 / (small() ? 4 : 1), cols = 32768;  // 4 GiB of floats
    const std::string shape = std::to_string(rows) + "x" + std::to_string(cols);
    for (const auto& [name, per, det] :
         {std::tuple{"sum_rows", tandem::Per::row, false}, std::tuple{"sum_cols", tandem::Per::col, false},
          std::tuple{"sum_cols_det", tandem::Per::col, true}})
      benchmark::RegisterBenchmark(
          ("multi/" + std::string(name) + "/buffer/float/" + shape + tail).c_str(),
          [g, rows, cols, per, det](benchmark::State& s) { sum_per(s, g, rows, cols, per, det); })
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(20);
    const std::size_t count = 64, bn = 2048 / (small() ? 4 : 1);
    benchmark::RegisterBenchmark(
        ("multi/matmul_batched/bfloat16/" + std::to_string(count) + "x" + std::to_string(bn) + tail).c_str(),
        [g, count, bn](benchmark::State& s) { matmul_batched<tandem::bfloat16>(s, g, count, bn); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(20);
  }
}

}  // namespace

int main(int argc, char** argv) {
  setenv("NCCL_NVLS_ENABLE", "0", 0);  // never NVLink multicast unless the caller says otherwise
  benchmark::Initialize(&argc, argv);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
