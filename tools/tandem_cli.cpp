// tandem: the command-line tool.
//
//   tandem info     the backends compiled in, which one auto picks and why, devices and kernel names
//   tandem reduce   one reduction with each chosen kernel: verified, then timed
//   tandem matmul   one matrix product with each chosen kernel: verified, then timed
//   tandem check    every kernel of every usable backend over sizes that miss every block
//
// Every result is verified against a reference computed here, independently of the library: plain
// serial loops in wider types (the same references and bounds as tests/test_reduce.cpp and
// tests/test_matmul.cpp). Only the public API is used, so the tool runs unchanged whichever backends
// are compiled in. Exit status: 0 when everything ran and verified, 1 when a check failed or the
// library threw tandem::Error, 2 for a bad command line.
#include <unistd.h>  // isatty

#include <algorithm>
#include <bit>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "tandem/tandem.hpp"

namespace {

// The pseudo-kernel name that runs "auto" in deterministic mode (the canonical order).
constexpr const char* kDeterministic = "deterministic";


using tandem::Backend;
using tandem::Engine;
using Clock = std::chrono::steady_clock;

// A bad command line: "tandem: <what>; see 'tandem <cmd> --help'" on stderr and exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---- formatting ----------------------------------------------------------------------------------

template <class... Args>
std::string strf(const char* format, Args... args) {
  const int len = std::snprintf(nullptr, 0, format, args...);
  std::string s(std::size_t(std::max(len, 0)), '\0');
  std::snprintf(s.data(), s.size() + 1, format, args...);
  return s;
}

std::string join(const std::vector<std::string>& items, const char* separator = ", ") {
  std::string s;
  for (const auto& item : items) s += (s.empty() ? "" : separator) + item;
  return s;
}

std::string format_seconds(double s) {
  if (s < 1e-5) return strf("%.2f µs", s * 1e6);
  if (s < 1e-3) return strf("%.1f µs", s * 1e6);
  if (s < 1) return strf("%.2f ms", s * 1e3);
  return strf("%.3f s", s);
}

// "16777216 (2^24)" for powers of two, else the number.
std::string format_count(std::uint64_t n) {
  if (n >= 1024 && (n & (n - 1)) == 0) return strf("%llu (2^%d)", (unsigned long long)n, std::countr_zero(n));
  return std::to_string(n);
}

template <class V>
std::string format_value(V v) {
  if constexpr (std::is_integral_v<V>)
    return std::to_string(v);
  else if constexpr (std::is_same_v<V, float>)
    return strf("%.9g", double(v));
  else
    return strf("%.17g", double(v));
}

std::string format_error(long double e) { return e == 0 ? "0" : strf("%.3Lg", e); }

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T>
constexpr const char* dtype_name() {
  if constexpr (std::is_same_v<T, float>)
    return "float";
  else if constexpr (std::is_same_v<T, double>)
    return "double";
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return "int32";
  else
    return "int64";
}

// Characters on screen: UTF-8 continuation bytes take no column.
std::size_t display_width(std::string_view s) {
  return std::size_t(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// A table of fixed-width columns, printed a row at a time as results come in.
class Table {
 public:
  struct Column {
    std::string title;
    std::size_t width;
    bool left = false;  // text left-aligned, numbers right-aligned
  };
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {
    for (auto& c : columns_) c.width = std::max(c.width, display_width(c.title));
  }

  void header() const {
    std::vector<std::string> titles, rules;
    for (const auto& c : columns_) {
      titles.push_back(c.title);
      rules.push_back(std::string(c.width, '-'));
    }
    row(titles);
    row(rules);
  }
  void row(const std::vector<std::string>& cells) const {
    std::string line;
    for (std::size_t i = 0; i < columns_.size() && i < cells.size(); ++i) {
      const std::size_t w = display_width(cells[i]);
      const std::string fill(columns_[i].width > w ? columns_[i].width - w : 0, ' ');
      if (i > 0) line += "  ";
      line += columns_[i].left ? cells[i] + fill : fill + cells[i];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

 private:
  std::vector<Column> columns_;
};

std::size_t longest(const std::vector<std::string>& names, std::size_t at_least) {
  for (const auto& n : names) at_least = std::max(at_least, n.size());
  return at_least;
}

// ---- command-line options ------------------------------------------------------------------------

// The options of one command: "--name value", "--name=value", or a flag "--name"; each at most once.
class Options {
 public:
  Options(std::span<const std::string_view> args, std::span<const std::string_view> valued,
          std::span<const std::string_view> flags) {
    auto known = [](std::span<const std::string_view> names, std::string_view n) {
      return std::find(names.begin(), names.end(), n) != names.end();
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string_view arg = args[i];
      if (!arg.starts_with("--")) throw UsageError("unexpected argument '" + std::string(arg) + "'");
      const std::size_t eq = arg.find('=');
      const std::string name(arg.substr(0, eq));
      const bool takes_value = known(valued, name);
      if (!takes_value && !known(flags, name)) throw UsageError("unknown option '" + name + "'");
      std::string value;
      if (eq != std::string_view::npos) {
        if (!takes_value) throw UsageError(name + " takes no value");
        value = arg.substr(eq + 1);
      } else if (takes_value) {
        if (i + 1 == args.size()) throw UsageError(name + " needs a value");
        value = args[++i];
      }
      if (!values_.emplace(name, value).second) throw UsageError(name + " is given twice");
    }
  }

  const std::string* get(std::string_view name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  bool has(std::string_view name) const { return values_.find(name) != values_.end(); }

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

std::optional<std::uint64_t> parse_digits(std::string_view s) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

bool multiply(std::uint64_t& v, std::uint64_t by) {
  if (by != 0 && v > std::numeric_limits<std::uint64_t>::max() / by) return false;
  v *= by;
  return true;
}

// A count written as 134217728, 1e6 (or 1.5e6) or 2^27.
std::optional<std::uint64_t> parse_count(std::string_view s) {
  if (auto caret = s.find('^'); caret != std::string_view::npos) {
    auto base = parse_digits(s.substr(0, caret)), exponent = parse_digits(s.substr(caret + 1));
    if (!base || !exponent) return std::nullopt;
    if (*base <= 1) return *exponent == 0 ? 1 : *base;
    std::uint64_t v = 1;
    for (std::uint64_t i = 0; i < *exponent; ++i)
      if (!multiply(v, *base)) return std::nullopt;
    return v;
  }
  if (auto e = s.find_first_of("eE"); e != std::string_view::npos) {
    std::string mantissa(s.substr(0, e));
    std::uint64_t fraction_digits = 0;
    if (auto dot = mantissa.find('.'); dot != std::string::npos) {
      fraction_digits = mantissa.size() - dot - 1;
      mantissa.erase(dot, 1);
    }
    auto m = parse_digits(mantissa), exponent = parse_digits(s.substr(e + 1));
    if (!m || !exponent) return std::nullopt;
    std::uint64_t v = *m;
    while (fraction_digits > 0 && v % 10 == 0) v /= 10, --fraction_digits;
    if (*exponent < fraction_digits) return std::nullopt;  // not a whole number
    if (v == 0) return 0;
    for (std::uint64_t i = fraction_digits; i < *exponent; ++i)
      if (!multiply(v, 10)) return std::nullopt;
    return v;
  }
  return parse_digits(s);
}

std::uint64_t count_option(const Options& o, std::string_view name, std::uint64_t fallback,
                           std::uint64_t at_least = 0) {
  const std::string* text = o.get(name);
  if (!text) return fallback;
  const auto v = parse_count(*text);
  if (!v) throw UsageError(std::string(name) + ": '" + *text + "' is not a count; write e.g. 1000000, 1e6 or 2^20");
  if (*v < at_least)
    throw UsageError(std::string(name) + " must be at least " + std::to_string(at_least) + " (got " + *text + ")");
  return *v;
}

std::string choice_option(const Options& o, std::string_view name, const std::vector<std::string>& allowed,
                          std::string fallback) {
  const std::string* text = o.get(name);
  if (!text) return fallback;
  if (std::find(allowed.begin(), allowed.end(), *text) == allowed.end())
    throw UsageError(std::string(name) + ": '" + *text + "' is not one of " + join(allowed));
  return *text;
}

// --backend cpu|cuda|auto; "" when absent (then Engine() reads TANDEM_BACKEND).
std::string backend_option(const Options& o) { return choice_option(o, "--backend", {"cpu", "cuda", "auto"}, ""); }

Engine make_engine(const std::string& backend) {
  if (backend == "cpu") return Engine(Backend::cpu);
  if (backend == "cuda") return Engine(Backend::cuda);
  if (backend == "auto") return Engine(tandem::auto_backend().backend);
  return Engine();
}

// ---- data and references -------------------------------------------------------------------------

// SplitMix64: a small generator whose stream is the same on every platform (std:: distributions are not).
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

// Floats uniform in [-1, 1) (every value exact in T). Integers uniform in [-2^20, 2^20) for int32 and
// [-2^40, 2^40) for int64 (readable sums), or over the whole type (`full_range`: sums that wrap).
template <class T>
void fill_random(std::span<T> out, SplitMix64& g, bool full_range = false) {
  for (T& x : out) {
    const std::uint64_t bits = g.next();
    if constexpr (std::is_same_v<T, float>)
      x = float(bits >> 40) * 0x1p-23f - 1.0f;
    else if constexpr (std::is_same_v<T, double>)
      x = double(bits >> 11) * 0x1p-52 - 1.0;
    else if (full_range)
      x = static_cast<T>(bits);
    else if constexpr (sizeof(T) == 4)
      x = T(std::int64_t(bits >> 43) - (std::int64_t(1) << 20));
    else
      x = T(std::int64_t(bits >> 23) - (std::int64_t(1) << 40));
  }
}

// The independent reduce reference, fed one element at a time: a uint64 wrapping loop for integer
// sums, a long double loop for float sums, and min/max loops (-0.0 below +0.0, as the library).
template <class T>
struct ReduceReference {
  std::size_t count = 0;
  std::uint64_t wrapped_sum = 0;
  long double sum = 0, abs_sum = 0;
  T min{}, max{};

  void add(T v) {
    if constexpr (std::is_integral_v<T>) wrapped_sum += std::uint64_t(std::int64_t(v));
    sum += v;
    abs_sum += std::fabs((long double)v);
    if (count == 0 || v < min || (v == min && std::signbit(double(v)))) min = v;
    if (count == 0 || v > max || (v == max && !std::signbit(double(v)))) max = v;
    ++count;
  }
  // Float sums: |result - sum| <= 8 u sum|x|, u the unit roundoff of T.
  long double sum_bound() const { return 8 * (long double)(std::numeric_limits<T>::epsilon() / 2) * abs_sum; }
};

struct Judgement {
  bool ok;
  long double error;     // |result - expected|
  std::string expected;  // filled when !ok, for the message
};

template <class T>
Judgement judge_sum(tandem::sum_result_t<T> s, const ReduceReference<T>& r) {
  if constexpr (std::is_integral_v<T>) {
    const std::int64_t expect = std::int64_t(r.wrapped_sum);
    const bool ok = s == expect;
    return {ok, std::fabs((long double)s - (long double)expect), ok ? "" : std::to_string(expect)};
  } else {
    const long double err = std::fabs((long double)s - r.sum);
    const bool ok = err <= r.sum_bound();
    return {ok, err, ok ? "" : strf("%.17Lg +- %.3Lg", r.sum, r.sum_bound())};
  }
}

template <class T>
Judgement judge_extreme(T got, T expect) {
  const bool ok = same_bits(got, expect);
  return {ok, std::fabs((long double)got - (long double)expect), ok ? "" : format_value(expect) + " (bit for bit)"};
}

// mean is double(sum) / n: exact for integers, the float sum's bound / n for floats.
template <class T>
Judgement judge_mean(double m, const ReduceReference<T>& r) {
  if constexpr (std::is_integral_v<T>) {
    const double expect = double(std::int64_t(r.wrapped_sum)) / double(r.count);
    const bool ok = same_bits(m, expect);
    return {ok, std::fabs((long double)m - expect), ok ? "" : format_value(expect)};
  } else {
    const long double expect = r.sum / r.count;
    const long double bound =
        (r.sum_bound() + std::fabs(r.sum) * std::numeric_limits<double>::epsilon()) / (long double)r.count;
    const long double err = std::fabs((long double)m - expect);
    const bool ok = err <= bound;
    return {ok, err, ok ? "" : strf("%.17Lg +- %.3Lg", expect, bound)};
  }
}

// Runs f(begin, end) over [0, rows) in one block per hardware thread.
template <class F>
void parallel_rows(std::size_t rows, F f) {
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 64);
  const std::size_t block = (rows + threads - 1) / std::max<std::size_t>(threads, 1);
  std::vector<std::thread> pool;
  for (std::size_t begin = 0; begin < rows; begin += block)
    pool.emplace_back([=] { f(begin, std::min(rows, begin + block)); });
  for (auto& t : pool) t.join();
}

// The matmul reference for the elements of C that are checked: sum_k a_ik b_kj accumulated in double
// for float inputs and long double for double inputs, and sum_k |a_ik b_kj| (it only scales the bound,
// so double is precise enough).
template <class T>
struct MatmulReference {
  using Acc = std::conditional_t<std::is_same_v<T, float>, double, long double>;
  std::vector<std::size_t> sample;  // indices i*n + j of the checked elements; empty: every element
  std::vector<Acc> value;           // one per checked element
  std::vector<double> abs;
};

// A full reference up to 2^30 multiply-adds (and 2^24 elements of C, to bound its memory); above
// that, 512 random elements of C (and its corners), each a long double dot product.
template <class T>
MatmulReference<T> matmul_reference(const std::vector<T>& a, const std::vector<T>& b, std::size_t m, std::size_t k,
                                    std::size_t n, std::uint64_t seed) {
  using Acc = typename MatmulReference<T>::Acc;
  MatmulReference<T> ref;
  if (double(m) * double(n) * double(k) <= 0x1p30 && double(m) * double(n) <= 0x1p24) {
    ref.value.assign(m * n, 0);
    ref.abs.assign(m * n, 0);
    // long double: dot products with B transposed, in registers (x87 loads and stores of C are slow).
    std::vector<T> bt;
    if constexpr (std::is_same_v<Acc, long double>) {
      bt.resize(k * n);
      for (std::size_t p = 0; p < k; ++p)
        for (std::size_t j = 0; j < n; ++j) bt[j * k + p] = b[p * n + j];
    }
    parallel_rows(m, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        const T* arow = a.data() + i * k;
        Acc* value = ref.value.data() + i * n;
        double* abs = ref.abs.data() + i * n;
        for (std::size_t p = 0; p < k; ++p) {
          const T* brow = b.data() + p * n;
          if constexpr (std::is_same_v<Acc, double>)
            for (std::size_t j = 0; j < n; ++j) value[j] += double(arow[p]) * double(brow[j]);
          const double abs_a = std::fabs(double(arow[p]));
          for (std::size_t j = 0; j < n; ++j) abs[j] += abs_a * std::fabs(double(brow[j]));
        }
        if constexpr (std::is_same_v<Acc, long double>) {
          for (std::size_t j = 0; j < n; ++j) {
            const T* bcol = bt.data() + j * k;
            long double even = 0, odd = 0;  // two chains hide the x87 add latency
            std::size_t p = 0;
            for (; p + 1 < k; p += 2) {
              even += (long double)arow[p] * bcol[p];
              odd += (long double)arow[p + 1] * bcol[p + 1];
            }
            if (p < k) even += (long double)arow[p] * bcol[p];
            value[j] = even + odd;
          }
        }
      }
    });
    return ref;
  }
  SplitMix64 g{seed ^ 0x5A5A5A5A5A5A5A5Aull};
  ref.sample = {0, n - 1, (m - 1) * n, m * n - 1};
  while (ref.sample.size() < 516) {
    const std::size_t i = g.next() % m, j = g.next() % n;
    ref.sample.push_back(i * n + j);
  }
  for (std::size_t idx : ref.sample) {
    const std::size_t i = idx / n, j = idx % n;
    long double value = 0, abs = 0;
    for (std::size_t p = 0; p < k; ++p) {
      const long double prod = (long double)a[i * k + p] * b[p * n + j];
      value += prod;
      abs += std::fabs(prod);
    }
    ref.value.push_back(Acc(value));
    ref.abs.push_back(double(abs));
  }
  return ref;
}

// Kernels that round their inputs (tensor cores): their names say so. They take float only.
long double input_rounding(const std::string& kernel) {
  if (kernel.find("tf32") != std::string::npos) return std::ldexp(1.0L, -9);
  if (kernel.find("bf16") != std::string::npos) return std::ldexp(1.0L, -6);
  return 0;
}

struct MatmulVerdict {
  double worst = 0;  // max over the checked elements of |error| / bound
  std::size_t checked = 0, outside = 0, not_finite = 0;
  bool ok() const { return outside == 0 && not_finite == 0; }
  std::string problem() const {
    std::string s = strf("%zu of %zu checked elements outside the bound", outside, checked);
    if (not_finite) s += strf("; %zu elements of C not finite (never written?)", not_finite);
    return s;
  }
};

// |C - ref| <= (c_in + 2 K u) sum_k |a_ik b_kj| per checked element; every element of C must be finite
// (C starts as NaN, so this also catches elements a kernel never wrote when only a sample is checked).
template <class T>
MatmulVerdict verify_matmul(const std::vector<T>& c, const MatmulReference<T>& ref, std::size_t k,
                            const std::string& kernel) {
  const long double u = std::numeric_limits<T>::epsilon() / 2;
  const long double factor = input_rounding(kernel) + 2 * (long double)k * u;
  MatmulVerdict v;
  v.checked = ref.value.size();
  for (std::size_t e = 0; e < ref.value.size(); ++e) {
    const long double got = c[ref.sample.empty() ? e : ref.sample[e]];
    const long double bound = factor * ref.abs[e] + 1e-30L;
    const long double err = std::fabs(got - (long double)ref.value[e]);
    if (!(err <= bound)) ++v.outside;
    v.worst = std::isnan(err) ? INFINITY : std::max(v.worst, double(err / bound));
  }
  if (!ref.sample.empty())
    for (T x : c) v.not_finite += !std::isfinite(x);
  return v;
}

// ---- timing --------------------------------------------------------------------------------------

struct Timing {
  double median = 0;  // seconds
};

// Timed calls (after the caller's warm-up): `repeat` of them, or with repeat 0 at least 3 and until
// 0.25 s of calls have run (at most 1000). Each call is synchronous, so its wall time is the whole
// operation. on_result sees every result, outside the timed region.
template <class Call, class OnResult>
Timing time_calls(Call call, OnResult on_result, std::size_t repeat) {
  std::vector<double> times;
  double total = 0;
  while (repeat > 0 ? times.size() < repeat : (times.size() < 3 || total < 0.25) && times.size() < 1000) {
    const auto start = Clock::now();
    auto result = call();
    const double dt = std::chrono::duration<double>(Clock::now() - start).count();
    on_result(result);
    times.push_back(dt);
    total += dt;
  }
  std::sort(times.begin(), times.end());
  const std::size_t h = times.size() / 2;
  return {times.size() % 2 ? times[h] : (times[h - 1] + times[h]) / 2};
}

std::string timing_note(std::size_t repeat) {
  return repeat ? strf("time: median of %zu synchronous calls after 1 warm-up", repeat)
                : "time: median of the synchronous calls after 1 warm-up (at least 3, until 0.25 s)";
}

// "compiled in, usable: <reason>", "not compiled in (<reason>)", ...
std::string describe(const tandem::BackendStatus& s) {
  const std::string state = !s.compiled_in ? "not compiled in"
                            : s.usable     ? "compiled in, usable"
                                           : "compiled in, not usable";
  if (s.reason.empty()) return state;
  if (s.reason.starts_with(state)) return s.reason;  // the reason already says it
  return state + ": " + s.reason;
}

// ---- tandem info ---------------------------------------------------------------------------------

constexpr std::string_view kInfoHelp = R"(usage: tandem info

Prints the backends compiled into this build (usable or not, and why), which backend auto picks and
why, the value of TANDEM_BACKEND (and what Engine() does with it), and for each usable backend its
device (name, compute units, memory, peak bandwidth, details) and its reduce and matmul kernels.
)";

int cmd_info(const Options&) {
  std::printf("tandem %d.%d.%d\n\nbackends:\n", TANDEM_VERSION_MAJOR, TANDEM_VERSION_MINOR, TANDEM_VERSION_PATCH);
  const auto statuses = tandem::backend_status();
  for (const auto& s : statuses) std::printf("  %-5s %s\n", tandem::to_string(s.backend), describe(s).c_str());
  const auto choice = tandem::auto_backend();
  std::printf("auto picks: %s, because %s\n", tandem::to_string(choice.backend), choice.reason.c_str());

  const char* env = std::getenv("TANDEM_BACKEND");
  const std::string env_text = env ? "'" + std::string(env) + "'" : "unset";
  try {
    const Engine eng;
    std::printf("TANDEM_BACKEND: %s, so Engine() uses %s\n", env_text.c_str(), tandem::to_string(eng.backend()));
  } catch (const tandem::Error& e) {
    std::printf("TANDEM_BACKEND: %s, so Engine() throws: %s\n", env_text.c_str(), e.what());
  }

  int status = 0;
  for (const auto& s : statuses) {
    if (!s.usable) continue;
    const char* name = tandem::to_string(s.backend);
    try {
      const Engine eng(s.backend);
      const tandem::DeviceInfo d = eng.device();
      std::printf("\n%s device:\n", name);
      std::printf("  name            %s\n", d.name.c_str());
      std::printf("  compute units   %d %s\n", d.compute_units,
                  s.backend == Backend::cpu ? "hardware threads" : "multiprocessors (SMs)");
      std::printf("  memory          %.1f GiB\n", double(d.memory_bytes) / double(1ull << 30));
      if (d.peak_bandwidth_gbs > 0) std::printf("  peak bandwidth  %.0f GB/s\n", d.peak_bandwidth_gbs);
      if (!d.details.empty()) std::printf("  details         %s\n", d.details.c_str());
      std::printf("  reduce kernels  %s\n", join(eng.reduce_kernels()).c_str());
      std::printf("  matmul kernels  %s\n", join(eng.matmul_kernels()).c_str());
    } catch (const tandem::Error& e) {
      std::printf("\n%s device: could not be opened: %s\n", name, e.what());
      status = 1;
    }
  }
  return status;
}

// ---- tandem reduce -------------------------------------------------------------------------------

constexpr std::string_view kReduceHelp = R"(usage: tandem reduce [options]

Generates seeded random data on the host, uploads it once into a Buffer of the backend, and runs the
reduction with each chosen kernel. Every result is verified against a reference computed here, then
timed: the median wall time of synchronous calls (kernel, launch and reading back the result; not the
upload). GB/s counts the n * sizeof(T) bytes of the elements reduced.

options:
  --backend cpu|cuda|auto            default: TANDEM_BACKEND, or auto when unset
  --kernel NAME|all                  a reduce kernel of 'tandem info', 'deterministic' (auto with
                                     ReduceOptions::deterministic), or all of these (default auto)
  --op sum|min|max|mean|all          default sum
  --dtype float|double|int32|int64   default float
  --n N                              elements reduced, written 134217728, 1e6 or 2^27 (default 2^24)
  --stride S                         reduce every S-th element (default 1)
  --repeat R                         timed calls per row (default: at least 3, until 0.25 s)
  --seed X                           data seed (default 1)

Data: floats uniform in [-1, 1); int32 uniform in [-2^20, 2^20), int64 in [-2^40, 2^40).
Checks: integer sums exactly (a uint64 wrapping loop); float sums within 8 u sum|x| of a long double
loop (u = 2^-24 for float, 2^-53 for double); min and max bit for bit; mean as sum / n. min, max and
mean of an empty input must throw tandem::Error (status n/a). Exit status 1 if any check fails.
)";

enum class Op { sum, min, max, mean };
constexpr const char* kOpNames[] = {"sum", "min", "max", "mean"};
constexpr const char* op_name(Op op) { return kOpNames[int(op)]; }

struct ReduceConfig {
  std::string backend, kernel, dtype;
  std::vector<Op> ops;
  std::size_t n, stride, repeat;
  std::uint64_t seed;
};

// One row of the reduce table for one kernel and op. Returns false when a check failed.
template <class Call, class Judge>
bool reduce_row(const Table& table, std::vector<std::string>& notes, const std::string& kernel, Op op, bool empty_input,
                double bytes, std::size_t repeat, Call call, Judge judge) {
  const std::string where = kernel + " " + op_name(op) + ": ";
  try {
    if (empty_input && op != Op::sum) {  // documented to throw: the reference is undefined too
      try {
        call();
      } catch (const tandem::Error& e) {
        const std::string note = std::string(op_name(op)) + ": " + e.what();  // once per op, not per kernel
        if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
        table.row({kernel, op_name(op), "-", "-", "n/a", "-", "-"});
        return true;
      }
      notes.push_back(where + "returned a value for an empty input; expected tandem::Error");
      table.row({kernel, op_name(op), "-", "-", "FAIL", "-", "-"});
      return false;
    }
    const auto first = call();  // warm-up
    Judgement worst = judge(first);
    const Timing t = time_calls(
        call,
        [&](const auto& r) {
          Judgement j = judge(r);
          if (!j.ok && worst.ok) worst = j;
          if (!(j.error <= worst.error)) worst.error = j.error;
        },
        repeat);
    if (!worst.ok) notes.push_back(where + "expected " + worst.expected);
    table.row({kernel, op_name(op), format_value(first), format_error(worst.error), worst.ok ? "ok" : "FAIL",
               format_seconds(t.median), bytes > 0 ? strf("%.1f", bytes / t.median / 1e9) : "-"});
    return worst.ok;
  } catch (const tandem::Error& e) {
    notes.push_back(where + e.what());
    table.row({kernel, op_name(op), "-", "-", "error", "-", "-"});
    return false;
  }
}

template <class T>
int run_reduce(const Engine& eng, const ReduceConfig& cfg) {
  // An empty sum runs no kernel but has the engine check the name (its message lists the valid ones).
  if (cfg.kernel != "all" && cfg.kernel != kDeterministic) eng.sum<T>(std::span<const T>(), {cfg.kernel});
  std::vector<std::string> kernels = cfg.kernel == "all" ? eng.reduce_kernels() : std::vector<std::string>{cfg.kernel};
  if (cfg.kernel == "all") kernels.push_back(kDeterministic);

  std::printf("reduce: backend %s (%s), dtype %s, n %s, stride %zu, seed %llu\n", tandem::to_string(eng.backend()),
              eng.device().name.c_str(), dtype_name<T>(), format_count(cfg.n).c_str(), cfg.stride,
              (unsigned long long)cfg.seed);
  std::fflush(stdout);

  // Generated and uploaded in chunks, the reference fed along the way: host memory stays small.
  const std::size_t extent = cfg.n == 0 ? 0 : (cfg.n - 1) * cfg.stride + 1;
  tandem::Buffer<T> buf = eng.buffer<T>(extent);
  ReduceReference<T> ref;
  {
    SplitMix64 g{cfg.seed};
    std::vector<T> chunk(std::min<std::size_t>(extent, 1 << 20));
    for (std::size_t begin = 0; begin < extent; begin += chunk.size()) {
      const std::span<T> part(chunk.data(), std::min(chunk.size(), extent - begin));
      fill_random(part, g);
      for (std::size_t i = (cfg.stride - begin % cfg.stride) % cfg.stride; i < part.size(); i += cfg.stride)
        ref.add(part[i]);
      buf.upload(part, begin);
    }
  }
  const tandem::BufferView<T> view = buf.view(0, cfg.n, cfg.stride);
  const double bytes = double(cfg.n) * sizeof(T);
  const bool float_only =
      std::is_same_v<T, float> && std::find(cfg.ops.begin(), cfg.ops.end(), Op::mean) == cfg.ops.end();

  const Table table({{"kernel", longest(kernels, 6), true},
                     {"op", 4, true},
                     {"result", std::size_t(float_only ? 15 : 23)},
                     {"abs error", 9},
                     {"status", 6, true},
                     {"time", 10},
                     {"GB/s", 8}});
  table.header();
  std::vector<std::string> notes;
  bool ok = true;
  for (const auto& kernel : kernels) {
    const tandem::ReduceOptions opts =
        kernel == kDeterministic ? tandem::ReduceOptions{"auto", true} : tandem::ReduceOptions{kernel};
    for (Op op : cfg.ops) {
      auto row = [&](auto call, auto judge) {
        ok &= reduce_row(table, notes, kernel, op, cfg.n == 0, bytes, cfg.repeat, call, judge);
      };
      switch (op) {
        case Op::sum:
          row([&] { return eng.sum(view, opts); }, [&](tandem::sum_result_t<T> s) { return judge_sum(s, ref); });
          break;
        case Op::min:
          row([&] { return eng.min(view, opts); }, [&](T v) { return judge_extreme(v, ref.min); });
          break;
        case Op::max:
          row([&] { return eng.max(view, opts); }, [&](T v) { return judge_extreme(v, ref.max); });
          break;
        case Op::mean:
          row([&] { return eng.mean(view, opts); }, [&](double m) { return judge_mean(m, ref); });
          break;
      }
    }
  }
  for (const auto& note : notes) std::printf("note: %s\n", note.c_str());
  std::printf("%s; GB/s = n * sizeof(%s) / time\n", timing_note(cfg.repeat).c_str(), dtype_name<T>());
  if constexpr (std::is_integral_v<T>)
    std::printf("abs error: the largest |result - reference| over all calls; integer results must be exact\n");
  else
    std::printf("abs error: the largest |result - reference| over all calls; sums pass within 8 u sum|x| = %.3Lg\n",
                ref.sum_bound());
  return ok ? 0 : 1;
}

// Calls f.template operator()<T>() with T the element type named by dtype.
template <class F>
int with_dtype(const std::string& dtype, F&& f) {
  if (dtype == "float") return f.template operator()<float>();
  if (dtype == "double") return f.template operator()<double>();
  if (dtype == "int32") return f.template operator()<std::int32_t>();
  return f.template operator()<std::int64_t>();
}

int cmd_reduce(const Options& o) {
  ReduceConfig cfg;
  cfg.backend = backend_option(o);
  cfg.kernel = o.get("--kernel") ? *o.get("--kernel") : "auto";
  const std::string op = choice_option(o, "--op", {"sum", "min", "max", "mean", "all"}, "sum");
  for (Op each : {Op::sum, Op::min, Op::max, Op::mean})
    if (op == "all" || op == op_name(each)) cfg.ops.push_back(each);
  cfg.dtype = choice_option(o, "--dtype", {"float", "double", "int32", "int64"}, "float");
  cfg.n = count_option(o, "--n", 1ull << 24);
  cfg.stride = count_option(o, "--stride", 1, 1);
  cfg.repeat = count_option(o, "--repeat", 0, 1);
  cfg.seed = count_option(o, "--seed", 1);
  if (cfg.n > 1 && cfg.n - 1 > (std::numeric_limits<std::size_t>::max() - 1) / cfg.stride)
    throw UsageError("--n and --stride reach past 2^64 elements");

  const Engine eng = make_engine(cfg.backend);
  return with_dtype(cfg.dtype, [&]<class T>() { return run_reduce<T>(eng, cfg); });
}

// ---- tandem matmul -------------------------------------------------------------------------------

constexpr std::string_view kMatmulHelp = R"(usage: tandem matmul [options]

C = A * B with A (M x K) and B (K x N) uniform in [-1, 1), uploaded once into Buffers of the backend.
Each chosen kernel runs once and is verified against a reference computed here, then timed: the median
wall time of synchronous calls. GFLOP/s (TFLOP/s when large) = 2 M N K / time.

options:
  --backend cpu|cuda|auto   default: TANDEM_BACKEND, or auto when unset
  --kernel NAME|all         a matmul kernel of 'tandem info', 'deterministic' (auto with
                            MatmulOptions::deterministic), or all of these (default auto)
  --dtype float|double      default float
  --size S                  M = K = N = S (default 1024)
  --m M, --k K, --n N       one dimension each (default: the --size value)
  --repeat R                timed calls per kernel (default: at least 3, until 0.25 s)
  --seed X                  data seed (default 1)

Reference: for M N K <= 2^30 (and M N <= 2^24) every element of C, accumulated in double for float and
long double for double; above that 512 random elements (and the corners) in long double, with every
element of C also required to be finite (C starts as NaN). Bound per element:
  |C - ref| <= (c_in + 2 K u) sum_k |a_ik b_kj|
with u = 2^-24 for float, 2^-53 for double, and c_in = 2^-9 for kernels named *tf32*, 2^-6 for *bf16*,
else 0. 'max err/bound' is the largest |C - ref| / bound: at most 1 passes. Reduced-precision kernels
throw tandem::Error for double: status unsupported, not a failure. Exit status 1 if any check fails.
)";

struct MatmulConfig {
  std::string backend, kernel, dtype;
  std::size_t m, k, n, repeat;
  std::uint64_t seed;
};

bool unsupported_for(const std::string& kernel, bool is_double) { return is_double && input_rounding(kernel) != 0; }

std::string format_rate(double flops_per_s) {
  return flops_per_s >= 1e12 ? strf("%.2f TFLOP/s", flops_per_s / 1e12) : strf("%.1f GFLOP/s", flops_per_s / 1e9);
}

template <class T>
int run_matmul(const Engine& eng, const MatmulConfig& cfg) {
  const std::size_t m = cfg.m, k = cfg.k, n = cfg.n;
  // An empty product runs no kernel but has the engine check the name (its message lists the valid ones).
  if (cfg.kernel != "all" && cfg.kernel != kDeterministic) {
    const tandem::MatrixView<const T> none{nullptr, 0, 0, 0};
    eng.matmul<T>(none, none, tandem::MatrixView<T>{nullptr, 0, 0, 0}, {cfg.kernel});
  }
  std::vector<std::string> kernels = cfg.kernel == "all" ? eng.matmul_kernels() : std::vector<std::string>{cfg.kernel};
  if (cfg.kernel == "all") kernels.push_back(kDeterministic);
  const std::string shape = strf("%zux%zux%zu", m, k, n);

  SplitMix64 g{cfg.seed};
  std::vector<T> a(m * k), b(k * n);
  fill_random<T>(a, g);
  fill_random<T>(b, g);
  const auto start = Clock::now();
  const MatmulReference<T> ref = matmul_reference(a, b, m, k, n, cfg.seed);
  const double ref_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("matmul: backend %s (%s), dtype %s, M x K x N = %s; reference: %s (%s)\n",
              tandem::to_string(eng.backend()), eng.device().name.c_str(), dtype_name<T>(), shape.c_str(),
              ref.sample.empty() ? "every element" : strf("%zu sampled elements", ref.value.size()).c_str(),
              format_seconds(ref_seconds).c_str());
  std::fflush(stdout);

  const tandem::Buffer<T> da = eng.upload<T>(a), db = eng.upload<T>(b);
  tandem::Buffer<T> dc = eng.buffer<T>(m * n);
  std::vector<T> c(m * n);
  const double flops = 2.0 * double(m) * double(n) * double(k);

  const Table table({{"kernel", longest(kernels, 6), true},
                     {"shape", shape.size(), true},
                     {"max err/bound", 13},
                     {"status", 11, true},
                     {"time", 10},
                     {"rate", 14}});
  table.header();
  std::vector<std::string> notes;
  bool ok = true;
  for (const auto& kernel : kernels) {
    const tandem::MatmulOptions opts =
        kernel == kDeterministic ? tandem::MatmulOptions{"auto", true} : tandem::MatmulOptions{kernel};
    auto run = [&] {
      eng.matmul(da.matrix(m, k), db.matrix(k, n), dc.matrix(m, n), opts);
      return 0;
    };
    try {
      std::fill(c.begin(), c.end(), std::numeric_limits<T>::quiet_NaN());  // poison: unwritten elements fail
      dc.upload(c);
      run();  // warm-up, verified
    } catch (const tandem::Error& e) {
      const bool expected = unsupported_for(kernel, std::is_same_v<T, double>);
      notes.push_back(kernel + ": " + e.what());
      table.row({kernel, shape, "-", expected ? "unsupported" : "error", "-", "-"});
      ok &= expected;
      continue;
    }
    dc.download(c);
    const MatmulVerdict v = verify_matmul(c, ref, k, kernel);
    if (!v.ok()) notes.push_back(kernel + ": " + v.problem());
    ok &= v.ok();
    const Timing t = time_calls(
        run, [](int) {}, cfg.repeat);
    table.row({kernel, shape, strf("%.3g", v.worst), v.ok() ? "ok" : "FAIL", format_seconds(t.median),
               flops > 0 ? format_rate(flops / t.median) : "-"});
  }
  for (const auto& note : notes) std::printf("note: %s\n", note.c_str());
  std::printf("%s; rate = 2 M N K / time\n", timing_note(cfg.repeat).c_str());
  std::printf("max err/bound: the largest |C - reference| / ((c_in + 2 K u) sum_k |a_ik b_kj|); at most 1 passes\n");
  return ok ? 0 : 1;
}

int cmd_matmul(const Options& o) {
  MatmulConfig cfg;
  cfg.backend = backend_option(o);
  cfg.kernel = o.get("--kernel") ? *o.get("--kernel") : "auto";
  cfg.dtype = choice_option(o, "--dtype", {"float", "double"}, "float");
  const std::uint64_t size = count_option(o, "--size", 1024);
  cfg.m = count_option(o, "--m", size);
  cfg.k = count_option(o, "--k", size);
  cfg.n = count_option(o, "--n", size);
  cfg.repeat = count_option(o, "--repeat", 0, 1);
  cfg.seed = count_option(o, "--seed", 1);
  const double limit = double(std::numeric_limits<std::ptrdiff_t>::max()) / 8;
  if (double(cfg.m) * double(cfg.k) > limit || double(cfg.k) * double(cfg.n) > limit ||
      double(cfg.m) * double(cfg.n) > limit)
    throw UsageError("the matrices of M x K x N = " + strf("%zux%zux%zu", cfg.m, cfg.k, cfg.n) +
                     " do not fit in memory");

  const Engine eng = make_engine(cfg.backend);
  if (cfg.dtype == "float") return run_matmul<float>(eng, cfg);
  return run_matmul<double>(eng, cfg);
}

// ---- tandem check --------------------------------------------------------------------------------

constexpr std::string_view kCheckHelp = R"(usage: tandem check [options]

The cross-backend check. For every usable backend (or the one --backend names), every reduce kernel
(auto included) runs sum, min and max of int32, int64, float and double data (integers over their
whole range, so sums wrap) at sizes that miss every block: 0, 1, 2, 3, 31, 32, 33, 63, ..., 4095,
4097, 65537, 1000003, 2^22+3, 2^24+1, seeded random sizes, and a few strided views. Every matmul
kernel runs the shapes 1x1x1, 17x33x65, 129x1x257 and 255x257x253 (M x K x N) in float and double.

Integer sums, min and max must equal, bit for bit, both an independent reference (serial loops in
wider types) and the CPU backend's serial kernel; float sums must lie within 8 u sum|x| of a long
double sum; min and max of an empty input must throw tandem::Error. Matmul results must lie within
the bound of 'tandem matmul --help' of every element of the reference. Reduced-precision kernels
(tf32, bf16) with double are skipped when they throw tandem::Error.

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
  SplitMix64 g{7};
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
    if (skipped_) std::printf("check: %zu skipped (reduced-precision kernels with double)\n", skipped_);
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
};

