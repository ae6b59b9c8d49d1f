// bench_cuda's 16-bit families (issue #11): bfloat16 and half stored inputs, against the vendor call on
// the same data and stream.
//   float16/cuda/<kernel>/matmul/<dtype>/<shape>   eng.matmul() on Buffers: 16-bit A and B, float C;
//                                                  auto, cublas (cuBLAS on the 16-bit inputs, through
//                                                  the engine: auto's alternative measured at the same
//                                                  level) or an own stage (wgmma_bf16: A and B packed
//                                                  first; the Hopper rungs where the build offers them)
//   float16/cuda/<kernel>/matmul/float/<shape>     float A and B on the tensor cores as tf32: cublas_tf32
//                                                  (the baseline), wgmma_tf32 and the Hopper rungs; with
//                                                  /trans_b, B stored n x k (no transposing pass)
//   tf32/cuda/auto/matmul/float/<shape>            auto where MatmulOptions::precision is tf32
//   baseline/cublas_gemm_ex/matmul/<dtype>/<shape> cublasGemmEx / cublasGemmStridedBatchedEx, 16-bit A
//                                                  and B, float C, CUBLAS_COMPUTE_32F
//   mixed/cuda/<kernel>/matmul/floatxbfloat16/<shape>  float A, bfloat16 B (float C): a mixed product,
//   mixed/cuda/<kernel>/matmul/float/<shape>       beside the same product of float A and B
//   grouped/cuda/<kernel>/matmul_grouped/<dtype>/<groups>x<rows>x<k>x<n>  matmul_grouped of Buffers (auto: one
//                                                  launch; cublas: a call per group), beside
//   baseline/summed_product/cuda/auto/matmul/...   the same work as one product of groups * rows rows
//   float16/cuda/auto/sum/<dtype>/<n>              eng.sum_into() of a Buffer (float result)
//   baseline/cub/sum/<dtype>/<n>                   cub::DeviceReduce::TransformReduce to float
// <shape>: m x k x n, or batch:<count>/<m>x<k>x<n>. Timed with CUDA events on the engine's stream
// (manual time); flop_per_second counts 2 m n k per entry, bytes_per_second the 16-bit input bytes.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "benchmarks/bench_common.hpp"
#include "benchmarks/cub_sum16.hpp"
#include "benchmarks/read_sweep.hpp"
#include "benchmarks/stream_timer.hpp"

