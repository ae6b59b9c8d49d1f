// auto on stored 16-bit products large enough to leave cuBLAS on an H100 / H200: 2^21 to 2^22 outputs with beta 0
// and rows of a multiple of 4 columns run wgmma_tma_store, which stores C by the copy engine where C's rows and
// entries start on 16-byte boundaries and runs as wgmma_persistent elsewhere (the same bits). On every backend:
// - values: Buffers and host matrices, beta 0 and 0.5, C's padding NaN that must stay NaN; with beta 0 the last 64
//   rows and 32 columns of Buffers whole (where the copy engine's boxes are cut at C's edge), elsewhere 512
//   elements at random, against a long double reference within the bound of float accumulation;
// - bits that depend neither on where C lies nor on how a batch is cut: a batch whose second entry starts off a
//   16-byte boundary against a call per entry, and a C one element off a boundary against an aligned one; where
//   the backend offers them, wgmma_tma_store against wgmma_persistent.
#include <cmath>
#include <limits>
#include <utility>

#include "tests/support.hpp"

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

template <class H>
struct Product {
  std::size_t m, k, n, ldc;
  std::vector<H> a, b;
  std::vector<float> c0;  // m x ldc, the padding NaN
  Product(std::size_t m_, std::size_t k_, std::size_t n_)
      : m(m_),
        k(k_),
        n(n_),
        ldc(n_ + 4),
        a(test::random16<H>(m * k, m + 7 * k)),
        b(test::random16<H>(k * n, n + 3 * k)),
        c0(m * ldc, kNaN) {
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) c0[i * ldc + j] = float((i + 2 * j) % 7) - 3.0f;
  }
  // How many of the elements (i, j) of C (m x n, ld ldc) are outside the bound around A B + beta C0.
  std::size_t wrong(const std::vector<float>& c, double beta,
                    const std::vector<std::pair<std::size_t, std::size_t>>& at, const char* what) const {
    std::size_t bad = 0;
    for (const auto& [i, j] : at) {
      long double dot = 0, sum = 0;
      for (std::size_t p = 0; p < k; ++p) {
        const long double x = (long double)float(a[i * k + p]) * float(b[p * n + j]);
        dot += x, sum += std::fabs(x);
      }
      const long double old = beta * c0[i * ldc + j], want = dot + old;
      const long double bound =
          test::matmul_bound_factor<float>(tandem::Precision::full, k) * sum + 0x1p-22L * (sum + std::fabs(old));
      if (!(std::fabs(c[i * ldc + j] - want) <= bound) && ++bad <= 3)
        MESSAGE(what << ": C(" << i << "," << j << ") = " << c[i * ldc + j] << ", expected " << double(want) << " +- "
                     << double(bound));
    }
    return bad;
  }
  std::size_t padding_written(const std::vector<float>& c) const {
    std::size_t written = 0;
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = n; j < ldc; ++j) written += !std::isnan(c[i * ldc + j]);
    return written;
  }
};

template <class H>
void check_values(const tandem::Engine& eng, std::size_t m, std::size_t k, std::size_t n) {
  CAPTURE(std::string(test::type_name<H>()));
  INFO("m k n " << m << " " << k << " " << n);
  const Product<H> pr(m, k, n);
  const auto da = eng.upload<H>(pr.a), db = eng.upload<H>(pr.b);
  test::SplitMix64 g{m + n};
  std::vector<std::pair<std::size_t, std::size_t>> sampled, edges;
  for (int s = 0; s < 512; ++s) sampled.emplace_back(g.below(m), g.below(n));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (i + 64 >= m || j + 32 >= n) edges.emplace_back(i, j);
  for (double beta : {0.0, 0.5}) {
    CAPTURE(beta);
    tandem::MatmulOptions o;  // auto
    o.beta = beta;
    const auto dc = eng.upload<float>(pr.c0);
    eng.matmul(da.matrix(m, k), db.matrix(k, n), dc.matrix(m, n, pr.ldc), o);
    const std::vector<float> c = dc.to_vector();
    CHECK(pr.padding_written(c) == 0);
    CHECK(pr.wrong(c, beta, beta == 0.0 ? edges : sampled, "Buffers") == 0);
    std::vector<float> host = pr.c0;
    eng.matmul<H>({pr.a.data(), m, k, k}, {pr.b.data(), k, n, n}, {host.data(), m, n, pr.ldc}, o);
    CHECK(pr.padding_written(host) == 0);
    CHECK(pr.wrong(host, beta, sampled, "host matrices") == 0);
  }
}