template <class T>
void check_reduce_kernel(CheckLog& log, const Engine& eng, tandem::BufferView<T> view, const std::string& kernel, Op op,
                         const ReduceReference<T>& ref, const SerialResults<T>& serial, const std::string& label) {
  const tandem::ReduceOptions opts{kernel};
  try {
    if (ref.count == 0 && op != Op::sum) {
      (void)(op == Op::min ? eng.min(view, opts) : eng.max(view, opts));
      log.fail(label + ": returned a value for an empty input; expected tandem::Error");
      return;
    }
    Judgement j{true, 0, ""};
    bool same_as_serial = true;
    std::string got, serial_value;
    if (op == Op::sum) {
      const auto s = eng.sum(view, opts);
      j = judge_sum(s, ref);
      if constexpr (std::is_integral_v<T>) same_as_serial = s == serial.sum;  // float sums: the bound only
      got = format_value(s), serial_value = format_value(serial.sum);
    } else {
      const T v = op == Op::min ? eng.min(view, opts) : eng.max(view, opts);
      const T s = op == Op::min ? serial.min : serial.max;
      j = judge_extreme(v, op == Op::min ? ref.min : ref.max);
      same_as_serial = same_bits(v, s);
      got = format_value(v), serial_value = format_value(s);
    }
    if (j.ok && same_as_serial) return log.pass();
    log.fail(label + ": got " + got + (j.ok ? "" : ", reference " + j.expected) +
             (same_as_serial ? "" : ", cpu serial " + serial_value));
  } catch (const tandem::Error& e) {
    if (ref.count == 0 && op != Op::sum) return log.pass();  // documented: undefined for an empty input
    log.fail(label + ": tandem::Error: " + e.what());
  }
}

