// Matrix products of two input types (A and B two of float, bfloat16 and half, C float): the float product
// of the converted operands, on every backend, kernel and form.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tandem/tandem.hpp"
#include "tests/support.hpp"

namespace {

using tandem::bfloat16;
using tandem::half;

// Calls f.template operator()<TA, TB>() for each ordered pair of different types among float, bfloat16, half, with
// the two types' names captured (type_a, type_b) for the assertions inside.
template <class F>
void for_each_pair(F&& f) {
  auto second = [&]<class TA>() {
    auto call = [&]<class TB>() {
      if constexpr (!std::is_same_v<TA, TB>) {
        const std::string type_a = tandem::to_string(tandem::dtype_of<TA>);
        CAPTURE(type_a);
        const std::string type_b = tandem::to_string(tandem::dtype_of<TB>);
        CAPTURE(type_b);
        f.template operator()<TA, TB>();
      }
    };
    call.template operator()<float>();
    call.template operator()<bfloat16>();
    call.template operator()<half>();
  };
  second.template operator()<float>();
  second.template operator()<bfloat16>();
  second.template operator()<half>();
}

template <class T>
std::vector<T> stored(const std::vector<float>& x) {
  return std::vector<T>(x.begin(), x.end());
}

// Small integers in [-4, 4] (exact in every type, and every product and sum of a few hundred of them exact in
// float, whatever the kernel's precision and order), or random values of 11 significant bits (exact in half
// and float, and rounded once in bfloat16: stored() converts them) with `fraction`.
std::vector<float> values(std::size_t n, std::uint64_t seed, bool fraction) {
  test::SplitMix64 g{seed};
  std::vector<float> x(n);
  for (auto& v : x)
    v = fraction ? float(std::ldexp(double(g.below(2048)) - 1024.0, -int(8 + g.below(4)))) : float(int(g.below(9)) - 4);
  return x;
}

// One form: A m x k (k x m with ta), B k x n (n x k with tb), padded rows, `count` entries with A or B shared
// (stride 0) or apart with gaps, alpha and beta; integers, so that every kernel gives the exact value.
template <class TA, class TB>
void check_values(const tandem::Engine& eng, const tandem::KernelInfo& info, std::size_t m, std::size_t k,
                  std::size_t n, bool ta, bool tb, double alpha, double beta, std::size_t count, int shared) {
  const std::size_t pad = 3, ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  const std::size_t lda = ac + pad, ldb = bc + 1, ldc = n + 2;
  const std::size_t sa = shared == 0 ? 0 : ar * lda + 5, sb = shared == 1 ? 0 : br * ldb + 2, sc = m * ldc + 7;
  const auto af = values(std::max<std::size_t>(sa * count, ar * lda), 3 + m + k, false);
  const auto bf = values(std::max<std::size_t>(sb * count, br * ldb), 5 + n + k, false);
  const auto a = stored<TA>(af);
  const auto b = stored<TB>(bf);
  std::vector<float> c0(sc * count);
  for (std::size_t i = 0; i < c0.size(); ++i) c0[i] = float(int(i % 7) - 3);
  std::vector<float> c = c0;
  tandem::MatmulOptions o{info.name};
  o.trans_a = ta, o.trans_b = tb, o.alpha = alpha, o.beta = beta;
  if (count == 1)
    eng.matmul(tandem::MatrixView<const TA>{a.data(), ar, ac, lda}, tandem::MatrixView<const TB>{b.data(), br, bc, ldb},
               tandem::MatrixView<float>{c.data(), m, n, ldc}, o);
  else
    eng.matmul(tandem::BatchView<const TA>{a.data(), ar, ac, lda, shared == 0 ? 1 : count, sa},
               tandem::BatchView<const TB>{b.data(), br, bc, ldb, shared == 1 ? 1 : count, sb},
               tandem::BatchView<float>{c.data(), m, n, ldc, count, sc}, o);
  std::size_t bad = 0;
  for (std::size_t e = 0; e < count; ++e)
    for (std::size_t i = 0; i < sc; ++i) {
      const std::size_t r = i / ldc, j = i % ldc;
      double want = c0[e * sc + i];  // padding and gaps are never written
      if (r < m && j < n) {
        double dot = 0;
        for (std::size_t p = 0; p < k; ++p)
          dot += double(af[e * sa + (ta ? p * lda + r : r * lda + p)]) *
                 double(bf[e * sb + (tb ? j * ldb + p : p * ldb + j)]);
        want = alpha * dot + beta * double(c0[e * sc + i]);
      }
      bad += double(c[e * sc + i]) != want;
    }
  CHECK(bad == 0);
}

// The bits of a float product of the converted matrices (random values, padded operands, or packed ones: rows of
// whole 16-byte vectors where the sizes allow): in deterministic mode on every backend (its bits are defined: the
// same on CPU and GPU), and on the CPU outside it where C has more than one row (the same Eigen products; one row:
// the value, Eigen's matrix-vector grouping).
template <class TA, class TB>
void check_bits(const tandem::Engine& eng, const char* kernel, bool deterministic, tandem::Precision precision,
                std::size_t m, std::size_t k, std::size_t n, bool ta, bool tb, bool packed = false) {
  const std::size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  const std::size_t lda = packed ? ac : ac + 2, ldb = packed ? bc : bc + 5, ldc = packed ? n : n + 1;
  const auto a = stored<TA>(values(ar * lda, 7 + k, true));
  const auto b = stored<TB>(values(br * ldb, 9 + n, true));
  const std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());  // the converted operands
  std::vector<float> c(m * ldc, 1.0f), cf = c;
  tandem::MatmulOptions o{kernel, deterministic};
  o.trans_a = ta, o.trans_b = tb, o.alpha = 0.75, o.beta = -1.5, o.precision = precision;
  eng.matmul(tandem::MatrixView<const TA>{a.data(), ar, ac, lda}, tandem::MatrixView<const TB>{b.data(), br, bc, ldb},
             tandem::MatrixView<float>{c.data(), m, n, ldc}, o);
  eng.matmul<float>({af.data(), ar, ac, lda}, {bf.data(), br, bc, ldb}, {cf.data(), m, n, ldc}, o);
  CHECK(test::same_bits(std::span<const float>(c), std::span<const float>(cf)));
}

