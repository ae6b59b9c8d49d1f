// tandem check: every kernel of every usable backend over sizes that miss every block, against the
// test-support library's references and the CPU backend's serial kernel.
#include <unistd.h>  // isatty

#include <cmath>
#include <cstdio>
#include <limits>

#include "tests/support/reference.hpp"
#include "tests/support/rng.hpp"
#include "tests/support/values.hpp"
#include "tests/support/verdict.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/table.hpp"
#include "tools/cli/timing.hpp"

namespace tandem_cli {
namespace {

using tandem::Engine;
using tandem::Op;
using tandem_test::show;
using tandem_test::type_name;

constexpr std::string_view kCheckHelp = R"(usage: tandem check [options]

The cross-backend check. For every usable backend (or the one --backend names), every reduce kernel
(auto included) runs sum, min and max of int32, int64, float and double data (integers over their
whole range, so sums wrap) at sizes that miss every block: 0, 1, 2, 3, 31, 32, 33, 63, ..., 4095,
4097, 65537, 1000003, 2^22+3, 2^24+1, seeded random sizes, and a few strided views. Every matmul
kernel runs the shapes 1x1x1, 17x33x65, 129x1x257 and 255x257x253 (M x K x N) in float and double,
and batches of 3 products 33x65x17 with transposes, alpha and beta (C = alpha op(A) op(B) + beta C),
where deterministic mode must give the same bits on every backend.
Per-row and per-column reductions (kernel auto) run 1x1, 33x65, 1025x3 and 3x4097 matrices.
The 16-bit types (bfloat16, float16) run sum, min and argmax on every kernel that takes them (n = 1,
4097, 65537) against the reference of their float values, the deterministic sum against the canonical
order of those floats, and a 33x65x17 matmul into float: auto within the bound, deterministic bit for
bit equal to the fma chain on the floats.

Integer sums, min and max must equal, bit for bit, both an independent reference (serial loops in
wider types) and the CPU backend's serial kernel; float sums must lie within 8 u sum|x| of a long
double sum; min and max of an empty input must throw tandem::Error. Matmul results must lie within
the bound of 'tandem matmul --help' of every element of the reference. Kernels whose KernelInfo does
not list the dtype (reduced-precision kernels with double) must throw tandem::Error, and are skipped.

options:
  --backend cpu|cuda|auto   check only this backend (default: every usable backend)
  --quick                   fewer sizes (up to 65537), one random size

Ends with 'check: N passed, M failed'; exit status 1 if any failed.
)";

struct ReduceCase {
  std::size_t n, stride;
};

std::vector<ReduceCase> reduce_cases(bool quick) {
  std::vector<std::size_t> sizes = {0,   1,   2,   3,    31,   32,   33,   63,   64,   65,   255,  256,
                                    257, 511, 513, 1023, 1024, 1025, 2047, 2049, 4095, 4097, 65537};
  if (!quick) sizes.insert(sizes.end(), {1000003, (1 << 22) + 3, (1 << 24) + 1});
  tandem_test::SplitMix64 g{7};
  for (int i = 0; i < (quick ? 1 : 4); ++i) sizes.push_back(5 + g.next() % 300000);
  std::vector<ReduceCase> cases;
  for (std::size_t n : sizes) cases.push_back({n, 1});
  for (std::size_t n : {std::size_t(33), std::size_t(1025), std::size_t(65537)}) cases.push_back({n, 3});
  return cases;
}

struct MatmulShape {
  std::size_t m, k, n;
};
constexpr MatmulShape kCheckShapes[] = {{1, 1, 1}, {17, 33, 65}, {129, 1, 257}, {255, 257, 253}};

struct PerShape {
  std::size_t rows, cols;
};
constexpr PerShape kPerShapes[] = {{1, 1}, {33, 65}, {1025, 3}, {3, 4097}};
constexpr Op kCheckOps[] = {Op::sum, Op::min, Op::max, Op::argmin, Op::argmax};

// Counts the checks and prints each failure as it happens (the first 20 in full) and the progress:
// one line updated in place on a terminal, a line per finished group otherwise.
class CheckLog {
 public:
  explicit CheckLog(std::size_t total) : total_(total), tty_(isatty(fileno(stdout))) {}