template <class T>
void check_reduce(CheckLog& log, const Engine& cpu, const std::vector<Engine>& targets,
                  const std::vector<ReduceCase>& cases) {
  log.group(std::string("reduce ") + dtype_name<T>());
  for (const ReduceCase& c : cases) {
    std::vector<T> host(c.n == 0 ? 0 : (c.n - 1) * c.stride + 1);
    SplitMix64 g{c.n * 1000003 + c.stride};
    fill_random<T>(host, g, /*full_range=*/true);
    ReduceReference<T> ref;
    for (std::size_t i = 0; i < c.n; ++i) ref.add(host[i * c.stride]);

    const tandem::StridedView<T> host_view{host.data(), c.n, c.stride};
    SerialResults<T> serial;
    serial.sum = cpu.sum(host_view, {"serial"});
    if (c.n > 0) serial.min = cpu.min(host_view, {"serial"}), serial.max = cpu.max(host_view, {"serial"});

    for (const Engine& eng : targets) {
      const tandem::Buffer<T> buf = eng.upload<T>(host);
      for (const auto& kernel : eng.reduce_kernels())
        for (Op op : {Op::sum, Op::min, Op::max})
          check_reduce_kernel(log, eng, buf.view(0, c.n, c.stride), kernel, op, ref, serial,
                              strf("%s %s %s %s n=%zu stride=%zu", tandem::to_string(eng.backend()), kernel.c_str(),
                                   dtype_name<T>(), op_name(op), c.n, c.stride));
    }
  }
}

