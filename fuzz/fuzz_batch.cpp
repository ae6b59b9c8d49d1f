// fuzz_api's batched products: C[e] = alpha * op(A[e]) * op(B[e]) + beta * C[e] for every element type
// matmul takes, the 16-bit ones (bfloat16, half into a float C) included, on BatchViews of host memory or
// BufferBatches: fuzzed counts (0, mismatched, one A or B for every entry with stride 0), padding (ld >
// cols, or an ld too small), gaps and overlaps between entries, misaligned starts, transposes, alpha and
// beta. A valid call must give the exact product of the small integers (a double loop over the values
// the 16-bit elements hold) and write nothing but C's entries; an invalid one must throw and change
// nothing.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "harness.hpp"

namespace tandem_fuzz {
namespace {

// One operand: count matrices of rows x cols (ld), entries stride apart, from element `offset` of its
// arena.
struct Operand {
  std::size_t rows = 0, cols = 0, ld = 0, count = 1, stride = 0, offset = 0;
  std::size_t one() const { return rows == 0 || cols == 0 ? 0 : (rows - 1) * ld + cols; }  // one entry's extent
  std::size_t extent() const { return one() == 0 || count == 0 ? 0 : (count - 1) * stride + one(); }
  std::string describe(const char* name) const {
    return std::string(name) + " " + str(rows) + "x" + str(cols) + " ld " + str(ld) + " count " + str(count) +
           " stride " + str(stride) + " at " + str(offset);
  }
};

// A fuzzed operand: ld usually >= cols (sometimes one short), entries packed, with a gap, overlapping
// (read-only A and B may), or one matrix for every entry (stride 0); `count` entries, sometimes one more
// (a mismatch) or 1 with stride 0.
Operand fuzz_operand(FuzzedDataProvider& in, std::size_t rows, std::size_t cols, std::size_t count) {
  Operand o{rows, cols, cols, count, 0, in.ConsumeIntegralInRange<std::size_t>(0, 3)};
  switch (in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0:
    case 1:
      break;
    case 2:
    case 3:
    case 4:
      o.ld = cols + in.ConsumeIntegralInRange<std::size_t>(1, 4);
      break;
    default:
      o.ld = cols - std::min<std::size_t>(cols, 1);  // too small when cols > 0
  }
  switch (in.ConsumeIntegralInRange<int>(0, 6)) {
    case 0:
      o.stride = 0;  // one matrix for every entry
      if (in.ConsumeBool()) o.count = 1;
      break;
    case 1:
      o.stride = o.one() - std::min<std::size_t>(o.one(), 1);  // entries overlap by an element
      break;
    case 2:
      o.count = count + 1;  // a count that does not match C's
      o.stride = o.one();
      break;
    default:
      o.stride = o.one() + in.ConsumeIntegralInRange<std::size_t>(0, 5);  // packed, or with a gap
  }
  return o;
}

template <class T>
void fuzz_batch_typed(FuzzedDataProvider& in) {
  using C = tandem::compute_t<T>;
  const Engine& eng = engine();
  const MatmulChoice choice = fuzz_matmul_choice<T>(in);
  const bool buffers = choice.buffers, deterministic = choice.deterministic, kernel_ok = choice.kernel_ok;
  const std::string& kernel = choice.kernel;
  const bool ta = in.ConsumeBool(), tb = in.ConsumeBool();
  const double alpha = kMatmulScalars[in.ConsumeIntegralInRange<int>(0, 4)],
               beta = kMatmulScalars[in.ConsumeIntegralInRange<int>(0, 4)];
  const tandem::MatmulOptions opts{kernel, deterministic, ta, tb, alpha, beta};
  std::uint64_t rng = in.ConsumeIntegral<std::uint64_t>();
  const int special = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<int>(1, 20);
  const std::size_t m = in.ConsumeIntegralInRange<std::size_t>(0, 24),
                    k = in.ConsumeIntegralInRange<std::size_t>(0, 24),
                    n = in.ConsumeIntegralInRange<std::size_t>(0, 24);
  const std::size_t count = in.ConsumeIntegralInRange<std::size_t>(0, 5);
  const Operand a = fuzz_operand(in, ta ? k : m, ta ? m : k, count),
                b = fuzz_operand(in, tb ? n : k, tb ? k : n, count);
  Operand c = fuzz_operand(in, m, n, count);
  if (c.count != count && in.ConsumeBool()) c.count = count;

  // The contract (include/tandem/engine.hpp): count >= 1, ld >= cols, A and B of C's count or stride 0,
  // C's entries apart from each other.
  const bool valid = kernel_ok && c.count >= 1 && a.ld >= a.cols && b.ld >= b.cols && c.ld >= c.cols &&
                     (a.count == c.count || a.stride == 0) && (b.count == c.count || b.stride == 0) &&
                     (c.count == 1 || c.one() == 0 || c.stride >= c.one()) && a.count >= 1 && b.count >= 1;
  // Arenas of poison, the operands' elements filled (small integers, and specials now and then).
  auto arena_of = [](const Operand& o) {
    return o.offset + (o.ld < o.cols ? o.rows * o.cols + o.count : o.extent()) + 2;
  };
  tandem_verify::Vector<T> ha(arena_of(a), poison<T>()), hb(arena_of(b), poison<T>());
  std::vector<C> hc(arena_of(c), poison<C>());
  auto fill = [&]<class E>(std::vector<E>& arena, const Operand& o) {
    if (o.ld < o.cols) return;
    for (std::size_t e = 0; e < o.count; ++e)
      for (std::size_t i = 0; i < o.rows; ++i)
        for (std::size_t j = 0; j < o.cols; ++j)
          arena[o.offset + e * o.stride + i * o.ld + j] = fuzz_value<E>(rng, special);
  };
  fill(ha, a), fill(hb, b);
  if (beta != 0) fill(hc, c);
  const tandem_verify::Vector<T> a0 = ha, b0 = hb;
  const std::vector<C> c0 = hc;

  const std::string what = std::string("batched matmul<") + type_name<T>() + ">(" + a.describe("A") + ", " +
                           b.describe("B") + ", " + c.describe("C") + (buffers ? ", Buffers" : ", host") + ", kernel " +
                           quoted(kernel) + (deterministic ? ", deterministic" : "") + (ta ? ", A^T" : "") +
                           (tb ? ", B^T" : "") + ", alpha " + std::to_string(alpha) + ", beta " + std::to_string(beta) +
                           ")";
  begin_call(what);
  const bool returned = run(valid ? Expect::ok : Expect::error, [&] {
    if (!buffers)
      return eng.matmul(tandem::BatchView<const T>{ha.data() + a.offset, a.rows, a.cols, a.ld, a.count, a.stride},
                        tandem::BatchView<const T>{hb.data() + b.offset, b.rows, b.cols, b.ld, b.count, b.stride},
                        tandem::BatchView<C>{hc.data() + c.offset, c.rows, c.cols, c.ld, c.count, c.stride}, opts);
    const Buffer<T> da = eng.upload<T>(ha), db = eng.upload<T>(hb);
    const Buffer<C> dc = eng.upload<C>(hc);
    eng.matmul(tandem::BufferBatch<T>{&da, a.offset, a.rows, a.cols, a.ld, a.count, a.stride},
               tandem::BufferBatch<T>{&db, b.offset, b.rows, b.cols, b.ld, b.count, b.stride},
               tandem::BufferBatch<C>{&dc, c.offset, c.rows, c.cols, c.ld, c.count, c.stride}, opts);
    hc = dc.to_vector();
  });
  if (!same_bits(ha, a0.data()) || !same_bits(hb, b0.data())) fail("a batched matmul changed A or B");
  for (std::size_t x = 0; x < hc.size(); ++x) {
    // One entry has no stride to speak of: the library ignores it (an entry may be longer than it).
    const std::size_t step = c.count > 1 ? c.stride : 0;
    const std::size_t rel = x - std::min(x, c.offset), e = step ? rel / step : 0, in_entry = step ? rel % step : rel;
    const bool element =
        returned && x >= c.offset && e < c.count && c.ld > 0 && in_entry / c.ld < m && in_entry % c.ld < n;
    if (!element) {
      if (!same_bits(hc[x], c0[x])) fail("memory outside C's entries changed (element " + str(x) + ")");
      continue;
    }
    // The exact product: small integers, and NaN where a NaN, inf * 0 or inf - inf arises.
    const std::size_t i = in_entry / c.ld, j = in_entry % c.ld;
    double r = 0;
    if (alpha != 0 && k > 0) {
      for (std::size_t p = 0; p < k; ++p) {
        const double av = double(C(ha[a.offset + e * a.stride + (ta ? p * a.ld + i : i * a.ld + p)]));
        const double bv = double(C(hb[b.offset + e * b.stride + (tb ? j * b.ld + p : p * b.ld + j)]));
        r += av * bv;
      }
      r *= alpha;
    }
    if (beta != 0) r += beta * double(c0[x]);
    if (std::isnan(r) ? !std::isnan(double(hc[x])) : !(double(hc[x]) == r)) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "wrong product: C[%zu](%zu, %zu) is %.17g, expected %.17g", e, i, j, double(hc[x]),
                    r);
      fail(buf);
    }
  }
}

}  // namespace

void fuzz_batch(tandem::Dtype d, FuzzedDataProvider& in) {
  tandem_verify::with_dtype(d, [&]<class T>() {
    if constexpr (tandem::is_matmul_type_v<T>) fuzz_batch_typed<T>(in);
  });
}

}  // namespace tandem_fuzz
