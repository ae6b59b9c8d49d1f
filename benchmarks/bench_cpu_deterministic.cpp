// bench_cpu's deterministic matrix products (this file is linked into bench_cpu and registers itself): the
// canonical order of common/canonical.hpp (K cut into chunks of 4096, each chunk one fma chain, the chunk values
// combined by the canonical sum) against the default kernel on the same operands, side by side.
//   matmul_det/<backend>/<case>/<type>/<m>x<k>x<n>/{deterministic,default}
//     xtr     X^T r: a gradient, X 200000 x 64 stored (op(A) = X^T, trans_a), r 200000 x 1: C 64 x 1, K = 200000
//     xtx     X^T X: the same X as both operands (trans_a): C 64 x 64, K = 200000
//     xb      X b: X 200000 x 64 times 64 x 1, K = 64 (one chunk: the one fma chain)
//     square  1024^3 and 2048^3 (K <= 4096: one chunk), and 512 x 16384 x 512 (four chunks)
//   and the tensor-core chains of bfloat16 (xtr, xtx, square 1024^3; on CUDA also bfloat16, half and float_tf32
//   (precision tf32) at 4096^3 and 8192^3).
// Operands are Buffers (host memory on the CPU) made on first use; every call is followed by synchronize().
// <backend> is the CPU, or the backend TANDEM_BACKEND names (TANDEM_BACKEND=cuda times the GPU's Buffers with the
// same binary, which loads the CUDA module). The first call of each deterministic benchmark checks C(0, 0) bit for
// bit against the definition written out (verify/'s canonical_sum of the chunks' fma chains).
// Run (medians of 5):
//   bench_cpu --benchmark_filter=matmul_det/ --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/bench_common.hpp"