template <class T>
void check_matmul(CheckLog& log, const std::vector<Engine>& targets) {
  log.group(std::string("matmul ") + dtype_name<T>());
  for (const MatmulShape& s : kCheckShapes) {
    SplitMix64 g{s.m * 1000 + s.k * 100 + s.n};
    std::vector<T> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n);
    fill_random<T>(a, g);
    fill_random<T>(b, g);
    const MatmulReference<T> ref = matmul_reference(a, b, s.m, s.k, s.n, 1);
    for (const Engine& eng : targets) {
      const tandem::Buffer<T> da = eng.upload<T>(a), db = eng.upload<T>(b);
      tandem::Buffer<T> dc = eng.buffer<T>(c.size());
      for (const auto& kernel : eng.matmul_kernels()) {
        const std::string label = strf("%s %s %s matmul %zux%zux%zu", tandem::to_string(eng.backend()), kernel.c_str(),
                                       dtype_name<T>(), s.m, s.k, s.n);
        try {
          std::fill(c.begin(), c.end(), std::numeric_limits<T>::quiet_NaN());
          dc.upload(c);
          eng.matmul(da.matrix(s.m, s.k), db.matrix(s.k, s.n), dc.matrix(s.m, s.n), {kernel});
          dc.download(c);
        } catch (const tandem::Error& e) {
          if (unsupported_for(kernel, std::is_same_v<T, double>))
            log.skip();
          else
            log.fail(label + ": tandem::Error: " + e.what());
          continue;
        }
        const MatmulVerdict v = verify_matmul(c, ref, s.k, kernel);
        if (v.ok())
          log.pass();
        else
          log.fail(label + ": " + v.problem() + strf(" (max err/bound %.3g)", v.worst));
      }
    }
  }
}

