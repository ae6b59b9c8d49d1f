// Engines over several devices (EngineOptions::devices, issue #12): sharded Buffers, every reduction
// compared with a single-device engine (bit for bit where the result is exact or deterministic) and
// with the independent references of verify/, matmul by row blocks, and the errors. The CPU
// backend runs the same multi-device path with CPU "devices" (suite cpu, so CI runs it); suite cuda
// runs it over every GPU of the machine (up to 4), skipped with fewer than 2.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

#include "tandem/float16.hpp"
#include "tests/support.hpp"

namespace {

using tandem::Backend;
using tandem::Engine;
using tandem::EngineOptions;
using tandem::ReduceOptions;
using test::contains;
using test::message_of;

// GPUs an engine over several devices can use (0 when the build has no NCCL).
int gpu_count() {
#ifdef TANDEM_TEST_HAS_NCCL
  for (const auto& s : tandem::backend_status())
    if (s.backend == Backend::cuda && s.usable) return s.devices;
#endif
  return 0;
}

Engine multi_engine(Backend b, int devices) {
  EngineOptions o;
  for (int d = 0; d < devices; ++d) o.devices.push_back(d);
  return Engine(b, o);
}

// Sizes around the shard and chunk boundaries of `devices` devices (and one of many chunks per shard, but
// in quick runs).
std::vector<std::size_t> multi_sizes(int devices) {
  const std::size_t K = 4096, D = std::size_t(devices);
  std::vector<std::size_t> sizes = {1, 7, K - 1, K + 1, D * K - 1, D * K + 1, 3 * D * K + 123};
  if (!test::quick()) sizes.push_back(1000003);
  return sizes;
}

template <class T>
test::Vector<T> values_for(std::size_t n, std::uint64_t seed) {
  test::Vector<T> v(n);
  test::SplitMix64 g{seed};
  for (auto& x : v) {
    if constexpr (std::is_integral_v<T>)
      x = T(std::int64_t(g.below(2001)) - 1000);
    else
      x = T(float(double(g.below(1u << 20)) / double(1u << 19) - 1.0));
  }
  return v;
}

// Every op of the table on the multi-device engine against the single engine, for one view of the data:
// deterministic mode's bits equal; the default mode's float sums (additive ops) and products close, every
// other result (integer sums and products, min, max, indices) equal.
template <class T, class View>
void compare_ops(const Engine& multi, const Engine& single, const View& mv, const View& sv, std::size_t count,
                 const std::string& where) {
  CAPTURE(where);
  CAPTURE(count);
  ReduceOptions det;
  det.deterministic = true;
  test::for_each_op([&]<tandem::Op O>() {
    CAPTURE(std::string(tandem::to_string(O)));
    if (count == 0 && tandem::info(O).empty == tandem::EmptyRule::error) return;
    CHECK(test::same_bits(multi.reduce<O>(mv, det), single.reduce<O>(sv, det)));
    const auto got = multi.reduce<O>(mv);
    const auto want = single.reduce<O>(sv, det);
    if constexpr (tandem::is_floating_v<T> && test::is_additive(O)) {
      const double g = double(got), w = double(want);
      CHECK(std::abs(g - w) <= 1e-3 * (1.0 + std::abs(w)) + 1e-4 * double(count));
    } else if constexpr (tandem::is_floating_v<T> && test::is_product(O)) {  // (relative; tiny ones may underflow)
      const double g = double(got), w = double(want);
      CHECK(((std::isnan(g) && std::isnan(w)) || std::abs(g - w) <= 1e-3 * std::abs(w) + 1e-30));
    } else {
      CHECK(test::same_bits(got, want));
    }
  });
}

template <class T>
void check_reductions(const Engine& multi, const Engine& single, int devices) {
  CAPTURE(std::string(test::type_name<T>()));
  for (std::size_t n : multi_sizes(devices)) {
    const test::Vector<T> x = values_for<T>(n, n * 31 + 7);
    compare_ops<T>(multi, single, std::span<const T>(x), std::span<const T>(x), n, "host span");
    const tandem::StridedView<T> sx{x.data(), (n + 2) / 3, 3};
    compare_ops<T>(multi, single, sx, sx, sx.count, "strided host view");
    const auto mb = multi.upload(x);
    const auto sb = single.upload(x);
    // The shards: contiguous, in device order, on chunk boundaries, holding the data.
    const auto shards = mb.shards();
    std::size_t next = 0;
    for (const auto& s : shards) {
      CHECK(s.offset == next);
      CHECK(s.offset % 4096 == 0);
      CHECK(s.count > 0);
      next += s.count;
    }
    CHECK(next == n);
    CHECK(shards.size() == std::min<std::size_t>(std::size_t(devices), (n + 4095) / 4096));
    CHECK(mb.to_vector() == x);
    compare_ops<T>(multi, single, mb.view(), sb.view(), n, "Buffer");
    if (n > 10) {
      const std::size_t off = 5, cnt = (n - off + 1) / 2;
      compare_ops<T>(multi, single, mb.view(off, cnt, 2), sb.view(off, cnt, 2), cnt, "Buffer view, offset 5 stride 2");
      // Stride 0: one element of the last shard, read 3n times (a broadcast), and the same on the host.
      compare_ops<T>(multi, single, mb.view(n - 2, 3 * n, 0), sb.view(n - 2, 3 * n, 0), 3 * n, "Buffer view, stride 0");
      const tandem::StridedView<T> repeated{x.data() + 1, 3 * n, 0};
      compare_ops<T>(multi, single, repeated, repeated, 3 * n, "host view, stride 0");
    }
  }
}

// Per-column reductions, which split the rows among the devices: every op of the table, deterministic and
// not, on host matrices and Buffer matrices (at an offset, with a padded ld; rows across the shards and, for
// deterministic float sums, across several 4096-row chunks), against the single engine (bits where the result
// is exact or deterministic, float sums and products close), and deterministic float sums against the
// canonical-order reference of verify/. A NaN in a late row of column 1 must win min / max / arg* there.
template <class T>
void check_per_column(const Engine& multi, const Engine& single) {
  CAPTURE(std::string(test::type_name<T>()));
  const std::array<std::array<std::size_t, 3>, 3> shapes = {{{70, 5, 0}, {3 * 4096 + 5, 3, 2}, {2 * 4096, 7, 1}}};
  for (const auto& shape : shapes) {
    const std::size_t rows = shape[0], cols = shape[1], ld = cols + shape[2],
                      off = 3;  // (no bindings: lambdas use them)
    CAPTURE(rows);
    auto x = values_for<T>(off + rows * ld, rows + cols);
    if constexpr (!std::is_integral_v<T>) x[off + (rows * 5 / 6) * ld + 1] = T(std::numeric_limits<float>::quiet_NaN());
    const tandem::MatrixView<const T> view{x.data() + off, rows, cols, ld};
    const auto mb = multi.upload(x);
    const auto sb = single.upload(x);
    test::for_each_op([&]<tandem::Op O>() {
      CAPTURE(std::string(tandem::to_string(O)));
      for (bool det : {false, true}) {
        CAPTURE(det);
        const ReduceOptions o{.deterministic = det};
        std::vector<tandem::op_result_t<O, T>> hm(cols), hs(cols);
        multi.reduce<O>(view, tandem::Per::col, std::span(hm), o);
        single.reduce<O>(view, tandem::Per::col, std::span(hs), o);
        auto bm = multi.buffer<tandem::op_buffer_result_t<O, T>>(cols);
        auto bs = single.buffer<tandem::op_buffer_result_t<O, T>>(cols);
        multi.reduce<O>(mb.matrix(rows, cols, ld, off), tandem::Per::col, bm, o);
        single.reduce<O>(sb.matrix(rows, cols, ld, off), tandem::Per::col, bs, o);
        const auto gm = bm.to_vector(), gs = bs.to_vector();
        for (std::size_t j = 0; j < cols; ++j) {
          CAPTURE(j);
          if (!det && tandem::is_floating_v<T> && (test::is_additive(O) || test::is_product(O))) {
            for (const auto& [g, w] :
                 {std::pair{double(hm[j]), double(hs[j])}, std::pair{double(gm[j]), double(gs[j])}})
              CHECK(((std::isnan(g) && std::isnan(w)) || std::abs(g - w) <= 1e-4 * (1.0 + std::abs(w))));
          } else {
            CHECK(test::same_bits(hm[j], hs[j]));
            CHECK(test::same_bits(gm[j], gs[j]));
          }
        }
        if constexpr (std::is_same_v<T, float> && O == tandem::Op::sum)
          if (det)
            for (std::size_t j = 0; j < cols; ++j) {
              std::vector<float> column(rows);
              for (std::size_t r = 0; r < rows; ++r) column[r] = x[off + r * ld + j];
              CHECK(test::same_bits(hm[j], test::canonical_sum(std::span<const float>(column))));
            }
      }
    });
  }
}

void check_engine(Backend backend, int devices) {
  const Engine multi = multi_engine(backend, devices);
  const Engine single(backend);
  REQUIRE(multi.devices().size() == std::size_t(devices));
  CHECK(multi.backend() == backend);
  check_reductions<float>(multi, single, devices);
  check_reductions<double>(multi, single, devices);
  check_reductions<std::int32_t>(multi, single, devices);
  check_reductions<tandem::bfloat16>(multi, single, devices);

  SUBCASE("deterministic sums equal the canonical-order reference and the CPU, bit for bit") {
    const Engine cpu(Backend::cpu);
    ReduceOptions det;
    det.deterministic = true;
    for (std::size_t n : multi_sizes(devices)) {
      const auto x = values_for<float>(n, n);
      const auto want = tandem_verify::canonical_sum(std::span<const float>(x));
      CHECK(test::same_bits(multi.sum(x, det), want));
      CHECK(test::same_bits(multi.sum(multi.upload(x), det), want));
      CHECK(test::same_bits(cpu.sum(x, det), want));
    }
  }
  SUBCASE("outside deterministic mode the bits never depend on where a Buffer's data lies (run_to_run)") {
    // The same values at element offsets that move the shard boundaries through the data: float sums, per-
    // column sums and products, each with the bits of offset 0 (and the value of a double reference).
    // (GPUs: in lab builds only, until run there; other builds check the values.)
#ifdef TANDEM_LAB_KERNELS
    const bool address_free = true;
#else
    const bool address_free = backend == Backend::cpu;
#endif
    const std::size_t D = std::size_t(devices), n = 2 * 4096 * D + 77, rows = 1500 * D + 3, cols = 6;
    const std::size_t m = 300, k = 259, nn = 45;  // (C past 3 chunks: its rows split over the devices)
    const auto x = values_for<float>(std::max(n, rows * cols), 5), a = values_for<float>(m * k, 6),
               b = values_for<float>(k * nn, 7);
    const double want_sum = std::accumulate(x.begin(), x.begin() + std::ptrdiff_t(n), 0.0);
    std::vector<float> want_c(m * nn);
    tandem_verify::fma_chain_matmul<float>({a.data(), m, k, k}, {b.data(), k, nn, nn}, {want_c.data(), m, nn, nn});
    // `v` placed after `offset` elements of poison in a Buffer of the engine.
    auto placed = [&](const test::Vector<float>& v, std::size_t offset) {
      test::Vector<float> padded(offset + v.size(), std::numeric_limits<float>::quiet_NaN());
      std::copy(v.begin(), v.end(), padded.begin() + std::ptrdiff_t(offset));
      return multi.upload(padded);
    };
    std::vector<double> first_sums;
    std::vector<float> first_cols, first_c;
    for (std::size_t offset : {std::size_t(0), std::size_t(1), std::size_t(3), std::size_t(1023), std::size_t(4097)}) {
      CAPTURE(offset);
      const auto xb = placed(x, offset);
      const std::vector<double> sums = {multi.sum(xb.view(offset, n)), multi.sumsq(xb.view(offset, n)),
                                        multi.mean(xb.view(offset, n))};
      CHECK(std::abs(double(sums[0]) - want_sum) <= 1e-3 * (1.0 + std::abs(want_sum)));
      auto col = multi.buffer<float>(cols);
      multi.reduce<tandem::Op::sum>(xb.matrix(rows, cols, cols, offset), tandem::Per::col, col);
      const auto cols_got = col.to_vector();
      for (std::size_t j = 0; j < cols; ++j) {
        double w = 0;
        for (std::size_t r = 0; r < rows; ++r) w += x[r * cols + j];
        CHECK(std::abs(double(cols_got[j]) - w) <= 1e-4 * (1.0 + std::abs(w)));
      }
      const auto ab = placed(a, offset), bb = placed(b, offset + 1);
      auto cb = placed(std::vector<float>(m * nn, 0.0f), offset + 2);
      multi.matmul(ab.matrix(m, k, k, offset), bb.matrix(k, nn, nn, offset + 1), cb.matrix(m, nn, nn, offset + 2));
      const auto all = cb.to_vector();
      const std::vector<float> c(all.begin() + std::ptrdiff_t(offset + 2), all.end());
      for (std::size_t i = 0; i < m * nn; ++i)
        CHECK(std::abs(double(c[i]) - double(want_c[i])) <= 1e-4 * (1.0 + std::abs(double(want_c[i]))));
      if (!address_free) continue;
      if (offset == 0) {
        first_sums = sums, first_cols = std::vector<float>(cols_got.begin(), cols_got.end()), first_c = c;
        continue;
      }
      CHECK(test::same_bits(std::span<const double>(sums), std::span<const double>(first_sums)));
      CHECK(test::same_bits(std::span<const float>(cols_got), std::span<const float>(first_cols)));
      CHECK(test::same_bits(std::span<const float>(c), std::span<const float>(first_c)));
    }
  }
  SUBCASE("NaN in a later shard: min / argmin see it first") {
    auto x = values_for<float>(3 * 4096 * std::size_t(devices), 3);
    const std::size_t at = x.size() - 10;
    x[at] = std::numeric_limits<float>::quiet_NaN();
    const auto b = multi.upload(x);
    CHECK(std::isnan(multi.min(b)));
    CHECK(multi.argmin(b) == at);
    CHECK(multi.argmax(x) == at);
    CHECK(std::isnan(multi.sum(b)));
  }
  SUBCASE("*_into writes the element of a sharded Buffer") {
    const auto x = values_for<double>(5 * 4096 + 3, 11);
    const auto b = multi.upload(x);
    auto out = multi.buffer<double>(3 * 4096 * std::size_t(devices));
    const std::size_t last = out.size() - 1;
    ReduceOptions det;
    det.deterministic = true;
    multi.sum_into(b, out, last, det);
    const auto index = multi.buffer<std::int64_t>(1);
    multi.argmax_into(b, index);
    multi.synchronize();
    std::vector<double> got(1);
    out.download(got, last);
    CHECK(test::same_bits(got[0], single.sum(x, det)));
    CHECK(index.to_vector()[0] == std::int64_t(single.argmax(x)));
  }
  SUBCASE("matmul by row blocks: host and sharded Buffers, every form, deterministic bits") {
    // m not a multiple of the devices; C's shards (chunk boundaries) cut rows.
    for (const auto& shape : {std::array<std::size_t, 3>{1, 1, 1}, {37, 19, 23}, {301, 70, 150}, {257, 129, 65}}) {
      const std::size_t m = shape[0], k = shape[1], n = shape[2];
      CAPTURE(m);
      CAPTURE(k);
      CAPTURE(n);
      const auto a = values_for<float>(m * k, 1), b = values_for<float>(k * n, 2), c0 = values_for<float>(m * n, 3);
      std::vector<float> want(m * n);
      tandem_verify::fma_chain_matmul<float>({a.data(), m, k, k}, {b.data(), k, n, n}, {want.data(), m, n, n});
      tandem::MatmulOptions det;
      det.deterministic = true;
      std::vector<float> c(m * n);
      multi.matmul<float>({a.data(), m, k, k}, {b.data(), k, n, n}, {c.data(), m, n, n}, det);
      CHECK(test::same_bits(std::span<const float>(c), std::span<const float>(want)));
      const auto ab = multi.upload(a), bb = multi.upload(b);
      auto cb = multi.buffer<float>(m * n);
      multi.matmul(ab.matrix(m, k), bb.matrix(k, n), cb.matrix(m, n), det);
      CHECK(test::same_bits(std::span<const float>(cb.to_vector()), std::span<const float>(want)));
      // Forms: transposes, alpha and beta, against the single engine (same kernels, so the same bits
      // in deterministic mode).
      for (int form = 0; form < 4; ++form) {
        CAPTURE(form);
        tandem::MatmulOptions o = det;
        o.trans_a = form & 1, o.trans_b = form & 2, o.alpha = 1.5, o.beta = -0.5;
        const std::size_t lda = o.trans_a ? m : k, ldb = o.trans_b ? k : n;
        std::vector<float> cs = c0, cm = c0;
        single.matmul<float>({a.data(), o.trans_a ? k : m, lda, lda}, {b.data(), o.trans_b ? n : k, ldb, ldb},
                             {cs.data(), m, n, n}, o);
        multi.matmul<float>({a.data(), o.trans_a ? k : m, lda, lda}, {b.data(), o.trans_b ? n : k, ldb, ldb},
                            {cm.data(), m, n, n}, o);
        CHECK(test::same_bits(std::span<const float>(cm), std::span<const float>(cs)));
        auto cbm = multi.upload(c0);
        multi.matmul(ab.matrix(o.trans_a ? k : m, lda), bb.matrix(o.trans_b ? n : k, ldb), cbm.matrix(m, n), o);
        CHECK(test::same_bits(std::span<const float>(cbm.to_vector()), std::span<const float>(cs)));
      }
    }
  }
  SUBCASE("matmul of sharded Buffers, not deterministic: B in panels beside the products, every form") {
    // B spans several shards, at an offset with a padded ld (panels end inside rows); each element
    // against a double-precision sum within the bound (4 K + 4) 2^-24 of its magnitudes.
    for (const auto& shape : {std::array<std::size_t, 3>{301, 70, 150}, {64, 200, 90}, {5, 300, 31}}) {
      const std::size_t m = shape[0], k = shape[1], n = shape[2];
      for (int form = 0; form < 8; ++form) {
        CAPTURE(m);
        CAPTURE(k);
        CAPTURE(n);
        CAPTURE(form);
        const bool ta = form & 1, tb = form & 2, nan_c = form & 4;
        const std::size_t lda = (ta ? m : k) + 1, ldb = (tb ? k : n) + 3, offset = 1000;
        const std::size_t a_rows = ta ? k : m, b_rows = tb ? n : k;
        const auto a = values_for<float>(a_rows * lda, 11), b = values_for<float>(offset + b_rows * ldb, 12);
        auto c0 = values_for<float>(m * n, 13);
        if (nan_c) c0[m * n / 2] = std::numeric_limits<float>::quiet_NaN();
        tandem::MatmulOptions o;
        o.trans_a = ta, o.trans_b = tb, o.alpha = 1.5, o.beta = nan_c ? 0.0 : -0.5;
        const auto ab = multi.upload(a), bb = multi.upload(b);
        auto cb = multi.upload(c0);
        multi.matmul(ab.matrix(a_rows, ta ? m : k, lda), bb.matrix(b_rows, tb ? k : n, ldb, offset), cb.matrix(m, n),
                     o);
        const auto got = cb.to_vector();
        std::size_t bad = 0;
        for (std::size_t i = 0; i < m; ++i)
          for (std::size_t j = 0; j < n; ++j) {
            double sum = 0, magnitude = 0;
            for (std::size_t p = 0; p < k; ++p) {
              const double x = ta ? a[p * lda + i] : a[i * lda + p],
                           y = tb ? b[offset + j * ldb + p] : b[offset + p * ldb + j];
              sum += x * y, magnitude += std::fabs(x * y);
            }
            const double c_in = o.beta == 0 ? 0.0 : o.beta * c0[i * n + j];
            const double want = o.alpha * sum + c_in;
            const double bound = (1.5 * magnitude + std::fabs(c_in)) * double(4 * k + 4) * 0x1p-24;
            bad += !(std::fabs(double(got[i * n + j]) - want) <= bound);
          }
        CHECK(bad == 0);
      }
    }
  }
  SUBCASE("batched matmul and per-row / per-column reductions of sharded Buffers") {
    const std::size_t m = 40, k = 30, n = 50, count = 9;
    const auto a = values_for<float>(count * m * k, 5), b = values_for<float>(count * k * n, 6);
    tandem::MatmulOptions det;
    det.deterministic = true;
    auto cm = multi.buffer<float>(count * m * n);
    auto cs = single.buffer<float>(count * m * n);
    multi.matmul(multi.upload(a).batch(m, k, count, m * k), multi.upload(b).batch(k, n, count, k * n),
                 cm.batch(m, n, count, m * n), det);
    single.matmul(single.upload(a).batch(m, k, count, m * k), single.upload(b).batch(k, n, count, k * n),
                  cs.batch(m, n, count, m * n), det);
    CHECK(test::same_bits(std::span<const float>(cm.to_vector()), std::span<const float>(cs.to_vector())));
    {  // C permuted (stored [rows][count][cols]: its entries interleave by rows; they start in two shards,
       // and each member's extent of C spans the others'), alpha and beta
      const std::size_t rows = 2, inner = 5, cols = 2000;
      const auto pa = values_for<float>(count * rows * inner, 11), pb = values_for<float>(count * inner * cols, 12);
      tandem::MatmulOptions o = det;
      o.alpha = -1.5, o.beta = 0.5;
      const auto c0 = values_for<float>(count * rows * cols, 10);
      auto cpm = multi.upload(c0);
      auto cps = single.upload(c0);
      multi.matmul(multi.upload(pa).batch(rows, inner, count, rows * inner),
                   multi.upload(pb).batch(inner, cols, count, inner * cols),
                   cpm.batch(rows, cols, count, cols, count * cols), o);
      single.matmul(single.upload(pa).batch(rows, inner, count, rows * inner),
                    single.upload(pb).batch(inner, cols, count, inner * cols),
                    cps.batch(rows, cols, count, cols, count * cols), o);
      CHECK(test::same_bits(std::span<const float>(cpm.to_vector()), std::span<const float>(cps.to_vector())));
    }
    {  // B broadcast (stride 0), C at an offset with alpha and beta; and host batches (entries per device)
      tandem::MatmulOptions o = det;
      o.alpha = 0.5, o.beta = 2.0;
      const auto c0 = values_for<float>(7 + count * m * n, 9);
      auto cbm = multi.upload(c0);
      auto cbs = single.upload(c0);
      multi.matmul(multi.upload(a).batch(m, k, count, m * k), multi.upload(b).batch(k, n, count, 0),
                   cbm.batch(m, n, count, m * n, 0, 7), o);
      single.matmul(single.upload(a).batch(m, k, count, m * k), single.upload(b).batch(k, n, count, 0),
                    cbs.batch(m, n, count, m * n, 0, 7), o);
      CHECK(test::same_bits(std::span<const float>(cbm.to_vector()), std::span<const float>(cbs.to_vector())));
      std::vector<float> hm(c0.begin(), c0.end()), hs(c0.begin(), c0.end());
      multi.matmul(tandem::BatchView<const float>{a.data(), m, k, k, count, m * k},
                   tandem::BatchView<const float>{b.data(), k, n, n, count, k * n},
                   tandem::BatchView<float>{hm.data() + 7, m, n, n, count, m * n}, o);
      single.matmul(tandem::BatchView<const float>{a.data(), m, k, k, count, m * k},
                    tandem::BatchView<const float>{b.data(), k, n, n, count, k * n},
                    tandem::BatchView<float>{hs.data() + 7, m, n, n, count, m * n}, o);
      CHECK(test::same_bits(std::span<const float>(hm), std::span<const float>(hs)));
    }
    const std::size_t rows = 3000, cols = 7;
    const auto x = values_for<float>(rows * cols, 8);
    for (tandem::Per per : {tandem::Per::row, tandem::Per::col}) {
      const std::size_t outs = per == tandem::Per::row ? rows : cols;
      auto om = multi.buffer<float>(outs);
      auto os = single.buffer<float>(outs);
      multi.sum(multi.upload(x).matrix(rows, cols), per, om, {.deterministic = true});
      single.sum(single.upload(x).matrix(rows, cols), per, os, {.deterministic = true});
      CHECK(test::same_bits(std::span<const float>(om.to_vector()), std::span<const float>(os.to_vector())));
      std::vector<float> hm(outs), hs(outs);
      multi.max(tandem::MatrixView<const float>{x.data(), rows, cols, cols}, per, std::span<float>(hm));
      single.max(tandem::MatrixView<const float>{x.data(), rows, cols, cols}, per, std::span<float>(hs));
      CHECK(hm == hs);
    }
    // Per row of a view at an offset with a padded ld: argmax into a Buffer, the mean into host memory.
    const auto xb = multi.upload(x);
    const auto xs = single.upload(x);
    auto im = multi.buffer<std::int64_t>(rows / 2), is = single.buffer<std::int64_t>(rows / 2);
    multi.argmax(xb.matrix(rows / 2, cols - 2, cols, 3), tandem::Per::row, im);
    single.argmax(xs.matrix(rows / 2, cols - 2, cols, 3), tandem::Per::row, is);
    CHECK(im.to_vector() == is.to_vector());
    std::vector<double> mm(rows / 2), ms(rows / 2);
    multi.mean(tandem::MatrixView<const float>{x.data() + 3, rows / 2, cols - 2, cols}, tandem::Per::row,
               std::span<double>(mm));
    single.mean(tandem::MatrixView<const float>{x.data() + 3, rows / 2, cols - 2, cols}, tandem::Per::row,
                std::span<double>(ms));
    CHECK(test::same_bits(std::span<const double>(mm), std::span<const double>(ms)));
  }
  SUBCASE("per-column reductions split by rows: every op, host and Buffer, deterministic bits") {
    check_per_column<float>(multi, single);
    check_per_column<double>(multi, single);
    check_per_column<std::int32_t>(multi, single);
    check_per_column<std::int64_t>(multi, single);
    check_per_column<tandem::bfloat16>(multi, single);
  }
  SUBCASE("where= and var / std of sharded Buffers: the single-device engine's bits") {
    const std::size_t rows = 900, cols = 7, n = rows * cols;  // (more than one shard's elements)
    const auto x = values_for<float>(n, 12);
    std::vector<unsigned char> keep_bytes(n);
    for (std::size_t i = 0; i < n; ++i) keep_bytes[i] = i % 3 != 1;
    const std::span<const bool> keep(reinterpret_cast<const bool*>(keep_bytes.data()), n);
    const ReduceOptions det{.deterministic = true, .where = keep};
    const auto bm = multi.upload(x), bs = single.upload(x);
    CHECK(test::same_bits(multi.sum(bm, det), single.sum(bs, det)));
    CHECK(test::same_bits(multi.sum(bm.view(1, n / 3, 3), {.deterministic = true, .where = keep.first(n / 3)}),
                          single.sum(bs.view(1, n / 3, 3), {.deterministic = true, .where = keep.first(n / 3)})));
    CHECK(test::same_bits(multi.var(bm, 1.0, det), single.var(bs, 1.0, det)));
    CHECK(test::same_bits(multi.std(bm, 0.0, {.deterministic = true}), single.std(bs, 0.0, {.deterministic = true})));
    for (tandem::Per per : {tandem::Per::row, tandem::Per::col}) {
      const std::size_t outs = per == tandem::Per::row ? rows : cols;
      auto om = multi.buffer<float>(outs), os = single.buffer<float>(outs);
      multi.var(bm.matrix(rows, cols), per, om, 1.0, det);
      single.var(bs.matrix(rows, cols), per, os, 1.0, det);
      CHECK(test::same_bits(std::span<const float>(om.to_vector()), std::span<const float>(os.to_vector())));
      multi.sum(bm.matrix(rows, cols), per, om, det);
      single.sum(bs.matrix(rows, cols), per, os, det);
      CHECK(test::same_bits(std::span<const float>(om.to_vector()), std::span<const float>(os.to_vector())));
    }
  }
  SUBCASE("errors") {
    const auto x = values_for<float>(3 * 4096, 1);
    const auto b = multi.upload(x);
    CHECK(contains(message_of([&] { (void)single.sum(b); }), "another engine"));
    CHECK(contains(message_of([&] { (void)multi.sum(single.upload(x)); }), "another engine"));
    using K = tandem::ErrorKind;
    // The caller's mistakes are ErrorKind::value, as on a single-device engine.
    CHECK(test::kind_of([&] { (void)multi.sum(single.upload(x)); }) == K::value);
    CHECK(test::kind_of([&] { (void)single.sum(b); }) == K::value);
    auto out = multi.buffer<float>(4);
    CHECK(contains(message_of([&] { multi.sum_into(b, out, 4); }), "outside the output"));
    CHECK(test::kind_of([&] { multi.sum_into(b, out, 4); }) == K::value);
    CHECK(test::kind_of([&] { multi.sum_into(b, tandem::Buffer<float>(), 0); }) == K::value);
    CHECK(test::kind_of([&] { multi.sum_into(b, single.buffer<float>(1), 0); }) == K::value);
    CHECK(test::kind_of([&] { multi.sum(b.matrix(4, 4), tandem::Per::row, b); }) == K::value);  // overlaps
    CHECK(contains(message_of([&] { multi.sum(b.matrix(4, 4), tandem::Per::row, b); }), "overlaps"));
    const auto past = [&] { multi.sum(b.matrix(4, 4, 4, b.size() - 8), tandem::Per::row, out); };
    CHECK(contains(message_of(past), "past its buffer"));
    CHECK(test::kind_of(past) == K::value);
    CHECK(contains(message_of([&] { (void)multi.sum(b.view(1, x.size())); }), "past the buffer"));
    CHECK(contains(message_of([&] { (void)multi.min(std::span<const float>()); }), "empty"));
    float dummy = 0;
    CHECK(contains(message_of([&] { (void)multi.wrap(&dummy, 1); }), "single-device"));
    auto ab = multi.upload(values_for<float>(64 * 64 * 4, 2));
    CHECK_NOTHROW(multi.matmul(ab.matrix(64, 64), ab.matrix(64, 64), ab.matrix(64, 64, 64, 4096)));  // apart
    CHECK(contains(message_of([&] { multi.matmul(ab.matrix(64, 64), ab.matrix(64, 64), ab.matrix(64, 64, 64, 100)); }),
                   "overlaps"));
    auto cb = multi.buffer<float>(64 * 64);
    CHECK(contains(
        message_of([&] { multi.matmul(ab.matrix(64, 64, 64, 64 * 64 * 3 + 1), ab.matrix(64, 64), cb.matrix(64, 64)); }),
        "past its buffer"));
    CHECK(test::kind_of([&] {
            multi.matmul(ab.matrix(64, 64, 64, 64 * 64 * 3 + 1), ab.matrix(64, 64), cb.matrix(64, 64));
          }) == K::value);
    CHECK(contains(message_of([&] { multi.matmul(ab.matrix(64, 64), ab.matrix(63, 64), ab.matrix(64, 64, 64, 8192)); }),
                   "shapes do not match"));
    const tandem::Buffer<float> none;
    CHECK(
        contains(message_of([&] { multi.matmul(ab.matrix(2, 2), ab.matrix(2, 2), none.matrix(2, 2)); }), "no buffer"));
    CHECK(test::kind_of([&] { multi.matmul(ab.matrix(2, 2), ab.matrix(2, 2), none.matrix(2, 2)); }) == K::value);
    std::vector<float> host(64 * 64 * 3);
    CHECK(contains(message_of([&] {
                     multi.matmul<float>({host.data(), 64, 64, 64}, {host.data() + 4096, 64, 64, 64},
                                         {host.data() + 100, 64, 64, 64});
                   }),
                   "overlaps"));
  }
}

}  // namespace