  void group(std::string name) {
    end_group();
    group_ = std::move(name);
    group_start_ = done();
    group_failed_ = failed_;
    draw(true);
  }
  void pass() { ++passed_, draw(false); }
  void skip() { ++skipped_, draw(false); }
  void fail(const std::string& what) {
    ++failed_;
    clear();
    if (failed_ <= 20) std::printf("FAIL %s\n", what.c_str());
    if (failed_ == 20) std::printf("(further failures are counted, not shown)\n");
    draw(true);
  }
  void finish(const std::vector<std::string>& notes) {
    end_group();
    clear();
    for (const auto& note : notes) std::printf("check: %s\n", note.c_str());
    if (skipped_)
      std::printf(
          "check: %zu skipped (kernels whose KernelInfo does not list the dtype or op, e.g. "
          "reduced-precision kernels with double)\n",
          skipped_);
    std::printf("check: %zu passed, %zu failed\n", passed_, failed_);
  }
  bool ok() const { return failed_ == 0; }

 private:
  std::size_t done() const { return passed_ + failed_ + skipped_; }
  void end_group() {
    if (group_.empty() || tty_) return;
    std::printf("check: %s: %zu checks, %zu failed (%zu/%zu)\n", group_.c_str(), done() - group_start_,
                failed_ - group_failed_, done(), total_);
    std::fflush(stdout);
  }
  void draw(bool force) {
    if (!tty_) return;
    const auto now = Clock::now();
    if (!force && done() != total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    std::string line = strf("check: %s  %zu/%zu", group_.c_str(), done(), total_);
    if (failed_) line += strf(", %zu failed", failed_);
    const std::size_t width = line.size();
    line.resize(std::max(width, line_width_), ' ');  // overwrite what a longer line left
    std::printf("\r%s", line.c_str());
    std::fflush(stdout);
    line_width_ = width;
  }
  void clear() {
    if (!tty_ || line_width_ == 0) return;
    std::printf("\r%s\r", std::string(line_width_, ' ').c_str());
    line_width_ = 0;
  }

  std::size_t total_, passed_ = 0, failed_ = 0, skipped_ = 0;
  bool tty_;
  std::string group_;
  std::size_t group_start_ = 0, group_failed_ = 0, line_width_ = 0;
  Clock::time_point last_draw_{};
};

// The CPU serial kernel's results: the comparison for every other kernel.
template <class T>
struct SerialResults {
  tandem::sum_result_t<T> sum{};
  T min{}, max{};
  std::size_t argmin = 0, argmax = 0;
};

template <class T>
void check_reduce_kernel(CheckLog& log, const Engine& eng, tandem::BufferView<T> view, const tandem::KernelInfo& kernel,
                         Op op, const tandem_test::ReduceReference<T>& ref, const SerialResults<T>& serial,
                         const std::string& label) {
  const tandem::ReduceOptions opts{kernel.name};
  const bool takes = kernel.accepts(tandem::dtype_of<T>) && kernel.accepts(op);
  try {
    if (!takes || (ref.count == 0 && op != Op::sum)) {
      (void)(op == Op::sum      ? double(eng.sum(view, opts))
             : op == Op::min    ? double(eng.min(view, opts))
             : op == Op::max    ? double(eng.max(view, opts))
             : op == Op::argmin ? double(eng.argmin(view, opts))
                                : double(eng.argmax(view, opts)));
      log.fail(label + (takes ? ": returned a value for an empty input; expected tandem::Error"
                              : ": ran although its KernelInfo does not list it; expected tandem::Error"));
      return;
    }
    tandem_test::Judgement j;
    bool same_as_serial = true;
    std::string got, serial_value;
    if (op == Op::sum) {
      const auto s = eng.sum(view, opts);
      j = tandem_test::judge_sum<T>(s, ref);
      if constexpr (std::is_integral_v<T>) same_as_serial = s == serial.sum;  // float sums: the bound only
      got = show(s), serial_value = show(serial.sum);
    } else if (tandem::is_arg(op)) {
      const std::size_t i = op == Op::argmin ? eng.argmin(view, opts) : eng.argmax(view, opts);
      const std::size_t s = op == Op::argmin ? serial.argmin : serial.argmax;
      j = tandem_test::judge_index(i, op == Op::argmin ? ref.argmin() : ref.argmax());
      same_as_serial = i == s;
      got = show(i), serial_value = show(s);
    } else {
      const T v = op == Op::min ? eng.min(view, opts) : eng.max(view, opts);
      const T s = op == Op::min ? serial.min : serial.max;
      j = tandem_test::judge_extreme(v, op == Op::min ? ref.min() : ref.max());
      same_as_serial = tandem_test::same_bits(v, s);
      got = show(v), serial_value = show(s);
    }
    if (j.ok && same_as_serial) return log.pass();
    log.fail(label + ": got " + got + (j.ok ? "" : ", reference " + j.expected) +
             (same_as_serial ? "" : ", cpu serial " + serial_value));
  } catch (const tandem::Error& e) {
    if (!takes) return log.skip();                           // refused, as its KernelInfo says
    if (ref.count == 0 && op != Op::sum) return log.pass();  // documented: undefined for an empty input
    log.fail(label + ": tandem::Error: " + e.what());
  }
}

template <class T>
void check_reduce(CheckLog& log, const Engine& cpu, const std::vector<Engine>& targets,
                  const std::vector<ReduceCase>& cases) {
  log.group(std::string("reduce ") + type_name<T>());
  for (const ReduceCase& c : cases) {
    std::vector<T> host(c.n == 0 ? 0 : (c.n - 1) * c.stride + 1);
    tandem_test::SplitMix64 g{c.n * 1000003 + c.stride};
    tandem_test::fill<T>(host, g, tandem_test::Values::full_range);
    const auto ref = tandem_test::reduce_reference(host.data(), c.n, c.stride);

    const tandem::StridedView<T> host_view{host.data(), c.n, c.stride};
    SerialResults<T> serial;
    serial.sum = cpu.sum(host_view, {"serial"});
    if (c.n > 0) {
      serial.min = cpu.min(host_view, {"serial"}), serial.max = cpu.max(host_view, {"serial"});
      serial.argmin = cpu.argmin(host_view, {"serial"}), serial.argmax = cpu.argmax(host_view, {"serial"});
    }

    for (const Engine& eng : targets) {
      const tandem::Buffer<T> buf = eng.upload<T>(host);
      for (const tandem::KernelInfo& kernel : eng.reduce_kernel_info())
        for (Op op : kCheckOps)
          check_reduce_kernel(log, eng, buf.view(0, c.n, c.stride), kernel, op, ref, serial,
                              strf("%s %s %s %s n=%zu stride=%zu", tandem::to_string(eng.backend()),
                                   kernel.name.c_str(), type_name<T>(), tandem::to_string(op), c.n, c.stride));
    }
  }
}

// Per-row / per-column reductions (kernel auto): small integers, so every sum is exact in any order; each
// row and column against the reference of that vector, deterministic float sums against the canonical order.
template <class T>
void check_per(CheckLog& log, const std::vector<Engine>& targets) {
  using tandem::Per;
  log.group(std::string("per row/col ") + type_name<T>());
  for (const PerShape& s : kPerShapes) {
    tandem_test::SplitMix64 g{s.rows * 7919 + s.cols};
    const std::vector<T> m = tandem_test::random_vector<T>(s.rows * s.cols, g, tandem_test::Values::small_integers);
    const tandem::MatrixView<const T> view{m.data(), s.rows, s.cols, s.cols};
    for (const Engine& eng : targets)
      for (Per per : {Per::row, Per::col})
        for (Op op : kCheckOps) {
          const std::size_t count = per == Per::row ? s.rows : s.cols;
          std::vector<tandem::sum_result_t<T>> sums(count), canonical(count), det(count);
          std::vector<T> values(count);
          std::vector<std::size_t> index(count);
          if (op == Op::sum) eng.sum(view, per, sums);
          if (op == Op::min || op == Op::max) (op == Op::min ? eng.min(view, per, values) : eng.max(view, per, values));
          if (tandem::is_arg(op)) (op == Op::argmin ? eng.argmin(view, per, index) : eng.argmax(view, per, index));
          if constexpr (std::is_floating_point_v<T>)
            if (op == Op::sum) eng.sum(view, per, det, {"auto", true});
          std::size_t bad = 0;
          for (std::size_t v = 0; v < count; ++v) {
            std::vector<T> x;
            for (std::size_t k = 0; k < (per == Per::row ? s.cols : s.rows); ++k)
              x.push_back(per == Per::row ? m[v * s.cols + k] : m[k * s.cols + v]);
            const auto ref = tandem_test::reduce_reference<T>(x);
            if constexpr (std::is_floating_point_v<T>)
              bad += op == Op::sum && !tandem_test::same_bits(det[v], tandem_test::canonical_sum<T>(x));
            bad += op == Op::sum      ? !tandem_test::same_bits(sums[v], ref.sum_result())
                   : op == Op::min    ? !tandem_test::same_bits(values[v], ref.min())
                   : op == Op::max    ? !tandem_test::same_bits(values[v], ref.max())
                   : op == Op::argmin ? index[v] != ref.argmin()
                                      : index[v] != ref.argmax();
          }
          const std::string label = strf("%s %s per %s %s %zux%zu", tandem::to_string(eng.backend()), type_name<T>(),
                                         tandem::to_string(per), tandem::to_string(op), s.rows, s.cols);
          if (bad == 0)
            log.pass();
          else
            log.fail(label + strf(": %zu of %zu results differ from the reference", bad, count));
        }
  }
}

template <class T>
void check_matmul(CheckLog& log, const std::vector<Engine>& targets) {
  log.group(std::string("matmul ") + type_name<T>());
  for (const MatmulShape& s : kCheckShapes) {
    tandem_test::SplitMix64 g{s.m * 1000 + s.k * 100 + s.n};
    std::vector<T> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n);
    tandem_test::fill<T>(a, g);
    tandem_test::fill<T>(b, g);
    const auto ref = tandem_test::matmul_reference<T>({a.data(), s.m, s.k, s.k}, {b.data(), s.k, s.n, s.n});
    for (const Engine& eng : targets) {
      const tandem::Buffer<T> da = eng.upload<T>(a), db = eng.upload<T>(b);
      tandem::Buffer<T> dc = eng.buffer<T>(c.size());
      for (const tandem::KernelInfo& kernel : eng.matmul_kernel_info()) {
        const std::string label = strf("%s %s %s matmul %zux%zux%zu", tandem::to_string(eng.backend()),
                                       kernel.name.c_str(), type_name<T>(), s.m, s.k, s.n);
        const bool takes = kernel.accepts(tandem::dtype_of<T>);
        try {
          std::fill(c.begin(), c.end(), std::numeric_limits<T>::quiet_NaN());
          dc.upload(c);
          eng.matmul(da.matrix(s.m, s.k), db.matrix(s.k, s.n), dc.matrix(s.m, s.n), {kernel.name});
          dc.download(c);
        } catch (const tandem::Error& e) {
          if (!takes)
            log.skip();  // refused, as its KernelInfo says
          else
            log.fail(label + ": tandem::Error: " + e.what());
          continue;
        }
        if (!takes) {
          log.fail(label + ": ran although its KernelInfo does not list the dtype; expected tandem::Error");
          continue;
        }
        const auto v = tandem_test::verify_matmul<T>({c.data(), s.m, s.n, s.n}, ref, kernel.precision);
        if (v.ok())
          log.pass();
        else
          log.fail(label + ": " + v.problem() + strf(" (max err/bound %.3g)", v.worst));
      }
    }
  }
}

// The GEMM forms (transposes, alpha/beta, batches; MatmulOptions): every kernel of every target within
// the bound of the reference, and deterministic mode bitwise equal across the targets (the first
// target's result is the comparison).
struct FormCase {
  bool ta, tb;
  double alpha, beta;
};
constexpr FormCase kForms[] = {
    {true, false, 1, 0}, {false, true, -2, 0}, {true, true, 0.5, 1.5}, {false, false, 3, -1}};
constexpr std::size_t kFormM = 33, kFormK = 65, kFormN = 17, kFormBatch = 3;

template <class T>
void check_matmul_forms(CheckLog& log, const std::vector<Engine>& targets) {
  log.group(std::string("matmul forms ") + type_name<T>());
  const std::size_t m = kFormM, k = kFormK, n = kFormN, batch = kFormBatch;
  for (const FormCase& f : kForms) {
    tandem_test::SplitMix64 g{std::uint64_t(17 + f.ta + 2 * f.tb)};
    std::vector<T> a(m * k * batch), b(k * n * batch), c0(m * n * batch);
    tandem_test::fill<T>(a, g), tandem_test::fill<T>(b, g), tandem_test::fill<T>(c0, g);
    // Stored shapes: A is k x m when transposed, B n x k; entries packed one after another.
    const std::size_t ar = f.ta ? k : m, ac = f.ta ? m : k, br = f.tb ? n : k, bc = f.tb ? k : n;
    // Reference per entry from op(A), op(B) packed, then alpha * product + beta * C0.
    // Bound: |alpha| S ((2K + 8) u + 2 c_in) + 4 u |beta C0|, S = sum |op(A) op(B)| (c_in: the kernel's
    // input rounding, tf32 / bf16).
    std::vector<long double> ref(c0.size()), scaled_abs(c0.size()), beta_part(c0.size());
    for (std::size_t e = 0; e < batch; ++e) {
      std::vector<T> opa(m * k), opb(k * n);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t q = 0; q < k; ++q) opa[i * k + q] = a[e * m * k + (f.ta ? q * ac + i : i * ac + q)];
      for (std::size_t q = 0; q < k; ++q)
        for (std::size_t j = 0; j < n; ++j) opb[q * n + j] = b[e * k * n + (f.tb ? j * bc + q : q * bc + j)];
      const auto r = tandem_test::matmul_reference<T>({opa.data(), m, k, k}, {opb.data(), k, n, n});
      for (std::size_t x = 0; x < m * n; ++x) {
        const long double old = c0[e * m * n + x], al = (long double)T(f.alpha), be = (long double)T(f.beta);
        ref[e * m * n + x] = al * (long double)r.value[x] + be * old;
        scaled_abs[e * m * n + x] = std::fabs(al) * r.abs[x];
        beta_part[e * m * n + x] = 4 * tandem_test::unit_roundoff<T>() * std::fabs(be * old);
      }
    }
    std::vector<T> first_bits;
    for (const Engine& eng : targets) {
      const tandem::Buffer<T> da = eng.upload<T>(a), db = eng.upload<T>(b);
      for (const tandem::KernelInfo& kernel : eng.matmul_kernel_info()) {
        for (bool det : {false, true}) {
          if (det && kernel.name != "auto") continue;
          const std::string label =
              strf("%s %s %s matmul forms trans %d%d alpha %g beta %g%s", tandem::to_string(eng.backend()),
                   kernel.name.c_str(), type_name<T>(), f.ta, f.tb, f.alpha, f.beta, det ? " deterministic" : "");
          if (!kernel.accepts(tandem::dtype_of<T>)) {
            log.skip();
            continue;
          }
          tandem::Buffer<T> dc = eng.upload<T>(c0);
          tandem::MatmulOptions opts{kernel.name, det, f.ta, f.tb, f.alpha, f.beta};
          std::vector<T> c;
          try {
            eng.matmul(da.batch(ar, ac, batch, ar * ac), db.batch(br, bc, batch, br * bc), dc.batch(m, n, batch, m * n),
                       opts);
            c = dc.to_vector();
          } catch (const tandem::Error& e) {
            log.fail(label + ": tandem::Error: " + e.what());
            continue;
          }
          const long double factor =
              (2 * k + 8) * tandem_test::unit_roundoff<T>() + 2 * tandem_test::input_rounding(kernel.precision);
          std::size_t bad = 0;
          for (std::size_t x = 0; x < c.size(); ++x)
            bad += !(std::fabs((long double)c[x] - ref[x]) <= factor * scaled_abs[x] + beta_part[x]);
          if (bad) {
            log.fail(label + strf(": %zu of %zu elements outside the bound", bad, c.size()));
            continue;
          }
          if (det && first_bits.empty()) first_bits = c;
          std::size_t differ = 0;
          if (det)
            for (std::size_t x = 0; x < c.size(); ++x) differ += !tandem_test::same_bits(c[x], first_bits[x]);
          if (differ)
            log.fail(label + strf(": %zu elements differ in their bits from the %s engine's", differ,
                                  tandem::to_string(targets[0].backend())));
          else
            log.pass();
        }
      }
    }
  }
}