int cmd_check(const Options& o) {
  const std::string backend = backend_option(o);
  const bool quick = o.has("--quick");

  // The CPU engine always runs: its serial kernel is the comparison for every other kernel.
  const Engine cpu(Backend::cpu);
  std::vector<Engine> targets;
  std::vector<std::string> not_run;
  if (backend.empty()) {
    for (const auto& s : tandem::backend_status()) {
      if (s.backend == Backend::cpu)
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
      not_run.push_back(s.backend == Backend::cpu
                            ? "cpu kernels not checked (--backend " + backend + "); its serial kernel is the comparison"
                            : strf("%s not run: --backend %s", tandem::to_string(s.backend), backend.c_str()));
    }
  }

  const std::vector<ReduceCase> cases = reduce_cases(quick);
  std::size_t total = 0;
  for (const Engine& eng : targets) {
    std::printf("check: %s (%s): reduce kernels %s; matmul kernels %s\n", tandem::to_string(eng.backend()),
                eng.device().name.c_str(), join(eng.reduce_kernels()).c_str(), join(eng.matmul_kernels()).c_str());
    total += cases.size() * 4 * 3 * eng.reduce_kernels().size();
    total += std::size(kCheckShapes) * 2 * eng.matmul_kernels().size();
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
  check_matmul<float>(log, targets);
  check_matmul<double>(log, targets);
  log.finish(not_run);
  return log.ok() ? 0 : 1;
}

// ---- commands ------------------------------------------------------------------------------------

struct Command {
  std::string_view name, summary, help;
  std::vector<std::string_view> valued, flags;
  int (*run)(const Options&);
};

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"info",
       "the backends compiled in, which one auto picks and why, devices and kernels",
       kInfoHelp,
       {},
       {},
       cmd_info},
      {"reduce",
       "sum/min/max/mean with each kernel: verified against a reference, then timed",
       kReduceHelp,
       {"--backend", "--kernel", "--op", "--dtype", "--n", "--stride", "--repeat", "--seed"},
       {},
       cmd_reduce},
      {"matmul",
       "C = A * B with each kernel: verified against a reference, then timed",
       kMatmulHelp,
       {"--backend", "--kernel", "--dtype", "--m", "--k", "--n", "--size", "--repeat", "--seed"},
       {},
       cmd_matmul},
      {"check",
       "every kernel of every usable backend over odd sizes, against references",
       kCheckHelp,
       {"--backend"},
       {"--quick"},
       cmd_check},
  };
  return list;
}

