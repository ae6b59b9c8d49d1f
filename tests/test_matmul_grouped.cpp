// Grouped products of Buffers (on CUDA, where a Hopper rung takes them, every group in one launch): every kernel
// and element type the backend has, groupings with empty, one-row and uneven groups, transposes, alpha / beta,
// padded operands and B shared by every group. Each result is judged against a dot product in double (the values
// are small integers: every kernel's sum is exact) and, for every kernel but auto, against the bits of the same
// kernel's product of each group alone; C's padding untouched.
#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tandem/tandem.hpp"
#include "tests/support.hpp"

namespace {

template <class T>
std::vector<T> small_integers(std::size_t n, std::uint64_t seed) {
  test::SplitMix64 g{seed};
  std::vector<T> x(n);
  for (auto& v : x) v = test::make<T>(double(int(g.below(9)) - 4));
  return x;
}

template <class T>
void check(const tandem::Engine& eng, const std::string& kernel, const std::vector<std::size_t>& sizes, std::size_t k,
           std::size_t n, bool ta, bool tb, bool shared, double alpha, double beta) {
  using C = tandem::matmul_result_t<T, T>;
  std::size_t m = 0;
  for (std::size_t s : sizes) m += s;
  const std::size_t G = sizes.size(), ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  // (lda and ldb multiples of 8: the copy engine reads 16-bit operands in place; float ones are packed)
  const std::size_t lda = ac + 8, ldb = bc + 8, ldc = n + 3, sb = shared ? 0 : br * ldb + 8;
  const auto a = small_integers<T>(ar * lda, 3 + m);
  const auto b = small_integers<T>(shared ? br * ldb : G * sb, 5 + n);
  std::vector<C> c0(m * ldc);
  for (std::size_t i = 0; i < c0.size(); ++i) c0[i] = C(int(i % 5) - 2);
  const auto da = eng.upload<T>(a), db = eng.upload<T>(b);
  const auto dc = eng.upload<C>(c0), alone = eng.upload<C>(c0);
  tandem::MatmulOptions o{kernel};
  o.trans_a = ta, o.trans_b = tb, o.alpha = alpha, o.beta = beta;
  eng.matmul_grouped(da.matrix(ar, ac, lda), db.batch(br, bc, shared ? 1 : G, sb, ldb), dc.matrix(m, n, ldc), sizes, o);
  const auto got = dc.to_vector();
  std::size_t bad = 0, r0 = 0;
  for (std::size_t g = 0; g < G; r0 += sizes[g], ++g)
    for (std::size_t i = r0; i < r0 + sizes[g]; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        double dot = 0;
        for (std::size_t p = 0; p < k; ++p)
          dot += double(a[ta ? p * lda + i : i * lda + p]) * double(b[g * sb + (tb ? j * ldb + p : p * ldb + j)]);
        bad += double(got[i * ldc + j]) != alpha * dot + beta * double(c0[i * ldc + j]);
      }
  for (std::size_t i = 0; i < m * ldc; ++i)
    if (i % ldc >= n) bad += !test::same_bits(got[i], c0[i]);
  CHECK(bad == 0);
  if (kernel == "auto") return;
  // Each group alone, by the same kernel: the same bits.
  r0 = 0;
  for (std::size_t g = 0; g < G; r0 += sizes[g], ++g) {
    if (sizes[g] == 0) continue;
    const auto part_a = ta ? da.matrix(k, sizes[g], lda, r0) : da.matrix(sizes[g], k, lda, r0 * lda);
    eng.matmul(part_a, db.matrix(br, bc, ldb, g * sb), alone.matrix(sizes[g], n, ldc, r0 * ldc), o);
  }
  const auto want = alone.to_vector();
  CHECK(test::same_bits(std::span<const C>(got), std::span<const C>(want)));
}

}  // namespace

TANDEM_BACKEND_TEST(matmul_grouped_buffers,
                    "matmul_grouped of Buffers: every kernel and type, against a double reference and each group "
                    "alone") {
  const std::vector<std::vector<std::size_t>> groupings = {
      {130, 2, 0, 67}, {1, 1, 1, 1, 1, 1, 1, 1, 1}, {300}, {0, 64, 65, 0, 200}, {129, 0}};
  for (const tandem::KernelInfo& info : eng.matmul_kernel_info()) {
    if (!info.runs_here) continue;
    const std::string kernel = info.name;
    CAPTURE(kernel);
    for (const auto& sizes : groupings)
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (bool shared : {false, true}) {
            if (test::quick() && (ta || shared)) continue;
            CAPTURE(sizes.size());
            CAPTURE(sizes[0]);
            CAPTURE(ta);
            CAPTURE(tb);
            CAPTURE(shared);
            if (info.accepts(tandem::Dtype::bf16)) {
              check<tandem::bfloat16>(eng, kernel, sizes, 72, 200, ta, tb, shared, 1.0, 0.0);
              check<tandem::half>(eng, kernel, sizes, 40, 9, ta, tb, shared, -0.5, 2.0);
            }
            if (info.accepts(tandem::Dtype::f32)) check<float>(eng, kernel, sizes, 33, 130, ta, tb, shared, 1.0, 0.0);
          }
  }
}
