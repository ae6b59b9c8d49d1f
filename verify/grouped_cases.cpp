// The grouped (expert) products of the conformance matrix (conformance.hpp): every matmul type and mixed pair x
// grouping (empty groups, one group, many) x transpose pair x alpha / beta x B per group or shared x host or
// Buffer x kernel x deterministic mode, each group's rows of C against a long-double reference of that group's
// rows times its own B, and C's padding untouched.
#include <cmath>
#include <type_traits>

#include "verify/bounds.hpp"
#include "verify/cases.hpp"
#include "verify/rng.hpp"

namespace tandem_verify::conformance {
namespace {

template <class TA, class TB>
void grouped_cases(const tandem::Engine& eng, Report& report) {
  using C = tandem::matmul_result_t<TA, TB>;
  constexpr bool kMixed = !std::is_same_v<TA, TB>;
  const std::string backend = backend_name(eng),
                    type = kMixed ? std::string(type_name<TA>()) + " x " + type_name<TB>() : type_name<TA>();
  std::vector<std::vector<std::size_t>> groupings = {{5}, {3, 0, 7, 1}, {0, 4}};
  if (!report.options.quick) groupings.push_back({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 70});
  const std::size_t k = 13, n = 9, pad = 2;
  const auto infos = eng.matmul_kernel_info();
  for (const auto& sizes : groupings)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (bool shared : {false, true})
          for (const auto& [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{-0.5, 2.0}}) {
            std::size_t m = 0;
            for (std::size_t s : sizes) m += s;
            const std::size_t G = sizes.size(), ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
            const std::size_t lda = ac + pad, ldb = bc + pad, ldc = n + pad, sb = shared ? 0 : br * ldb + 3;
            Vector<TA> a(ar * lda, poison<TA>(false));
            Vector<TB> b((shared ? 1 : G) * (br * ldb + 3), poison<TB>(false));
            Vector<C> c0(m * ldc, C(12345));
            SplitMix64 g{7 + m * 31 + G};
            for (std::size_t i = 0; i < ar; ++i)
              for (std::size_t j = 0; j < ac; ++j) a[i * lda + j] = value_from_bits<TA>(g.next(), Values::uniform);
            for (std::size_t e = 0; e < (shared ? 1 : G); ++e)
              for (std::size_t i = 0; i < br; ++i)
                for (std::size_t j = 0; j < bc; ++j)
                  b[e * (br * ldb + 3) + i * ldb + j] = value_from_bits<TB>(g.next(), Values::uniform);
            for (std::size_t i = 0; i < m; ++i)
              for (std::size_t j = 0; j < n; ++j)
                c0[i * ldc + j] = beta == 0 ? std::numeric_limits<C>::quiet_NaN() : C(int(g.below(9)) - 4);
            // The reference: row r of group gi is op(A)'s row r times op(B[gi]).
            std::vector<long double> want(c0.size()), bound(c0.size());
            std::size_t r0 = 0;
            for (std::size_t gi = 0; gi < G; r0 += sizes[gi], ++gi)
              for (std::size_t r = r0; r < r0 + sizes[gi]; ++r)
                for (std::size_t j = 0; j < n; ++j) {
                  long double acc = 0, abs = 0;
                  for (std::size_t p = 0; p < k; ++p) {
                    const long double x = (long double)C(ta ? a[p * lda + r] : a[r * lda + p]) *
                                          (long double)C(tb ? b[gi * sb + j * ldb + p] : b[gi * sb + p * ldb + j]);
                    acc += x, abs += std::fabs(x);
                  }
                  want[r * ldc + j] = alpha * acc + (beta == 0 ? 0.0L : beta * (long double)c0[r * ldc + j]);
                  bound[r * ldc + j] = std::fabs(alpha) * abs;
                }
            std::string groups;
            for (std::size_t s : sizes) groups += (groups.empty() ? "" : ",") + std::to_string(s);
            const std::string problem = type + " groups " + groups + " x " + std::to_string(k) + "x" +
                                        std::to_string(n) + (ta ? " A^T" : " A") + (tb ? " B^T" : " B") +
                                        (shared ? " shared B" : " B per group") + " alpha " + show(alpha) + " beta " +
                                        show(beta);
            for (const tandem::KernelInfo& kern : infos)
              for (bool det : {false, true})
                for (bool in_buffer : {false, true}) {
                  const bool refused = !kern.accepts(tandem::dtype_of<TA>) || !kern.accepts(tandem::dtype_of<TB>) ||
                                       (det && !kern.deterministic);
                  const std::string what = backend + ": matmul_grouped " + problem + (in_buffer ? " Buffer" : " host") +
                                           " kernel " + kern.name + (det ? " deterministic" : "");
                  tandem::MatmulOptions o{kern.name, det};
                  o.trans_a = ta, o.trans_b = tb, o.alpha = alpha, o.beta = beta;
                  one_case(
                      report, eng, what, refused, kern,
                      [&] {
                        Vector<C> c = c0;
                        const std::size_t count = shared ? 1 : G, stride = shared ? 0 : sb;
                        if (in_buffer) {
                          const auto da = eng.upload<TA>(a);
                          const auto db = eng.upload<TB>(b);
                          const auto dc = eng.upload<C>(c);
                          eng.matmul_grouped(da.matrix(ar, ac, lda), db.batch(br, bc, count, stride, ldb),
                                             dc.matrix(m, n, ldc), sizes, o);
                          c = dc.to_vector();
                        } else {
                          eng.matmul_grouped(tandem::MatrixView<const TA>{a.data(), ar, ac, lda},
                                             tandem::BatchView<const TB>{b.data(), br, bc, ldb, count, stride},
                                             tandem::MatrixView<C>{c.data(), m, n, ldc}, sizes, o);
                        }
                        return c;
                      },
                      [&](const Vector<C>& c) -> std::string {
                        const long double factor = matmul_bound_factor<C>(kern.precision, k);
                        const long double u = unit_roundoff<C>();
                        for (std::size_t at = 0; at < c.size(); ++at) {
                          if (at % ldc >= n) {
                            if (!same_bits(c[at], c0[at]))
                              return "wrote element " + std::to_string(at) + " of the padding";
                            continue;
                          }
                          const long double tol =
                              factor * bound[at] + 2 * u * (std::fabs(want[at]) + bound[at]) + 1e-30L;
                          if (!(std::fabs((long double)c[at] - want[at]) <= tol))
                            return "C(" + std::to_string(at / ldc) + ", " + std::to_string(at % ldc) +
                                   ") = " + show(c[at]) + ", expected " + show(want[at]) + " +- " + show(tol);
                        }
                        return {};
                      });
                }
          }
}

}  // namespace

std::vector<Part> grouped_parts() {
  std::vector<Part> parts;
  for_each_type<tandem::matmul_element_types>([&]<class T>() {
    parts.push_back([](const tandem::Engine& eng, Report& report) { grouped_cases<T, T>(eng, report); });
  });
  parts.push_back(
      [](const tandem::Engine& eng, Report& report) { grouped_cases<float, tandem::bfloat16>(eng, report); });
  parts.push_back([](const tandem::Engine& eng, Report& report) { grouped_cases<tandem::half, float>(eng, report); });
  return parts;
}

}  // namespace tandem_verify::conformance