void print_main_help() {
  std::printf("usage: tandem <command> [options]\n\ncommands:\n");
  for (const auto& c : commands()) std::printf("  %-8s %.*s\n", c.name.data(), int(c.summary.size()), c.summary.data());
  std::printf(
      "\nRun 'tandem <command> --help' for a command's options. Without --backend, TANDEM_BACKEND (cpu, cuda\n"
      "or auto) picks the backend; auto (or unset) picks CUDA when a usable GPU is present.\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.size() == 2 && args[0] == "help") args = {args[1], "--help"};  // tandem help <command>
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_main_help();
    return 0;
  }
  if (args[0] == "--version") {
    std::printf("tandem %d.%d.%d\n", TANDEM_VERSION_MAJOR, TANDEM_VERSION_MINOR, TANDEM_VERSION_PATCH);
    return 0;
  }
  const auto& list = commands();
  const auto cmd = std::find_if(list.begin(), list.end(), [&](const Command& c) { return c.name == args[0]; });
  if (cmd == list.end()) {
    std::fprintf(stderr, "tandem: unknown command '%.*s'; see 'tandem --help'\n", int(args[0].size()), args[0].data());
    return 2;
  }
  const std::span<const std::string_view> rest(args.begin() + 1, args.end());
  if (std::find_if(rest.begin(), rest.end(), [](std::string_view a) { return a == "--help" || a == "-h"; }) !=
      rest.end()) {
    std::printf("%.*s", int(cmd->help.size()), cmd->help.data());
    return 0;
  }
  try {
    return cmd->run(Options(rest, cmd->valued, cmd->flags));
  } catch (const UsageError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "tandem: %s; see 'tandem %.*s --help'\n", e.what(), int(cmd->name.size()), cmd->name.data());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fflush(stdout);
    std::fprintf(stderr, "tandem: out of host memory; try a smaller size\n");
    return 1;
  } catch (const std::exception& e) {  // tandem::Error, and anything the standard library throws
    std::fflush(stdout);
    std::fprintf(stderr, "tandem: %s\n", e.what());
    return 1;
  }
}
