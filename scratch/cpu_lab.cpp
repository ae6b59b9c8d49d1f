// LAB ONLY (not committed): per-core and 16-thread streaming rates of CPU leaf variants on the host.
// g++ -std=c++20 -O3 -march=native -I. -Iinclude -Ibuild/include -isystem .deps/usr/include/eigen3 -isystem
// .deps/usr/include scratch/cpu_lab.cpp -o /tmp/cpu_lab -L.deps/usr/lib/x86_64-linux-gnu -ltbb
// -Wl,-rpath,$PWD/.deps/usr/lib/x86_64-linux-gnu
#include <immintrin.h>
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_reduce.h>

#include <Eigen/Core>
#include <chrono>
#include <cstdio>
#include <vector>

#include "backends/cpu/leaves.hpp"

using namespace tandem;
using namespace tandem::detail;

__attribute__((target("prefer-vector-width=512"))) std::uint64_t isum512(const std::int32_t* x, std::int64_t len) {
  return cpu_leaves::integer_sum_leaf(x, len, 1);  // (may not re-vectorise: inlined body decides)
}
std::uint64_t isum_avx512(const std::int32_t* x, std::int64_t len) {
  std::uint64_t r = 0;
  std::int64_t i = 0;
#if defined(__AVX512F__)
  constexpr std::int64_t kBlock = 16 * 2 * (1 << 15);
  while (len - i >= 32) {
    const std::int64_t end = i + std::min(kBlock, (len - i) / 32 * 32);
    __m512i w0 = _mm512_setzero_si512(), w1 = w0, h0 = w0, h1 = w0;
    for (; i < end; i += 32) {
      const __m512i a = _mm512_loadu_si512(x + i), b = _mm512_loadu_si512(x + i + 16);
      w0 = _mm512_add_epi32(w0, a), w1 = _mm512_add_epi32(w1, b);
      h0 = _mm512_add_epi32(h0, _mm512_srai_epi32(a, 16)), h1 = _mm512_add_epi32(h1, _mm512_srai_epi32(b, 16));
    }
    alignas(64) std::uint32_t wr[32];
    alignas(64) std::int32_t hr[32];
    _mm512_store_si512(wr, w0), _mm512_store_si512(wr + 16, w1), _mm512_store_si512(hr, h0),
        _mm512_store_si512(hr + 16, h1);
    for (int j = 0; j < 32; ++j) {
      const std::uint32_t low = wr[j] - (std::uint32_t(hr[j]) << 16);
      r += std::uint64_t(low) + (std::uint64_t(std::int64_t(hr[j])) << 16);
    }
  }
#endif
  for (; i < len; ++i) r += std::uint64_t(std::int64_t(x[i]));
  return r;
}
std::uint64_t isum_prefetch(const std::int32_t* x, std::int64_t len) {
  std::uint64_t r = 0;
  for (std::int64_t b = 0; b < len; b += 4096) {
    const std::int64_t e = std::min(len, b + 4096);
    for (std::int64_t p = b + 8192; p < std::min(len, e + 8192); p += 16)
      _mm_prefetch((const char*)(x + p), _MM_HINT_T0);
    r += cpu_leaves::integer_sum_leaf(x + b, e - b, 1);
  }
  return r;
}
std::uint64_t isum(const std::int32_t* x, std::int64_t len) { return cpu_leaves::integer_sum_leaf(x, len, 1); }
float fsum(const float* x, std::int64_t len) { return Eigen::Map<const Eigen::ArrayXf>(x, len).sum(); }
float fmin_leaf(const float* x, std::int64_t len) { return cpu_leaves::min_max_leaf<MinOp<float>>(x, len, 1); }
__attribute__((target("prefer-vector-width=512"))) float fmin512(const float* x, std::int64_t len) {
  return cpu_leaves::min_max_leaf<MinOp<float>>(x, len, 1);
}

template <class T, class F>
double rate(const std::vector<T>& v, F leaf, int threads) {
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, threads);
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    volatile double s = tbb::parallel_reduce(
        tbb::blocked_range<std::int64_t>(0, std::int64_t(v.size()), 1 << 14), 0.0,
        [&](const tbb::blocked_range<std::int64_t>& r, double acc) {
          return acc + double(leaf(v.data() + r.begin(), r.size()));
        },
        [](double a, double b) { return a + b; });
    (void)s;
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, double(v.size() * sizeof(T)) / dt / 1e9);
  }
  return best;
}

int main() {
  const std::int64_t n = std::int64_t(1) << 27;
  std::vector<std::int32_t> xi(n);
  std::vector<float> xf(n);
  for (std::int64_t i = 0; i < n; ++i) xi[i] = std::int32_t(i * 2654435761u) >> 8, xf[i] = float(i % 1000) * 0.001f;
  for (int threads : {1, 16}) {
    std::printf(
        "threads %d: float sum %.1f | int32 leaf %.1f, 512 %.1f, avx512 %.1f, prefetch %.1f | float min %.1f, 512 "
        "%.1f\n",
        threads, rate(xf, fsum, threads), rate(xi, isum, threads), rate(xi, isum512, threads),
        rate(xi, isum_avx512, threads), rate(xi, isum_prefetch, threads), rate(xf, fmin_leaf, threads),
        rate(xf, fmin512, threads));
  }
}
