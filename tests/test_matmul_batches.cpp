// Batches of two dimensions (BatchView::outer, BufferBatch::outer): permuted batches whose strides do not
// merge, broadcasts along either dimension, and C in any layout whose entries are apart; each entry against
// a plain loop over the stored elements, on every backend and kernel.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "tandem/tandem.hpp"
#include "tests/support.hpp"

namespace {

// Where an operand's entries lie: entry (o, e) from o * outer + e * inner; its rows ld apart.
struct Layout {
  std::size_t count, inner, outer_count, outer, ld, size;
};

// The batch layouts of one operand of rows x cols (as stored) over C's P x Q entries:
//   packed     entries one after another, outer = Q * inner (the two dimensions merge into one run)
//   permuted   stored as [P][rows][Q][cols]: inner = cols, outer = rows * Q * cols, ld = Q * cols
//   swapped    stored as [Q][P][rows][cols]: the outer dimension has the smaller stride
//   bcast_in   one batch of P entries for every entry of the inner dimension (inner stride 0)
//   bcast_out  one batch of Q entries for every outer entry (outer stride 0)
//   one        one matrix for every entry
enum class Kind { packed, permuted, swapped, bcast_in, bcast_out, one };
const Kind kinds[] = {Kind::packed, Kind::permuted, Kind::swapped, Kind::bcast_in, Kind::bcast_out, Kind::one};
const char* name(Kind k) {
  const char* names[] = {"packed", "permuted", "swapped", "bcast_in", "bcast_out", "one"};
  return names[int(k)];
}

Layout layout(Kind kind, std::size_t rows, std::size_t cols, std::size_t P, std::size_t Q) {
  const std::size_t ld = cols + 1, one = rows * ld;  // (padded rows)
  switch (kind) {
    case Kind::packed:
      return {Q, one + 2, P, Q * (one + 2), ld, P * Q * (one + 2)};
    case Kind::permuted:
      return {Q, cols, P, rows * Q * cols, Q * cols, P * rows * Q * cols};
    case Kind::swapped:
      return {Q, P * one, P, one, ld, P * Q * one};
    case Kind::bcast_in:
      return {1, 0, P, one, ld, P * one};
    case Kind::bcast_out:
      return {Q, one, 1, 0, ld, Q * one};
    case Kind::one:
      return {1, 0, 1, 0, ld, one};
  }
  return {};
}
std::size_t at(const Layout& l, std::size_t o, std::size_t e) {
  return (l.outer_count > 1 ? o * l.outer : 0) + (l.count > 1 ? e * l.inner : 0);
}

// Small integers: every product and sum below is exact in every type and kernel precision.
template <class T>
std::vector<T> integers(std::size_t n, std::uint64_t seed) {
  test::SplitMix64 g{seed};
  std::vector<T> x(n);
  for (auto& v : x) v = test::make<T>(int(g.below(7)) - 3);
  return x;
}

template <class TA, class TB>
void check_batches(const tandem::Engine& eng, const tandem::KernelInfo& info, Kind ka, Kind kb, Kind kc, std::size_t P,
                   std::size_t Q, bool ta, bool tb, bool in_buffer) {
  using C = tandem::matmul_result_t<TA, TB>;
  const std::size_t m = 5, k = 7, n = 3;
  const std::size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  const Layout la = layout(ka, ar, ac, P, Q), lb = layout(kb, br, bc, P, Q), lc = layout(kc, m, n, P, Q);
  const auto a = integers<TA>(la.size, 11 + P * 7 + Q);
  const auto b = integers<TB>(lb.size, 13 + P + Q * 5);
  const auto c0 = integers<C>(lc.size, 17);
  std::vector<C> c = c0;
  tandem::MatmulOptions o{info.name};
  o.trans_a = ta, o.trans_b = tb, o.alpha = 2.0, o.beta = -1.0;
  const tandem::BatchView<const TA> va =
      tandem::BatchView<const TA>{a.data(), ar, ac, la.ld, la.count, la.inner}.outer(la.outer_count, la.outer);
  const tandem::BatchView<const TB> vb =
      tandem::BatchView<const TB>{b.data(), br, bc, lb.ld, lb.count, lb.inner}.outer(lb.outer_count, lb.outer);
  const tandem::BatchView<C> vc = tandem::BatchView<C>{c.data(), m, n, lc.ld, Q, lc.inner}.outer(P, lc.outer);
  if (in_buffer) {
    const auto da = eng.upload<TA>(a);
    const auto db = eng.upload<TB>(b);
    const auto dc = eng.upload<C>(c);
    eng.matmul(da.batch(ar, ac, la.count, la.inner, la.ld).outer(la.outer_count, la.outer),
               db.batch(br, bc, lb.count, lb.inner, lb.ld).outer(lb.outer_count, lb.outer),
               dc.batch(m, n, Q, lc.inner, lc.ld).outer(P, lc.outer), o);
    c = dc.to_vector();
  } else {
    eng.matmul(va, vb, vc, o);
  }
  // Every element of C's storage: an entry's element is 2 * (its dot product) - its old value; the rest
  // (padding, and the gaps of the packed layout) is untouched.
  std::vector<double> want(c0.begin(), c0.end());
  for (std::size_t p = 0; p < P; ++p)
    for (std::size_t q = 0; q < Q; ++q)
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
          double dot = 0;
          for (std::size_t x = 0; x < k; ++x)
            dot += double(a[at(la, p, q) + (ta ? x * la.ld + i : i * la.ld + x)]) *
                   double(b[at(lb, p, q) + (tb ? j * lb.ld + x : x * lb.ld + j)]);
          const std::size_t e = p * lc.outer + q * lc.inner + i * lc.ld + j;
          want[e] = 2 * dot - double(c0[e]);
        }
  std::size_t bad = 0;
  for (std::size_t e = 0; e < c.size(); ++e) bad += double(c[e]) != want[e];
  CHECK(bad == 0);
}