namespace tandem_bench {
namespace {

struct DetCase {
  const char* name;
  std::size_t m, k, n;
  bool trans_a;       // A stored k x m
  bool b_is_a;        // B is A's stored matrix (X^T X)
  bool tf32 = false;  // float with precision tf32: deterministic mode's tf32 tensor-core chain, auto's tf32 stage
};

tandem::Backend bench_backend() {
  const char* b = std::getenv("TANDEM_BACKEND");
  return b && *b ? tandem::parse_backend(b) : tandem::Backend::cpu;
}

const Engine& engine() {
  static const Engine eng(bench_backend());
  return eng;
}

template <class T>
struct Operands {
  tandem_verify::Vector<T> a_host, b_host;
  Buffer<T> a, b;
  Buffer<tandem::compute_t<T>> c;
};

// C(0, 0) as the definition reads: one fma chain from +0.0 per 4096 k, the chunk values' canonical sum (16-bit
// and tf32 inputs: the chain of tensor-core k-steps, tandem_verify::tensor_core_chain).
template <class T>
tandem::compute_t<T> definition_c00(const DetCase& s, const Operands<T>& o) {
  const std::size_t lda = s.trans_a ? s.m : s.k;
  auto a_at = [&](std::size_t p) { return float(s.trans_a ? o.a_host[p * lda] : o.a_host[p]); };
  auto b_at = [&](std::size_t p) { return float(o.b_host[p * s.n]); };
  if constexpr (tandem::is_storage_type_v<T>) {
    const int emin = std::is_same_v<T, tandem::half> ? -14 : -126;
    return tandem_verify::tensor_core_chain(
        s.k, 16, emin, [&](std::size_t p) { return double(a_at(p)); }, [&](std::size_t p) { return double(b_at(p)); });
  } else {
    if constexpr (std::is_same_v<T, float>)
      if (s.tf32)
        return tandem_verify::tensor_core_chain(
            s.k, 8, -126, [&](std::size_t p) { return tandem_verify::tf32_rounded(a_at(p)); },
            [&](std::size_t p) { return tandem_verify::tf32_rounded(b_at(p)); });
    tandem_verify::Vector<T> chunks;
    T v = T(0);
    for (std::size_t p = 0; p < s.k; ++p) {
      const T a = s.trans_a ? o.a_host[p * lda] : o.a_host[p];
      v = std::fma(a, o.b_host[p * s.n], v);
      if ((p + 1) % 4096 == 0 || p + 1 == s.k) chunks.push_back(v), v = T(0);
    }
    return tandem_verify::canonical_sum<T>(std::span<const T>(chunks));
  }
}

template <class T>
void register_case(const DetCase& s) {
  using C = tandem::compute_t<T>;
  const std::string base = "matmul_det/" + std::string(tandem::to_string(bench_backend())) + "/" + s.name + "/" +
                           std::string(type_name<T>()) + (s.tf32 ? "_tf32" : "") + "/" + std::to_string(s.m) + "x" +
                           std::to_string(s.k) + "x" + std::to_string(s.n);
  auto ops = std::make_shared<std::unique_ptr<Operands<T>>>();
  auto get = [ops, s]() -> Operands<T>& {
    if (!*ops) {
      auto o = std::make_unique<Operands<T>>();
      o->a_host = random_vector<T>(s.m * s.k, 21);
      o->b_host = s.b_is_a ? o->a_host : random_vector<T>(s.k * s.n, 22);
      o->a = engine().upload<T>(o->a_host);
      o->b = engine().upload<T>(o->b_host);
      o->c = engine().buffer<tandem::compute_t<T>>(s.m * s.n);
      *ops = std::move(o);
    }
    return **ops;
  };
  for (bool det : {true, false}) {
    const std::string name = base + (det ? "/deterministic" : "/default");
    benchmark::RegisterBenchmark(name.c_str(), guarded([get, s, det, name](benchmark::State& state) {
                                   Operands<T>& o = get();
                                   const Engine& eng = engine();
                                   tandem::MatmulOptions opt;
                                   opt.deterministic = det;
                                   opt.trans_a = s.trans_a;
                                   if (s.tf32) opt.precision = tandem::Precision::tf32;
                                   const auto a = s.trans_a ? o.a.matrix(s.k, s.m) : o.a.matrix(s.m, s.k);
                                   const auto b = o.b.matrix(s.k, s.n);
                                   const auto c = o.c.matrix(s.m, s.n);
                                   eng.matmul(a, b, c, opt);
                                   if (det) {
                                     const C got = o.c.to_vector()[0], want = definition_c00(s, o);
                                     if (!tandem_verify::same_bits(got, want))
                                       throw tandem::Error(name + ": C(0, 0) = " + tandem_verify::show(got) +
                                                           ", the definition gives " + tandem_verify::show(want));
                                   }
                                   for (auto _ : state) {
                                     eng.matmul(a, b, c, opt);
                                     eng.synchronize();
                                   }
                                   set_flop_counter(state, Shape{s.m, s.k, s.n});
                                 }))
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}

const bool registered = [] {
  const std::size_t rows = 200000, cols = 64;
  register_case<float>({"xtr", cols, rows, 1, true, false});
  register_case<double>({"xtr", cols, rows, 1, true, false});
  register_case<float>({"xtx", cols, rows, cols, true, true});
  register_case<double>({"xtx", cols, rows, cols, true, true});
  register_case<float>({"xb", rows, cols, 1, false, false});
  register_case<double>({"xb", rows, cols, 1, false, false});
  for (std::size_t n : {1024, 2048}) {
    register_case<float>({"square", n, n, n, false, false});
    register_case<double>({"square", n, n, n, false, false});
  }
  register_case<float>({"square", 512, 16384, 512, false, false});
  // The tensor-core chains (16-bit inputs; float with precision tf32): the CPU emulates the k-step.
  register_case<tandem::bfloat16>({"xtr", cols, rows, 1, true, false});
  register_case<tandem::bfloat16>({"xtx", cols, rows, cols, true, true});
  register_case<tandem::bfloat16>({"square", 1024, 1024, 1024, false, false});
  if (bench_backend() == tandem::Backend::cuda)  // (the GPU's sizes: hours for the CPU's emulation)
    for (std::size_t n : {4096, 8192}) {
      register_case<tandem::bfloat16>({"square", n, n, n, false, false});
      register_case<tandem::half>({"square", n, n, n, false, false});
      register_case<float>({"square", n, n, n, false, false, true});
    }
  return true;
}();

}  // namespace
}  // namespace tandem_bench
