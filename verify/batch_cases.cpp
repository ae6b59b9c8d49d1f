// Batches of two dimensions in the conformance matrix (conformance.hpp): every matmul type and two mixed pairs x
// the layouts of A and B over C's P x Q entries (two dimensions that merge into one run, a permuted batch whose
// matrices interleave by rows, broadcasts along either dimension or both) x C packed or permuted x transpose pair
// x alpha / beta x host or Buffer x kernel x deterministic mode; every entry against a long-double reference of
// its own product, C's padding untouched.
#include <cmath>
#include <type_traits>

#include "verify/bounds.hpp"
#include "verify/cases.hpp"
#include "verify/rng.hpp"

namespace tandem_verify::conformance {
namespace {

// Where an operand's entry (o, e) starts (o * outer + e * inner) and its rows' ld; size: its elements.
struct Layout {
  std::size_t count, inner, outer_count, outer, ld, size;
  std::size_t at(std::size_t o, std::size_t e) const {
    return (outer_count > 1 ? o * outer : 0) + (count > 1 ? e * inner : 0);
  }
};
enum class Kind { packed, permuted, bcast_inner, bcast_outer, one };
constexpr const char* kind_names[] = {"packed", "permuted", "broadcast inner", "broadcast outer", "one matrix"};

// An operand of rows x cols (as stored) over P x Q entries: packed (gaps of 3 between entries: the two
// dimensions merge), permuted (stored as [P][rows][Q][cols]), one batch of Q for every outer entry
// (bcast_outer), one of P for every inner entry (bcast_inner), one matrix for all.
Layout layout(Kind kind, std::size_t rows, std::size_t cols, std::size_t P, std::size_t Q) {
  const std::size_t ld = cols + 2, one = rows * ld + 3;
  switch (kind) {
    case Kind::packed:
      return {Q, one, P, Q * one, ld, P * Q * one};
    case Kind::permuted:
      return {Q, cols, P, rows * Q * cols, Q * cols, P * rows * Q * cols};
    case Kind::bcast_inner:
      return {1, 0, P, one, ld, P * one};
    case Kind::bcast_outer:
      return {Q, one, 1, 0, ld, Q * one};
    case Kind::one:
      return {1, 0, 1, 0, ld, one};
  }
  return {};
}

template <class TA, class TB>
void batch_cases(const tandem::Engine& eng, Report& report) {
  using C = tandem::matmul_result_t<TA, TB>;
  constexpr bool kMixed = !std::is_same_v<TA, TB>;
  const std::string backend = backend_name(eng),
                    type = kMixed ? std::string(type_name<TA>()) + " x " + type_name<TB>() : type_name<TA>();
  const std::size_t m = 6, k = 11, n = 5, P = 3, Q = 4;
  const auto infos = eng.matmul_kernel_info();
  const Kind all[] = {Kind::packed, Kind::permuted, Kind::bcast_inner, Kind::bcast_outer, Kind::one};
  for (Kind ka : all)
    for (Kind kb : all)
      for (Kind kc : {Kind::packed, Kind::permuted})
        for (bool ta : {false, true})
          for (bool tb : {false, true}) {
            if (report.options.quick && (ta != tb || kc == Kind::permuted)) continue;
            const double alpha = ta ? -0.5 : 1.0, beta = tb ? 2.0 : 0.0;  // (both pairs over the transposes)
            const std::size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
            const Layout la = layout(ka, ar, ac, P, Q), lb = layout(kb, br, bc, P, Q), lc = layout(kc, m, n, P, Q);
            Vector<TA> a(la.size, poison<TA>(false));
            Vector<TB> b(lb.size, poison<TB>(false));
            Vector<C> c0(lc.size, C(12345));
            SplitMix64 g{11 + std::size_t(ka) * 7 + std::size_t(kb) * 3 + ta + 2 * tb};
            auto fill = [&](auto& x, const Layout& l, std::size_t rows, std::size_t cols) {
              using T = typename std::remove_reference_t<decltype(x)>::value_type;
              for (std::size_t o = 0; o < (l.outer_count > 1 ? P : 1); ++o)
                for (std::size_t e = 0; e < (l.count > 1 ? Q : 1); ++e)
                  for (std::size_t i = 0; i < rows; ++i)
                    for (std::size_t j = 0; j < cols; ++j)
                      x[l.at(o, e) + i * l.ld + j] = value_from_bits<T>(g.next(), Values::uniform);
            };
            fill(a, la, ar, ac);
            fill(b, lb, br, bc);
            std::vector<long double> want(c0.size()), bound(c0.size());
            std::vector<char> entry(c0.size());  // (C's elements of an entry; the rest is padding and gaps)
            for (std::size_t o = 0; o < P; ++o)
              for (std::size_t e = 0; e < Q; ++e)
                for (std::size_t i = 0; i < m; ++i)
                  for (std::size_t j = 0; j < n; ++j) {
                    const std::size_t at = lc.at(o, e) + i * lc.ld + j;
                    c0[at] = beta == 0 ? std::numeric_limits<C>::quiet_NaN() : C(int(g.below(9)) - 4);
                    long double acc = 0, abs = 0;
                    for (std::size_t p = 0; p < k; ++p) {
                      const long double x = (long double)C(a[la.at(o, e) + (ta ? p * la.ld + i : i * la.ld + p)]) *
                                            (long double)C(b[lb.at(o, e) + (tb ? j * lb.ld + p : p * lb.ld + j)]);
                      acc += x, abs += std::fabs(x);
                    }
                    want[at] = alpha * acc + (beta == 0 ? 0.0L : beta * (long double)c0[at]);
                    bound[at] = std::fabs(alpha) * abs, entry[at] = 1;
                  }
            const std::string problem = type + " " + std::to_string(P) + " x " + std::to_string(Q) + " batches of " +
                                        std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) + ": A " +
                                        kind_names[int(ka)] + (ta ? " (A^T)" : "") + ", B " + kind_names[int(kb)] +
                                        (tb ? " (B^T)" : "") + ", C " + kind_names[int(kc)] + " alpha " + show(alpha) +
                                        " beta " + show(beta);
            for (const tandem::KernelInfo& kern : infos)
              for (bool det : {false, true})
                for (bool in_buffer : {false, true}) {
                  const bool refused = !kern.accepts(tandem::dtype_of<TA>) || !kern.accepts(tandem::dtype_of<TB>) ||
                                       (det && !kern.deterministic);
                  const std::string what = backend + ": matmul " + problem + (in_buffer ? " Buffer" : " host") +
                                           " kernel " + kern.name + (det ? " deterministic" : "");
                  tandem::MatmulOptions opts{kern.name, det};
                  opts.trans_a = ta, opts.trans_b = tb, opts.alpha = alpha, opts.beta = beta;
                  one_case(
                      report, eng, what, refused, kern,
                      [&] {
                        Vector<C> c = c0;
                        if (in_buffer) {
                          const auto da = eng.upload<TA>(a);
                          const auto db = eng.upload<TB>(b);
                          const auto dc = eng.upload<C>(c);
                          eng.matmul(da.batch(ar, ac, la.count, la.inner, la.ld).outer(la.outer_count, la.outer),
                                     db.batch(br, bc, lb.count, lb.inner, lb.ld).outer(lb.outer_count, lb.outer),
                                     dc.batch(m, n, Q, lc.inner, lc.ld).outer(P, lc.outer), opts);
                          c = dc.to_vector();
                        } else {
                          eng.matmul(tandem::BatchView<const TA>{a.data(), ar, ac, la.ld, la.count, la.inner}.outer(
                                         la.outer_count, la.outer),
                                     tandem::BatchView<const TB>{b.data(), br, bc, lb.ld, lb.count, lb.inner}.outer(
                                         lb.outer_count, lb.outer),
                                     tandem::BatchView<C>{c.data(), m, n, lc.ld, Q, lc.inner}.outer(P, lc.outer), opts);
                        }
                        return c;
                      },
                      [&](const Vector<C>& c) -> std::string {
                        const long double factor = matmul_bound_factor<C>(kern.precision, k);
                        const long double u = unit_roundoff<C>();
                        for (std::size_t at = 0; at < c.size(); ++at) {
                          if (!entry[at]) {
                            if (!same_bits(c[at], c0[at]))
                              return "wrote element " + std::to_string(at) + " outside every entry";
                            continue;
                          }
                          const long double tol =
                              factor * bound[at] + 2 * u * (std::fabs(want[at]) + bound[at]) + 1e-30L;
                          if (!(std::fabs((long double)c[at] - want[at]) <= tol))
                            return "C element " + std::to_string(at) + " = " + show(c[at]) + ", expected " +
                                   show(want[at]) + " +- " + show(tol);
                        }
                        return {};
                      });
                }
          }
}

}  // namespace

std::vector<Part> batch_parts() {
  std::vector<Part> parts;
  for_each_type<tandem::matmul_element_types>([&]<class T>() {
    parts.push_back([](const tandem::Engine& eng, Report& report) { batch_cases<T, T>(eng, report); });
  });
  parts.push_back([](const tandem::Engine& eng, Report& report) { batch_cases<tandem::bfloat16, float>(eng, report); });
  parts.push_back([](const tandem::Engine& eng, Report& report) { batch_cases<float, tandem::half>(eng, report); });
  return parts;
}

}  // namespace tandem_verify::conformance