TANDEM_BACKEND_TEST(matmul_mixed_values,
                    "matmul: mixed input types give the float product of the converted operands, every kernel and "
                    "form") {
  const std::size_t shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {33, 17, 65}, {1, 300, 131}, {300, 40, 530}, {4, 0, 3}};
  for (const auto& info : eng.matmul_kernel_info()) {
    if (!info.runs_here || !info.accepts(tandem::Dtype::bf16)) continue;
    CAPTURE(info.name);
    for_each_pair([&]<class TA, class TB>() {
      for (const auto& s : shapes) {
        if (test::quick() && s[0] * s[1] * s[2] > 100000) continue;
        for (bool ta : {false, true})
          for (bool tb : {false, true}) {
            CAPTURE(s[0]);
            CAPTURE(s[1]);
            CAPTURE(s[2]);
            CAPTURE(ta);
            CAPTURE(tb);
            check_values<TA, TB>(eng, info, s[0], s[1], s[2], ta, tb, 1.0, 0.0, 1, -1);
            check_values<TA, TB>(eng, info, s[0], s[1], s[2], ta, tb, -0.5, 2.0, 1, -1);
          }
      }
      for (int shared : {-1, 0, 1}) {  // a batch: entries apart, A shared, B shared
        CAPTURE(shared);
        check_values<TA, TB>(eng, info, 19, 23, 29, false, true, 1.0, 0.0, 3, shared);
        check_values<TA, TB>(eng, info, 19, 23, 29, true, false, 0.5, 1.0, 3, shared);
      }
    });
  }
}