TANDEM_BACKEND_TEST(matmul_batch_dimensions,
                    "matmul: batches of two dimensions (permuted, broadcast, merged) give every entry's product") {
  const Kind c_kinds[] = {Kind::packed, Kind::permuted, Kind::swapped};
  for (const auto& info : eng.matmul_kernel_info()) {
    if (!info.runs_here) continue;
    CAPTURE(info.name);
    auto types = [&]<class TA, class TB>() {
      if (!info.accepts(tandem::dtype_of<TA>) || !info.accepts(tandem::dtype_of<TB>)) return;
      const std::string type_a = tandem::to_string(tandem::dtype_of<TA>),
                        type_b = tandem::to_string(tandem::dtype_of<TB>);
      CAPTURE(type_a);
      CAPTURE(type_b);
      for (Kind ka : kinds)
        for (Kind kb : kinds)
          for (Kind kc : c_kinds)
            for (const auto& shape : {std::pair<std::size_t, std::size_t>{3, 4}, {5, 2}, {1, 3}, {4, 1}}) {
              const std::size_t P = shape.first, Q = shape.second;  // (C's outer and inner counts)
              const bool all = std::is_same_v<TA, float> && std::is_same_v<TB, float>;
              if (!all && (ka == Kind::swapped || kb == Kind::swapped)) continue;  // (fewer cases for the rest)
              const std::string a_kind = name(ka), b_kind = name(kb), c_kind = name(kc);
              CAPTURE(a_kind);
              CAPTURE(b_kind);
              CAPTURE(c_kind);
              CAPTURE(P);
              CAPTURE(Q);
              const bool in_buffer = (int(ka) + int(kb) + P) % 2 == 1;
              check_batches<TA, TB>(eng, info, ka, kb, kc, P, Q, (P + int(ka)) % 2 == 0, (Q + int(kb)) % 2 == 1,
                                    in_buffer);
            }
    };
    types.template operator()<float, float>();
    types.template operator()<double, double>();
    types.template operator()<tandem::bfloat16, tandem::bfloat16>();
    types.template operator()<tandem::half, float>();
  }
}

TANDEM_BACKEND_TEST(matmul_batch_dimension_errors,
                    "matmul: batches of two dimensions: counts that do not broadcast and overlapping C throw") {
  std::vector<float> a(1000, 1.0f), b(1000, 1.0f), c(1000);
  const tandem::BatchView<const float> va{a.data(), 2, 2, 2, 3, 4};
  const tandem::BatchView<const float> vb{b.data(), 2, 2, 2, 3, 4};
  const tandem::BatchView<float> vc{c.data(), 2, 2, 2, 3, 4};
  // A's outer count 2 against C's 4 (not a broadcast: its outer stride is not 0).
  CHECK_THROWS_AS(eng.matmul(va.outer(2, 12), vb.outer(4, 12), vc.outer(4, 12)), tandem::Error);
  CHECK_NOTHROW(eng.matmul(va.outer(4, 0), vb.outer(4, 12), vc.outer(4, 12)));
  // C's outer entries overlap its inner run (outer stride 8 < 2 * 4 + 4), or its inner ones each other.
  CHECK_THROWS_AS(eng.matmul(va.outer(4, 12), vb.outer(4, 12), vc.outer(4, 8)), tandem::Error);
  CHECK_NOTHROW(eng.matmul(va.outer(4, 12), vb.outer(4, 12), vc.outer(4, 12)));
  // Interleaved: inner stride 2 (< one matrix's 4 elements) with the outer one 48 apart; the inner ones overlap.
  CHECK_THROWS_AS(
      eng.matmul(va.outer(4, 12), vb.outer(4, 12), tandem::BatchView<float>{c.data(), 2, 2, 2, 3, 2}.outer(4, 48)),
      tandem::Error);
  // Outer count 0; reaching past a Buffer.
  CHECK_THROWS_AS(eng.matmul(va.outer(0, 12), vb.outer(0, 12), vc.outer(0, 12)), tandem::Error);
  const auto db = eng.upload<float>(b);
  const auto dc = eng.buffer<float>(48);
  const auto da = eng.upload<float>(a);
  CHECK_NOTHROW(eng.matmul(da.batch(2, 2, 3, 4).outer(4, 12), db.batch(2, 2, 3, 4).outer(4, 12),
                           dc.batch(2, 2, 3, 4).outer(4, 12)));
  CHECK_THROWS_AS(eng.matmul(da.batch(2, 2, 3, 4).outer(4, 12), db.batch(2, 2, 3, 4).outer(4, 12),
                             dc.batch(2, 2, 3, 4).outer(5, 12)),
                  tandem::Error);
  // A grouped product's B has one batch dimension.
  const std::size_t sizes[] = {1, 1};
  CHECK_THROWS_AS(eng.matmul_grouped(tandem::MatrixView<const float>{a.data(), 2, 2, 2}, vb.outer(2, 12),
                                     tandem::MatrixView<float>{c.data(), 2, 2, 2}, sizes),
                  tandem::Error);
}

}  // namespace