// The bits of C = A B (auto, or the named kernel) written into a new Buffer from element `offset` (ld n).
template <class H>
std::vector<float> product(const tandem::Engine& eng, const tandem::BufferMatrix<H>& a,
                           const tandem::BufferMatrix<H>& b, std::size_t offset, const char* kernel) {
  const std::size_t m = a.rows, n = b.cols;
  const auto c = eng.buffer<float>(offset + m * n);
  eng.matmul(a, b, c.matrix(m, n, n, offset), tandem::MatmulOptions{kernel});
  const std::vector<float> all = c.to_vector();
  return {all.begin() + std::ptrdiff_t(offset), all.end()};
}

template <class H>
void check_bits(const tandem::Engine& eng, std::size_t m, std::size_t k, std::size_t n) {
  CAPTURE(std::string(test::type_name<H>()));
  const std::size_t count = 2;
  const auto da = eng.upload<H>(test::random16<H>(count * m * k, 5 * m + k));
  const auto db = eng.upload<H>(test::random16<H>(count * k * n, 3 * n + k));
  // One batched call, the entries m * n + 1 floats apart: the second starts off a 16-byte boundary.
  const std::size_t stride = m * n + 1;
  const auto dc = eng.buffer<float>(count * stride);
  eng.matmul(da.batch(m, k, count, m * k), db.batch(k, n, count, k * n), dc.batch(m, n, count, stride),
             tandem::MatmulOptions{});
  const std::vector<float> batched = dc.to_vector();
  for (std::size_t e = 0; e < count; ++e) {
    CAPTURE(e);
    const auto ea = da.matrix(m, k, k, e * m * k), eb = db.matrix(k, n, n, e * k * n);
    const std::vector<float> alone = product(eng, ea, eb, 0, "auto");
    const std::span<const float> entry(batched.data() + e * stride, m * n);
    CHECK_MESSAGE(test::same_bits(entry, std::span<const float>(alone)), "entry of a batch against a call of its own");
    if (e == 0)
      CHECK_MESSAGE(
          test::same_bits(std::span<const float>(product(eng, ea, eb, 1, "auto")), std::span<const float>(alone)),
          "C one element off a 16-byte boundary against an aligned C");
  }
  // The stage itself against the one it runs as elsewhere, where the backend offers both.
  int offered = 0;
  for (const auto& info : eng.matmul_kernel_info())
    offered += info.runs_here && (info.name == "wgmma_tma_store" || info.name == "wgmma_persistent");
  if (offered == 2)
    CHECK(
        test::same_bits(std::span<const float>(product(eng, da.matrix(m, k), db.matrix(k, n), 0, "wgmma_tma_store")),
                        std::span<const float>(product(eng, da.matrix(m, k), db.matrix(k, n), 0, "wgmma_persistent"))));
}

}  // namespace

TANDEM_BACKEND_TEST(matmul_auto16_values, "matmul auto16: 2048 x 1024 x 2048 and 1448 x 520 x 1452 products") {
  test::for_each_type([&]<class T>() {
    if constexpr (tandem::is_storage_type_v<T>) {
      if (!test::quick()) check_values<T>(eng, 2048, 1024, 2048);
      check_values<T>(eng, 1448, 520, 1452);
    }
  });
}

TANDEM_BACKEND_TEST(matmul_auto16_bits, "matmul auto16: bits independent of C's address and of a batch's cut") {
  test::for_each_type([&]<class T>() {
    if constexpr (tandem::is_storage_type_v<T>) check_bits<T>(eng, 1448, 520, 1452);
  });
}