TANDEM_BACKEND_TEST(matmul_mixed_bits,
                    "matmul: mixed input types have the bits of the float product of the "
                    "converted operands (deterministic mode; the CPU's products)") {
  for_each_pair([&]<class TA, class TB>() {
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        CAPTURE(ta);
        CAPTURE(tb);
        for (auto precision : {tandem::Precision::full, tandem::Precision::tf32}) {
          check_bits<TA, TB>(eng, "auto", true, precision, 37, 300, 45, ta, tb);
          // (more than one chunk of K; tf32 past 4096 is not yet offered by CUDA's deterministic mode)
          if (precision == tandem::Precision::full || eng.backend() == tandem::Backend::cpu)
            check_bits<TA, TB>(eng, "auto", true, precision, 1, 5000, 3, ta, tb);
        }
        // Products with few outputs (CUDA: register_tiled's chunk_dot, the 16-bit operand read as stored), packed
        // and padded: one row against many columns (the transposed problem), two chunks of K, the small tiles.
        for (bool packed : {false, true})
          for (const auto& s : {std::array<std::size_t, 3>{1, 5008, 24}, std::array<std::size_t, 3>{2, 4104, 40},
                                std::array<std::size_t, 3>{40, 4104, 48}, std::array<std::size_t, 3>{4, 512, 4}}) {
            CAPTURE(packed);
            CAPTURE(s[0]);
            check_bits<TA, TB>(eng, "auto", true, tandem::Precision::full, s[0], s[1], s[2], ta, tb, packed);
          }
        if (eng.backend() == tandem::Backend::cpu)
          for (const auto& info : eng.matmul_kernel_info())
            check_bits<TA, TB>(eng, info.name.c_str(), false, tandem::Precision::full, 300, 40, 530, ta, tb);
      }
  });
}

TANDEM_BACKEND_TEST(matmul_mixed_buffers, "matmul: mixed input types of Buffers, one matrix and a batch") {
  const std::size_t m = 70, k = 33, n = 41;
  const auto af = values(m * k * 2, 21, false), bf = values(k * n, 22, false);
  const auto a16 = stored<bfloat16>(af);
  const auto a = eng.upload(a16);
  const auto b = eng.upload(bf);
  const auto c = eng.buffer<float>(m * n * 2);
  eng.matmul(a.matrix(m, k), b.matrix(k, n), c.matrix(m, n));
  eng.matmul(a.batch(m, k, 2, m * k), b.batch(k, n, 2, 0), c.batch(m, n, 2, m * n));
  const auto got = c.to_vector();
  std::size_t bad = 0;
  for (std::size_t e = 0; e < 2; ++e)
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        double dot = 0;
        for (std::size_t p = 0; p < k; ++p) dot += double(af[e * m * k + i * k + p]) * double(bf[p * n + j]);
        bad += double(got[e * m * n + i * n + j]) != dot;
      }
  CHECK(bad == 0);
}

// A mixed product of Buffers against the same kernel's float product of the converted operands, bit for bit: views
// at an offset (16-bit rows that start off an 8-byte boundary, or on one) and with padded or packed rows, transposes,
// alpha / beta; on CUDA's register_tiled each 16-bit operand is converted as register_tiled's tiles load it.
template <class TA, class TB>
void check_buffer_bits(const tandem::Engine& eng, const char* kernel, bool deterministic, std::size_t m, std::size_t k,
                       std::size_t n, bool ta, bool tb, std::size_t offset, std::size_t pad, std::size_t c_pad = 1) {
  const std::size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  const std::size_t lda = ac + pad, ldb = bc + pad, ldc = n + c_pad;
  const auto a = stored<TA>(values(offset + ar * lda, 11 + k + offset, true));
  const auto b = stored<TB>(values(offset + br * ldb, 13 + n + pad, true));
  const std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());  // the converted operands
  std::vector<float> c0(m * ldc);
  for (std::size_t i = 0; i < c0.size(); ++i) c0[i] = float(int(i % 7) - 3);
  const auto da = eng.upload(a);
  const auto db = eng.upload(b);
  const auto daf = eng.upload(af), dbf = eng.upload(bf);
  const auto dc = eng.upload(c0), dcf = eng.upload(c0);
  tandem::MatmulOptions o{kernel, deterministic};
  o.trans_a = ta, o.trans_b = tb, o.alpha = 0.75, o.beta = -1.5;
  eng.matmul(da.matrix(ar, ac, lda, offset), db.matrix(br, bc, ldb, offset), dc.matrix(m, n, ldc), o);
  eng.matmul(daf.matrix(ar, ac, lda, offset), dbf.matrix(br, bc, ldb, offset), dcf.matrix(m, n, ldc), o);
  const auto c = dc.to_vector(), cf = dcf.to_vector();
  CHECK(test::same_bits(std::span<const float>(c), std::span<const float>(cf)));
}