TEST_CASE("cpu: an engine over several devices (CPU engines standing in for GPUs)" * doctest::test_suite("cpu")) {
  check_engine(Backend::cpu, 3);
}

TEST_CASE("cuda: an engine over every GPU of the machine (up to 4)" * doctest::test_suite("cuda") *
          doctest::skip(gpu_count() < 2)) {
  setenv("NCCL_NVLS_ENABLE", "0", 1);  // never NVLink multicast (docs/SCALING.md)
  check_engine(Backend::cuda, std::min(gpu_count(), 4));
}

TEST_CASE("device lists: EngineOptions::devices and TANDEM_DEVICES are checked" * doctest::test_suite("common")) {
  EngineOptions o;
  using K = tandem::ErrorKind;
  o.devices = {0, 0};
  CHECK(contains(message_of([&] { Engine e(Backend::cpu, o); }), "twice"));
  CHECK(test::kind_of([&] { Engine e(Backend::cpu, o); }) == K::value);
  o.devices = {1, -2};
  CHECK(contains(message_of([&] { Engine e(Backend::cpu, o); }), "-2"));
  CHECK(test::kind_of([&] { Engine e(Backend::cpu, o); }) == K::value);
  o.devices = {0, 1};
  o.device = 1;
  CHECK(contains(message_of([&] { Engine e(Backend::cpu, o); }), "both set"));
  o.device = -1;
  int stream_stand_in = 0;
  o.stream = &stream_stand_in;
  CHECK(contains(message_of([&] { Engine e(Backend::cpu, o); }), "stream"));
  o.stream = nullptr;
  o.devices = {2};  // one device: a single-device engine
  CHECK(Engine(Backend::cpu, o).devices().size() == 1);
  {
    test::ScopedVar v("TANDEM_DEVICES", "0,x");
    test::ScopedVar one("TANDEM_DEVICE", nullptr);
    CHECK(contains(message_of([] { Engine e(Backend::cuda); }), "TANDEM_DEVICES='0,x'"));
    CHECK(Engine(Backend::cpu).devices().size() == 1);  // (the CPU backend does not read it)
  }
  {
    test::ScopedVar v("TANDEM_DEVICES", "1,1");
    test::ScopedVar one("TANDEM_DEVICE", nullptr);
    CHECK(contains(message_of([] { Engine e(Backend::cuda); }), "twice"));
    CHECK(test::kind_of([] { Engine e(Backend::cuda); }) == K::value);
  }
  {
    test::ScopedVar v("TANDEM_DEVICES", "0,1");
    test::ScopedVar one("TANDEM_DEVICE", "0");
    CHECK(contains(message_of([] { Engine e(Backend::cuda); }), "both set"));
    CHECK(test::kind_of([] { Engine e(Backend::cuda); }) == K::value);
  }
}