// The 16-bit storage types (bfloat16, float16): every reduce kernel that lists the dtype against the
// reference of the converted floats (sum within the bound, min and argmax exactly), deterministic sums
// against the canonical order of the floats, and the deterministic product of 16-bit A and B bitwise
// equal to the fma chain on the floats; kernel auto's product within the bound of the reference.
constexpr std::size_t kFloat16Sizes[] = {1, 4097, 65537};
constexpr std::size_t kFloat16Shape[] = {33, 65, 17};  // m, k, n

std::size_t float16_checks(const Engine& eng, tandem::Dtype d) {
  std::size_t kernels = 0;
  for (const auto& k : eng.reduce_kernel_info()) kernels += k.accepts(d);
  return std::size(kFloat16Sizes) * (3 * kernels + 1) + 2;
}

template <class H>
void check_float16(CheckLog& log, const std::vector<Engine>& targets) {
  const char* name = tandem::dtype_traits<H>::name;
  log.group(std::string("16-bit ") + name);
  auto result = [&](bool ok, const std::string& what) { ok ? log.pass() : log.fail(what); };
  auto random16 = [](std::size_t n, std::uint64_t seed) { return tandem_test::random_vector<H>(n, seed); };
  for (std::size_t n : kFloat16Sizes) {
    const std::vector<H> x = random16(n, n);
    const std::vector<float> xf(x.begin(), x.end());
    const auto ref = tandem_test::reduce_reference<float>(xf);
    const float canonical = tandem_test::canonical_sum<float>(xf);
    for (const Engine& eng : targets) {
      const std::string at = strf("%s %s n=%zu", tandem::to_string(eng.backend()), name, n);
      for (const auto& k : eng.reduce_kernel_info()) {
        if (!k.accepts(tandem::dtype_of<H>)) continue;
        const tandem::ReduceOptions o{k.name};
        result(tandem_test::judge_sum<float>(eng.sum(std::span<const H>(x), o), ref).ok, at + " sum " + k.name);
        result(tandem_test::same_bits(eng.min(std::span<const H>(x), o), ref.min()), at + " min " + k.name);
        result(!k.accepts(Op::argmax) || eng.argmax(std::span<const H>(x), o) == ref.argmax(),
               at + " argmax " + k.name);
      }
      result(tandem_test::same_bits(eng.sum(std::span<const H>(x), {"auto", true}), canonical),
             at + " deterministic sum: not the canonical order of the floats");
    }
  }
  const std::size_t m = kFloat16Shape[0], k = kFloat16Shape[1], n = kFloat16Shape[2];
  const std::vector<H> a = random16(m * k, 3), b = random16(k * n, 4);
  const std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
  std::vector<float> want(m * n), c(m * n);
  tandem_test::fma_chain_matmul<float>({af.data(), m, k, k}, {bf.data(), k, n, n}, {want.data(), m, n, n});
  const auto ref = tandem_test::matmul_reference<float>({af.data(), m, k, k}, {bf.data(), k, n, n}, {});
  for (const Engine& eng : targets) {
    const std::string at = strf("%s %s matmul %zux%zux%zu", tandem::to_string(eng.backend()), name, m, k, n);
    eng.matmul<H>({a.data(), m, k, k}, {b.data(), k, n, n}, {c.data(), m, n, n});
    const auto v = tandem_test::verify_matmul<float>({c.data(), m, n, n}, ref, tandem::Precision::full);
    result(v.ok(), at + ": " + v.problem());
    eng.matmul<H>({a.data(), m, k, k}, {b.data(), k, n, n}, {c.data(), m, n, n}, {"auto", true});
    result(tandem_test::same_bits(std::span<const float>(c), std::span<const float>(want)),
           at + " deterministic: not the fma chain on the floats");
  }
}

