// The matrix products of the conformance matrix (conformance.hpp): every element type matmul takes x
// data x shape x transpose pair x alpha / beta x layout x form x kernel x deterministic mode.
#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "verify/bounds.hpp"
#include "verify/cases.hpp"
#include "verify/rng.hpp"

namespace tandem_verify::conformance {
namespace {

struct Shape {
  std::size_t m, k, n;
};
struct Scalars {
  double alpha, beta;
};

// Where the operands lie: batch entries, padding (ld > cols), gaps between entries, one B for every
// entry (stride 0), a start one element past an aligned address.
struct Layout {
  const char* name;
  std::size_t count, pad, gap;
  bool shared_b, misaligned, huge;  // huge: padding holds the largest finite value instead of NaN
};
constexpr Layout kLayouts[] = {
    {"packed", 1, 0, 0, false, false, false},
    {"ld > cols (NaN padding)", 1, 3, 0, false, false, false},
    {"batch of 3 with gaps, B stride 0 (huge padding)", 3, 2, 5, true, false, true},
    {"misaligned batch of 2", 2, 0, 0, false, true, false},
};

// One operand: `count` matrices of rows x cols (ld, entries `stride` apart, from `first`) in an arena of
// poison.
template <class T>
struct Operand {
  std::size_t rows, cols, ld, count, stride, first;
  Vector<T> arena;
  T& at(std::size_t e, std::size_t i, std::size_t j) { return arena[first + e * stride + i * ld + j]; }
  const T& at(std::size_t e, std::size_t i, std::size_t j) const { return arena[first + e * stride + i * ld + j]; }
};

template <class T>
Operand<T> operand(std::size_t rows, std::size_t cols, std::size_t count, const Layout& l, T fill) {
  Operand<T> o{rows, cols, cols + l.pad, count, 0, l.misaligned ? std::size_t(1) : std::size_t(0), {}};
  o.stride = count > 1 ? rows * o.ld + l.gap : 0;
  o.arena.assign(o.first + (count > 0 ? (count - 1) * o.stride : 0) + rows * o.ld + 2, fill);
  return o;
}

// Small integers (exact products and sums in every precision) or uniform values in [-1, 1).
template <class T>
T value(bool exact, SplitMix64& g) {
  return value_from_bits<T>(g.next(), exact ? Values::small_integers : Values::uniform);
}

// A of TA and B of TB: one type, or a mixed pair (two of float, bfloat16 and half: the float product of the
// converted operands).
template <class TA, class TB>
void matmul_cases(const tandem::Engine& eng, Report& report) {
  constexpr bool kMixed = !std::is_same_v<TA, TB>;
  // C's type and the products' (float for 16-bit A and B, and for mixed ones)
  using C = std::conditional_t<kMixed, float, tandem::compute_t<TA>>;
  const bool quick = report.options.quick;
  // (K > 4096: deterministic mode's chunks of K, combined by the canonical sum; 3 * 4096 + 5: four chunk values)
  std::vector<Shape> shapes = {{1, 1, 1}, {4, 0, 3}, {17, 33, 9}, {3, 4097, 2}};
  if (!quick) shapes.insert(shapes.end(), {{33, 65, 130}, {65, 64, 17}, {2, 129, 1}, {5, 3 * 4096 + 5, 4}});
  std::vector<Scalars> scalars = {{1, 0}, {-2, 0}, {0.5, 1.5}};
  if (!quick) scalars.push_back({0, 0.5});
  const auto infos = eng.matmul_kernel_info();
  const std::string backend = backend_name(eng), type = kMixed ? std::string(type_name<TA>()) + " x " + type_name<TB>()
                                                               : std::string(type_name<TA>());
  for (bool exact : {true, false})
    for (const Shape& s : shapes)
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (const Scalars& sc : scalars)
            for (const Layout& l : kLayouts) {
              const std::string problem = type + (exact ? " exact " : " random ") + std::to_string(s.m) + "x" +
                                          std::to_string(s.k) + "x" + std::to_string(s.n) + (ta ? " A^T" : " A") +
                                          (tb ? " B^T" : " B") + " alpha " + show(sc.alpha) + " beta " + show(sc.beta);
              // A and B as stored (op(A) = A^T with ta: A is k x m), C m x n; every entry's values drawn
              // from its own stream, so that an entry is the same problem in every layout.
              Operand<TA> a = operand(ta ? s.k : s.m, ta ? s.m : s.k, l.count, l, poison<TA>(l.huge));
              Operand<TB> b = operand(tb ? s.n : s.k, tb ? s.k : s.n, l.shared_b ? 1 : l.count, l, poison<TB>(l.huge));
              const C sentinel = C(12345);
              Operand<C> c0 = operand(s.m, s.n, l.count, l, sentinel);
              for (std::size_t e = 0; e < l.count; ++e) {
                SplitMix64 g{1 + e * 7919 + s.m * 31 + s.k * 17 + s.n};
                for (std::size_t i = 0; i < a.rows; ++i)
                  for (std::size_t j = 0; j < a.cols; ++j) a.at(e, i, j) = value<TA>(exact, g);
                if (e == 0 || !l.shared_b)
                  for (std::size_t i = 0; i < b.rows; ++i)
                    for (std::size_t j = 0; j < b.cols; ++j) b.at(e, i, j) = value<TB>(exact, g);
                for (std::size_t i = 0; i < s.m; ++i)  // beta = 0 must not read C: NaN there must not leak
                  for (std::size_t j = 0; j < s.n; ++j)
                    c0.at(e, i, j) = sc.beta == 0 ? std::numeric_limits<C>::quiet_NaN() : C(int(g.below(9)) - 4);
              }
              auto opa = [&](std::size_t e, std::size_t i, std::size_t p) {
                return C(ta ? a.at(e, p, i) : a.at(e, i, p));
              };
              auto opb = [&](std::size_t e, std::size_t p, std::size_t j) {
                const std::size_t eb = l.shared_b ? 0 : e;
                return C(tb ? b.at(eb, j, p) : b.at(eb, p, j));
              };
              const C alpha = C(sc.alpha), beta = C(sc.beta);
              // References: in long double with sum |a b| (the bound), and deterministic mode's chunked fma
              // chains, their canonical sum and the epilogue (common/canonical.hpp's formula, written out here:
              // one fma chain from +0.0 per 4096 k, the chunk values summed by the test-support canonical_sum;
              // 16-bit inputs of one type: the chains of tensor-core k-steps, tensor_core_chain; a mixed product:
              // float's chains on the converted operands).
              std::vector<long double> want(c0.arena.size()), bound(c0.arena.size());
              Vector<C> chain(c0.arena.size());
              for (std::size_t e = 0; e < l.count; ++e)
                for (std::size_t i = 0; i < s.m; ++i)
                  for (std::size_t j = 0; j < s.n; ++j) {
                    long double acc = 0, abs = 0;
                    C chunk = C(0);
                    Vector<C> chunks;
                    for (std::size_t p = 0; p < s.k; ++p) {
                      acc += (long double)opa(e, i, p) * opb(e, p, j);
                      abs += std::fabs((long double)opa(e, i, p) * opb(e, p, j));
                      chunk = std::fma(opa(e, i, p), opb(e, p, j), chunk);
                      if ((p + 1) % 4096 == 0 || p + 1 == s.k) chunks.push_back(chunk), chunk = C(0);
                    }
                    C fma_acc = canonical_sum<C>(std::span<const C>(chunks));
                    if constexpr (!kMixed && tandem::is_storage_type_v<TA>)  // 16-bit: the tensor-core chain
                      fma_acc = tensor_core_chain(
                          s.k, 16, std::is_same_v<TA, tandem::half> ? -14 : -126,
                          [&](std::size_t p) { return double(opa(e, i, p)); },
                          [&](std::size_t p) { return double(opb(e, p, j)); });
                    const std::size_t at = c0.first + e * c0.stride + i * c0.ld + j;
                    const C old = c0.arena[at];
                    const bool product = s.k > 0 && alpha != C(0);
                    want[at] =
                        (product ? (long double)alpha * acc : 0.0L) + (beta == C(0) ? 0.0L : (long double)beta * old);
                    bound[at] = std::fabs((long double)alpha) * abs;  // scaled by the kernel's precision below
                    C r;
                    if (!product)
                      r = beta == C(0) ? C(0) : beta * old;
                    else
                      r = beta == C(0) ? alpha * fma_acc : std::fma(beta, old, alpha * fma_acc);
                    chain[at] = std::isnan(r) ? std::numeric_limits<C>::quiet_NaN() : r;
                  }
              for (const tandem::KernelInfo& k : infos)
                for (bool det : {false, true})
                  for (bool in_buffer : {false, true}) {
                    const bool refused = !k.accepts(tandem::dtype_of<TA>) || !k.accepts(tandem::dtype_of<TB>) ||
                                         (det && !k.deterministic);
                    const std::string what = backend + ": matmul " + problem + " " + l.name +
                                             (in_buffer ? " Buffer" : " host") + " kernel " + k.name +
                                             (det ? " deterministic" : "");
                    tandem::MatmulOptions o{k.name, det};
                    o.trans_a = ta, o.trans_b = tb, o.alpha = sc.alpha, o.beta = sc.beta;
                    one_case(
                        report, eng, what, refused, k,
                        [&] {
                          Vector<C> c = c0.arena;
                          if (in_buffer) {
                            const auto da = eng.upload<TA>(a.arena);
                            const auto db = eng.upload<TB>(b.arena);
                            const auto dc = eng.upload<C>(c);
                            eng.matmul(da.batch(a.rows, a.cols, a.count, a.stride, a.ld, a.first),
                                       db.batch(b.rows, b.cols, b.count, b.stride, b.ld, b.first),
                                       dc.batch(s.m, s.n, l.count, c0.stride, c0.ld, c0.first), o);
                            c = dc.to_vector();
                          } else if (l.count == 1) {
                            eng.matmul(tandem::MatrixView<const TA>{a.arena.data() + a.first, a.rows, a.cols, a.ld},
                                       tandem::MatrixView<const TB>{b.arena.data() + b.first, b.rows, b.cols, b.ld},
                                       tandem::MatrixView<C>{c.data() + c0.first, s.m, s.n, c0.ld}, o);
                          } else {
                            eng.matmul(tandem::BatchView<const TA>{a.arena.data() + a.first, a.rows, a.cols, a.ld,
                                                                   a.count, a.stride},
                                       tandem::BatchView<const TB>{b.arena.data() + b.first, b.rows, b.cols, b.ld,
                                                                   b.count, b.stride},
                                       tandem::BatchView<C>{c.data() + c0.first, s.m, s.n, c0.ld, l.count, c0.stride},
                                       o);
                          }
                          return c;
                        },
                        [&](const Vector<C>& c) -> std::string {
                          const long double factor = matmul_bound_factor<C>(k.precision, s.k);
                          const long double u = unit_roundoff<C>();
                          for (std::size_t at = 0; at < c.size(); ++at) {
                            const std::size_t rel = at - std::min(at, c0.first);
                            const std::size_t e = c0.stride ? rel / c0.stride : 0,
                                              in = c0.stride ? rel % c0.stride : rel;
                            const bool inside = at >= c0.first && e < l.count && in / c0.ld < s.m && in % c0.ld < s.n;
                            if (!inside) {
                              if (!same_bits(c[at], c0.arena[at]))
                                return "wrote element " + std::to_string(at) + " outside C (padding or a gap)";
                              continue;
                            }
                            const std::string where = "C[" + std::to_string(e) + "](" + std::to_string(in / c0.ld) +
                                                      ", " + std::to_string(in % c0.ld) + ") = " + show(c[at]);
                            if (det) {
                              if (!same_bits(c[at], chain[at]))
                                return where + ", expected " + show(chain[at]) +
                                       " (deterministic mode's chains, bit for bit)";
                              continue;
                            }
                            // The product's bound by the kernel's precision, plus the roundings of alpha * acc
                            // and of the fma with beta * C.
                            const long double tol =
                                factor * bound[at] + 2 * u * (std::fabs(want[at]) + bound[at]) + 1e-30L;
                            const long double got = c[at];
                            if (std::isnan(want[at]) ? !std::isnan(got) : !(std::fabs(got - want[at]) <= tol))
                              return where + ", expected " + show(want[at]) + " +- " + show(tol);
                          }
                          if (det)
                            for (std::size_t e = 0; e < l.count; ++e) {
                              Vector<C> entry;
                              for (std::size_t i = 0; i < s.m; ++i)
                                for (std::size_t j = 0; j < s.n; ++j)
                                  entry.push_back(c[c0.first + e * c0.stride + i * c0.ld + j]);
                              report.deterministic_bits(
                                  backend,
                                  "matmul " + problem + " entry " + std::to_string(e) + (l.shared_b ? " shared B" : ""),
                                  what, bytes_of(entry.data(), entry.size()));
                            }
                          return {};
                        });
                  }
            }
}

}  // namespace

std::vector<Part> matmul_parts() {
  std::vector<Part> parts;
  for_each_type<tandem::matmul_element_types>([&]<class T>() {
    parts.push_back([](const tandem::Engine& eng, Report& report) { matmul_cases<T, T>(eng, report); });
  });
  // Mixed input types: every ordered pair of float, bfloat16 and half.
  using Floating = tandem::type_list<float, tandem::bfloat16, tandem::half>;
  for_each_type<Floating>([&]<class TA>() {
    for_each_type<Floating>([&]<class TB>() {
      if constexpr (!std::is_same_v<TA, TB>)
        parts.push_back([](const tandem::Engine& eng, Report& report) { matmul_cases<TA, TB>(eng, report); });
    });
  });
  return parts;
}

}  // namespace tandem_verify::conformance