// A batch of mixed products (entries apart, A shared or B shared) against the same batch of the converted
// operands' float products, bit for bit (random values; C of more than one row: on the CPU outside deterministic
// mode one row gives the float product's value only).
template <class TA, class TB>
void check_batch_bits(const tandem::Engine& eng, const char* kernel, bool deterministic, std::size_t m, std::size_t k,
                      std::size_t n, bool ta, bool tb, int shared) {
  const std::size_t count = 3, ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  const std::size_t lda = ac + 1, ldb = bc + 2, ldc = n + 3;
  const std::size_t sa = shared == 0 ? 0 : ar * lda + 5, sb = shared == 1 ? 0 : br * ldb + 2, sc = m * ldc + 7;
  const auto a = stored<TA>(values(std::max<std::size_t>(sa * count, ar * lda), 17 + m, true));
  const auto b = stored<TB>(values(std::max<std::size_t>(sb * count, br * ldb), 19 + n, true));
  const std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());  // the converted operands
  std::vector<float> c(sc * count);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = float(int(i % 7) - 3);
  std::vector<float> cf = c;
  tandem::MatmulOptions o{kernel, deterministic};
  o.trans_a = ta, o.trans_b = tb, o.alpha = 0.75, o.beta = -1.5;
  const std::size_t count_a = shared == 0 ? 1 : count, count_b = shared == 1 ? 1 : count;
  eng.matmul(tandem::BatchView<const TA>{a.data(), ar, ac, lda, count_a, sa},
             tandem::BatchView<const TB>{b.data(), br, bc, ldb, count_b, sb},
             tandem::BatchView<float>{c.data(), m, n, ldc, count, sc}, o);
  eng.matmul(tandem::BatchView<const float>{af.data(), ar, ac, lda, count_a, sa},
             tandem::BatchView<const float>{bf.data(), br, bc, ldb, count_b, sb},
             tandem::BatchView<float>{cf.data(), m, n, ldc, count, sc}, o);
  CHECK(test::same_bits(std::span<const float>(c), std::span<const float>(cf)));
}

}  // namespace

TANDEM_BACKEND_TEST(matmul_mixed_batch_bits,
                    "matmul: batches of mixed input types have the bits of the same batch's float products") {
  const bool cpu = eng.backend() == tandem::Backend::cpu;
  for_each_pair([&]<class TA, class TB>() {
    for (const auto& s : {std::array<std::size_t, 3>{37, 300, 45}, std::array<std::size_t, 3>{70, 33, 300}})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (int shared : {-1, 0, 1}) {
            CAPTURE(s[0]);
            CAPTURE(ta);
            CAPTURE(tb);
            CAPTURE(shared);
            check_batch_bits<TA, TB>(eng, "auto", true, s[0], s[1], s[2], ta, tb, shared);
            check_batch_bits<TA, TB>(eng, cpu ? "auto" : "register_tiled", false, s[0], s[1], s[2], ta, tb, shared);
          }
  });
}

TANDEM_BACKEND_TEST(matmul_mixed_buffer_bits,
                    "matmul: mixed input types of Buffers have the bits of the same kernel's float product, views at "
                    "offsets, padded and packed rows, many outputs and K past 4096") {
  // (many outputs: register_tiled's tiles, not its few-outputs kernel; K past 4096: its chunks of K, with rows of
  // whole vectors or not; offset 4: 16-bit rows on 8-byte boundaries that are not 16-byte ones)
  const std::array<std::size_t, 3> shapes[] = {{130, 260, 136}, {67, 33, 129}, {129, 4100, 67}, {129, 4100, 68}};
  for_each_pair([&]<class TA, class TB>() {
    for (const auto& s : shapes)
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (std::size_t offset : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(4)})
            for (std::size_t pad : {std::size_t(0), std::size_t(3)}) {
              if ((test::quick() || offset % 4 != 0) && s[1] > 4096) continue;
              CAPTURE(s[0]);
              CAPTURE(s[1]);
              CAPTURE(ta);
              CAPTURE(tb);
              CAPTURE(offset);
              CAPTURE(pad);
              check_buffer_bits<TA, TB>(eng, "auto", true, s[0], s[1], s[2], ta, tb, offset, pad);
              if (eng.backend() == tandem::Backend::cuda)
                check_buffer_bits<TA, TB>(eng, "register_tiled", false, s[0], s[1], s[2], ta, tb, offset, pad);
            }
  });
}