namespace tandem_bench {

namespace {

template <class H>
std::vector<H> random16(std::size_t n, std::uint64_t seed) {
  if constexpr (std::is_same_v<H, float>) return random_vector<float>(n, seed);  // (the tf32 cases)
  const std::vector<float> f = random_vector<float>(n, seed);
  return std::vector<H>(f.begin(), f.end());
}

template <class H>
constexpr cudaDataType_t kCudaType = std::is_same_v<H, tandem::bfloat16> ? CUDA_R_16BF : CUDA_R_16F;

struct MatmulCase {
  std::size_t m, k, n, batch;
  bool trans_b = false;                                   // B stored n x k (K-major: what tf32 wgmma reads in place)
  tandem::Precision precision = tandem::Precision::full;  // MatmulOptions::precision
};

std::string label(const MatmulCase& c) {
  const std::string shape = std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n);
  return (c.batch == 1 ? shape : "batch:" + std::to_string(c.batch) + "/" + shape) + (c.trans_b ? "/trans_b" : "");
}

// baseline: cublasGemmEx on the same data too (16-bit A and B only). A of H, B of HB: a mixed product where
// they differ (the mixed/cuda family).
// family: the name's first part (float16, or mixed for the mixed products and their float references).
template <class H, class HB = H>
void register_matmul(const MatmulCase& c, const std::vector<std::string>& kernels, bool baseline = true,
                     const char* family = std::is_same_v<H, HB> ? "float16" : "mixed") {
  constexpr bool kMixed = !std::is_same_v<H, HB>;
  struct Operands {
    StreamTimer s;
    Engine eng{tandem::Backend::cuda, tandem::EngineOptions{.stream = s.stream}};
    Buffer<H> a;
    Buffer<HB> b;
    Buffer<float> out;
  };
  auto ops = std::make_shared<std::unique_ptr<Operands>>();
  auto get = [ops, c]() -> Operands& {
    if (!*ops) {
      *ops = std::make_unique<Operands>();
      Operands& o = **ops;
      o.a = o.eng.template upload<H>(random16<H>(c.m * c.k * c.batch, 21));
      o.b = o.eng.template upload<HB>(random16<HB>(c.k * c.n * c.batch, 22));
      o.out = o.eng.template buffer<float>(c.m * c.n * c.batch);
    }
    return **ops;
  };
  auto tflops = [c](benchmark::State& state) {
    set_flop_counter(state, 2.0 * double(c.m) * double(c.k) * double(c.n) * double(c.batch));
  };
  const std::string types = kMixed ? std::string(tandem::dtype_traits<H>::name) + "x" + tandem::dtype_traits<HB>::name
                                   : std::string(tandem::dtype_traits<H>::name);
  const std::string tail = "/matmul/" + types + "/" + label(c);
  for (const std::string& kernel : kernels) {
    const std::string name = std::string(family) + "/cuda/" + kernel + tail;
    benchmark::RegisterBenchmark(
        name.c_str(), guarded([get, c, kernel, tflops](benchmark::State& state) {
          Operands& o = get();
          tandem::MatmulOptions opt{kernel};
          opt.trans_b = c.trans_b, opt.precision = c.precision;
          auto run = [&] {
            o.eng.matmul(o.a.batch(c.m, c.k, c.batch, c.m * c.k),
                         c.trans_b ? o.b.batch(c.n, c.k, c.batch, c.k * c.n) : o.b.batch(c.k, c.n, c.batch, c.k * c.n),
                         o.out.batch(c.m, c.n, c.batch, c.m * c.n), opt);
          };
          run();  // sizes the engine's scratch memory
          for (auto _ : state) state.SetIterationTime(o.s.seconds(run));
          tflops(state);
        }))
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  if constexpr (kMixed) return;
  if (!baseline) return;
  const std::string name = "baseline/cublas_gemm_ex" + tail;
  benchmark::RegisterBenchmark(
      name.c_str(), guarded([get, c, tflops](benchmark::State& state) {
        Operands& o = get();
        cublasHandle_t h = nullptr;
        if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw tandem::Error("cublasCreate failed");
        cublasSetStream(h, o.s.stream);
        const int m = int(c.m), k = int(c.k), n = int(c.n);
        const float alpha = 1.0f, beta = 0.0f;
        cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
        auto run = [&] {  // row-major C^T = B^T A^T, as the cublas stage
          if (c.batch == 1)
            st = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, o.b.data(), kCudaType<H>, n, o.a.data(),
                              kCudaType<H>, k, &beta, o.out.data(), CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT);
          else
            st = cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, o.b.data(), kCudaType<H>, n,
                                            (long long)(c.k * c.n), o.a.data(), kCudaType<H>, k, (long long)(c.m * c.k),
                                            &beta, o.out.data(), CUDA_R_32F, n, (long long)(c.m * c.n), int(c.batch),
                                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        };
        run();
        for (auto _ : state) state.SetIterationTime(o.s.seconds(run));
        cublasDestroy(h);
        if (st != CUBLAS_STATUS_SUCCESS) throw tandem::Error("cublasGemmEx failed");
        tflops(state);
      }))
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

template <class H>
void register_sum(std::size_t n) {
  struct Operands {
    StreamTimer s;
    Engine eng{tandem::Backend::cuda, tandem::EngineOptions{.stream = s.stream}};
    Buffer<H> x;
    Buffer<float> out;
  };
  auto ops = std::make_shared<std::unique_ptr<Operands>>();
  auto get = [ops, n]() -> Operands& {
    if (!*ops) {
      *ops = std::make_unique<Operands>();
      (*ops)->x = (*ops)->eng.template upload<H>(random16<H>(n, 31));
      (*ops)->out = (*ops)->eng.template buffer<float>(1);
    }
    return **ops;
  };
  auto gbs = [n](benchmark::State& state) { set_bytes_counter(state, double(n * sizeof(H))); };
  const std::string tail = std::string("/sum/") + tandem::dtype_traits<H>::name + "/" + std::to_string(n);
  benchmark::RegisterBenchmark(("float16/cuda/auto" + tail).c_str(), guarded([get, gbs](benchmark::State& state) {
                                 Operands& o = get();
                                 auto run = [&] { o.eng.sum_into(o.x, o.out); };
                                 run();
                                 for (auto _ : state) state.SetIterationTime(o.s.seconds(run));
                                 gbs(state);
                               }))
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark(
      ("baseline/cub" + tail).c_str(), guarded([get, n, gbs](benchmark::State& state) {
        Operands& o = get();
        constexpr bool bf16 = std::is_same_v<H, tandem::bfloat16>;
        std::size_t temp_bytes = 0;
        cub_sum16(bf16, o.x.data(), std::int64_t(n), o.out.data(), nullptr, temp_bytes, o.s.stream);
        void* temp = nullptr;
        cuda_check(cudaMalloc(&temp, std::max<std::size_t>(temp_bytes, 16)), "cudaMalloc");
        auto run = [&] { cub_sum16(bf16, o.x.data(), std::int64_t(n), o.out.data(), temp, temp_bytes, o.s.stream); };
        run();
        for (auto _ : state) state.SetIterationTime(o.s.seconds(run));
        cudaFree(temp);
        gbs(state);
      }))
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
}

// Grouped (expert) products: `groups` groups of `rows` rows of A (16-bit, k wide), each times its own k x n B, as
// one matmul_grouped call (auto: one launch of a Hopper rung; cublas: one cuBLAS call per group), beside the same
// work as one product of the summed size (groups * rows rows times one B, auto): the baseline.
template <class H>
void register_grouped(std::size_t groups, std::size_t rows, std::size_t k, std::size_t n) {
  struct Operands {
    StreamTimer s;
    Engine eng{tandem::Backend::cuda, tandem::EngineOptions{.stream = s.stream}};
    Buffer<H> a, b;
    Buffer<float> out;
  };
  const std::size_t m = groups * rows;
  auto ops = std::make_shared<std::unique_ptr<Operands>>();
  auto get = [ops, m, k, n, groups]() -> Operands& {
    if (!*ops) {
      *ops = std::make_unique<Operands>();
      Operands& o = **ops;
      o.a = o.eng.template upload<H>(random16<H>(m * k, 41));
      o.b = o.eng.template upload<H>(random16<H>(groups * k * n, 42));
      o.out = o.eng.template buffer<float>(m * n);
    }
    return **ops;
  };
  const std::vector<std::size_t> sizes(groups, rows);
  auto tflops = [m, k, n](benchmark::State& state) {
    set_flop_counter(state, 2.0 * double(m) * double(k) * double(n));
  };
  const std::string tail = std::string("/") + tandem::dtype_traits<H>::name + "/" + std::to_string(groups) + "x" +
                           std::to_string(rows) + "x" + std::to_string(k) + "x" + std::to_string(n);
  for (const std::string kernel : {"auto", "cublas"}) {
    benchmark::RegisterBenchmark(("grouped/cuda/" + kernel + "/matmul_grouped" + tail).c_str(),
                                 guarded([get, sizes, kernel, m, k, n, groups, tflops](benchmark::State& state) {
                                   Operands& o = get();
                                   auto run = [&] {
                                     o.eng.matmul_grouped(o.a.matrix(m, k), o.b.batch(k, n, groups, k * n),
                                                          o.out.matrix(m, n), sizes, tandem::MatmulOptions{kernel});
                                   };
                                   run();
                                   for (auto _ : state) state.SetIterationTime(o.s.seconds(run));
                                   tflops(state);
                                 }))
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark(("baseline/summed_product/cuda/auto/matmul" + tail).c_str(),
                               guarded([get, m, k, n, tflops](benchmark::State& state) {
                                 Operands& o = get();
                                 auto run = [&] {
                                   o.eng.matmul(o.a.matrix(m, k), o.b.matrix(k, n), o.out.matrix(m, n));
                                 };
                                 run();
                                 for (auto _ : state) state.SetIterationTime(o.s.seconds(run));
                                 tflops(state);
                               }))
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace

// The own stages that multiply 16-bit inputs as stored (KernelInfo::native_16bit: the Hopper rungs of
// backends/cuda/matmul/hopper.hpp) where this build offers them; with float_only, also the rungs for float inputs
// only (wgmma_swap_ab, wgmma_pingpong_swap_ab).
std::vector<std::string> hopper_rungs(bool float_only = false) {
  std::vector<std::string> rungs;
  try {
    for (const auto& k : Engine(tandem::Backend::cuda).matmul_kernel_info())
      if ((k.native_16bit && !k.baseline && k.name != "auto") || (float_only && k.name.ends_with("swap_ab")))
        rungs.push_back(k.name);
  } catch (const tandem::Error&) {  // no usable GPU: bench_cuda says so before it runs anything
  }
  return rungs;
}

void register_cuda_float16() {
  const std::vector<std::string> rungs = hopper_rungs(), tf32_rungs = hopper_rungs(true);
  auto with_rungs = [&](std::vector<std::string> v) {
    v.insert(v.end(), rungs.begin(), rungs.end());
    return v;
  };
  auto with_tf32_rungs = [&](std::vector<std::string> v) {
    v.insert(v.end(), tf32_rungs.begin(), tf32_rungs.end());
    return v;
  };
  for (std::size_t s : {1024, 2048, 4096, 8192}) {
    register_matmul<tandem::bfloat16>({s, s, s, 1}, with_rungs({"auto", "cublas", "wgmma_bf16"}));
    register_matmul<tandem::half>({s, s, s, 1}, with_rungs({"auto", "cublas"}));
    // float inputs on the tensor cores as tf32: cuBLAS's tf32 stage is the baseline.
    register_matmul<float>({s, s, s, 1}, with_tf32_rungs({"cublas_tf32", "wgmma_tf32"}), false);
  }
  register_matmul<float>({8192, 64, 8192, 1}, with_tf32_rungs({"cublas_tf32", "wgmma_tf32"}), false);
  // auto where MatmulOptions::precision allows tf32 (its choice among the stages above)
  for (std::size_t s : {1024, 2048, 4096, 8192})
    register_matmul<float>({s, s, s, 1, false, tandem::Precision::tf32}, {"auto"}, false, "tf32");
  register_matmul<float>({8192, 64, 8192, 1, false, tandem::Precision::tf32}, {"auto"}, false, "tf32");
  // B stored transposed (K-major): tf32 wgmma reads it in place, where a row-major B is first transposed into
  // the workspace; the difference to the cases above is what that pass costs.
  for (std::size_t s : {2048, 4096, 8192})
    register_matmul<float>({s, s, s, 1, true}, with_rungs({"cublas_tf32", "wgmma_tf32"}), false);
  // Around auto's window for wgmma_tma_store (2^21 to 2^22 outputs): K shorter and longer than the side, and past it.
  for (const MatmulCase c :
       {MatmulCase{2048, 512, 2048, 1}, MatmulCase{2048, 8192, 2048, 1}, MatmulCase{3072, 3072, 3072, 1}}) {
    const std::vector<std::string> kernels = {"auto", "cublas", "wgmma_persistent", "wgmma_tma_store"};
    register_matmul<tandem::bfloat16>(c, kernels);
    register_matmul<tandem::half>(c, kernels);
  }
  for (const MatmulCase c : {MatmulCase{64, 64, 64, 4096}, MatmulCase{512, 512, 512, 64}}) {
    register_matmul<tandem::bfloat16>(c, with_rungs({"auto", "cublas"}));
    register_matmul<tandem::half>(c, with_rungs({"auto", "cublas"}));
  }
  // Mixed input types (float activations, 16-bit weights): beside the same product of float inputs, auto,
  // register_tiled and cublas (full precision; cublas on the widened weights), wgmma_persistent (tf32). A batch of
  // one row against weights stored k x n and n x k (trans_b: a PyTorch Linear's weight).
  for (const MatmulCase c :
       {MatmulCase{1, 4096, 14336, 1}, MatmulCase{1, 4096, 14336, 1, true}, MatmulCase{4, 4096, 14336, 1, true},
        MatmulCase{64, 4096, 4096, 1}, MatmulCase{4096, 4096, 4096, 1}}) {
    const std::vector<std::string> kernels = {"auto", "register_tiled", "cublas", "wgmma_persistent"};
    register_matmul<float, tandem::bfloat16>(c, kernels, false);
    register_matmul<float>(c, kernels, false, "mixed");
  }
  // Grouped products (a mixture of experts' layer: 8 experts of 512 tokens each, 4096 -> 14336; 64 experts of 64
  // tokens, 2048 -> 1408).
  register_grouped<tandem::bfloat16>(8, 512, 4096, 14336);
  register_grouped<tandem::bfloat16>(64, 64, 2048, 1408);
  register_grouped<tandem::half>(8, 512, 4096, 14336);
  for (std::size_t n : {std::size_t(1) << 20, std::size_t(1) << 28}) {
    register_sum<tandem::bfloat16>(n);
    register_sum<tandem::half>(n);
  }
}

}  // namespace tandem_bench
