// bench_cuda's interop families (issue #10): host data through the CUDA engine against the pinned copy
// rate, the cost of enqueueing a *_into call, and a synchronous call against its floor.
//   host/<backend>/sum/float/n:<n>        eng.sum() of a std::vector (pageable host memory): the CUDA
//                                         engine stages pieces through pinned memory while the CPU's
//                                         cores reduce others in place; the CPU engine reads it all
//   host/cuda/single_pass/sum/float/n:<n> the same with a named stage: every piece staged to the GPU
//   baseline/pinned_h2d/n:<n>             cudaMemcpyAsync of the same bytes from pinned memory: the rate
//                                         host/cuda should reach (0.85x or more); pageable_h2d likewise
//   overhead/cuda/sum_into/enqueue        host time of one sum_into() of 16 floats (no waiting)
//   overhead/cuda/floor                   one tiny kernel + 8-byte copy + stream synchronise: what the
//                                         synchronous overhead/cuda/engine/sum/float/n:16 compares with
#include <cuda_runtime.h>

#include <chrono>
#include <vector>

#include "benchmarks/bench_common.hpp"
#include "benchmarks/read_sweep.hpp"

namespace tandem_bench {

using tandem::Backend;

void register_cuda_interop(Suite& suite) {
  const std::size_t n = std::size_t(1) << 28;  // 1 GiB of floats
  static std::vector<float> host;              // made on first use, kept for the family
  auto host_input = [n]() -> const std::vector<float>& {
    if (host.size() != n) host = random_vector<float>(n, 3);
    return host;
  };
  const double bytes = double(n) * sizeof(float);
  // kernel "auto" (CUDA: pieces shared between the GPU's staged path and the CPU's cores), and on CUDA
  // the named stage single_pass (every piece staged to the GPU: the staged path's own rate).
  for (auto [b, kernel] : {std::pair{Backend::cuda, "auto"}, {Backend::cuda, "single_pass"}, {Backend::cpu, "auto"}}) {
    const std::string name = std::string("host/") + tandem::to_string(b) +
                             (std::string_view(kernel) == "auto" ? "" : std::string("/") + kernel) + "/sum/float/" +
                             size_label(n);
    benchmark::RegisterBenchmark(name.c_str(), guarded([&suite, b, kernel, host_input, bytes](benchmark::State& state) {
                                   const Engine cpu(Backend::cpu);
                                   const Engine& eng = b == Backend::cuda ? suite.eng : cpu;
                                   const tandem::ReduceOptions opts{.kernel = kernel};
                                   const std::vector<float>& x = host_input();
                                   const Reference<float> ref = reference_of(x.data(), x.size());
                                   check_result<Op::sum, float>(eng.sum(x, opts), ref);
                                   for (auto _ : state) benchmark::DoNotOptimize(eng.sum(x, opts));
                                   set_bytes_counter(state, bytes);  // no read-sweep reference for host data
                                 }))
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (bool pinned : {true, false}) {
    const std::string name = std::string("baseline/") + (pinned ? "pinned" : "pageable") + "_h2d/" + size_label(n);
    benchmark::RegisterBenchmark(
        name.c_str(), guarded([pinned, host_input, bytes](benchmark::State& state) {
          void* device = nullptr;
          void* src = nullptr;
          cudaStream_t stream = nullptr;
          cuda_check(cudaMalloc(&device, std::size_t(bytes)), "cudaMalloc");
          if (pinned) cuda_check(cudaMallocHost(&src, std::size_t(bytes)), "cudaMallocHost");
          cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
          const void* from = pinned ? src : host_input().data();
          for (auto _ : state) {
            cuda_check(cudaMemcpyAsync(device, from, std::size_t(bytes), cudaMemcpyHostToDevice, stream),
                       "cudaMemcpyAsync");
            cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
          }
          set_bytes_counter(state, bytes);  // no read-sweep reference for host data
          cudaStreamDestroy(stream);
          if (src) cudaFreeHost(src);
          cudaFree(device);
        }))
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("overhead/cuda/sum_into/enqueue/float/n:16", guarded([&suite](benchmark::State& state) {
                                 const Buffer<float>& x = suite.inputs.vector<float>(16).buffer;
                                 const Buffer<float> out = suite.eng.buffer<float>(1);
                                 constexpr int kCalls = 256;  // enqueued per timed batch, then one wait (untimed)
                                 for (auto _ : state) {
                                   const auto t0 = std::chrono::steady_clock::now();
                                   for (int i = 0; i < kCalls; ++i) suite.eng.sum_into(x, out);
                                   const auto t1 = std::chrono::steady_clock::now();
                                   suite.eng.synchronize();
                                   state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count() / kCalls);
                                 }
                               }))
      ->UseManualTime()
      ->Unit(benchmark::kNanosecond);
  benchmark::RegisterBenchmark("overhead/cuda/floor", guarded([](benchmark::State& state) {
                                 cudaStream_t stream = nullptr;
                                 void *device = nullptr, *pinned = nullptr;
                                 cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
                                 cuda_check(cudaMalloc(&device, 8), "cudaMalloc");
                                 cuda_check(cudaMallocHost(&pinned, 8), "cudaMallocHost");
                                 for (auto _ : state) floor_call(stream, device, pinned);
                                 cudaFreeHost(pinned);
                                 cudaFree(device);
                                 cudaStreamDestroy(stream);
                               }))
      ->UseRealTime()
      ->Unit(benchmark::kNanosecond);
}

}  // namespace tandem_bench