TANDEM_BACKEND_TEST(matmul_mixed_large_tiles,
                    "matmul: mixed input types on register_tiled's large float tiles have the bits of its float "
                    "product, rows of whole vectors or not") {
  if (eng.backend() != tandem::Backend::cuda) return;  // (GPU tiles; the CPU's path is the same at every size)
  // (on a GPU of 132 SMs, an H100 SXM or H200: 128 x 256, 128 x 128 and 64 x 128 tiles, register_tiled's
  // with_float_tile)
  const std::array<std::size_t, 3> shapes[] = {{2048, 16, 2048}, {2310, 17, 1544}, {1537, 15, 1543}};
  for_each_pair([&]<class TA, class TB>() {
    for (const auto& s : shapes)
      for (bool t : {false, true}) {
        CAPTURE(s[0]);
        CAPTURE(t);
        // packed rows at offset 0 (vector loads where the row lengths allow), then offset 1, padded rows and C
        check_buffer_bits<TA, TB>(eng, "register_tiled", false, s[0], s[1], s[2], t, t, 0, 0, 0);
        check_buffer_bits<TA, TB>(eng, "register_tiled", false, s[0], s[1], s[2], t, t, 1, 3, 1);
      }
  });
}

// ---- Grouped products ----------------------------------------------------------------------------------

// matmul_grouped against its definition, written out: each group's rows of C are the product of that group's
// rows of op(A) with its entry of B, as one matmul call of that group alone (the same bits), with empty groups,
// transposes, alpha / beta, padded operands and B shared by every group (stride 0); C's padding untouched.
template <class TA, class TB>
void check_grouped(const tandem::Engine& eng, const std::vector<std::size_t>& sizes, std::size_t k, std::size_t n,
                   bool ta, bool tb, bool shared, double alpha, double beta) {
  using C = tandem::matmul_result_t<TA, TB>;
  std::size_t m = 0;
  for (std::size_t s : sizes) m += s;
  const std::size_t G = sizes.size(), ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  const std::size_t lda = ac + 2, ldb = bc + 1, ldc = n + 3, sb = shared ? 0 : br * ldb + 4;
  const auto a = stored<TA>(values(std::max<std::size_t>(ar * lda, 1), 31 + m, false));
  const auto b = stored<TB>(values(std::max<std::size_t>(shared ? br * ldb : G * sb, 1), 37 + n, false));
  std::vector<C> c0(m * ldc);
  for (std::size_t i = 0; i < c0.size(); ++i) c0[i] = C(int(i % 5) - 2);
  std::vector<C> c = c0, want = c0;
  tandem::MatmulOptions o;
  o.trans_a = ta, o.trans_b = tb, o.alpha = alpha, o.beta = beta;
  eng.matmul_grouped(tandem::MatrixView<const TA>{a.data(), ar, ac, lda},
                     tandem::BatchView<const TB>{b.data(), br, bc, ldb, shared ? 1 : G, sb},
                     tandem::MatrixView<C>{c.data(), m, n, ldc}, sizes, o);
  std::size_t r0 = 0;
  for (std::size_t g = 0; g < G; r0 += sizes[g], ++g) {
    if (sizes[g] == 0) continue;
    const std::size_t rows = sizes[g];
    const TA* ag = ta ? a.data() + r0 : a.data() + r0 * lda;
    eng.matmul(tandem::MatrixView<const TA>{ag, ta ? k : rows, ta ? rows : k, lda},
               tandem::MatrixView<const TB>{b.data() + g * sb, br, bc, ldb},
               tandem::MatrixView<C>{want.data() + r0 * ldc, rows, n, ldc}, o);
  }
  CHECK(test::same_bits(std::span<const C>(c), std::span<const C>(want)));
  // and the values of each group's first row, by a dot product in double (the integers are exact)
  r0 = 0;
  for (std::size_t g = 0; g < G; r0 += sizes[g], ++g)
    if (sizes[g] > 0)
      for (std::size_t j = 0; j < n; ++j) {
        double dot = 0;
        for (std::size_t p = 0; p < k; ++p)
          dot += double(a[ta ? p * lda + r0 : r0 * lda + p]) * double(b[g * sb + (tb ? j * ldb + p : p * ldb + j)]);
        CHECK(double(c[r0 * ldc + j]) == alpha * dot + beta * double(c0[r0 * ldc + j]));
      }
}