int cmd_check(const Options& o) {
  const std::string backend = backend_option(o);
  const bool quick = o.has("--quick");

  // The CPU engine always runs: its serial kernel is the comparison for every other kernel.
  const Engine cpu(tandem::Backend::cpu);
  std::vector<Engine> targets;
  std::vector<std::string> not_run;
  if (backend.empty()) {
    for (const auto& s : tandem::backend_status()) {
      if (s.backend == tandem::Backend::cpu)
        targets.push_back(cpu);
      else if (s.usable)
        targets.emplace_back(s.backend);
      else
        not_run.push_back(std::string(tandem::to_string(s.backend)) + " not run: " + describe(s));
    }
  } else {
    targets.push_back(make_engine(backend));
    for (const auto& s : tandem::backend_status()) {
      if (s.backend == targets[0].backend()) continue;
      not_run.push_back(s.backend == tandem::Backend::cpu
                            ? "cpu kernels not checked (--backend " + backend + "); its serial kernel is the comparison"
                            : strf("%s not run: --backend %s", tandem::to_string(s.backend), backend.c_str()));
    }
  }

  const std::vector<ReduceCase> cases = reduce_cases(quick);
  std::size_t total = 0;
  for (const Engine& eng : targets) {
    std::printf("check: %s (%s): reduce kernels %s; matmul kernels %s\n", tandem::to_string(eng.backend()),
                eng.device().name.c_str(), join(eng.reduce_kernels()).c_str(), join(eng.matmul_kernels()).c_str());
    const std::size_t full_types = 4;  // int32, int64, float, double; the 16-bit types: float16_checks
    total += cases.size() * full_types * std::size(kCheckOps) * eng.reduce_kernels().size();
    total += float16_checks(eng, tandem::Dtype::bf16) + float16_checks(eng, tandem::Dtype::f16);
    total += std::size(kCheckShapes) * 2 * eng.matmul_kernels().size();
    total += std::size(kForms) * 2 * (eng.matmul_kernels().size() + 1);
    total += std::size(kPerShapes) * 2 * std::size(kCheckOps) * full_types;
  }
  for (const auto& line : not_run) std::printf("check: %s\n", line.c_str());
  std::vector<std::string> sizes;
  for (const ReduceCase& c : cases)
    sizes.push_back(c.stride == 1 ? std::to_string(c.n) : strf("%zu/%zu", c.n, c.stride));
  std::printf("check: reduce sizes (n or n/stride) %s\n", join(sizes, " ").c_str());
  std::fflush(stdout);

  CheckLog log(total);
  check_reduce<std::int32_t>(log, cpu, targets, cases);
  check_reduce<std::int64_t>(log, cpu, targets, cases);
  check_reduce<float>(log, cpu, targets, cases);
  check_reduce<double>(log, cpu, targets, cases);
  check_per<std::int32_t>(log, targets);
  check_per<std::int64_t>(log, targets);
  check_per<float>(log, targets);
  check_per<double>(log, targets);
  check_matmul<float>(log, targets);
  check_matmul<double>(log, targets);
  check_matmul_forms<float>(log, targets);
  check_matmul_forms<double>(log, targets);
  check_float16<tandem::bfloat16>(log, targets);
  check_float16<tandem::half>(log, targets);
  log.finish(not_run);
  return log.ok() ? 0 : 1;
}

}  // namespace

const Command check_command = {"check",     "every kernel of every usable backend over odd sizes, against references",
                               kCheckHelp,  {"--backend"},
                               {"--quick"}, cmd_check};

}  // namespace tandem_cli