TANDEM_BACKEND_TEST(matmul_grouped_products, "matmul_grouped: each group's rows times its own B, every form") {
  const std::vector<std::vector<std::size_t>> groupings = {
      {5}, {3, 0, 7, 1}, {0, 0}, {1, 1, 1, 1, 1, 1, 1, 1, 1}, {130, 2, 0, 67}};
  for (const auto& sizes : groupings)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (bool shared : {false, true}) {
          CAPTURE(sizes.size());
          CAPTURE(ta);
          CAPTURE(tb);
          CAPTURE(shared);
          check_grouped<float, float>(eng, sizes, 19, 23, ta, tb, shared, 1.0, 0.0);
          check_grouped<float, float>(eng, sizes, 40, 9, ta, tb, shared, -0.5, 2.0);
          check_grouped<double, double>(eng, sizes, 7, 5, ta, tb, shared, 2.0, 1.0);
          check_grouped<bfloat16, bfloat16>(eng, sizes, 33, 17, ta, tb, shared, 1.0, 0.0);
          check_grouped<float, half>(eng, sizes, 33, 17, ta, tb, shared, 1.0, 0.5);
          check_grouped<bfloat16, float>(eng, sizes, 8, 3, ta, tb, shared, 1.0, 0.0);
        }
  // A Buffer call: the same as the host one.
  const std::vector<std::size_t> sizes = {4, 0, 9};
  const auto af = values(13 * 6, 41, false), bf = values(3 * 6 * 5, 43, false);
  std::vector<float> host(13 * 5, 0.0f);
  eng.matmul_grouped<float>({af.data(), 13, 6, 6}, {bf.data(), 6, 5, 5, 3, 30}, {host.data(), 13, 5, 5}, sizes);
  const auto da = eng.upload(af), db = eng.upload(bf);
  const auto dc = eng.buffer<float>(13 * 5);
  eng.matmul_grouped(da.matrix(13, 6), db.batch(6, 5, 3, 30), dc.matrix(13, 5), sizes);
  CHECK(test::same_bits(std::span<const float>(dc.to_vector()), std::span<const float>(host)));
  // Refused: sizes that do not add up to A's rows, B without an entry per group, C over B.
  std::vector<float> c(13 * 5);
  const std::vector<std::size_t> short_sizes = {4, 8}, long_sizes = {4, 10}, two = {4, 9};
  CHECK(test::contains(test::message_of([&] {
                         eng.matmul_grouped<float>({af.data(), 13, 6, 6}, {bf.data(), 6, 5, 5, 2, 30},
                                                   {c.data(), 13, 5, 5}, short_sizes);
                       }),
                       "add up to 12 but op("));
  CHECK(test::contains(
      test::message_of([&] {
        eng.matmul_grouped<float>({af.data(), 13, 6, 6}, {bf.data(), 6, 5, 5, 2, 30}, {c.data(), 13, 5, 5}, long_sizes);
      }),
      "add up to more than"));
  CHECK(test::contains(
      test::message_of([&] {
        eng.matmul_grouped<float>({af.data(), 13, 6, 6}, {bf.data(), 6, 5, 5, 3, 30}, {c.data(), 13, 5, 5}, two);
      }),
      "3 entries for 2 groups"));
  std::vector<float> bc(200, 1.0f);
  CHECK(test::contains(test::message_of([&] {
                         eng.matmul_grouped<float>({af.data(), 13, 6, 6}, {bc.data(), 6, 5, 5, 3, 30},
                                                   {bc.data() + 50, 13, 5, 5}, sizes);
                       }),
                       "overlaps"));
}
